"""The forward model of the scorecard games (Spiffel, Yahtzee, Dice Poker), with explicit chance.

A re-throw's afterstate holds the kept dice and throws the others; a box entry's is the next
turn waiting for its five dice (or the end). Every step is
:class:`~dice_envs.engine.scorecard.ScorecardEngine`'s two halves on its state arrays.

>>> from dice_envs.engine import ScorecardGame
>>> from dice_envs.rules import SpiffelRules
>>> game = ScorecardGame(SpiffelRules(), seed=0)
>>> game.dice_source.clear(); game.dice_source.inject(6, 2, 6, 6, 6)
>>> game.apply(ScorecardGame.reroll_action([0, 1, 2, 3, 4]))
[0]
>>> state = ScorecardState.from_game(game)
>>> after = state.afterstate(ScorecardGame.reroll_action([0]))   # dice 2-6-6-6-6: hold the sixes
>>> after.is_chance_node(), after.kept, len(after.chance_outcomes())
(True, (6, 6, 6, 6), 6)
>>> sixes = after.apply_outcome((6,))
>>> sixes.game.dice, sixes.game.throw
((6, 6, 6, 6, 6), 3)
>>> expected = sum(p * max(s.game.box_points(b) for b in s.game.legal_boxes()) for s, p in after.children())
>>> round(expected, 3)   # 1/6 of the spiffel's 50, else four sixes as 4 of a kind: 24 + the fifth die
30.833
"""

from __future__ import annotations

import numpy as np

from ..engine import scorecard as engine
from ..engine.scorecard_flow import scorecard_flow
from ..engine.scorecard_game import ScorecardGame
from ..rules.scorecard import ScorecardRules
from .model import ForwardBatch, ForwardState

__all__ = ["ScorecardBatch", "ScorecardState"]


class ScorecardBatch(ForwardBatch):
    """``N`` scorecard states as arrays, stepped at once (no Python loop over rows): the arrays
    of :class:`~dice_envs.engine.scorecard.ScorecardEngine` (its
    :data:`~dice_envs.engine.scorecard.STATE_FIELDS`), stepped by its halves. Transitions return
    new batches.
    """

    _engine = engine
    _fields = engine.STATE_FIELDS
    game_class = ScorecardGame

    def __init__(self, rules: ScorecardRules, num_players: int, **arrays: np.ndarray) -> None:
        """Rows of state arrays, as :class:`~dice_envs.forward.ForwardBatch` takes them."""
        self.flow = scorecard_flow(rules)
        super().__init__(rules, num_players, **arrays)

    def state(self, i: int) -> ScorecardState:
        """Row ``i`` as a scalar :class:`ScorecardState`."""
        return ScorecardState._of(self.take([int(i)]))

    def dice(self) -> np.ndarray:
        """``(N, 5)`` the sorted dice of each row (zeros where none are shown)."""
        return self.flow.roll_faces[self.roll]


class ScorecardState(ForwardState):
    """One scorecard game as a search state: a decision node, a chance node or a terminal state.

    A one-row :class:`ScorecardBatch`; :attr:`game` reads it as a
    :class:`~dice_envs.engine.scorecard_game.ScorecardGame` (cards, totals, throw, seat, round).
    At a chance node after a re-throw, ``game.dice`` are the dice before it and :attr:`kept` the
    ones held; at a chance node that opens a turn, ``game.dice`` is ``()`` and ``game.throw`` 0.
    """

    _batch_class = ScorecardBatch

    @property
    def pending_action(self) -> int | None:
        """The re-throw action whose dice are pending, ``None`` otherwise."""
        pending = int(self._batch.pending[0])
        return None if pending < 0 else pending

    @property
    def kept(self) -> tuple[int, ...]:
        """The dice held at a re-throw chance node (``()`` elsewhere)."""
        a = self.pending_action
        if a is None:
            return ()
        return tuple(int(d) for i, d in enumerate(self._batch.dice()[0]) if not a >> i & 1)

    def __repr__(self) -> str:
        b, k = self._batch, self.dice_to_throw
        dice = tuple(int(d) for d in b.dice()[0] if d)
        where = f"throw {k} dice" if k else ("over" if self.is_terminal() else f"dice {dice}")
        return f"ScorecardState({b.rules.game}, seat {self.seat}, round {int(b.round[0])}, {where})"
