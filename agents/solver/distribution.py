"""Exact distribution of the final score of the optimal solitaire player of a scorecard game.

The solver's recursion carried forward over probabilities instead of backward over values: the
probability mass of every ``(turn-start state, points so far)``, one turn (one filled box) at a
time. Within a turn the ``optimal`` agent's plan of the state (:class:`~agents.solver.plans.TurnPlan`,
built from the very same numbers: :meth:`~agents.solver.scorecard.TurnSolver.box_values_of` and
the column-by-column :meth:`~agents.solver.scorecard.TurnSolver.widget`) decides each keep and
box, with the agent's tie-breaking (scoring wins ties within ``1e-9``; the first best re-throw
action; the first best box), so the probability of each final throw entered in each box
follows exactly. What an entry scores (box points, upper bonus, five-of-a-kind bonus, joker) and
the state it leads to are read from the solver's one scoring step, ``box_values_of``, with a
table of zeros (the points) and a table of state numbers (the next state).

The pass is vectorized by level (the number of filled boxes): a level holds the score
distribution of each reachable state as a row ``(states, points so far)``, carried to the next
level by a numba loop (the ``[solver]`` extra). The result is a small array kept in the solver's
disk cache (:func:`agents.solver.cache.cached_array`); the time and memory a computation takes
are measured in ``docs/benchmarks/2026-12-07-epyc-2core/score-distribution.md``. Probabilities
are float64: they sum to 1 and their mean is the solver's optimum within :data:`TOLERANCE`.

>>> from agents.solver import score_distribution
>>> d = score_distribution("yahtzee", upper_bonus_threshold=0)  # the bonus with the first box
>>> int(d.scores[0]) >= 35, round(d.at_least(35), 12), d.percentile(0) == int(d.scores[0])
(True, 1.0, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

import numpy as np

from agents.solver.cache import cache_key, cached_array, single_thread_blas
from agents.solver.scorecard import ScorecardSolution, TurnSolver
from dice_envs.rules import ConfigError
from dice_envs.rules.scorecard import ScorecardRules
from dice_envs.tables import scorecard_tables

__all__ = ["TOLERANCE", "FitTest", "ScoreDistribution", "fit_test", "solve_distribution"]

#: What the exact computation promises: the probabilities sum to 1, and their mean is the solver's
#: optimum, within this (float64 rounding over a few million additions).
TOLERANCE = 1e-9
#: States whose turns are solved together (bounds the ``(states, boxes, throws)`` arrays).
_CHUNK = 512


@dataclass(frozen=True, eq=False)
class ScoreDistribution:
    """The probability of every final score of a solitaire game under optimal play.

    ``scores`` ascending, each with a positive probability; ``probabilities`` summing to 1. A
    percentile is the smallest score whose cumulative probability reaches ``q`` percent.
    """

    rules: ScorecardRules
    scores: np.ndarray = field(repr=False)  #: (n,) int64, ascending
    probabilities: np.ndarray = field(repr=False)  #: (n,) float64

    def __post_init__(self) -> None:
        scores = np.asarray(self.scores, dtype=np.int64)
        probs = np.asarray(self.probabilities, dtype=np.float64)
        if scores.ndim != 1 or scores.shape != probs.shape:
            raise ValueError(
                f"scores {scores.shape} and probabilities {probs.shape}: two 1-D arrays of one length"
            )
        if np.any(np.diff(scores) <= 0) or np.any(probs <= 0) or abs(probs.sum() - 1.0) > TOLERANCE:
            raise ValueError("scores must ascend and probabilities be positive and sum to 1")
        for name, array in (("scores", scores), ("probabilities", probs)):
            array.flags.writeable = False
            object.__setattr__(self, name, array)

    @property
    def mean(self) -> float:
        """The expected final score."""
        return float(self.scores @ self.probabilities)

    @property
    def std(self) -> float:
        """The standard deviation of the final score."""
        return float(np.sqrt(((self.scores - self.mean) ** 2) @ self.probabilities))

    @property
    def median(self) -> int:
        """:meth:`percentile` 50."""
        return self.percentile(50)

    def percentile(self, q: float) -> int:
        """The smallest score ``s`` with ``P(score <= s) >= q / 100``, for ``q`` in ``[0, 100]``."""
        if not 0 <= q <= 100:
            raise ValueError(f"a percentile is a number from 0 to 100, got {q!r}")
        cdf = np.cumsum(self.probabilities)
        return int(self.scores[min(int(np.searchsorted(cdf, q / 100 - TOLERANCE)), len(cdf) - 1)])

    def at_least(self, x: float) -> float:
        """``P(score >= x)``."""
        return float(self.probabilities[self.scores >= x].sum())


class FitTest(NamedTuple):
    """Pearson's chi-square test of sampled scores against a :class:`ScoreDistribution`."""

    statistic: float  #: sum over bins of (observed - expected)^2 / expected
    dof: int  #: bins - 1
    p_value: float  #: P(chi-square with ``dof`` degrees of freedom >= ``statistic``)
    games: int


