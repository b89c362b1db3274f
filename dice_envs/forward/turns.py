"""The chance of whole turns from the forward model's throw outcomes (:func:`throw_outcomes`),
what the exact solvers, the search agents and the Farkle planner of :mod:`agents` read.

>>> p = keep_outcomes()   # a scorecard re-throw: P(throw of five | kept multiset)
>>> p.shape, bool(np.allclose(p.sum(axis=1), 1.0, atol=1e-12))
((462, 252), True)
>>> rows, probs = farkle_throws(2)
>>> farkle_turn_tables().faces[rows[1]], round(float(probs[1] * 36), 12)   # 1-2: two of 36 throws
((1, 2), 2.0)
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..tables import farkle_turn_tables, scorecard_tables
from .chance import throw_outcomes

__all__ = ["farkle_throws", "keep_outcomes"]


@cache
def keep_outcomes() -> np.ndarray:
    """``(462, 252)`` read-only: the probability of throw ``r`` of five dice (``scorecard_tables().rolls``)
    after keeping multiset ``k`` (``scorecard_tables().keeps``) and throwing the rest, at ``[k, r]``."""
    t = scorecard_tables()
    out = np.zeros((len(t.keeps), len(t.rolls)))
    for i, keep in enumerate(t.keeps):
        if len(keep) == 5:
            out[i, t.roll_index[keep]] = 1.0  # nothing thrown
            continue
        faces, probs = throw_outcomes(5 - len(keep))
        for throw, p in zip(faces.tolist(), probs.tolist(), strict=True):
            out[i, t.roll_index[tuple(sorted(keep + tuple(throw)))]] = p
    out.flags.writeable = False
    return out


def farkle_throws(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The throws of ``n`` Farkle dice (1 to 6) in :func:`throw_outcomes` order: their rows of
    :func:`~dice_envs.tables.farkle_turn_tables` ``(M,)`` and probabilities ``(M,)`` (read-only)."""
    faces, probs = throw_outcomes(n)  # refuses any n but an integer 1 to 6
    return _farkle_rows(faces.shape[1]), probs


@cache
def _farkle_rows(n: int) -> np.ndarray:
    index = farkle_turn_tables().roll_index
    rows = np.array([index[tuple(f)] for f in throw_outcomes(n)[0].tolist()], dtype=np.int64)
    rows.flags.writeable = False
    return rows
