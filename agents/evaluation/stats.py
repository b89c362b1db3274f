"""Statistics of played games: intervals, win counting, per-agent and per-pairing summaries.

Wins are counted here only: :func:`win_shares` (a seat's share of a game's win, ties split) and
:func:`wins_draws_losses` (sole wins, shared wins, losses of one agent's seats); the intervals are
:func:`mean_ci` (normal approximation) and :func:`wilson_interval`. Everything that reports a
score or a win rate (tournaments, training's evaluation table, ``scripts/measure_bots.py``, the
leaderboard, :mod:`agents.regret`) uses these.

>>> win_shares(np.array([[True, False], [True, True]])).tolist()
[[1.0, 0.0], [0.5, 0.5]]
>>> wins_draws_losses(np.array([[True, False], [True, True], [False, True]]), np.array([0, 1, 0]))
(1, 1, 1)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dice_envs.rules import RuleConfig, ScorecardRules

if TYPE_CHECKING:
    from .tournament import GameRecord

__all__ = [
    "Z95",
    "agent_stats",
    "mean_ci",
    "pairing_stats",
    "wilson_interval",
    "win_matrix",
    "win_shares",
    "wins_draws_losses",
]

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


# ---------------------------------------------------------------------------- tournament summaries
def agent_stats(
    records: Sequence[GameRecord],
    spec: str,
    rules: RuleConfig,
    optimum: float | None = None,
    ratings: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ``results.json`` entry of one agent over every seat it took in ``records``.

    Scores (mean, 95% interval, median, sd, range); scorecard games: upper-bonus and five-of-a-kind
    rates and the gap to ``optimum``; Farkle: the rate of reaching the target, mean turns (to the
    target) and truncations; tables (two or more seats): win share with its Wilson interval and
    the rating from ``ratings`` (:func:`agents.evaluation.ratings.rate_agents`).
    """
    scores: list[int] = []
    wins = 0.0
    bonus: list[bool] = []
    five: list[bool] = []
    reached: list[bool] = []
    turns: list[int] = []
    turns_to_target: list[int] = []
    truncated = 0
    multi = False
    for rec in records:
        for s, seat_spec in enumerate(rec.seats):
            if seat_spec != spec:
                continue
            multi = multi or len(rec.seats) > 1
            scores.append(rec.scores[s])
            wins += rec.win_shares()[s]
            turns.append(rec.turns[s])
            truncated += rec.truncated
            if rec.upper_bonus:
                bonus.append(rec.upper_bonus[s])
                five.append(rec.five_kind[s])
            if rec.reached_target:
                reached.append(rec.reached_target[s])
                if rec.reached_target[s]:
                    turns_to_target.append(rec.turns[s])
    n = len(scores)
    mean, ci = mean_ci(scores)
    x = np.asarray(scores, dtype=np.float64)
    stats: dict[str, Any] = {
        "games": n,
        "mean_score": mean,
        "ci95": [ci[0], ci[1]],
        "median": float(np.median(x)),
        "std": float(x.std(ddof=1)) if n > 1 else 0.0,
        "min": int(x.min()),
        "max": int(x.max()),
        "win_rate": None,
        "win_rate_ci95": None,
        "rating": None,
        "rating_ci95": None,
        "rating_sd": None,
    }
    if isinstance(rules, ScorecardRules):
        stats["upper_bonus_rate"] = float(np.mean(bonus))
        stats["five_kind_rate"] = float(np.mean(five))
        stats["gap_to_optimum"] = None if optimum is None else float(optimum - mean)
    else:
        stats["target_rate"] = float(np.mean(reached))
        stats["mean_turns"] = float(np.mean(turns))
        stats["mean_turns_to_target"] = float(np.mean(turns_to_target)) if turns_to_target else None
        stats["truncated_rate"] = truncated / n
    if multi:
        lo, hi = wilson_interval(wins, n)
        stats["wins"] = wins
        stats["win_rate"] = wins / n
        stats["win_rate_ci95"] = [lo, hi]
        if ratings is not None:
            stats["rating"] = ratings[spec]["rating"]
            stats["rating_ci95"] = ratings[spec]["ci95"]
            stats["rating_sd"] = ratings[spec]["sd"]
    return stats


def pairing_stats(records: Sequence[GameRecord], pairing: Sequence[str], deals: int) -> dict[str, Any]:
    """The ``results.json`` entry of one pairing (``records``: its games): wins (shared wins split),
    win rates with Wilson intervals, mean scores, shared wins and games per agent and seat."""
    k = len(pairing)
    wins = [0.0] * k
    scores: list[list[int]] = [[] for _ in range(k)]
    seat_games = [[0] * k for _ in range(k)]
    shared = 0
    for rec in records:
        shares = rec.win_shares()
        shared += len(rec.winners) > 1
        for s, spec in enumerate(rec.seats):
            i = list(pairing).index(spec)
            wins[i] += shares[s]
            scores[i].append(rec.scores[s])
            seat_games[i][s] += 1
    n = len(records)
    return {
        "agents": list(pairing),
        "games": n,
        "deals": deals,
        "wins": wins,
        "win_rate": [w / n for w in wins],
        "ci95": [list(wilson_interval(w, n)) for w in wins],
        "mean_score": [float(np.mean(s)) for s in scores],
        "shared_wins": shared,
        "seat_games": seat_games,
    }


def win_matrix(records: Sequence[GameRecord], agents: Sequence[str]) -> np.ndarray:
    """``M[i, j]``: win share of agent ``i`` over the games where agent ``j`` sat too (NaN: none)."""
    idx = {a: i for i, a in enumerate(agents)}
    n = len(agents)
    wins = np.zeros((n, n))
    games = np.zeros((n, n))
    for rec in records:
        shares = rec.win_shares()
        for s, a in enumerate(rec.seats):
            for b in rec.seats:
                if a != b:
                    wins[idx[a], idx[b]] += shares[s]
                    games[idx[a], idx[b]] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(games > 0, wins / np.maximum(games, 1), np.nan)
