"""Dice Poker: the 15-box scorecard game of rule text ``003`` (Afrikaans).

15 rounds, every box filled exactly once. Rules as settled by RULES.md: upper bonus +35 when the
left side is higher than 63 (64 or more); a Poker thrown while the ``poker`` box holds 50 earns
+100 *each* time and a *forced* joker: the upper box of its face if open, else any open
right-side box (full house / straights score in full), else 0 in an upper box. The rule text's
own words:

    "Die spel duur 15 rondes." ... "hoër ... dan 63" ... "die ontvangde telling in die
    toepaslike reël in die linkerkant van die kaart moet skryf, en as dit ingevul word, is die
    resultaat in 'n lyn in die regterkant"

    -- rule text ``003`` (Dice Poker)

>>> score("pair", [5, 5, 3, 2, 1])
16
>>> score("two_pairs", [2, 2, 5, 5, 1])
15
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .scorecard import ScorecardRules, make_score_function

__all__ = ["CATEGORIES", "DicePokerRules", "score"]

CATEGORIES: tuple[str, ...] = (
    "ones", "twos", "threes", "fours", "fives", "sixes",
    "pair", "two_pairs", "three_of_a_kind", "four_of_a_kind", "full_house",
    "small_straight", "large_straight", "poker", "chance",
)  # fmt: skip


@dataclass(frozen=True)
class DicePokerRules(ScorecardRules):
    """Rule parameters of Dice Poker (defaults from RULES.md)."""

    game: ClassVar[str] = "dice_poker"
    categories: ClassVar[tuple[str, ...]] = CATEGORIES
    five_kind_box: ClassVar[str] = "poker"
    joker_order: ClassVar[str] = "forced"
    joker_trigger: ClassVar[str] = "bonus"

    #: Upper bonus when the upper total is at least this ("hoër ... dan 63" = 64).
    upper_bonus_threshold: int = 64
    upper_bonus: int = 35
    #: Points of each poker bonus.
    poker_bonus: int = 100
    #: Poker bonuses paid per game at most (``None``: unlimited).
    poker_bonus_limit: int | None = None
    #: Whether a bonus-earning Poker is a (forced) joker.
    joker: bool = True
    #: Throws per round.
    num_throws: int = 3


score = make_score_function("dice_poker", CATEGORIES)
