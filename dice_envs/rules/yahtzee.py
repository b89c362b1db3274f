"""Official Yahtzee: a reference variant (no rule text of the project's) for comparison with the literature.

Spiffel's 13 boxes with the five-of-a-kind box named ``yahtzee``; upper bonus at 63 or more; an
unlimited +100 bonus when the ``yahtzee`` box holds 50; and the *forced* joker whenever the
``yahtzee`` box is filled, with 50 or with 0. The exact solitaire optimum under these rules is
254.5877; with ``yahtzee_bonus=0, joker=False`` it is 245.8708.

``joker_rule`` chooses the joker convention (:data:`JOKER_RULES`):

* ``"forced"`` (default, the official rules): a five of a kind, once the ``yahtzee`` box is
  filled, must go in the upper box of its face if that is open, else in any open lower box
  (where full house, small and large straight score their fixed 25 / 30 / 40), else in an
  upper box for 0. Optimum 254.5877.
* ``"verhoeff"`` (the convention of Tom Verhoeff's optimal solitaire Yahtzee player, whose
  254.5896 most papers quote): the throw may go in any open box, and full house, small and
  large straight score their fixed points only when the upper box of its face is filled.
  Optimum 254.5896.

>>> score("yahtzee", [2, 2, 2, 2, 2])
50
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from . import spiffel
from .config import ConfigError
from .scorecard import ScorecardRules, make_score_function

__all__ = ["CATEGORIES", "JOKER_RULES", "YahtzeeRules", "score"]

#: Values of :attr:`YahtzeeRules.joker_rule`.
JOKER_RULES = ("forced", "verhoeff")

CATEGORIES: tuple[str, ...] = tuple("yahtzee" if b == "spiffel" else b for b in spiffel.CATEGORIES)


@dataclass(frozen=True)
class YahtzeeRules(ScorecardRules):
    """Rule parameters of official Yahtzee."""

    game: ClassVar[str] = "yahtzee"
    categories: ClassVar[tuple[str, ...]] = CATEGORIES
    five_kind_box: ClassVar[str] = "yahtzee"

    upper_bonus_threshold: int = 63
    upper_bonus: int = 35
    #: Points of each Yahtzee bonus (0 switches the bonus off).
    yahtzee_bonus: int = 100
    #: Yahtzee bonuses paid per game at most (``None``: unlimited).
    yahtzee_bonus_limit: int | None = None
    #: Whether the joker rule applies.
    joker: bool = True
    #: Throws per round.
    num_throws: int = 3
    #: Joker convention: ``"forced"`` (official) or ``"verhoeff"`` (see the module docstring).
    joker_rule: str = "forced"

    @property  # type: ignore[override]
    def joker_order(self) -> str:
        """``"forced"`` under the official joker, ``"free"`` (any open box) under Verhoeff's."""
        return "forced" if self.joker_rule == "forced" else "free"

    @property  # type: ignore[override]
    def joker_trigger(self) -> str:
        """``"filled"`` (official) or ``"filled_upper"`` (Verhoeff: the face's upper box filled too)."""
        return "filled" if self.joker_rule == "forced" else "filled_upper"

    def validate(self) -> None:
        super().validate()
        if self.joker_rule not in JOKER_RULES:
            raise ConfigError(
                f"rule parameter 'joker_rule' must be one of {', '.join(JOKER_RULES)}, "
                f"got {self.joker_rule!r}"
            )


score = make_score_function("yahtzee", CATEGORIES)
