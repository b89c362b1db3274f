"""Dice: validation of user-given dice, seeds and generators, and a seeded, injectable dice source.

:func:`check_seed` is the one seed check (``TypeError`` / ``ValueError``, Gymnasium's convention);
:func:`check_seed_arg` is its :class:`~dice_envs.rules.ConfigError` form, naming the argument.
"""

from __future__ import annotations

import numbers
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .config import ConfigError

__all__ = [
    "FACES",
    "DiceSource",
    "check_rng",
    "check_seed",
    "check_seed_arg",
    "is_canonical_selection",
    "validate_dice",
]

FACES = (1, 2, 3, 4, 5, 6)


def check_seed(seed: Any) -> int | None:
    """A seed: ``None`` or a non-negative integer (as Gymnasium requires); ``TypeError`` (not an
    integer) or ``ValueError`` (negative) naming it otherwise."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        kind = type(seed).__name__
        raise TypeError(f"seed must be None or a non-negative integer, got {kind} {seed!r:.80}")
    if int(seed) < 0:
        raise ValueError(f"seed must be None or a non-negative integer, got {int(seed)}")
    return int(seed)


def check_seed_arg(seed: Any, name: str = "seed", *, none: bool = True) -> int | None:
    """``seed`` as an ``int`` (or ``None`` where ``none``): a non-negative integer, checked by
    :func:`check_seed`; else :class:`~dice_envs.rules.ConfigError` naming ``name`` (e.g.
    ``"--seed"`` for a command line). With ``none=False`` ``None`` is refused too and the message
    does not offer it.

    >>> check_seed_arg(-1, "--seed", none=False)
    Traceback (most recent call last):
    ...
    dice_envs.rules.config.ConfigError: --seed must be a non-negative integer, got -1
    """
    what = "None or a non-negative integer" if none else "a non-negative integer"
    if seed is None and not none:
        raise ConfigError(f"{name} must be {what}, got None")
    try:
        return check_seed(seed)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be {what}, got {seed!r:.80}") from None


def check_rng(rng: Any) -> Any:
    """``rng`` when it is ``None`` or a :class:`numpy.random.Generator` (or an object with its
    ``integers(low, high, size)``, as the games draw their dice); else ``ConfigError``."""
    if rng is not None and not callable(getattr(rng, "integers", None)):
        raise ConfigError(
            "rng must be None or a numpy.random.Generator (e.g. numpy.random.default_rng(7); a number "
            f"goes in seed=), got {type(rng).__name__} {rng!r:.80}"
        )
    return rng


def validate_dice(dice: Sequence[int], counts: Iterable[int]) -> tuple[int, ...]:
    """Return ``dice`` as a sorted tuple of ints, or raise ``ValueError`` saying what is allowed.

    ``counts`` lists the allowed numbers of dice.

    >>> validate_dice([5, 2, 5], counts=range(1, 7))
    (2, 5, 5)
    >>> validate_dice([0, 1, 2, 3, 4], counts=[5])
    Traceback (most recent call last):
    ...
    ValueError: dice faces must be integers 1-6, got [0, 1, 2, 3, 4]
    """
    allowed = tuple(counts)
    if isinstance(dice, (str, bytes)) or not isinstance(dice, (Sequence, np.ndarray)):
        raise ValueError(f"dice must be a sequence of integers 1-6, got {dice!r}")
    values = list(dice)
    if len(values) not in allowed:
        what = f"{allowed[0]}" if len(allowed) == 1 else f"{allowed[0]} to {allowed[-1]}"
        raise ValueError(f"expected {what} dice, got {len(values)}: {values!r}")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= int(v) <= 6:
            raise ValueError(f"dice faces must be integers 1-6, got {values!r}")
    return tuple(sorted(int(v) for v in values))


def is_canonical_selection(dice: Sequence[int], mask: int) -> bool:
    """True when ``mask`` is the smallest bitmask selecting its multiset of faces.

    Dice are sorted, so among equal faces the selected ones must be the leftmost: selecting die
    ``i + 1`` but not die ``i`` of the same face duplicates another action and is not legal.
    """
    for i in range(len(dice) - 1):
        if dice[i] == dice[i + 1] and (mask >> (i + 1)) & 1 and not (mask >> i) & 1:
            return False
    return True


class DiceSource:
    """Throws dice from a numpy ``Generator``; faces queued with :meth:`inject` come first.

    Injection lets tests drive any path of a game:

    >>> src = DiceSource(np.random.default_rng(0))
    >>> src.inject(6, 6, 6)
    >>> src.throw(5)[:3]
    (6, 6, 6)
    """

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()
        self._queue: deque[int] = deque()

    def inject(self, *faces: int) -> None:
        """Queue faces (1-6) to be thrown before any random ones."""
        flat: list[int] = []
        for f in faces:
            flat.extend(f if isinstance(f, (list, tuple)) else [f])
        for f in flat:
            if isinstance(f, bool) or not isinstance(f, numbers.Integral) or not 1 <= int(f) <= 6:
                raise ValueError(f"injected dice faces must be integers 1-6, got {f!r}")
        self._queue.extend(int(f) for f in flat)

    @property
    def pending(self) -> int:
        """How many injected faces are still queued."""
        return len(self._queue)

    def clear(self) -> None:
        """Drop any injected faces not thrown yet."""
        self._queue.clear()

    def throw(self, n: int) -> tuple[int, ...]:
        """Throw ``n`` dice (unsorted, in throw order)."""
        out = []
        while self._queue and len(out) < n:
            out.append(self._queue.popleft())
        if len(out) < n:
            out.extend(self.rng.integers(1, 7, size=n - len(out)).tolist())
        return tuple(out)
