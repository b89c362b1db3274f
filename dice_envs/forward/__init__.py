"""A forward model of the dice games for planning, with explicit chance (OpenSpiel's vocabulary).

The :doc:`forward model guide </guide/forward-model>` describes it: decision, chance and terminal
nodes, afterstates, exact throw outcomes, and the engines' two halves that every step runs.
:class:`ScorecardState` / :class:`ScorecardBatch` serve Spiffel, Yahtzee and Dice Poker,
:class:`FarkleState` / :class:`FarkleBatch` Farkle.

>>> from dice_envs.rules import make_rules
>>> state = ScorecardState.new(make_rules("yahtzee"))
>>> state.current_player() == CHANCE, len(state.chance_outcomes())
(True, 252)
>>> round(sum(p for _, p in state.chance_outcomes()), 12)
1.0
"""

from __future__ import annotations

from .chance import CHANCE, N_OUTCOMES, TERMINAL, outcome_index, throw_outcomes
from .farkle import FarkleBatch, FarkleState
from .model import ForwardBatch, ForwardState
from .scorecard import ScorecardBatch, ScorecardState
from .turns import farkle_throws, keep_outcomes

__all__ = [
    "CHANCE",
    "N_OUTCOMES",
    "TERMINAL",
    "FarkleBatch",
    "FarkleState",
    "ForwardBatch",
    "ForwardState",
    "ScorecardBatch",
    "ScorecardState",
    "farkle_throws",
    "forward_state",
    "keep_outcomes",
    "outcome_index",
    "throw_outcomes",
]


def forward_state(game: object) -> ScorecardState | FarkleState:
    """The forward state of a scalar game of either family (a copy: the game is untouched)."""
    from ..engine.farkle_game import FarkleGame
    from ..engine.scorecard_game import ScorecardGame

    if isinstance(game, ScorecardGame):
        return ScorecardState.from_game(game)
    if isinstance(game, FarkleGame):
        return FarkleState.from_game(game)
    raise TypeError(f"expected a ScorecardGame or a FarkleGame, got {type(game).__name__}")
