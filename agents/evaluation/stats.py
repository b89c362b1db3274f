"""Statistics of played games: intervals (:func:`mean_ci`, :func:`wilson_interval`) and win
counting (:func:`win_shares`, ties split; :func:`wins_draws_losses`), used by everything that
reports a score or a win rate.

>>> win_shares(np.array([[True, False], [True, True]])).tolist()
[[1.0, 0.0], [0.5, 0.5]]
>>> wins_draws_losses(np.array([[True, False], [True, True], [False, True]]), np.array([0, 1, 0]))
(1, 1, 1)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["Z95", "mean_ci", "wilson_interval", "win_shares", "wins_draws_losses"]

#: The two-sided 95% normal quantile.
Z95 = 1.959963984540054


def mean_ci(values: Sequence[float] | np.ndarray, z: float = Z95) -> tuple[float, tuple[float, float]]:
    """Mean and normal-approximation confidence interval ``mean ± z·s/√n`` (one value: no width).

    >>> m, (lo, hi) = mean_ci([1, 2, 3])
    >>> m, round(lo, 3), round(hi, 3)
    (2.0, 0.868, 3.132)
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        raise ValueError("mean_ci of no values")
    m = float(x.mean())
    half = z * float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else 0.0
    return m, (m - half, m + half)


def wilson_interval(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a win rate ``wins / n`` (``wins`` may be fractional).

    >>> lo, hi = wilson_interval(80, 100)
    >>> round(lo, 3), round(hi, 3)
    (0.711, 0.867)
    """
    if n <= 0:
        raise ValueError(f"wilson_interval needs n >= 1, got {n}")
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / denom
    lo, hi = max(0.0, centre - half), min(1.0, centre + half)
    return min(lo, p), max(hi, p)  # exact at p = 0 or 1 despite rounding


def win_shares(winners: np.ndarray) -> np.ndarray:
    """Each seat's share of each game's win: ``1 / (number of winners)`` for a winner, else 0.

    ``winners``: ``(G, K)`` bool (or one game's ``(K,)``).
    """
    w = np.asarray(winners, dtype=bool)
    return w / np.maximum(w.sum(axis=-1, keepdims=True), 1)


def wins_draws_losses(winners: np.ndarray, seats: np.ndarray) -> tuple[int, int, int]:
    """``(wins, draws, losses)`` of the seat ``seats[g]`` of each game ``g``: a sole win, a shared
    win (a draw), or no win. ``winners``: ``(G, K)`` bool."""
    w = np.asarray(winners, dtype=bool)
    mine = w[np.arange(w.shape[0]), np.asarray(seats, dtype=np.int64)]
    sole = mine & (w.sum(axis=1) == 1)
    return int(sole.sum()), int((mine & ~sole).sum()), int((~mine).sum())
