"""Exact solvers: the solitaire optimum of the scorecard games, the max-expected Farkle turn and
two-player Farkle played to win (:func:`win_probability`, :mod:`agents.solver.farkle_win`).

>>> round(expected_turn_points("farkle", bank_minimum=350), 2)
595.12

``expected_score`` solves a scorecard game once per rule set (seconds for 13 boxes) and keeps the
table in the on-disk cache (:mod:`agents.solver.cache`): ``expected_score("yahtzee")`` is
254.5877, the value known from the literature. :func:`score_distribution` gives the exact
probability of every final score under that optimal play (cached the same way).
"""

from __future__ import annotations

from typing import Any

from agents.solver.cache import SOLVER_VERSION, cache_dir
from agents.solver.distribution import ScoreDistribution, solve_distribution
from agents.solver.farkle import FarkleSolution, solve_farkle
from agents.solver.scorecard import ScorecardSolution, TurnPlan, solve_scorecard
from dice_envs.rules import ConfigError, FarkleRules, ScorecardRules, make_rules

__all__ = [
    "SOLVER_VERSION",
    "FarkleSolution",
    "ScoreDistribution",
    "ScorecardSolution",
    "TurnPlan",
    "cache_dir",
    "expected_score",
    "expected_turn_points",
    "farkle_solution",
    "farkle_win_solution",
    "score_distribution",
    "scorecard_solution",
    "win_probability",
]


def scorecard_solution(game: str | ScorecardRules = "spiffel", **rules: Any) -> ScorecardSolution:
    """The solved value table of a scorecard game (from the cache when there)."""
    r = make_rules(game, **rules)
    if not isinstance(r, ScorecardRules):
        raise ConfigError(
            f"the scorecard solver needs a scorecard game (spiffel, dice_poker, yahtzee), got {r.game!r}"
        )
    return solve_scorecard(r)


def expected_score(game: str | ScorecardRules = "spiffel", **rules: Any) -> float:
    """Optimal expected grand total of a solitaire scorecard game under any rule parameters.

    ``game`` is a game name (``spiffel``, ``dice_poker``, ``yahtzee``) or a rules object; keyword
    arguments change rule parameters, e.g. ``expected_score("yahtzee", yahtzee_bonus=0,
    joker=False)`` (245.8708).
    """
    return scorecard_solution(game, **rules).expected_score()


def score_distribution(game: str | ScorecardRules = "spiffel", **rules: Any) -> ScoreDistribution:
    """The exact probability of every final score of the optimal solitaire player of a scorecard
    game (:mod:`agents.solver.distribution`), with its mean (the optimum of
    :func:`expected_score`), standard deviation, percentiles and ``at_least(x)`` = P(score >= x).

    ``game`` and keyword arguments as for :func:`expected_score`. The first use of a rule set
    takes about a minute (numba, the ``[solver]`` extra); the result is kept in the solver's
    disk cache.
    """
    return solve_distribution(scorecard_solution(game, **rules))


def farkle_solution(game: str | FarkleRules = "farkle", **rules: Any) -> FarkleSolution:
    """The solved max-expected turn policy of Farkle."""
    r = make_rules(game, **rules)
    if not isinstance(r, FarkleRules):
        raise ConfigError(f"the turn solver is for farkle, got {r.game!r}")
    return solve_farkle(r.bank_minimum)


def expected_turn_points(game: str | FarkleRules = "farkle", **rules: Any) -> float:
    """Expected points banked in one Farkle turn under the max-expected policy.

    Bankruptcy is not counted; banking needs a turn total greater than ``bank_minimum``; hot
    dice are thrown again.
    """
    return farkle_solution(game, **rules).expected_turn_points


def farkle_win_solution(game: str | FarkleRules = "farkle", num_players: int = 2, **rules: Any) -> Any:
    """The solved win-probability tables of two-player Farkle (:mod:`agents.solver.farkle_win`).

    ``max_turns`` plays no part (the solved game has no turn limit). Needs numba (``[solver]``).
    """
    r = make_rules(game, **rules)
    if not isinstance(r, FarkleRules):
        raise ConfigError(f"the win-probability solver is for farkle, got {r.game!r}")
    if num_players != 2:
        raise ConfigError(f"the win-probability solver is exact for num_players=2 only, got {num_players!r}")
    from agents.solver.farkle_win import solve_farkle_win

    return solve_farkle_win(r)


def win_probability(game: str | FarkleRules = "farkle", num_players: int = 2, **rules: Any) -> float:
    """P(seat 0 wins) in two-player Farkle when both seats play to maximise their own chance of
    winning (a shared win counts half), for any ``target``, ``bank_minimum`` and ``bankruptcy``.

    ``max_turns`` is ignored, with a warning: the solved game has no turn limit. Solving the
    default rules takes minutes (cached on disk afterwards); small targets take seconds.
    """
    r = make_rules(game, **rules)
    if isinstance(r, FarkleRules) and "max_turns" in rules and r.max_turns is not None:
        import warnings

        warnings.warn(
            f"max_turns={r.max_turns} is ignored: the exact solver plays the game without a turn limit",
            stacklevel=2,
        )
    return farkle_win_solution(r, num_players=num_players).win_probability()
