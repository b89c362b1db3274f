"""One scorecard game (Spiffel, Dice Poker, Yahtzee) for 1 to 8 players: a batch of one.

:class:`ScorecardGame` keeps its state as one row of the batched engine's arrays and steps it with
:mod:`.scorecard_flow`'s rule functions; on top it keeps the history of entries, action
descriptions, checked actions and the card view ``cards[p].boxes`` (``None`` where open).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..rules.config import ConfigError, check_int
from ..rules.dice import DiceSource, check_rng, check_seed_arg, validate_dice
from ..rules.scorecard import N_REROLL_ACTIONS, ScorecardRules, check_box
from ..tables import face_code
from .common import integer_action
from .scorecard_flow import advance_turn, scorecard_flow

__all__ = ["ScorecardCard", "ScorecardGame", "ScoringEvent"]


@dataclass(frozen=True)
class ScoringEvent:
    """One entry on a card, as kept in :attr:`ScorecardGame.history`."""

    player: int
    round: int
    throws: tuple[tuple[int, ...], ...]
    box: str
    points: int
    upper_bonus: int
    five_kind_bonus: int
    joker: bool


class _Boxes(Sequence):
    """The boxes of one card as a list-like view: points, ``None`` where open; assignable."""

    __slots__ = ("_card",)

    def __init__(self, card: ScorecardCard) -> None:
        self._card = card

    @property
    def _row(self) -> np.ndarray:
        return self._card._game._cards[self._card._seat]

    def __len__(self) -> int:
        return len(self._row)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return list(self)[i]
        v = int(self._row[i])
        return None if v < 0 else v

    def __setitem__(self, i: int, value: int | None) -> None:
        self._row[i] = -1 if value is None else int(value)
        self._card._changed()

    def __iter__(self) -> Iterator[int | None]:
        return iter([None if v < 0 else v for v in self._row.tolist()])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return repr(list(self))


class ScorecardCard:
    """One seat's card, a view of the game's state: ``boxes``, ``five_kind_bonuses``, ``upper_bonus_paid``."""

    __slots__ = ("_boxes", "_game", "_seat")

    def __init__(self, game: ScorecardGame, seat: int) -> None:
        self._game, self._seat = game, seat
        self._boxes = _Boxes(self)

    def _changed(self) -> None:
        """Recount the running totals after the card was written by hand."""
        g, p = self._game, self._seat
        g._upper[p] = int(g.flow.upper_total(g._cards[p]))
        g._total[p] = int(g.flow.card_total(g._cards[p], g._paid[p], g._bonuses[p]))

    @property
    def boxes(self) -> _Boxes:
        """Points of each box, ``None`` where open (item assignment writes the card)."""
        return self._boxes

    @property
    def five_kind_bonuses(self) -> int:
        """Five-of-a-kind bonuses paid to this seat."""
        return int(self._game._bonuses[self._seat])

    @five_kind_bonuses.setter
    def five_kind_bonuses(self, value: int) -> None:
        self._game._bonuses[self._seat] = int(value)
        self._changed()

    @property
    def upper_bonus_paid(self) -> bool:
        """Whether the upper bonus is paid."""
        return bool(self._game._paid[self._seat])

    @upper_bonus_paid.setter
    def upper_bonus_paid(self, value: bool) -> None:
        self._game._paid[self._seat] = bool(value)
        self._changed()


class ScorecardGame:
    """The state machine of a scorecard game for 1 to 8 players.

    >>> from dice_envs.rules.spiffel import SpiffelRules
    >>> g = ScorecardGame(SpiffelRules(), num_players=2, seed=7)
    >>> g.dice_source.clear(); g.dice_source.inject(6, 6, 6, 6, 6)
    >>> g.apply(ScorecardGame.reroll_action([0, 1, 2, 3, 4]))  # re-throw all five
    [0, 0]
    >>> g.dice
    (6, 6, 6, 6, 6)
    >>> g.apply(g.box_action("spiffel"))
    [50, 0]
    >>> g.current_player
    1
    """

    #: The state of a game as one row of the batched engine: these arrays, by name (:meth:`row`).
    ROW_FIELDS = (
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
    )

    def __init__(
        self,
        rules: ScorecardRules,
        num_players: int = 1,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
    ) -> None:
        if not isinstance(rules, ScorecardRules):
            raise ConfigError(f"rules must be a ScorecardRules instance, got {type(rules).__name__}")
        check_int("num_players", num_players, 1, 8)
        seed, rng = check_seed_arg(seed), check_rng(rng)  # ConfigError naming a bad one
        self.rules, self.num_players, self.seed = rules, int(num_players), seed
        self.rng = rng if rng is not None else np.random.default_rng(seed)
        self.dice_source = DiceSource(self.rng)
        self.flow = scorecard_flow(rules)
        self.categories = rules.categories
        self._box_index = {b: i for i, b in enumerate(self.categories)}
        self._five = self.flow.five
        # the state, as one row of the batched engine
        self._cards = np.full((self.num_players, rules.num_boxes), -1, dtype=np.int64)
        self._bonuses = np.zeros(self.num_players, dtype=np.int64)
        self._paid = np.zeros(self.num_players, dtype=bool)
        self._upper = np.zeros(self.num_players, dtype=np.int64)  # running totals, as the engine keeps
        self._total = np.zeros(self.num_players, dtype=np.int64)
        self._roll = self.flow.no_roll
        self.cards = [ScorecardCard(self, p) for p in range(self.num_players)]
        self.current_player = 0
        self.round = 0
        self.throw = 0
        self.done = False
        self.history: list[ScoringEvent] = []
        self._turn_throws: list[tuple[int, ...]] = []
        self._start_turn()

    # ------------------------------------------------------------------ actions
    @staticmethod
    def reroll_action(positions: Sequence[int]) -> int:
        """The action that re-throws the dice at these positions (of the sorted dice)."""
        mask = 0
        for p in positions:
            if not 0 <= int(p) < 5:
                raise ValueError(f"die positions must be 0-4, got {list(positions)!r}")
            mask |= 1 << int(p)
        return mask

    def box_action(self, box: str) -> int:
        """The action that enters the current throw in ``box``."""
        check_box(box, self.categories, self.rules.game)
        return N_REROLL_ACTIONS + self._box_index[box]

    @property
    def n_actions(self) -> int:
        """Size of the action space."""
        return self.rules.n_actions

    def describe_action(self, action: int) -> str:
        """A human-readable description of an action."""
        if 0 <= action < N_REROLL_ACTIONS:
            pos = [i for i in range(5) if action >> i & 1]
            if not pos:
                return "re-throw nothing (never legal)"
            kept = [self.dice[i] for i in range(5) if not action >> i & 1] if self.dice else []
            return f"re-throw dice {pos} (hold {kept})"
        if N_REROLL_ACTIONS <= action < self.n_actions:
            return f"score {self.categories[action - N_REROLL_ACTIONS]}"
        return f"action {action} (outside 0..{self.n_actions - 1})"

    # ------------------------------------------------------------------ queries
    @property
    def dice(self) -> tuple[int, ...]:
        """The sorted five dice of the current throw (``()`` once the game is over)."""
        return self.flow.dice[self._roll]

    @dice.setter
    def dice(self, value: Sequence[int]) -> None:
        self._roll = self.flow.roll_of(validate_dice(value, counts=(5,))) if len(value) else self.flow.no_roll

    @property
    def roll(self) -> int:
        """Index of the current throw in ``scorecard_tables().rolls`` (``flow.no_roll``: no dice)."""
        return self._roll

    def upper_total(self, player: int) -> int:
        """Points in the upper boxes of ``player``'s card."""
        return int(self._upper[player])

    def lower_total(self, player: int) -> int:
        """Points in the lower boxes of ``player``'s card."""
        return int(np.maximum(self._cards[player], 0)[self.flow.lower_box].sum())

    def upper_bonus(self, player: int) -> int:
        """The upper bonus earned so far (0 or ``rules.upper_bonus``)."""
        return self.rules.upper_bonus if self._paid[player] else 0

    def five_kind_bonus_points(self, player: int) -> int:
        """Points from five-of-a-kind bonuses (Spiffel / Poker / Yahtzee bonus)."""
        return int(self._bonuses[player]) * self.rules.five_kind_bonus

    def total(self, player: int) -> int:
        """Grand total: upper + upper bonus + lower + five-of-a-kind bonuses."""
        return int(self._total[player])

    def totals(self) -> list[int]:
        """Grand totals of all players, indexed by seat."""
        return [self.total(p) for p in range(self.num_players)]

    def winners(self) -> list[int]:
        """Seats with the highest grand total (ties share the win)."""
        totals = self.totals()
        best = max(totals)
        return [p for p, t in enumerate(totals) if t == best]

    @property
    def throws_left(self) -> int:
        """Throws the current player still has this turn."""
        return self.rules.num_throws - self.throw  # type: ignore[attr-defined]

    def open_boxes(self, player: int | None = None) -> list[int]:
        """Indices of the open boxes of ``player`` (default: the current player)."""
        p = self.current_player if player is None else player
        return np.flatnonzero(self._cards[p] < 0).tolist()

    def joker_status(self) -> tuple[bool, bool]:
        """``(bonus_due, joker)`` for entering the current throw now.

        ``bonus_due``: the throw earns a five-of-a-kind bonus; ``joker``: joker scoring applies.
        """
        due, joker = self._status()
        return bool(due), bool(joker)

    def _status(self) -> tuple[Any, Any]:
        if not self.flow.five_kind[self._roll]:  # shortcut: only a five of a kind has either
            return np.False_, np.False_
        p = self.current_player
        row = self._cards[p]
        return self.flow.joker_status(self._roll, row[self._five], self._bonuses[p], row)

    def _boxes_mask(self) -> np.ndarray:
        joker = self._status()[1] if self.flow.forced else False  # only a forced joker narrows
        return self.flow.legal_boxes(self._cards[self.current_player] < 0, self._roll, joker)

    def legal_boxes(self) -> list[int]:
        """Indices of the boxes the current throw may be entered in."""
        return np.flatnonzero(self._boxes_mask()).tolist()

    def _mask(self) -> np.ndarray:
        return self.flow.action_mask(self._roll, self.throw, self._boxes_mask())

    def _is_legal(self, a: int) -> bool:
        """``a in self.legal_actions()``, without building the whole mask."""
        if 0 <= a < N_REROLL_ACTIONS:
            return bool(self.flow.reroll_mask(self._roll, self.throw)[a])
        return N_REROLL_ACTIONS <= a < self.n_actions and bool(self._boxes_mask()[a - N_REROLL_ACTIONS])

    def legal_actions(self) -> list[int]:
        """Legal actions of the current player, ascending."""
        return [] if self.done else np.flatnonzero(self._mask()).tolist()

    def action_mask(self) -> np.ndarray:
        """``int8`` mask over the whole action space: 1 where the action is legal."""
        if self.done:
            return np.zeros(self.n_actions, dtype=np.int8)
        return self._mask().view(np.int8)

    def box_points(self, box: int) -> int:
        """Points (without bonuses) the current throw would score in box ``box``."""
        return int(self.flow.entry_points(self._roll, box, self._status()[1]))

    # ------------------------------------------------------------------ transitions
    def _start_turn(self) -> None:
        self.throw = 1
        self._roll = int(self.flow.first_throw(face_code(self.dice_source.throw(5))))
        self._turn_throws = [self.dice]

    def apply(self, action: int) -> list[int]:
        """Apply a legal action; return the points each seat gained (indexed by seat).

        Raises ``ValueError`` naming the legal actions when ``action`` is not legal; the state
        is then unchanged.
        """
        a = integer_action(action, self.done)
        if a is None or not self._is_legal(a):
            what = self.describe_action(a) if a is not None else "not an int"
            raise ValueError(
                f"illegal action {action!r} ({what}) for player {self.current_player} "
                f"with dice {list(self.dice)}; legal actions: {self.legal_actions()}"
            )
        rewards = [0] * self.num_players
        if a < N_REROLL_ACTIONS:
            fresh = self.dice_source.throw(int(self.flow.reroll_count[a]))
            self._roll = int(self.flow.rethrow(self._roll, a, face_code(fresh)))
            self.throw += 1
            self._turn_throws.append(self.dice)
            return rewards
        rewards[self.current_player] = self._score(a - N_REROLL_ACTIONS)
        self._advance()
        return rewards

    def _score(self, box: int) -> int:
        p = self.current_player
        due, joker = self._status()
        e = self.flow.enter(self._roll, box, joker, due, self._upper[p], self._paid[p])
        self._cards[p, box] = e.points
        self._upper[p] = e.upper_total
        self._paid[p] |= e.pays_upper_bonus
        self._bonuses[p] += int(due)
        self._total[p] += e.gained
        upper_bonus = self.rules.upper_bonus if e.pays_upper_bonus else 0
        five_bonus = self.rules.five_kind_bonus if due else 0
        self.history.append(
            ScoringEvent(
                p,
                self.round,
                tuple(self._turn_throws),
                self.categories[box],
                int(e.points),
                upper_bonus,
                five_bonus,
                bool(joker),
            )
        )
        return int(e.gained)

    def _advance(self) -> None:
        self.current_player, self.round, over = advance_turn(
            self.current_player, self.round, self.num_players, self.rules.num_boxes
        )
        if over:
            self.done = True
            self.throw = 0
            self._roll = self.flow.no_roll
            self._turn_throws = []
            return
        self._start_turn()

    def row(self) -> dict[str, Any]:
        """The game's state as one row of the batched engine's arrays (:attr:`ROW_FIELDS`), copied."""
        return {
            "roll": self._roll,
            "throw": self.throw,
            "cards": self._cards.copy(),
            "upper": self._upper.copy(),
            "upper_paid": self._paid.copy(),
            "bonuses": self._bonuses.copy(),
            "totals": self._total.copy(),
            "current": self.current_player,
            "round": self.round,
            "done": self.done,
        }

    @classmethod
    def from_row(cls, rules: ScorecardRules, num_players: int, row: Mapping[str, Any]) -> ScorecardGame:
        """The game whose state is ``row`` (one row of the batched engine's arrays, by the names of
        :attr:`ROW_FIELDS`); its dice come from a fresh generator and its ``history`` starts empty."""
        g = cls(rules, num_players=num_players, seed=0)
        g._cards[:], g._upper[:], g._paid[:] = row["cards"], row["upper"], row["upper_paid"]
        g._bonuses[:], g._total[:] = row["bonuses"], row["totals"]
        g.current_player, g.round, g.done = int(row["current"]), int(row["round"]), bool(row["done"])
        g.throw, g._roll = int(row["throw"]), int(row["roll"])
        g._turn_throws = [g.dice] if g.dice else []
        return g

    def clone(self) -> ScorecardGame:
        """A deep copy (its own dice source, same generator state)."""
        return copy.deepcopy(self)

    def summary(self) -> dict[str, Any]:
        """Plain-data view of the game (for logs and JSON)."""
        return {
            "game": self.rules.game,
            "rules": self.rules.to_dict(),
            "totals": self.totals(),
            "cards": [dict(zip(self.categories, c.boxes, strict=True)) for c in self.cards],
            "done": self.done,
            "winners": self.winners() if self.done else None,
        }
