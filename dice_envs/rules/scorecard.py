"""The scorecard engine: Spiffel, Dice Poker and Yahtzee are configurations of this one module.

This is the single source of truth for box scoring, the upper bonus, the five-of-a-kind bonus and
the joker. Tables, solvers and vector engines derive from :func:`box_score` and
:class:`ScorecardGame`.

Game flow (Spiffel seed: "Per round one dices three times with five dices. After the third throw
of each round at the latest one has to enter the points into the game pad"):

* a turn opens with a throw of all five dice (no decision precedes it);
* after a throw with throws left, the player either re-throws a non-empty subset of the dice
  (the rest are held) or enters the throw in an open box; after the last throw he must score;
* dice are kept sorted ascending after every throw, and actions name positions in that order.

Actions (``n_actions = 32 + number of boxes``):

=============  ==========================================================================
action         meaning
=============  ==========================================================================
``0``          never legal (re-throwing nothing is not a move)
``1 .. 31``    re-throw the dice whose bits are set (bit ``i`` = die ``i`` of the sorted dice)
``32 + k``     enter the throw in box ``k`` (``CATEGORIES[k]``)
=============  ==========================================================================

Among re-throw masks that select the same multiset of faces only the smallest is legal, so every
legal action is a distinct choice.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

import numpy as np

from .config import ConfigError, RuleConfig, check_bool, check_int, check_optional_int
from .dice import DiceSource, is_canonical_selection, validate_dice

__all__ = [
    "FIVE_KIND_BOXES",
    "FIXED_POINTS",
    "N_REROLL_ACTIONS",
    "UPPER_FACES",
    "ScorecardGame",
    "ScorecardRules",
    "ScoringEvent",
    "box_score",
    "joker_applies",
    "make_score_function",
]

#: Upper boxes and the face each counts.
UPPER_FACES: dict[str, int] = {"ones": 1, "twos": 2, "threes": 3, "fours": 4, "fives": 5, "sixes": 6}
#: Boxes worth a fixed number of points when the throw fits (and always under the joker for the
#: three "shape" boxes full_house / small_straight / large_straight).
FIXED_POINTS: dict[str, int] = {
    "full_house": 25,
    "small_straight": 30,
    "large_straight": 40,
    "spiffel": 50,
    "poker": 50,
    "yahtzee": 50,
}
#: The five-of-a-kind box of each game.
FIVE_KIND_BOXES = frozenset({"spiffel", "poker", "yahtzee"})
JOKER_BOXES = frozenset({"full_house", "small_straight", "large_straight"})
N_REROLL_ACTIONS = 32
KNOWN_BOXES = (
    frozenset(UPPER_FACES)
    | frozenset(FIXED_POINTS)
    | {
        "pair",
        "two_pairs",
        "three_of_a_kind",
        "four_of_a_kind",
        "chance",
    }
)


def joker_applies(rules: Any, five_kind: Any, five_filled: Any, bonus_due: Any, face_filled: Any) -> Any:
    """Whether joker scoring applies to a throw: the one definition of the joker's trigger.

    Elementwise on booleans or numpy bool arrays (the rules engine, the vector engine and the
    solver all call it). ``five_kind``: the throw is five of a kind; ``five_filled``: the
    five-of-a-kind box is filled; ``bonus_due``: entering it pays a five-of-a-kind bonus;
    ``face_filled``: the upper box of the throw's face is filled. See
    :attr:`ScorecardRules.joker_trigger`.

    >>> from dice_envs.rules import make_rules
    >>> joker_applies(make_rules("yahtzee"), True, True, False, False)
    True
    >>> joker_applies(make_rules("yahtzee", joker_rule="verhoeff"), True, True, False, False)
    False
    """
    if not rules.joker:
        return five_kind & False
    trigger = rules.joker_trigger
    if trigger == "bonus":
        return five_kind & bonus_due
    if trigger == "filled":
        return five_kind & five_filled
    if trigger == "filled_upper":
        return five_kind & five_filled & face_filled
    raise ValueError(f"unknown joker_trigger {trigger!r}")  # pragma: no cover - class attribute


def _has_run(faces: set[int], length: int) -> bool:
    return any(all(f + i in faces for i in range(length)) for f in range(1, 8 - length))


def _box_score_sorted(box: str, dice: tuple[int, ...], joker: bool) -> int:
    counts = [dice.count(f) for f in range(7)]
    top = max(counts)
    total = sum(dice)
    if box in UPPER_FACES:
        face = UPPER_FACES[box]
        return face * counts[face]
    if box == "chance":
        return total
    if box == "pair":  # Dice Poker: "2 dobbelstene met dieselfde waarde" -> sum of all dice
        return total if top >= 2 else 0
    if box == "two_pairs":  # two *different* faces each at least twice (full house qualifies)
        return total if sum(1 for c in counts if c >= 2) >= 2 else 0
    if box == "three_of_a_kind":
        return total if top >= 3 else 0
    if box == "four_of_a_kind":
        return total if top >= 4 else 0
    if box in FIVE_KIND_BOXES:
        return 50 if top == 5 else 0
    if joker and box in JOKER_BOXES:
        return FIXED_POINTS[box]
    if box == "full_house":  # three of one face and two of another; five of a kind is not one
        return 25 if sorted(c for c in counts if c) == [2, 3] else 0
    if box == "small_straight":
        return 30 if _has_run(set(dice), 4) else 0
    if box == "large_straight":
        return 40 if _has_run(set(dice), 5) else 0
    raise ValueError(f"unknown box {box!r}")  # pragma: no cover - guarded by callers


@cache
def _box_score_cached(box: str, dice: tuple[int, ...], joker: bool) -> int:
    return _box_score_sorted(box, dice, joker)


@cache
def _reroll_masks(dice: tuple[int, ...]) -> tuple[int, ...]:
    """The legal re-throw masks of a sorted throw: non-empty and canonical (cached per throw)."""
    return tuple(m for m in range(1, N_REROLL_ACTIONS) if is_canonical_selection(dice, m))


def box_score(box: str, dice: Sequence[int], joker: bool = False) -> int:
    """Points for entering five dice in ``box``, for any box of any scorecard game.

    ``joker=True`` applies the joker scoring of RULES.md: ``full_house``, ``small_straight`` and
    ``large_straight`` score their full 25 / 30 / 40; every other box scores normally.

    >>> box_score("threes", [3, 3, 3, 1, 2])
    9
    >>> box_score("full_house", [3, 3, 3, 5, 5]), box_score("full_house", [4, 4, 4, 4, 4])
    (25, 0)
    >>> box_score("full_house", [4, 4, 4, 4, 4], joker=True)
    25
    """
    if box not in KNOWN_BOXES:
        raise ValueError(f"unknown box {box!r}; known boxes: {', '.join(sorted(KNOWN_BOXES))}")
    return _box_score_cached(box, validate_dice(dice, counts=(5,)), bool(joker))


def make_score_function(game: str, categories: tuple[str, ...]):
    """Build the public ``score(category, dice, joker=False) -> int`` of one game module."""

    def score(category: str, dice: Sequence[int], joker: bool = False) -> int:
        if category not in categories:
            raise ValueError(f"unknown box {category!r} for {game}; boxes: {', '.join(categories)}")
        return box_score(category, dice, joker)

    score.__doc__ = (
        f"Points for entering five dice (faces 1-6, any order) in a {game} box.\n\n"
        "``joker=True`` applies the joker scoring: full_house / small_straight / large_straight\n"
        "score their full 25 / 30 / 40. Raises ``ValueError`` for an unknown box or wrong dice."
    )
    score.__name__ = "score"
    score.__qualname__ = "score"
    return score


@dataclass(frozen=True)
class ScorecardRules(RuleConfig):
    """Rule parameters shared by the scorecard games; each game names its bonus fields.

    Structural facts (the boxes, the five-of-a-kind box, how the joker is granted and whether it
    forces the box order) are class attributes, not parameters.
    """

    categories: ClassVar[tuple[str, ...]] = ()
    five_kind_box: ClassVar[str] = ""
    #: ``"free"``: the joker throw may go in any open box; ``"forced"``: upper box of its face
    #: first, then any lower box, then 0 in an upper box.
    joker_order: ClassVar[str] = "free"
    #: ``"bonus"``: the joker comes with a paid five-of-a-kind bonus (Spiffel, Dice Poker);
    #: ``"filled"``: whenever the five-of-a-kind box is filled, with 50 or 0 (Yahtzee);
    #: ``"filled_upper"``: as ``"filled"``, and only once the upper box of the throw's face is
    #: filled too (Verhoeff's convention for Yahtzee, ``joker_rule="verhoeff"``).
    joker_trigger: ClassVar[str] = "bonus"

    upper_bonus_threshold: int = 63
    upper_bonus: int = 35

    # Generic views of the per-game bonus fields (``spiffel_bonus``, ``poker_bonus_limit``, ...).
    @property
    def five_kind_bonus(self) -> int:
        """Points of one five-of-a-kind bonus."""
        return int(getattr(self, f"{self.five_kind_box}_bonus"))

    @property
    def five_kind_bonus_limit(self) -> int | None:
        """How many five-of-a-kind bonuses a game pays at most (``None``: unlimited)."""
        return getattr(self, f"{self.five_kind_box}_bonus_limit")

    @property
    def num_boxes(self) -> int:
        """Boxes on the card, which is also the number of rounds."""
        return len(self.categories)

    @property
    def n_actions(self) -> int:
        """Size of the discrete action space."""
        return N_REROLL_ACTIONS + len(self.categories)

    def validate(self) -> None:
        check_int("upper_bonus_threshold", self.upper_bonus_threshold, 0, 105)
        check_int("upper_bonus", self.upper_bonus, 0, 1000)
        check_int(f"{self.five_kind_box}_bonus", getattr(self, f"{self.five_kind_box}_bonus"), 0, 10_000)
        # at most one bonus per round after the one that fills the five-of-a-kind box
        check_optional_int(
            f"{self.five_kind_box}_bonus_limit",
            getattr(self, f"{self.five_kind_box}_bonus_limit"),
            0,
            len(self.categories) - 1,
        )
        check_bool("joker", self.joker)  # type: ignore[attr-defined]
        check_int("num_throws", self.num_throws, 1, 10)  # type: ignore[attr-defined]


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


@dataclass
class _Card:
    boxes: list[int | None]
    five_kind_bonuses: int = 0
    upper_bonus_paid: bool = False


@dataclass
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

    rules: ScorecardRules
    num_players: int = 1
    seed: int | None = None
    rng: np.random.Generator | None = None
    cards: list[_Card] = field(init=False)
    current_player: int = field(init=False, default=0)
    round: int = field(init=False, default=0)
    throw: int = field(init=False, default=0)
    dice: tuple[int, ...] = field(init=False, default=())
    done: bool = field(init=False, default=False)
    history: list[ScoringEvent] = field(init=False, default_factory=list)
    _turn_throws: list[tuple[int, ...]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.rules, ScorecardRules):
            raise ConfigError(f"rules must be a ScorecardRules instance, got {type(self.rules).__name__}")
        check_int("num_players", self.num_players, 1, 8)
        rng = self.rng if self.rng is not None else np.random.default_rng(self.seed)
        self.dice_source = DiceSource(rng)
        self.categories = self.rules.categories
        self._box_index = {b: i for i, b in enumerate(self.categories)}
        self._five = self._box_index[self.rules.five_kind_box]
        self._upper = [i for i, b in enumerate(self.categories) if b in UPPER_FACES]
        self._lower = [i for i, b in enumerate(self.categories) if b not in UPPER_FACES]
        self._face_box = {UPPER_FACES[b]: i for i, b in enumerate(self.categories) if b in UPPER_FACES}
        self.cards = [_Card([None] * len(self.categories)) for _ in range(self.num_players)]
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
        if box not in self._box_index:
            raise ValueError(f"unknown box {box!r}; boxes: {', '.join(self.categories)}")
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
    def upper_total(self, player: int) -> int:
        """Points in the upper boxes of ``player``'s card."""
        return sum(self.cards[player].boxes[i] or 0 for i in self._upper)

    def lower_total(self, player: int) -> int:
        """Points in the lower boxes of ``player``'s card."""
        return sum(self.cards[player].boxes[i] or 0 for i in self._lower)

    def upper_bonus(self, player: int) -> int:
        """The upper bonus earned so far (0 or ``rules.upper_bonus``)."""
        return self.rules.upper_bonus if self.cards[player].upper_bonus_paid else 0

    def five_kind_bonus_points(self, player: int) -> int:
        """Points from five-of-a-kind bonuses (Spiffel / Poker / Yahtzee bonus)."""
        return self.cards[player].five_kind_bonuses * self.rules.five_kind_bonus

    def total(self, player: int) -> int:
        """Grand total: upper + upper bonus + lower + five-of-a-kind bonuses."""
        return (
            self.upper_total(player)
            + self.upper_bonus(player)
            + self.lower_total(player)
            + self.five_kind_bonus_points(player)
        )

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
        return self.rules.num_throws - self.throw

    def open_boxes(self, player: int | None = None) -> list[int]:
        """Indices of the open boxes of ``player`` (default: the current player)."""
        p = self.current_player if player is None else player
        return [i for i, v in enumerate(self.cards[p].boxes) if v is None]

    def joker_status(self) -> tuple[bool, bool]:
        """``(bonus_due, joker)`` for entering the current throw now.

        ``bonus_due``: the throw earns a five-of-a-kind bonus; ``joker``: joker scoring applies.
        """
        return self._joker_status(self.current_player, self.dice)

    def _joker_status(self, player: int, dice: tuple[int, ...]) -> tuple[bool, bool]:
        r = self.rules
        if len(dice) != 5 or dice[0] != dice[4]:  # no dice once the game is over
            return False, False
        card = self.cards[player]
        five = card.boxes[self._five]
        if five is None:
            return False, False
        limit = r.five_kind_bonus_limit
        bonus_due = five == 50 and (limit is None or card.five_kind_bonuses < limit)
        face_box = self._face_box.get(dice[0])
        face_filled = face_box is not None and card.boxes[face_box] is not None
        return bonus_due, bool(joker_applies(r, True, True, bonus_due, face_filled))

    def legal_boxes(self) -> list[int]:
        """Indices of the boxes the current throw may be entered in."""
        _, joker = self.joker_status()
        open_ = self.open_boxes()
        if not joker or self.rules.joker_order != "forced":
            return open_
        face_box = self._face_box.get(self.dice[0])
        if face_box is not None and face_box in open_:
            return [face_box]
        lower = [i for i in open_ if i in self._lower]
        return lower if lower else open_

    def legal_actions(self) -> list[int]:
        """Legal actions of the current player, ascending."""
        if self.done:
            return []
        acts: list[int] = list(_reroll_masks(self.dice)) if self.throw < self.rules.num_throws else []
        acts.extend(N_REROLL_ACTIONS + b for b in self.legal_boxes())
        return acts

    def _is_legal(self, a: int) -> bool:
        """``a in self.legal_actions()``, without building the list."""
        if a < N_REROLL_ACTIONS:
            return a > 0 and self.throw < self.rules.num_throws and is_canonical_selection(self.dice, a)
        return a - N_REROLL_ACTIONS in self.legal_boxes()

    def action_mask(self) -> np.ndarray:
        """``int8`` mask over the whole action space: 1 where the action is legal."""
        mask = np.zeros(self.n_actions, dtype=np.int8)
        mask[self.legal_actions()] = 1
        return mask

    def box_points(self, box: int) -> int:
        """Points (without bonuses) the current throw would score in box ``box``."""
        _, joker = self.joker_status()
        return _box_score_cached(self.categories[box], self.dice, joker)

    # ------------------------------------------------------------------ transitions
    def _start_turn(self) -> None:
        self.throw = 1
        self.dice = tuple(sorted(self.dice_source.throw(5)))
        self._turn_throws = [self.dice]

    def apply(self, action: int) -> list[int]:
        """Apply a legal action; return the points each seat gained (indexed by seat).

        Raises ``ValueError`` naming the legal actions when ``action`` is not legal; the state
        is then unchanged.
        """
        if self.done:
            raise ValueError("the game is over; no action is legal")
        a = int(action) if isinstance(action, (int, np.integer)) and not isinstance(action, bool) else None
        if a is None or not self._is_legal(a):
            legal = self.legal_actions()
            raise ValueError(
                f"illegal action {action!r} ({self.describe_action(a) if a is not None else 'not an int'}) "
                f"for player {self.current_player} with dice {list(self.dice)}; legal actions: {legal}"
            )
        rewards = [0] * self.num_players
        if a < N_REROLL_ACTIONS:
            new = list(self.dice)
            fresh = self.dice_source.throw(bin(a).count("1"))
            k = 0
            for i in range(5):
                if a >> i & 1:
                    new[i] = fresh[k]
                    k += 1
            self.dice = tuple(sorted(new))
            self.throw += 1
            self._turn_throws.append(self.dice)
            return rewards
        rewards[self.current_player] = self._score(a - N_REROLL_ACTIONS)
        self._advance()
        return rewards

    def _score(self, box: int) -> int:
        p = self.current_player
        card = self.cards[p]
        bonus_due, joker = self.joker_status()
        points = _box_score_cached(self.categories[box], self.dice, joker)
        card.boxes[box] = points
        gained = points
        upper_bonus = 0
        if not card.upper_bonus_paid and self.upper_total(p) >= self.rules.upper_bonus_threshold:
            card.upper_bonus_paid = True
            upper_bonus = self.rules.upper_bonus
        five_bonus = 0
        if bonus_due:
            card.five_kind_bonuses += 1
            five_bonus = self.rules.five_kind_bonus
        gained += upper_bonus + five_bonus
        self.history.append(
            ScoringEvent(
                p,
                self.round,
                tuple(self._turn_throws),
                self.categories[box],
                points,
                upper_bonus,
                five_bonus,
                joker,
            )
        )
        return gained

    def _advance(self) -> None:
        self.current_player += 1
        if self.current_player == self.num_players:
            self.current_player = 0
            self.round += 1
            if self.round == len(self.categories):
                self.done = True
                self.throw = 0
                self.dice = ()
                self._turn_throws = []
                return
        self._start_turn()

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