def fit_test(distribution: ScoreDistribution, samples: np.ndarray, min_expected: float = 5.0) -> FitTest:
    """Test whether ``samples`` (final scores of played games) come from ``distribution``.

    Adjacent scores are merged into bins, from the lowest up, until each bin expects at least
    ``min_expected`` games (a short last bin joins the one before); a sampled score that the
    distribution gives no probability counts in the bin around it.
    """
    samples = np.asarray(samples).ravel()
    n = len(samples)
    if n == 0 or min_expected <= 0:
        raise ValueError(f"fit_test needs sampled scores and min_expected > 0, got {n} and {min_expected!r}")
    expected = n * distribution.probabilities
    edges, acc = [], 0.0  # edges: the index of the first score of each bin but the first
    for i, e in enumerate(expected):
        if acc >= min_expected:
            edges.append(i)
            acc = 0.0
        acc += e
    if edges and acc < min_expected:
        edges.pop()
    bins = np.split(np.arange(len(expected)), edges)
    want = np.array([expected[b].sum() for b in bins])
    upper = distribution.scores[[b[-1] for b in bins[:-1]]]  # the highest score of each bin but the last
    got = np.bincount(np.searchsorted(upper, samples), minlength=len(bins))
    statistic = float(((got - want) ** 2 / want).sum())
    dof = len(bins) - 1
    return FitTest(statistic, dof, _chi2_sf(statistic, dof), n)


def _chi2_sf(x: float, dof: int) -> float:
    """``P(chi-square(dof) >= x)``: the regularized upper incomplete gamma ``Q(dof / 2, x / 2)``
    (series below ``a + 1``, continued fraction above; Numerical Recipes, section 6.2)."""
    if dof < 1:
        return 1.0
    a, x = dof / 2, x / 2
    if x <= 0:
        return 1.0
    front = math.exp(-x + a * math.log(x) - math.lgamma(a))
    if x < a + 1:
        term = total = 1 / a
        k = a
        while term > total * 1e-17:
            k += 1
            term *= x / k
            total += term
        return max(0.0, 1 - front * total)
    b, c, d = x + 1 - a, 1e300, 1 / (x + 1 - a)
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = 1 / (an * d + b)
        c = b + an / c
        h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return front * h


def solve_distribution(solution: ScorecardSolution, use_cache: bool = True) -> ScoreDistribution:
    """The exact score distribution of the optimal player of ``solution``'s rules (from the
    solver's disk cache when there; memoized in the process)."""
    if not use_cache:
        return _distribution(solution, use_cache=False)
    got = _MEMO.get(solution.rules)
    if got is None:
        got = _MEMO[solution.rules] = _distribution(solution, use_cache=True)
    return got


_MEMO: dict[ScorecardRules, ScoreDistribution] = {}


def _distribution(solution: ScorecardSolution, use_cache: bool) -> ScoreDistribution:
    rules = solution.rules
    if use_cache:
        key = cache_key("score-distribution", rules.game, rules.to_dict())
        meta = {"game": rules.game, "rules": rules.to_dict()}
        dense, _ = cached_array(key, lambda: _dense(solution), meta, dtype=np.float64)
    else:
        dense = _dense(solution)
    scores = np.flatnonzero(dense > 0)
    return ScoreDistribution(rules, scores, dense[scores])


def _dense(solution: ScorecardSolution) -> np.ndarray:
    """``P(final score = s)`` at index ``s`` (0 to the highest score reached)."""
    constant = round(solution.expected_score() - solution.value)  # a threshold-0 upper bonus
    with single_thread_blas():
        return np.concatenate([np.zeros(constant), _forward(solution)])


def _forward(solution: ScorecardSolution) -> np.ndarray:
    """The distribution of the points entered over the game, level by level (a level's states
    are solver state numbers: the flat index of ``(mask, u, z)`` in the value table)."""
    c, values = solution.solver, solution.values
    ids = np.array([0])  # the empty card
    dist = np.ones((1, 1))  # (states, points so far)
    for _ in range(c.k):
        src, nxt, points, prob = _transitions(c, values, ids)
        ids, dst = np.unique(nxt, return_inverse=True)
        dist = _carry(dist, src, dst.ravel(), points, prob, len(ids))
    return dist.sum(axis=0)


