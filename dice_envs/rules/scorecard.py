"""The scorecard games' rules: configuration, box scoring and the joker's trigger.

Spiffel, Dice Poker and Yahtzee are configurations of :class:`ScorecardRules`. This is the
single source of truth for box scoring (:func:`box_score`) and the joker (:func:`joker_applies`);
:mod:`dice_envs.tables` derives its score tables from them, :mod:`.scorecard_flow` writes the
game flow (bonuses, forced order, legal actions) once on arrays, and
:class:`~dice_envs.engine.scorecard_game.ScorecardGame` plays one game with it.

Game flow (Spiffel seed: "Per round one dices three times with five dices. After the third throw
of each round at the latest one has to enter the points into the game pad"):

* a turn opens with a throw of all five dice (no decision precedes it);
* after a throw with throws left, the player either re-throws a non-empty subset of the dice
  (the rest are held) or enters the throw in an open box; after the last throw he must score;
* dice are kept sorted ascending after every throw, and actions name positions in that order.

Actions (``n_actions = 32 + number of boxes``): ``1 .. 31`` re-throw the dice whose bits are set
(bit ``i`` = die ``i`` of the sorted dice; among masks selecting the same faces only the smallest
is legal), ``32 + k`` enter the throw in box ``k``; ``0`` is never legal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

from .config import ConfigError, RuleConfig, check_bool, check_int, check_optional_int
from .dice import validate_dice

__all__ = [
    "FIVE_KIND_BOXES",
    "FIXED_POINTS",
    "N_REROLL_ACTIONS",
    "UPPER_FACES",
    "ScorecardRules",
    "box_score",
    "check_box",
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

    Elementwise on booleans or numpy bool arrays (called through
    :meth:`~dice_envs.engine.scorecard_flow.ScorecardFlow.five_kind_status` by the scalar game,
    the vector engine and the solver alike). ``five_kind``: the throw is five of a kind; ``five_filled``: the
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


_KNOWN_SORTED = tuple(sorted(KNOWN_BOXES))


@cache
def _box_score_cached(box: str, dice: tuple[int, ...], joker: bool) -> int:
    return _box_score_sorted(box, dice, joker)


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
    check_box(box, _KNOWN_SORTED)
    return _box_score_cached(box, validate_dice(dice, counts=(5,)), check_bool("joker", joker, what=""))


def check_box(box: Any, boxes: Sequence[str], game: str = "") -> None:
    """``ConfigError`` naming ``box`` (and ``game`` when given) and listing ``boxes`` unless it is
    one of them; any value is answered so, an unhashable one (``["chance"]``) too.

    >>> check_box("sevens", ("ones", "chance"), "spiffel")
    Traceback (most recent call last):
    ...
    dice_envs.rules.config.ConfigError: unknown box 'sevens' for spiffel; known boxes: ones, chance
    """
    if not isinstance(box, str) or box not in boxes:
        where = f" for {game}" if game else ""
        raise ConfigError(f"unknown box {box!r}{where}; known boxes: {', '.join(boxes)}")


def make_score_function(game: str, categories: tuple[str, ...]):
    """Build the public ``score(category, dice, joker=False) -> int`` of one game module."""

    def score(category: str, dice: Sequence[int], joker: bool = False) -> int:
        check_box(category, categories, game)
        return box_score(category, dice, joker)

    score.__doc__ = (
        f"Points for entering five dice (faces 1-6, any order) in a {game} box.\n\n"
        "``joker=True`` applies the joker scoring: full_house / small_straight / large_straight\n"
        "score their full 25 / 30 / 40. Raises ``ValueError`` for wrong dice and ``ConfigError`` (a\n"
        "``ValueError``) for an unknown box or a ``joker`` that is not a bool."
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
