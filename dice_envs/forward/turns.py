"""The chance of whole turns, from the forward model's throw outcomes: what the solvers search.

Every probability here is one of :func:`~dice_envs.forward.chance.throw_outcomes` (the distinct
throws of ``k`` dice in their order), so the forward model, the exact solvers and the search
agents (:mod:`agents.solver`, :mod:`agents.search`, the Farkle planner) read chance from one
source:

* :func:`keep_outcomes`: a scorecard re-throw, the probability of each throw of five dice
  (``scorecard_tables().rolls``) after keeping each multiset (``scorecard_tables().keeps``) and
  throwing the rest;
* :func:`farkle_throws`: the throws of ``n`` Farkle dice as rows of the turn flow's tables
  (:func:`dice_envs.tables.farkle_turn_tables`), with their probabilities.

>>> p = keep_outcomes()
>>> p.shape, bool(np.allclose(p.sum(axis=1), 1.0, atol=1e-12))
((462, 252), True)
>>> rows, probs = farkle_throws(2)
>>> farkle_turn_tables().faces[rows[1]], round(float(probs[1] * 36), 12)   # 1-2: two of 36 throws
((1, 2), 2.0)
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..rules.farkle import NUM_DICE as FARKLE_DICE
from ..tables import farkle_turn_tables, scorecard_tables
from .chance import throw_outcomes

__all__ = ["farkle_throws", "keep_outcomes"]


@cache
def keep_outcomes() -> np.ndarray:
    """``(462, 252)``: the probability of throw ``r`` of five dice after keeping multiset ``k``
    and throwing the other ``5 - len(k)`` dice, at ``[k, r]`` (read-only; rows sum to 1)."""
    t = scorecard_tables()
    out = np.zeros((len(t.keeps), len(t.rolls)))
    for i, keep in enumerate(t.keeps):
        if len(keep) == len(t.rolls[0]):
            out[i, t.roll_index[keep]] = 1.0  # nothing thrown
            continue
        faces, probs = throw_outcomes(len(t.rolls[0]) - len(keep))
        for throw, p in zip(faces.tolist(), probs.tolist(), strict=True):
            out[i, t.roll_index[tuple(sorted(keep + tuple(throw)))]] = p
    out.flags.writeable = False
    return out


def farkle_throws(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The throws of ``n`` Farkle dice (1 to 6) in :func:`throw_outcomes` order: their rows of
    :func:`~dice_envs.tables.farkle_turn_tables` ``(M,)`` and probabilities ``(M,)`` (read-only)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= FARKLE_DICE:
        raise ValueError(f"a Farkle throw has 1 to {FARKLE_DICE} dice (an integer), got {n!r}")
    return _farkle_throws(int(n))


@cache
def _farkle_throws(n: int) -> tuple[np.ndarray, np.ndarray]:
    faces, probs = throw_outcomes(n)
    index = farkle_turn_tables().roll_index
    rows = np.array([index[tuple(f)] for f in faces.tolist()], dtype=np.int64)
    rows.flags.writeable = False
    return rows, probs
