"""The forward model of Farkle, with explicit chance.

Throwing on leaves the dice left to throw (all six after hot dice); banking leaves the next
turn's six dice pending; a farkle is a chance outcome that also passes the turn. Every step is
:class:`~dice_envs.engine.farkle.FarkleEngine`'s two halves on its state arrays.

>>> from dice_envs.rules import FarkleRules
>>> state = FarkleState.new(FarkleRules())
>>> state.is_chance_node(), len(state.chance_outcomes())
(True, 462)
>>> s = state.apply_outcome((1, 1, 1, 5, 2, 3))
>>> after = s.afterstate(FarkleGame.action([0, 1, 2], bank=False))   # set 1-1-1 aside, throw on
>>> after.game.turn_total, after.dice_to_throw
(1000, 3)
>>> lost = sum(p for o, p in after.chance_outcomes() if after.apply_outcome(o).is_chance_node())
>>> round(lost, 4)   # three dice that score nothing (a farkle): 60 of the 216 throws
0.2778
"""

from __future__ import annotations

import numpy as np

from ..engine import farkle as engine
from ..engine import farkle_turn as turn
from ..engine.farkle_game import FarkleGame
from .model import ForwardBatch, ForwardState

__all__ = ["FarkleBatch", "FarkleState"]


class FarkleBatch(ForwardBatch):
    """``N`` Farkle states as arrays, stepped at once (no Python loop over rows): the arrays of
    :class:`~dice_envs.engine.farkle.FarkleEngine` (its
    :data:`~dice_envs.engine.farkle.STATE_FIELDS`), stepped by its halves. Transitions return new
    batches.
    """

    _engine = engine
    _fields = engine.STATE_FIELDS
    game_class = FarkleGame

    def state(self, i: int) -> FarkleState:
        """Row ``i`` as a scalar :class:`FarkleState`."""
        return FarkleState._of(self.take([int(i)]))

    @property
    def totals(self) -> np.ndarray:  # type: ignore[override]
        """Banked totals ``(N, P)``, as the engine names them."""
        return self.banked


class FarkleState(ForwardState):
    """One Farkle game as a search state: a decision node, a chance node or a terminal state.

    A one-row :class:`FarkleBatch`; :attr:`game` reads it as a
    :class:`~dice_envs.engine.farkle_game.FarkleGame` (banked totals, turns, turn total, first
    throw, seat, final round). At a chance node ``game.dice`` is ``()`` and :attr:`dice_to_throw`
    the dice to throw; ``game.first_throw`` says whether that throw opens the turn (where a farkle
    means bankruptcy).
    """

    _batch_class = FarkleBatch

    def __repr__(self) -> str:
        b, k = self._batch, self.dice_to_throw
        dice = turn.farkle_turn_tables().faces[int(b.roll[0])]
        where = f"throw {k} dice" if k else ("over" if self.is_terminal() else f"dice {dice}")
        banked = b.banked[0].tolist()
        return f"FarkleState(seat {self.seat}, turn total {int(b.turn_total[0])}, banked {banked}, {where})"
