"""Official Yahtzee: a reference variant (not a seed) for comparison with the literature.

Spiffel's 13 boxes with the five-of-a-kind box named ``yahtzee``; upper bonus at 63 or more; an
unlimited +100 bonus when the ``yahtzee`` box holds 50; and the *forced* joker whenever the
``yahtzee`` box is filled, with 50 or with 0. The exact solitaire optimum under these rules is
254.5877; with ``yahtzee_bonus=0, joker=False`` it is 245.8708.

>>> score("yahtzee", [2, 2, 2, 2, 2])
50
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from . import spiffel
from .scorecard import ScorecardRules, make_score_function

__all__ = ["CATEGORIES", "YahtzeeRules", "score"]

CATEGORIES: tuple[str, ...] = tuple("yahtzee" if b == "spiffel" else b for b in spiffel.CATEGORIES)


@dataclass(frozen=True)
class YahtzeeRules(ScorecardRules):
    """Rule parameters of official Yahtzee."""

    game: ClassVar[str] = "yahtzee"
    categories: ClassVar[tuple[str, ...]] = CATEGORIES
    five_kind_box: ClassVar[str] = "yahtzee"
    joker_order: ClassVar[str] = "forced"
    joker_trigger: ClassVar[str] = "filled"

    upper_bonus_threshold: int = 63
    upper_bonus: int = 35
    #: Points of each Yahtzee bonus (0 switches the bonus off).
    yahtzee_bonus: int = 100
    #: Yahtzee bonuses paid per game at most (``None``: unlimited).
    yahtzee_bonus_limit: int | None = None
    #: Whether the forced joker rule applies.
    joker: bool = True
    #: Throws per round.
    num_throws: int = 3


score = make_score_function("yahtzee", CATEGORIES)
