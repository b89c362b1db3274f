"""Ratings: Bradley-Terry strengths on the Elo scale, fitted to all games of a run at once.

:func:`rate_agents` turns tournament records into ratings with bootstrap intervals;
:func:`bradley_terry` is the maximum-likelihood fit behind it (Hunter's MM iteration).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from agents.evaluation.records import GameRecord

__all__ = [
    "BOOTSTRAP_SAMPLES",
    "BOOTSTRAP_SEED",
    "ELO_MEAN",
    "ELO_SCALE",
    "PRIOR_DRAWS",
    "bradley_terry",
    "rate_agents",
]

#: Elo-scale points per unit of the Bradley-Terry log-strength (400 / ln 10: 400 points = 10:1 odds).
ELO_SCALE = 400.0 / math.log(10.0)
#: Mean rating of the agents of a run (ratings are relative; only differences mean something).
ELO_MEAN = 1500.0
#: Bootstrap resamples for the rating intervals, and their fixed seed.
BOOTSTRAP_SAMPLES = 200
BOOTSTRAP_SEED = 20260101
#: Virtual drawn game between every two agents that met (a weak prior: finite ratings for an
#: agent that won or lost every game; symmetric, so it changes no order of a balanced schedule).
PRIOR_DRAWS = 1.0


def _canonical(records: Sequence[GameRecord]) -> list[GameRecord]:
    """The games in an order that depends on their content only (ratings never see play order)."""
    return sorted(records, key=lambda r: (r.seats, r.deal, r.rotation, r.seed, r.scores, r.winners))


def _pair_outcomes(records: Sequence[GameRecord], index: Mapping[str, int]) -> np.ndarray:
    """``C[g, i, j]``: how much agent ``i`` beat agent ``j`` in game ``g`` (1 win, 0.5 tie, 0 loss).

    A seat places by (shares the win, score): winners beat every other seat, two winners tie,
    among the others the higher score beats the lower. With two seats this is the win itself.
    """
    n = len(index)
    out = np.zeros((len(records), n, n))
    for g, rec in enumerate(records):
        key = [(s in rec.winners, rec.scores[s]) for s in range(len(rec.seats))]
        for a, sa in enumerate(rec.seats):
            for b, sb in enumerate(rec.seats):
                if a == b or sa == sb:
                    continue
                i, j = index[sa], index[sb]
                out[g, i, j] += 1.0 if key[a] > key[b] else 0.5 if key[a] == key[b] else 0.0
    return out


def bradley_terry(wins: np.ndarray, prior_draws: float = PRIOR_DRAWS, tol: float = 1e-10) -> np.ndarray:
    """Maximum-likelihood Bradley-Terry log-strengths (mean 0) from ``wins[i, j]``.

    ``wins[i, j]``: (fractional) wins of ``i`` over ``j``. Solved by the MM iteration of Hunter
    (2004), ``p_i = W_i / sum_j N_ij / (p_i + p_j)``, with ``prior_draws`` virtual drawn games
    between every two agents that met. Agents that never met anyone get 0.

    >>> r = bradley_terry(np.array([[0.0, 30.0], [10.0, 0.0]]), prior_draws=0.0)
    >>> round(float(r[0] - r[1]), 4) == round(math.log(3.0), 4)
    True
    """
    w = np.asarray(wins, dtype=np.float64)
    games = w + w.T
    met = games > 0
    w = w + 0.5 * prior_draws * met
    games = w + w.T
    total = w.sum(axis=1)
    p = np.ones(len(w))
    active = total > 0
    for _ in range(10000):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(active, total / np.where(denom > 0, denom, 1.0), 1.0)
        new /= np.exp(np.log(new[active]).mean()) if active.any() else 1.0
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            p = new
            break
        p = new
    r = np.log(p)
    return r - r.mean()


def rate_agents(
    records: Sequence[GameRecord],
    agents: Sequence[str],
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, dict[str, Any]]:
    """Bradley-Terry (Elo-scale) ratings fitted to all games at once, with bootstrap intervals.

    Neither the fit (every pairwise result of every game) nor the bootstrap (``samples`` resamples
    of the games in a canonical order, fixed ``seed``) depends on the order of the games. Returns
    ``{spec: {"rating", "ci95": [lo, hi], "sd"}}`` on the Elo scale (mean :data:`ELO_MEAN`).
    """
    index = {a: i for i, a in enumerate(agents)}
    recs = [r for r in _canonical(records) if len(r.seats) >= 2]
    if not recs:
        return {a: {"rating": ELO_MEAN, "ci95": [ELO_MEAN, ELO_MEAN], "sd": 0.0} for a in agents}
    outcomes = _pair_outcomes(recs, index)
    point = bradley_terry(outcomes.sum(axis=0))
    rng = np.random.default_rng(seed)
    boot = np.empty((samples, len(agents)))
    for b in range(samples):
        counts = rng.multinomial(len(recs), np.full(len(recs), 1.0 / len(recs)))
        boot[b] = bradley_terry(np.tensordot(counts, outcomes, axes=1))
    elo = ELO_MEAN + ELO_SCALE * point
    belo = ELO_MEAN + ELO_SCALE * boot
    lo, hi = np.percentile(belo, [2.5, 97.5], axis=0) if samples else (elo, elo)
    sd = belo.std(axis=0, ddof=1) if samples > 1 else np.zeros(len(agents))
    return {
        a: {"rating": float(elo[i]), "ci95": [float(lo[i]), float(hi[i])], "sd": float(sd[i])}
        for a, i in index.items()
    }
