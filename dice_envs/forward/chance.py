"""Chance outcomes of a throw: the distinct throws of ``k`` dice, their order and probabilities.

A throw of ``k`` dice has ``C(k + 5, 5)`` distinct outcomes as sorted multisets (252 for five,
462 for six, 126 for four, 56, 21 and 6), each with its exact multinomial probability
(:func:`dice_envs.tables.multiset_prob`). :func:`throw_outcomes` lists them once per ``k`` in the
order of :func:`dice_envs.tables.multisets` (for five dice: the order of
``scorecard_tables().rolls``), so an outcome is named by its index in that table.

>>> faces, probs = throw_outcomes(2)
>>> faces.shape, faces[:3].tolist(), round(float(probs.sum()), 12)
((21, 2), [[1, 1], [1, 2], [1, 3]], 1.0)
"""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from functools import cache

import numpy as np

from ..engine.dice import MAX_DICE, outcome_code_table, outcome_faces
from ..rules.config import is_int
from ..tables import multiset_prob

__all__ = [
    "CHANCE",
    "N_OUTCOMES",
    "TERMINAL",
    "Rows",
    "outcome_code_table",
    "outcome_index",
    "outcome_list",
    "outcome_prob_table",
    "throw_outcomes",
]

#: :meth:`~dice_envs.forward.ForwardState.current_player` of a chance node (OpenSpiel's ``kChancePlayerId``).
CHANCE = -1
#: :meth:`~dice_envs.forward.ForwardState.current_player` of a terminal state (``kTerminalPlayerId``).
TERMINAL = -4

#: Row indices or one value per row: a sequence of ints or an integer array.
Rows = Sequence[int] | np.ndarray


def throw_outcomes(k: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct throws of ``k`` dice (1 to 6): sorted faces ``(M, k)`` and probabilities ``(M,)``.

    Read-only arrays, built once per ``k``; the probabilities sum to 1.
    """
    if not is_int(k) or not 1 <= k <= MAX_DICE:  # type: ignore[operator]
        raise ValueError(f"a throw has 1 to {MAX_DICE} dice (an integer), got {k!r}")
    return _throw_outcomes(int(k))  # type: ignore[call-overload]


@cache
def _throw_outcomes(k: int) -> tuple[np.ndarray, np.ndarray]:
    faces = outcome_faces(k)
    probs = np.array([multiset_prob(tuple(o)) for o in faces.tolist()])
    probs.flags.writeable = False
    return faces, probs


@cache
def outcome_list(k: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """The outcomes of a throw of ``k`` dice as ``(sorted faces, probability)`` pairs (cached)."""
    faces, probs = throw_outcomes(k)
    return tuple((tuple(int(f) for f in row), float(p)) for row, p in zip(faces, probs, strict=True))


@cache
def _outcome_lookup(k: int) -> dict[tuple[int, ...], int]:
    return {o: i for i, (o, _) in enumerate(outcome_list(k))}


def outcome_index(k: int, outcome: Sequence[int]) -> int:
    """The index in :func:`throw_outcomes` of ``outcome`` (``k`` faces 1-6, any order: a sequence
    or a 1-D array of integers).

    Raises ``ValueError`` when ``outcome`` is not a throw of ``k`` dice.
    """
    throw_outcomes(k)  # k checked
    ok = isinstance(outcome, (Sequence, np.ndarray)) and not isinstance(outcome, (str, bytes))
    faces = list(outcome) if ok else []
    index = None
    if all(is_int(f) for f in faces):  # a (k, m) array's rows, a string's letters are not
        index = _outcome_lookup(k).get(tuple(sorted(int(f) for f in faces)))
    if index is None:
        raise ValueError(
            f"outcome {reprlib.repr(outcome)} is not a throw of {k} dice: give {k} faces, "
            "each an integer 1-6, in any order"
        )
    return index


#: Outcomes of a throw of ``k`` dice, ``n_outcomes[k]`` (``n_outcomes[0] == 0``: nothing thrown).
N_OUTCOMES = np.array([0, 6, 21, 56, 126, 252, 462], dtype=np.int64)


@cache
def outcome_prob_table() -> np.ndarray:
    """``(7, 462)`` probabilities of outcome ``j`` of ``k`` dice at ``[k, j]`` (0 past the last)."""
    table = np.zeros((MAX_DICE + 1, int(N_OUTCOMES[-1])))
    for k in range(1, MAX_DICE + 1):
        table[k, : N_OUTCOMES[k]] = throw_outcomes(k)[1]
    table.flags.writeable = False
    return table
