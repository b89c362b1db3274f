"""The Farkle game of 1 to 8 players: one game stepped by the turn-flow rule functions.

:class:`FarkleGame` keeps its state as one row of :class:`dice_envs.engine.farkle.FarkleEngine`'s
arrays and steps it with :mod:`dice_envs.engine.farkle_turn`'s functions on Python scalars; on
top it keeps the history of events, action descriptions and checked actions.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..rules.config import ConfigError, check_bool, check_int
from ..rules.dice import DiceSource, check_rng, check_seed_arg, validate_dice
from ..rules.farkle import BANK_FLAG, N_ACTIONS, NUM_DICE, FarkleEvent, FarkleRules
from ..tables import face_code
from . import farkle_turn as turn
from .common import integer_action

__all__ = ["FarkleGame"]


@dataclass
class FarkleGame:
    """The state machine of Farkle for 1 to 8 players.

    The engine advances by itself through everything that needs no decision (opening throws,
    farkles, bankruptcies), so whenever it is not :attr:`done` the current player has a choice.

    >>> g2 = FarkleGame(FarkleRules(), num_players=1, seed=0, opening=(1, 1, 1, 5, 2, 3))
    >>> g2.dice, g2.turn_total
    ((1, 1, 1, 2, 3, 5), 0)
    >>> g2.apply(g2.action([0, 1, 2, 5], bank=True))  # 1-1-1 + 5 = 1050, banked
    [1050]
    """

    #: The state of a game as one row of the batched engine: these arrays, by name (:meth:`row`).
    ROW_FIELDS = (
        "roll",
        "turn_total",
        "first_throw",
        "banked",
        "turns",
        "current",
        "final_round_by",
        "done",
        "truncated",
    )

    rules: FarkleRules
    num_players: int = 1
    seed: int | None = None
    rng: np.random.Generator | None = None
    opening: Sequence[int] | None = None
    banked: list[int] = field(init=False)
    turns: list[int] = field(init=False)
    current_player: int = field(init=False, default=0)
    turn_total: int = field(init=False, default=0)
    first_throw: bool = field(init=False, default=True)
    done: bool = field(init=False, default=False)
    truncated: bool = field(init=False, default=False)
    history: list[FarkleEvent] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.rules, FarkleRules):
            raise ConfigError(f"rules must be a FarkleRules instance, got {type(self.rules).__name__}")
        check_int("num_players", self.num_players, 1, 8)
        self.seed, self.rng = check_seed_arg(self.seed), check_rng(self.rng)  # ConfigError naming a bad one
        self._t = turn.farkle_turn_tables()
        self.throw_index = self._t.no_throw
        self._final_round_by = -1
        self.dice_source = DiceSource(self.rng if self.rng is not None else np.random.default_rng(self.seed))
        if self.opening is not None:
            self.dice_source.inject(*validate_dice(self.opening, counts=(NUM_DICE,)))
        self.banked = [0] * self.num_players
        self.turns = [0] * self.num_players
        self._pending = [0] * self.num_players
        self._start_turn()

    # ------------------------------------------------------------------ state views
    @property
    def dice(self) -> tuple[int, ...]:
        """The current throw, sorted (``()`` once the game is over)."""
        return self._t.faces[self.throw_index]

    @dice.setter
    def dice(self, faces: Sequence[int]) -> None:
        key = tuple(sorted(int(f) for f in faces))
        if key not in self._t.roll_index:
            raise ValueError(f"dice must be 0 to {NUM_DICE} faces 1-6, got {list(faces)!r}")
        self.throw_index = self._t.roll_index[key]

    @property
    def final_round_by(self) -> int | None:
        """The seat that reached the target first (the round is then played out), or None."""
        return None if self._final_round_by < 0 else self._final_round_by

    @final_round_by.setter
    def final_round_by(self, seat: int | None) -> None:
        self._final_round_by = -1 if seat is None else int(seat)

    # ------------------------------------------------------------------ actions
    @staticmethod
    def action(positions: Sequence[int], bank: bool) -> int:
        """The action that sets aside the dice at these positions, then banks or throws on."""
        bank = check_bool("bank", bank, what="")  # a truthy "no" would bank
        mask = 0
        for p in positions:
            if not 0 <= int(p) < NUM_DICE:
                raise ValueError(f"die positions must be 0-5, got {list(positions)!r}")
            mask |= 1 << int(p)
        return mask + (BANK_FLAG if bank else 0)

    @property
    def n_actions(self) -> int:
        """Size of the action space."""
        return N_ACTIONS

    def describe_action(self, action: int) -> str:
        """A human-readable description of an action."""
        if not 0 <= action < N_ACTIONS:
            return f"action {action} (outside 0..{N_ACTIONS - 1})"
        mask, bank = turn.split_action(action)
        dice = self.dice
        chosen = [dice[i] for i in range(len(dice)) if mask >> i & 1]
        return f"set aside {chosen} then {'bank' if bank else 'throw on'}"

    def selection_points(self, mask: int) -> int:
        """Points of setting aside the dice selected by ``mask`` (0 if not a scoring set)."""
        if not 0 < mask < BANK_FLAG:
            return 0
        return int(self._t.points[self.throw_index, mask])

    def _mask(self) -> np.ndarray:
        return turn.legal_masks(self._t, self.throw_index, self.turn_total, self.rules.bank_minimum)

    def legal_actions(self) -> list[int]:
        """Legal actions of the current player, ascending."""
        return np.flatnonzero(self._mask()).tolist()

    def action_mask(self) -> np.ndarray:
        """``int8`` mask over the whole action space: 1 where the action is legal."""
        return self._mask().astype(np.int8)

    # ------------------------------------------------------------------ queries
    def total(self, player: int) -> int:
        """Banked total of ``player``."""
        return self.banked[player]

    def totals(self) -> list[int]:
        """Banked totals of all players, indexed by seat."""
        return list(self.banked)

    def winners(self) -> list[int]:
        """Seats with the highest banked total (ties share the win)."""
        best = max(self.banked)
        return [p for p, t in enumerate(self.banked) if t == best]

    @property
    def dice_left(self) -> int:
        """Dice in the current throw."""
        return int(self._t.n_dice[self.throw_index])

    # ------------------------------------------------------------------ transitions
    def _throw(self, n: int) -> bool:
        """Throw ``n`` dice; True on a farkle."""
        self.throw_index = int(turn.throw(self._t, n, face_code(self.dice_source.throw(n))))
        self.history.append(FarkleEvent("throw", self.current_player, self.dice))
        return bool(turn.is_farkle(self._t, self.throw_index))

    def _start_turn(self) -> None:
        """Open turns until one needs a decision (or the game ends)."""
        while not self.done:
            self.turn_total = 0
            self.first_throw = True
            if not self._throw(NUM_DICE):
                return
            p = self.current_player
            self.history.append(FarkleEvent("farkle", p, self.dice))
            kept = int(turn.farkle_banked(self.banked[p], True, self.rules.bankruptcy))
            if kept != self.banked[p]:
                self.history.append(FarkleEvent("bankrupt", p, self.dice, kept - self.banked[p]))
                self._pending[p] += kept - self.banked[p]
                self.banked[p] = kept
            self._end_turn()

    def _end_turn(self) -> None:
        p, r = self.current_player, self.rules
        self.turn_total = 0
        self.turns[p] += 1
        self.throw_index = self._t.no_throw
        fr, done, truncated, nxt = turn.end_turn(
            p, self.banked[p], self.turns[p], self._final_round_by, self.num_players, r.target, r.max_turns
        )
        self._final_round_by, self.done, self.truncated, self.current_player = fr, done, truncated, nxt

    def apply(self, action: int) -> list[int]:
        """Apply a legal action; return each seat's change of banked total (indexed by seat).

        Raises ``ValueError`` naming the legal actions when ``action`` is not legal; the state
        is then unchanged.
        """
        a = integer_action(action, self.done)
        t, r = self._t, self.rules
        legal = a is not None and 0 <= a < N_ACTIONS
        if not legal or not turn.is_legal(t, self.throw_index, self.turn_total, a, r.bank_minimum):
            raise ValueError(
                f"illegal action {action!r} ({self.describe_action(a) if a is not None else 'not an int'}) "
                f"for player {self.current_player} with dice {list(self.dice)} and turn total "
                f"{self.turn_total}; legal actions: {self.legal_actions()}"
            )
        self._pending = [0] * self.num_players
        p = self.current_player
        mask, bank = turn.split_action(a)
        dice = self.dice
        before = self.turn_total
        total, left = turn.set_aside(t, self.throw_index, before, mask)
        self.turn_total = int(total)
        chosen = tuple(dice[i] for i in range(len(dice)) if mask >> i & 1)
        self.history.append(FarkleEvent("set_aside", p, chosen, self.turn_total - before))
        if bank:
            self.banked[p] += self.turn_total
            self._pending[p] += self.turn_total
            self.history.append(FarkleEvent("bank", p, (), self.turn_total))
            self._next_turn()
        else:
            self.first_throw = False
            if self._throw(int(left)):
                self.history.append(FarkleEvent("farkle", p, self.dice, -self.turn_total))
                self._next_turn()
        return list(self._pending)

    def _next_turn(self) -> None:
        self._end_turn()
        if not self.done:
            self._start_turn()

    def row(self) -> dict[str, Any]:
        """The game's state as one row of the batched engine's arrays (:attr:`ROW_FIELDS`), copied."""
        return {
            "roll": self.throw_index,
            "turn_total": self.turn_total,
            "first_throw": self.first_throw,
            "banked": list(self.banked),
            "turns": list(self.turns),
            "current": self.current_player,
            "final_round_by": self._final_round_by,
            "done": self.done,
            "truncated": self.truncated,
        }

    @classmethod
    def from_row(cls, rules: FarkleRules, num_players: int, row: Mapping[str, Any]) -> FarkleGame:
        """The game whose state is ``row`` (one row of the batched engine's arrays, by the names of
        :attr:`ROW_FIELDS`); its dice come from a fresh generator and its ``history`` starts empty."""
        g = cls(rules, num_players=num_players, seed=0)
        g.history, g._pending = [], [0] * g.num_players
        g.banked, g.turns = [int(v) for v in row["banked"]], [int(v) for v in row["turns"]]
        g.current_player, g.turn_total = int(row["current"]), int(row["turn_total"])
        g.first_throw, g.throw_index = bool(row["first_throw"]), int(row["roll"])
        g._final_round_by = int(row["final_round_by"])
        g.done, g.truncated = bool(row["done"]), bool(row["truncated"])
        return g

    def clone(self) -> FarkleGame:
        """A deep copy (its own dice source, same generator state)."""
        return copy.deepcopy(self)

    def __getstate__(self) -> dict[str, Any]:  # copies and pickles share the (cached) tables
        state = self.__dict__.copy()
        del state["_t"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._t = turn.farkle_turn_tables()

    def summary(self) -> dict[str, Any]:
        """Plain-data view of the game (for logs and JSON)."""
        return {
            "game": "farkle",
            "rules": self.rules.to_dict(),
            "totals": self.totals(),
            "turns": list(self.turns),
            "done": self.done,
            "truncated": self.truncated,
            "winners": self.winners() if self.done else None,
        }
