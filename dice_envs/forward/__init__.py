"""A forward model of the dice games for planning, with explicit chance (OpenSpiel's vocabulary).

A state is a decision node (the seat to act picks one of :meth:`~ForwardState.legal_actions`),
a chance node (dice are to be thrown: :meth:`~ForwardState.chance_outcomes` lists the distinct
throws as sorted faces with their exact probabilities) or terminal. :meth:`~ForwardState.afterstate`
is a decision's result before any die moves; :meth:`~ForwardState.apply_outcome` is a throw's.
Every step is computed by the engines' own rule functions, on the engines' own state:

* :class:`ScorecardState` / :class:`ScorecardBatch` — Spiffel, Yahtzee, Dice Poker
  (:mod:`dice_envs.engine.scorecard_flow`);
* :class:`FarkleState` / :class:`FarkleBatch` — Farkle (:mod:`dice_envs.engine.farkle_turn`).

A state is built from the env's game (``from_game``), from a row of a batched engine
(``from_engine``) or fresh (``new``); a batch from an engine or from scalar states.

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