def _transitions(c: TurnSolver, values: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every ``(state, next state, points)`` a turn of the states ``ids`` leads to with a positive
    probability: ``(row of ids, next state number, points, probability)``, each ``(m,)``."""
    states = np.stack(np.unravel_index(ids, values.shape), axis=1)
    zeros, numbers = _scoring_tables(values.shape)
    parts = []
    for lo in range(0, len(states), _CHUNK):
        chunk = states[lo : lo + _CHUNK]
        box_values = c.box_values_of(values, chunk)
        box = box_values.argmax(axis=1)[:, None]  # the first best box of each throw
        prob = _final_throws(c, box_values.max(axis=1))
        points = np.take_along_axis(c.box_values_of(zeros, chunk), box, axis=1)[:, 0]
        nxt = np.take_along_axis(c.box_values_of(numbers, chunk), box, axis=1)[:, 0] - points
        row = np.broadcast_to(np.arange(lo, lo + len(chunk))[:, None], prob.shape)
        keep = prob > 0
        parts.append(_merge(row[keep], nxt[keep].astype(np.int64), points[keep], prob[keep]))
    return tuple(np.concatenate(p) for p in zip(*parts, strict=True))


@cache
def _scoring_tables(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Tables read by ``box_values_of`` in place of the values: zeros (it then gives an entry's
    points) and each state's number (it then gives the points plus the next state's number)."""
    numbers = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return np.zeros(shape), numbers


def _merge(row: np.ndarray, nxt: np.ndarray, points: np.ndarray, prob: np.ndarray) -> tuple[np.ndarray, ...]:
    """The outcomes with the same state, next state and points summed into one."""
    if np.any(points != np.round(points)) or np.any(points < 0):
        raise ConfigError("an entry scored a negative or fractional number of points")
    pts = points.astype(np.int64)
    span_n, span_p = int(nxt.max()) + 1, int(pts.max()) + 1
    key, inverse = np.unique((row * span_n + nxt) * span_p + pts, return_inverse=True)
    total = np.bincount(inverse.ravel(), weights=prob, minlength=len(key))
    return key // (span_n * span_p), key // span_p % span_n, key % span_p, total


@cache
def _keep_choices() -> np.ndarray:
    """``(C, 252)``: the keep of each legal re-throw action of each throw, in action order, padded
    with keep 210 (which :func:`_final_throws` values at ``-inf``)."""
    t = scorecard_tables()
    width = int(t.reroll_legal.sum(axis=1).max())
    out = np.full((width, len(t.rolls)), 210, dtype=np.int64)
    for r in range(len(t.rolls)):
        actions = np.flatnonzero(t.reroll_legal[r])
        out[: len(actions), r] = t.reroll_keep[r, actions]
    return out


def _final_throws(c: TurnSolver, best_box: np.ndarray) -> np.ndarray:
    """``(n, 252)``: the probability that a turn ends by entering each throw, on ``n`` cards whose
    best box values per throw are ``best_box`` ``(n, 252)``, keeping the way the ``optimal``
    agent does (:func:`agents.players.scorecard._choose_at`)."""
    n = len(best_box)
    choices = _keep_choices()
    _, keep_values = c.widget(np.ascontiguousarray(best_box.T), by_column=True)
    p = np.broadcast_to(c.roll_prob, best_box.shape).copy()
    entered = np.zeros_like(p)
    rows = np.arange(n)[:, None] * 210
    for kv in keep_values:  # one per throw that may be followed by another
        padded = np.concatenate([kv.T, np.full((n, 1), -np.inf)], axis=1)
        best = np.full(best_box.shape, -np.inf)
        keep = np.zeros(best_box.shape, dtype=np.int64)
        for action_keeps in choices:  # the first action of the best value, as np.argmax
            value = padded[:, action_keeps]
            better = value > best
            best = np.where(better, value, best)
            keep = np.where(better, action_keeps, keep)
        rethrow = best > best_box + 1e-9  # scoring wins ties
        entered += np.where(rethrow, 0.0, p)
        kept = np.bincount((rows + keep).ravel(), np.where(rethrow, p, 0.0).ravel(), minlength=n * 210)
        p = kept.reshape(n, 210) @ c.k2r
    return entered + p


def _carry(
    dist: np.ndarray, src: np.ndarray, dst: np.ndarray, points: np.ndarray, prob: np.ndarray, n_dst: int
) -> np.ndarray:
    """The next level's ``(n_dst, points so far)``: each row ``src`` of ``dist`` shifted by
    ``points`` and weighted by ``prob`` into row ``dst`` (the numba loop of
    :mod:`agents.solver._distribution_numba`, over each row's nonzero columns only)."""
    nonzero = dist > 0
    first = nonzero.argmax(axis=1)
    last = dist.shape[1] - 1 - nonzero[:, ::-1].argmax(axis=1)
    out = np.zeros((n_dst, int(last.max() + points.max()) + 1))
    _kernel()(dist, first, last, src, dst, points, prob, out)
    return out


@cache
def _kernel() -> Callable[..., None]:
    try:
        from agents.solver._distribution_numba import carry
    except ImportError as exc:  # pragma: no cover - numba ships with the [solver] extra
        raise ImportError(
            "the exact score distribution needs numba for its inner loop: "
            "pip install 'dice-envs[solver]' (also pulled in by [train] and [dev])"
        ) from exc
    return carry
