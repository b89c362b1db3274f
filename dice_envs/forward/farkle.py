"""The forward model of Farkle, with explicit chance.

A decision (set dice aside, then bank or throw on) leads to an *afterstate*:

* throwing on: the turn total with the set-aside points, and a chance node throwing the dice
  left (all six after hot dice, as :func:`~dice_envs.engine.farkle_turn.set_aside` says);
* banking: the turn is over (the final round and the game's end as
  :func:`~dice_envs.engine.farkle_turn.end_turn` says), and the next turn's six dice are
  pending (no dice once the game is over).

An outcome that scores nothing is a farkle: the turn total is lost, on a turn's first throw the
banked total too where the rules have bankruptcy, the turn ends, and the next turn's six dice are
pending; so a chance node can lead to another chance node. Every step is the batched engine's
own two halves (:func:`~dice_envs.engine.farkle.apply_decisions`,
:func:`~dice_envs.engine.farkle.apply_throws`) on its state arrays: :class:`FarkleBatch` holds
``N`` rows of :class:`~dice_envs.engine.farkle.FarkleEngine`'s arrays, :class:`FarkleState` one.

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
    _game_class = FarkleGame

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
