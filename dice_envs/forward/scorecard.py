"""The forward model of the scorecard games (Spiffel, Yahtzee, Dice Poker), with explicit chance.

A decision splits into the *afterstate* (what the player chose, before any die moves) and a
*chance node* (the throw that follows, with its exact outcome probabilities):

* a re-throw action keeps some dice: the afterstate holds the kept dice and throws ``k`` (the
  re-thrown ones);
* a box entry scores (bonuses and joker included); the afterstate is the next turn waiting for
  its first throw of five dice (or the final state, where no dice are thrown).

Everything is computed by the engine's own rule functions
(:class:`~dice_envs.engine.scorecard_flow.ScorecardFlow`: ``joker_status``, ``enter``,
``legal_boxes``, ``action_mask``, ``rethrow``, ``first_throw``, ``advance_turn``) on the
engine's state: :class:`ScorecardState` wraps one
:class:`~dice_envs.engine.scorecard_game.ScorecardGame`, :class:`ScorecardBatch` holds ``N``
rows of :class:`~dice_envs.engine.scorecard.ScorecardEngine`'s arrays.

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

import copy
from collections.abc import Sequence

import numpy as np

from ..engine.scorecard import ScorecardEngine
from ..engine.scorecard_flow import advance_turn, scorecard_flow
from ..engine.scorecard_game import ScorecardCard, ScorecardGame
from ..rules.config import ConfigError
from ..rules.dice import DiceSource
from ..rules.scorecard import N_REROLL_ACTIONS, ScorecardRules
from .chance import ForwardBatch, ForwardState, Rows, outcome_code_table

__all__ = ["ScorecardBatch", "ScorecardState"]

_FIVE = 5


def _copy_game(game: ScorecardGame) -> ScorecardGame:
    """A copy of ``game``'s state (its own arrays, card views and history; a dice source of its
    own on the same generator: the forward model never throws from it)."""
    g = copy.copy(game)
    for name in ("_cards", "_bonuses", "_paid", "_upper", "_total"):
        setattr(g, name, getattr(game, name).copy())
    g.cards = [ScorecardCard(g, p) for p in range(g.num_players)]
    g.history = list(game.history)
    g._turn_throws = list(game._turn_throws)
    g.dice_source = DiceSource(game.rng)
    return g


class ScorecardState(ForwardState):
    """One scorecard game as a search state: a decision node, a chance node or a terminal state.

    ``game`` is a private :class:`~dice_envs.engine.scorecard_game.ScorecardGame` holding the
    state (cards, totals, throw, seat, round). At a chance node after a re-throw, ``game.dice``
    are the dice before it and :attr:`kept` the ones held; at a chance node that opens a turn,
    ``game.dice`` is ``()`` and ``game.throw`` 0.
    """

    _copy_game = staticmethod(_copy_game)

    def __init__(self, game: ScorecardGame) -> None:
        """Wrap a copy of ``game`` (a decision or terminal state; see :meth:`from_game`)."""
        if not isinstance(game, ScorecardGame):
            raise ConfigError(f"expected a ScorecardGame, got {type(game).__name__}")
        self.game = _copy_game(game)
        self.num_players = game.num_players
        self._pending = -1  # the re-throw action awaiting its dice (-1: none / a turn's first throw)
        self._to_throw = 0
        self._rewards = [0] * self.num_players

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_game(cls, game: ScorecardGame) -> ScorecardState:
        """The state of ``game`` (copied: the game is not touched by the model)."""
        return cls(game)

    @classmethod
    def from_engine(cls, engine: ScorecardEngine, i: int) -> ScorecardState:
        """The state of game ``i`` of a batched :class:`~dice_envs.engine.scorecard.ScorecardEngine`."""
        return cls(engine.to_game(int(i)))

    @classmethod
    def new(cls, rules: ScorecardRules, num_players: int = 1) -> ScorecardState:
        """A fresh game whose first throw is pending (a chance node of five dice)."""
        state = cls(ScorecardGame(rules, num_players=num_players, seed=0))
        state._open_turn()
        return state

    # ------------------------------------------------------------------ queries

    @property
    def pending_action(self) -> int | None:
        """The re-throw action whose dice are pending, ``None`` otherwise."""
        return None if self._pending < 0 else self._pending

    @property
    def kept(self) -> tuple[int, ...]:
        """The dice held at a re-throw chance node (``()`` elsewhere)."""
        if self._pending < 0:
            return ()
        dice = self.game.dice
        return tuple(dice[i] for i in range(_FIVE) if not self._pending >> i & 1)

    def is_terminal(self) -> bool:
        """The game is over."""
        return self.game.done

    def legal_actions(self) -> list[int]:
        """Legal actions of a decision node, ascending (the engine's mask); none elsewhere."""
        if self._to_throw or self.game.done:
            return []
        return self.game.legal_actions()

    def returns(self) -> list[float]:
        """Each seat's grand total (the final scores at a terminal state)."""
        return [float(t) for t in self.game.totals()]

    def __repr__(self) -> str:
        g = self.game
        where = f"throw {self._to_throw} dice" if self._to_throw else ("over" if g.done else f"dice {g.dice}")
        return f"ScorecardState({g.rules.game}, seat {g.current_player}, round {g.round}, {where})"

    # ------------------------------------------------------------------ transitions
    def _open_turn(self) -> None:
        g = self.game
        g._roll, g.throw, g._turn_throws = g.flow.no_roll, 0, []
        self._pending, self._to_throw = -1, _FIVE

    def _act(self, action: int) -> None:
        g = self.game
        self._rewards = [0] * self.num_players
        if action < N_REROLL_ACTIONS:
            self._pending, self._to_throw = action, int(g.flow.reroll_count[action])
            return
        p = g.current_player
        self._rewards[p] = g._score(action - N_REROLL_ACTIONS)
        g.current_player, g.round, over = advance_turn(p, g.round, g.num_players, g.rules.num_boxes)
        if over:
            g.done, g.throw, g._roll, g._turn_throws = True, 0, g.flow.no_roll, []
            self._pending, self._to_throw = -1, 0
        else:
            self._open_turn()

    def _throw(self, index: int) -> None:
        g = self.game
        code = outcome_code_table()[self._to_throw, index]
        if self._pending >= 0:
            g._roll = int(g.flow.rethrow(g._roll, self._pending, code))
            g.throw += 1
        else:
            g._roll = int(g.flow.first_throw(code))
            g.throw = 1
        g._turn_throws.append(g.dice)
        self._pending, self._to_throw = -1, 0
        self._rewards = [0] * self.num_players


class ScorecardBatch(ForwardBatch):
    """``N`` scorecard states as arrays, stepped at once (no Python loop over rows).

    The arrays are :class:`~dice_envs.engine.scorecard.ScorecardEngine`'s (``roll``, ``throw``,
    ``cards``, ``upper``, ``upper_paid``, ``bonuses``, ``totals``, ``current``, ``round``,
    ``done``), plus ``pending`` (the re-throw action awaiting its dice, ``-1`` for none) and
    ``to_throw`` (dice of the pending throw: 0 at a decision or terminal state). Transitions
    return new batches.
    """

    _fields = (
        "roll",
        "throw",
        "cards",
        "upper",
        "upper_paid",
        "bonuses",
        "totals",
        "current",
        "round",
        "done",
        "pending",
        "to_throw",
        "last_rewards",
    )
    _engine_fields = 10

    def __init__(self, rules: ScorecardRules, num_players: int, **arrays: np.ndarray) -> None:
        """Rows of state arrays (see the class docs; ``pending``, ``to_throw`` and
        ``last_rewards`` default to decision nodes with no reward)."""
        self.rules, self.num_players = rules, int(num_players)
        self.flow = scorecard_flow(rules)
        self._set_arrays(arrays, pending=-1)

    @classmethod
    def from_states(cls, states: Sequence[ScorecardState]) -> ScorecardBatch:
        """A batch of scalar states (one game, one set of rules and one seat count; others are
        refused by name)."""
        rules, seats = cls._one_game(states)
        games = [s.game for s in states]
        return cls(
            rules,
            seats,
            roll=np.array([g._roll for g in games], dtype=np.int64),
            throw=np.array([g.throw for g in games], dtype=np.int64),
            cards=np.stack([g._cards for g in games]).astype(np.int32),
            upper=np.stack([g._upper for g in games]).astype(np.int32),
            upper_paid=np.stack([g._paid for g in games]),
            bonuses=np.stack([g._bonuses for g in games]).astype(np.int32),
            totals=np.stack([g._total for g in games]).astype(np.int32),
            current=np.array([g.current_player for g in games], dtype=np.int64),
            round=np.array([g.round for g in games], dtype=np.int64),
            done=np.array([g.done for g in games], dtype=bool),
            pending=np.array([s._pending for s in states], dtype=np.int64),
            to_throw=np.array([s._to_throw for s in states], dtype=np.int64),
            last_rewards=np.array([s._rewards for s in states], dtype=np.int64),
        )

    def state(self, i: int) -> ScorecardState:
        """Row ``i`` as a scalar :class:`ScorecardState`."""
        g = ScorecardGame(self.rules, num_players=self.num_players, seed=0)
        g._cards[:] = self.cards[i]
        g._upper[:], g._paid[:] = self.upper[i], self.upper_paid[i]
        g._bonuses[:], g._total[:] = self.bonuses[i], self.totals[i]
        g.current_player, g.round, g.done = int(self.current[i]), int(self.round[i]), bool(self.done[i])
        g.throw, g._roll = int(self.throw[i]), int(self.roll[i])
        g._turn_throws = [g.dice] if g.dice else []
        s = ScorecardState(g)
        s._pending, s._to_throw = int(self.pending[i]), int(self.to_throw[i])
        s._rewards = [int(v) for v in self.last_rewards[i]]
        return s

    # ------------------------------------------------------------------ queries
    def action_masks(self) -> np.ndarray:
        """Legal actions ``(N, n_actions)`` bool, by the engine's rule functions (none at a chance
        node or a terminal state)."""
        f, rows = self.flow, np.arange(len(self))
        p = self.current
        boxes = self.cards[rows, p] < 0
        if f.forced:
            boxes = f.legal_boxes(boxes, self.roll, self._joker(rows, p)[1])
        masks = f.action_mask(self.roll, self.throw, boxes)
        masks &= ((self.to_throw == 0) & ~self.done)[:, None]
        return masks

    def returns(self) -> np.ndarray:
        """``(N, P)`` grand totals (the final scores where a row is terminal)."""
        return self.totals.astype(np.float64)

    def dice(self) -> np.ndarray:
        """``(N, 5)`` the sorted dice of each row (zeros where none are shown)."""
        return self.flow.roll_faces[self.roll]

    def _joker(self, g: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = self.flow
        cards = self.cards[g, p] if f.needs_face else None
        return f.joker_status(self.roll[g], self.cards[g, p, f.five], self.bonuses[g, p], cards)

    # ------------------------------------------------------------------ transitions
    def afterstates(self, actions: Rows) -> ScorecardBatch:
        """A new batch: each row (a decision node) after its legal action, up to the next throw.

        Raises ``ValueError`` naming the first illegal row and its legal actions (this batch is
        unchanged).
        """
        a = self._int_rows(actions, "actions")
        self._illegal(a, self.action_masks())
        out = self.copy()
        out.last_rewards[:] = 0
        rer = np.flatnonzero(a < N_REROLL_ACTIONS)
        out.pending[rer] = a[rer]
        out.to_throw[rer] = self.flow.reroll_count[a[rer]]
        g = np.flatnonzero(a >= N_REROLL_ACTIONS)
        if g.size:
            out._score(g, a[g] - N_REROLL_ACTIONS)
        return out

    def _score(self, g: np.ndarray, box: np.ndarray) -> None:
        f, p = self.flow, self.current[g]
        due, joker = self._joker(g, p)
        e = f.enter(self.roll[g], box, joker, due, self.upper[g, p], self.upper_paid[g, p])
        self.cards[g, p, box] = e.points
        self.upper[g, p] = e.upper_total
        self.upper_paid[g, p] |= e.pays_upper_bonus
        self.bonuses[g, p] += due
        self.totals[g, p] += e.gained
        self.last_rewards[g, p] = e.gained
        self.current[g], self.round[g], over = advance_turn(p, self.round[g], self.num_players, f.num_boxes)
        self.done[g] = over
        self.roll[g], self.throw[g], self.pending[g] = f.no_roll, 0, -1
        self.to_throw[g] = np.where(over, 0, _FIVE)

    def apply_outcomes(self, outcome_index: Rows) -> ScorecardBatch:
        """A new batch: each row (a chance node) after its throw shows outcome ``outcome_index``
        (an index into :meth:`chance_outcomes` of the row's ``to_throw`` dice)."""
        idx = self._check_outcomes(outcome_index)
        out = self.copy()
        out.last_rewards[:] = 0
        code = outcome_code_table()[self.to_throw, idx]
        rer = self.pending >= 0
        out.roll = np.where(
            rer, self.flow.rethrow(self.roll, np.maximum(self.pending, 0), code), self.flow.first_throw(code)
        ).astype(self.roll.dtype)
        out.throw = np.where(rer, self.throw + 1, 1).astype(self.throw.dtype)
        out.pending[:] = -1
        out.to_throw[:] = 0
        return out
