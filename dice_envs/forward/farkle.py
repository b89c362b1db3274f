"""The forward model of Farkle, with explicit chance.

A decision (set dice aside, then bank or throw on) leads to an *afterstate*:

* throwing on: the turn total with the set-aside points, and a chance node throwing the dice
  left (all six after hot dice, as :func:`~dice_envs.engine.farkle_turn.set_aside` says);
* banking: the turn is over (the final round and the game's end as
  :func:`~dice_envs.engine.farkle_turn.end_turn` says), and the next turn's six dice are
  pending (no dice once the game is over).

An outcome that scores nothing is a farkle: the turn total is lost, on a turn's first throw the
banked total too where the rules have bankruptcy, the turn ends, and the next turn's six dice are
pending; so a chance node can lead to another chance node. Every step is the engine's rule
functions (:mod:`dice_envs.engine.farkle_turn`) on the engine's state: :class:`FarkleState`
wraps one :class:`~dice_envs.engine.farkle_game.FarkleGame`, :class:`FarkleBatch` holds ``N``
rows of :class:`~dice_envs.engine.farkle.FarkleEngine`'s arrays.

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

import copy
from collections.abc import Sequence

import numpy as np

from ..engine import farkle_turn as turn
from ..engine.farkle import FarkleEngine
from ..engine.farkle_game import FarkleGame
from ..rules.config import ConfigError
from ..rules.dice import DiceSource
from ..rules.farkle import N_ACTIONS, NUM_DICE, FarkleRules
from .chance import ForwardBatch, ForwardState, Rows, outcome_code_table

__all__ = ["FarkleBatch", "FarkleState"]


def _copy_game(game: FarkleGame) -> FarkleGame:
    """A copy of ``game``'s state (own lists, a dice source of its own on the same generator:
    the forward model never throws from it)."""
    g = copy.copy(game)
    g.banked, g.turns, g._pending = list(game.banked), list(game.turns), list(game._pending)
    g.history = list(game.history)
    g.dice_source = DiceSource(game.dice_source.rng)
    return g


class FarkleState(ForwardState):
    """One Farkle game as a search state: a decision node, a chance node or a terminal state.

    ``game`` is a private :class:`~dice_envs.engine.farkle_game.FarkleGame` holding the state
    (banked totals, turns, turn total, first throw, seat, final round). At a chance node
    ``game.dice`` is ``()`` and :attr:`dice_to_throw` the dice to throw; ``game.first_throw``
    says whether that throw opens the turn (where a farkle means bankruptcy).
    """

    _copy_game = staticmethod(_copy_game)

    def __init__(self, game: FarkleGame) -> None:
        """Wrap a copy of ``game`` (a decision or terminal state; see :meth:`from_game`)."""
        if not isinstance(game, FarkleGame):
            raise ConfigError(f"expected a FarkleGame, got {type(game).__name__}")
        self.game = _copy_game(game)
        self.num_players = game.num_players
        self._to_throw = 0
        self._rewards = [0] * self.num_players

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_game(cls, game: FarkleGame) -> FarkleState:
        """The state of ``game`` (copied: the game is not touched by the model)."""
        return cls(game)

    @classmethod
    def from_engine(cls, engine: FarkleEngine, i: int) -> FarkleState:
        """The state of game ``i`` of a batched :class:`~dice_envs.engine.farkle.FarkleEngine`."""
        return cls(engine.to_game(int(i)))

    @classmethod
    def new(cls, rules: FarkleRules, num_players: int = 1) -> FarkleState:
        """A fresh game whose first throw is pending (a chance node of six dice)."""
        state = cls(FarkleGame(rules, num_players=num_players, seed=0, opening=(1, 1, 1, 1, 1, 1)))
        g = state.game
        g.history = []
        g.turns = [0] * g.num_players
        g.current_player = 0
        state._open_turn()
        return state

    # ------------------------------------------------------------------ queries

    def is_terminal(self) -> bool:
        """The game is over (reached the end of the final round, or truncated by ``max_turns``)."""
        return self.game.done

    def legal_actions(self) -> list[int]:
        """Legal actions of a decision node, ascending (the engine's mask); none elsewhere."""
        if self._to_throw or self.game.done:
            return []
        return self.game.legal_actions()

    def returns(self) -> list[float]:
        """Each seat's banked total (the final scores at a terminal state)."""
        return [float(b) for b in self.game.banked]

    def __repr__(self) -> str:
        g = self.game
        where = f"throw {self._to_throw} dice" if self._to_throw else ("over" if g.done else f"dice {g.dice}")
        return f"FarkleState(seat {g.current_player}, turn total {g.turn_total}, banked {g.banked}, {where})"

    # ------------------------------------------------------------------ transitions
    def _open_turn(self) -> None:
        g = self.game
        g.turn_total, g.first_throw, g.throw_index = 0, True, g._t.no_throw
        self._to_throw = NUM_DICE

    def _end_turn(self) -> None:
        self.game._end_turn()
        if self.game.done:
            self._to_throw = 0
        else:
            self._open_turn()

    def _act(self, action: int) -> None:
        g = self.game
        self._rewards = [0] * self.num_players
        mask, bank = turn.split_action(action)
        total, left = turn.set_aside(g._t, g.throw_index, g.turn_total, mask)
        g.turn_total = int(total)
        if bank:
            p = g.current_player
            g.banked[p] += g.turn_total
            self._rewards[p] = g.turn_total
            self._end_turn()
        else:
            g.first_throw, g.throw_index = False, g._t.no_throw
            self._to_throw = int(left)

    def _throw(self, index: int) -> None:
        g = self.game
        self._rewards = [0] * self.num_players
        g.throw_index = int(turn.throw(g._t, self._to_throw, outcome_code_table()[self._to_throw, index]))
        self._to_throw = 0
        if turn.is_farkle(g._t, g.throw_index):
            p = g.current_player
            kept = int(turn.farkle_banked(g.banked[p], g.first_throw, g.rules.bankruptcy))
            self._rewards[p] = kept - g.banked[p]
            g.banked[p] = kept
            self._end_turn()


class FarkleBatch(ForwardBatch):
    """``N`` Farkle states as arrays, stepped at once (no Python loop over rows).

    The arrays are :class:`~dice_envs.engine.farkle.FarkleEngine`'s (``roll``, ``turn_total``,
    ``first_throw``, ``banked``, ``turns``, ``current``, ``final_round_by``, ``done``,
    ``truncated``), plus ``to_throw`` (dice of the pending throw: 0 at a decision or terminal
    state; ``roll`` is then ``no_throw``). Transitions return new batches.
    """

    _fields = (
        "roll",
        "turn_total",
        "first_throw",
        "banked",
        "turns",
        "current",
        "final_round_by",
        "done",
        "truncated",
        "to_throw",
        "last_rewards",
    )
    _engine_fields = 9

    def __init__(self, rules: FarkleRules, num_players: int, **arrays: np.ndarray) -> None:
        """Rows of state arrays (see the class docs; ``to_throw`` and ``last_rewards`` default to
        decision nodes with no reward)."""
        self.rules, self.num_players = rules, int(num_players)
        self._t = turn.farkle_turn_tables()
        self._set_arrays(arrays)

    @classmethod
    def from_states(cls, states: Sequence[FarkleState]) -> FarkleBatch:
        """A batch of scalar states (one game, one set of rules and one seat count; others are
        refused by name)."""
        rules, seats = cls._one_game(states)
        games = [s.game for s in states]
        return cls(
            rules,
            seats,
            roll=np.array([g.throw_index for g in games], dtype=np.int64),
            turn_total=np.array([g.turn_total for g in games], dtype=np.int64),
            first_throw=np.array([g.first_throw for g in games], dtype=bool),
            banked=np.array([g.banked for g in games], dtype=np.int64),
            turns=np.array([g.turns for g in games], dtype=np.int64),
            current=np.array([g.current_player for g in games], dtype=np.int64),
            final_round_by=np.array([g._final_round_by for g in games], dtype=np.int64),
            done=np.array([g.done for g in games], dtype=bool),
            truncated=np.array([g.truncated for g in games], dtype=bool),
            to_throw=np.array([s._to_throw for s in states], dtype=np.int64),
            last_rewards=np.array([s._rewards for s in states], dtype=np.int64),
        )

    def state(self, i: int) -> FarkleState:
        """Row ``i`` as a scalar :class:`FarkleState`."""
        s = FarkleState.new(self.rules, self.num_players)
        g = s.game
        g.banked, g.turns = [int(v) for v in self.banked[i]], [int(v) for v in self.turns[i]]
        g.current_player, g.turn_total = int(self.current[i]), int(self.turn_total[i])
        g.first_throw, g.throw_index = bool(self.first_throw[i]), int(self.roll[i])
        g._final_round_by = int(self.final_round_by[i])
        g.done, g.truncated = bool(self.done[i]), bool(self.truncated[i])
        s._to_throw = int(self.to_throw[i])
        s._rewards = [int(v) for v in self.last_rewards[i]]
        return s

    # ------------------------------------------------------------------ queries
    def action_masks(self) -> np.ndarray:
        """Legal actions ``(N, 128)`` bool, by the engine's rule functions (none at a chance node
        or a terminal state: their ``roll`` is ``no_throw``)."""
        masks = turn.legal_masks(self._t, self.roll, self.turn_total, self.rules.bank_minimum)
        return masks & ((self.to_throw == 0) & ~self.done)[:, None]

    def returns(self) -> np.ndarray:
        """``(N, P)`` banked totals (the final scores where a row is terminal)."""
        return self.banked.astype(np.float64)

    @property
    def totals(self) -> np.ndarray:
        """Banked totals ``(N, P)``, as the engine names them."""
        return self.banked

    # ------------------------------------------------------------------ transitions
    def afterstates(self, actions: Rows) -> FarkleBatch:
        """A new batch: each row (a decision node) after its legal action, up to the next throw.

        Raises ``ValueError`` naming the first illegal row and its legal actions (this batch is
        unchanged).
        """
        a = self._int_rows(actions, "actions")
        self._illegal(a, self.action_masks() if a.size else np.zeros((0, N_ACTIONS), dtype=bool))
        out = self.copy()
        out.last_rewards[:] = 0
        mask, bank = turn.split_action(a)
        tt, left = turn.set_aside(self._t, self.roll, self.turn_total, mask)
        out.turn_total = tt
        on = np.flatnonzero(~bank)
        out.first_throw[on] = False
        out.roll[on] = self._t.no_throw
        out.to_throw[on] = left[on]
        g = np.flatnonzero(bank)
        if g.size:
            p = out.current[g]
            out.banked[g, p] += tt[g]
            out.last_rewards[g, p] = tt[g]
            out._end_turn(g)
        return out

    def _end_turn(self, g: np.ndarray) -> None:
        r, p = self.rules, self.current[g]
        self.turns[g, p] += 1
        fr, done, truncated, nxt = turn.end_turn(
            p,
            self.banked[g, p],
            self.turns[g, p],
            self.final_round_by[g],
            self.num_players,
            r.target,
            r.max_turns,
        )
        self.turn_total[g] = 0
        self.final_round_by[g], self.done[g], self.truncated[g], self.current[g] = fr, done, truncated, nxt
        self.roll[g] = self._t.no_throw
        self.to_throw[g] = np.where(done, 0, NUM_DICE)
        self.first_throw[g[~done]] = True

    def apply_outcomes(self, outcome_index: Rows) -> FarkleBatch:
        """A new batch: each row (a chance node) after its throw shows outcome ``outcome_index``
        (an index into :meth:`chance_outcomes` of the row's ``to_throw`` dice); a throw that
        scores nothing ends the turn as the engine does (farkle, bankruptcy)."""
        idx = self._check_outcomes(outcome_index)
        out = self.copy()
        out.last_rewards[:] = 0
        code = outcome_code_table()[self.to_throw, idx]
        out.roll = turn.throw(self._t, self.to_throw, code).astype(np.int64)
        out.to_throw[:] = 0
        g = np.flatnonzero(turn.is_farkle(self._t, out.roll))
        if g.size:
            p = out.current[g]
            old = out.banked[g, p]
            new = turn.farkle_banked(old, out.first_throw[g], self.rules.bankruptcy)
            out.banked[g, p] = new
            out.last_rewards[g, p] = new - old
            out._end_turn(g)
        return out
