"""Spiffel: the Yahtzee-family scorecard game of rule text ``000``.

13 rounds of up to three throws; each round's throw is entered in one box of the score card.
Rules as settled by RULES.md: upper bonus +35 at 63 or more; a second Spiffel, thrown while the
``spiffel`` box holds 50, earns +100 once per game and a *free* joker: the throw may go in any
open box and full house / straights score in full. The rule text's own words, as written:

    "In 13 dicing rounds with a maximum of three throws per round collect points via certain
    combinations and enter them into the game pad." ... "In case one accomplishs 63 or more
    points in the upper zone" ... "Further Spiffels will not get oneself auxiliary points"

    -- rule text ``000`` (Spiffel)

>>> score("full_house", [3, 3, 3, 5, 5])
25
>>> SpiffelRules().spiffel_bonus_limit
1
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .scorecard import ScorecardRules, make_score_function

__all__ = ["CATEGORIES", "SpiffelRules", "score"]

CATEGORIES: tuple[str, ...] = (
    "ones", "twos", "threes", "fours", "fives", "sixes",
    "three_of_a_kind", "four_of_a_kind", "full_house",
    "small_straight", "large_straight", "spiffel", "chance",
)  # fmt: skip


@dataclass(frozen=True)
class SpiffelRules(ScorecardRules):
    """Rule parameters of Spiffel (defaults from RULES.md)."""

    game: ClassVar[str] = "spiffel"
    categories: ClassVar[tuple[str, ...]] = CATEGORIES
    five_kind_box: ClassVar[str] = "spiffel"
    joker_order: ClassVar[str] = "free"
    joker_trigger: ClassVar[str] = "bonus"

    upper_bonus_threshold: int = 63
    upper_bonus: int = 35
    #: Points of the second-Spiffel bonus.
    spiffel_bonus: int = 100
    #: Spiffel bonuses paid per game at most (``None``: unlimited).
    spiffel_bonus_limit: int | None = 1
    #: Whether a bonus-earning Spiffel is a joker (full house / straights score in full).
    joker: bool = True
    #: Throws per round.
    num_throws: int = 3


score = make_score_function("spiffel", CATEGORIES)
