"""The one check of what enters an env from outside: actions, seeds and ``illegal_reward``.

Every env (:class:`dice_envs.wrappers.SingleAgentEnv`, :class:`dice_envs.multiagent.base.DiceAECEnv`,
:class:`dice_envs.vector.env.DiceVectorEnv`) calls these before it touches its state. A refused
value raises ``TypeError`` (wrong kind) or ``ValueError`` (wrong shape or range) naming it, whatever
the ``illegal_action`` mode; an integer that is merely not a legal move is left to the env's
illegal-action handling. The seed checks are :mod:`dice_envs.rules.dice`'s, re-exported here.

Accepted actions: Python ``int``, integer numpy scalars, 0-d or 1-element integer arrays (the
vector env: an integer array of shape ``(num_envs,)``), each within the int64 range. Refused:
``bool``, floats (``32.9`` and even ``33.0``), strings (``'33'``), other arrays and objects.

>>> as_action(np.array([33]))
33
>>> as_action(np.array([32.9]))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
TypeError: an action must be an integer (...), got array([32.9]) of dtype float64
>>> as_actions([3, 4], 2).tolist()
[3, 4]
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .outcome import legal
from .rules import ConfigError
from .rules.dice import check_rng, check_seed, check_seed_arg

__all__ = [
    "INT64_MAX",
    "as_action",
    "as_actions",
    "check_illegal_reward",
    "check_rng",
    "check_seed",
    "check_seed_arg",
    "first_illegal",
    "reset_needed",
]

INT64_MAX = 2**63 - 1
_KINDS = "iu"  # numpy dtype kinds of signed and unsigned integers (bool is 'b')
_WHAT = "an integer (int, numpy integer, or a 1-element integer array)"


def _show(value: Any, limit: int = 80) -> str:
    """A short repr of ``value`` for a message."""
    if isinstance(value, np.ndarray) and value.size > 8:
        return f"array of shape {value.shape} and dtype {value.dtype}"
    try:
        text = repr(value)
    except Exception:  # pragma: no cover - a repr that fails
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _show_array(a: np.ndarray) -> str:
    """``_show`` of an array with its dtype named once."""
    text = _show(a)
    return text if a.size > 8 else f"{text} of dtype {a.dtype}"


def _in_range(v: int) -> int:
    if not -INT64_MAX - 1 <= v <= INT64_MAX:
        raise ValueError(f"action {v} is outside the int64 range; actions are small integers")
    return v


def as_action(action: Any) -> int:
    """``action`` as a Python ``int``; ``TypeError`` / ``ValueError`` naming it otherwise."""
    if isinstance(action, (bool, np.bool_)):
        raise TypeError(f"an action must be {_WHAT}, got the bool {action!r}")
    if isinstance(action, (int, np.integer)):
        return _in_range(int(action))
    if isinstance(action, np.ndarray):
        if action.dtype.kind not in _KINDS:
            raise TypeError(f"an action must be {_WHAT}, got {_show_array(action)}")
        if action.size != 1:
            raise ValueError(f"an action must be {_WHAT}, got an array of shape {action.shape}")
        return _in_range(int(action.reshape(-1)[0]))
    raise TypeError(f"an action must be {_WHAT}, got {type(action).__name__} {_show(action)}")


def as_actions(actions: Any, num_envs: int) -> np.ndarray:
    """A batch of actions as an int64 array of shape ``(num_envs,)``; refused by name otherwise."""
    try:
        a = np.asarray(actions)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(
            f"actions must be an integer array of shape ({num_envs},), got {_show(actions)}"
        ) from exc
    if a.dtype.kind not in _KINDS:
        raise TypeError(f"actions must be an integer array of shape ({num_envs},), got {_show_array(a)}")
    if a.shape != (num_envs,):
        raise ValueError(
            f"expected {num_envs} actions, an integer array of shape ({num_envs},), got shape {a.shape}"
        )
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and (a > INT64_MAX).any():
        bad = int(np.argmax(a > INT64_MAX))
        raise ValueError(f"action {int(a[bad])} of game {bad} is outside the int64 range")
    return a.astype(np.int64, copy=False)


def reset_needed(method: str, env: str = "") -> str:
    """What a call made before ``reset()`` is told (one wording for every env): ``method`` needs
    a game, and only ``reset()`` makes one; ``env`` (a name) goes in front when given.

    >>> reset_needed("observe", "spiffel_v0")
    'spiffel_v0: call reset() before observe()'
    """
    text = f"call reset() before {method}()"
    return f"{env}: {text}" if env else text


def check_illegal_reward(value: Any) -> float:
    """``illegal_reward`` as a float: a finite real number (not a bool, string, ...); else ``ConfigError``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ConfigError(f"illegal_reward must be a finite number, e.g. -1.0, got {_show(value)}")
    return float(value)


def first_illegal(actions: np.ndarray, masks: np.ndarray) -> int:
    """The first row whose action is not legal (:func:`dice_envs.outcome.legal`); ``-1`` when every
    row's action is legal. ``actions`` ``(n,)`` integers, ``masks`` ``(n, n_actions)`` booleans.

    >>> first_illegal(np.array([1, 0]), np.array([[0, 1], [1, 0]], dtype=bool))
    -1
    >>> first_illegal(np.array([1, 2]), np.array([[0, 1], [1, 0]], dtype=bool))
    1
    """
    ok = legal(actions, masks)
    return -1 if ok.all() else int(np.argmin(ok))
