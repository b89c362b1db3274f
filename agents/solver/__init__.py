"""Exact solvers: the solitaire optimum of the scorecard games and the max-expected Farkle turn.

>>> round(expected_turn_points("farkle", bank_minimum=350), 2)
595.12

``expected_score`` solves a scorecard game once per rule set (seconds for 13 boxes) and keeps the
table in the on-disk cache (:mod:`agents.solver.cache`): ``expected_score("yahtzee")`` is
254.5877, the value known from the literature.
"""

from __future__ import annotations

from typing import Any

from dice_envs.rules import ConfigError, FarkleRules, ScorecardRules, make_rules

from .cache import SOLVER_VERSION, cache_dir
from .farkle import FarkleSolution, solve_farkle
from .scorecard import ScorecardSolution, TurnPlan, solve_scorecard

__all__ = [
    "SOLVER_VERSION",
    "FarkleSolution",
    "ScorecardSolution",
    "TurnPlan",
    "cache_dir",
    "expected_score",
    "expected_turn_points",
    "farkle_solution",
    "scorecard_solution",
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
