"""Farkle ("Space Dice"), the push-your-luck game of rule text ``001``.

Scoring combinations, each made within one throw: single 1 = 100, single 5 = 50; three of a kind
= face × 100 (three 1s = 1000), each further die of that face doubling it; a straight
1-2-3-4-5-6 = 2000; three pairs of three different faces = 1500; two triples = 2500. A set of
dice is scored by the best split into combinations.

A turn (RULES.md): throw six dice; set aside one or more scoring dice, every one of them part of a
combination; then bank (only when the turn total is greater than ``bank_minimum``) or throw the
rest. A throw with nothing scoring is a farkle and loses the turn total; when all six are set
aside (hot dice) all six may be thrown again. Bankruptcy: a player whose turn's first throw
scores nothing loses all banked points. The rule text's own words, as written:

    "the combination should be roll in single roll" ... "every other appearance of the same
    value doubles the previous number of points" ... "When a player's turn and in its first
    roll not fit any combination of scoring, he losing all previously accumulated points."

    -- rule text ``001`` (Farkle)

Actions (``n_actions = 128``): ``mask + 64 * bank`` where bit ``i`` of ``mask`` sets aside die
``i`` of the current throw (sorted ascending) and ``bank`` is 1 to bank afterwards, 0 to throw
the remaining dice. Among masks selecting the same multiset only the smallest is legal.

The turn flow is written once, as rule functions on one game or a batch, in
:mod:`dice_envs.engine.farkle_turn` (over :func:`dice_envs.tables.farkle_turn_tables`); the game
itself is :class:`dice_envs.engine.farkle_game.FarkleGame`.

>>> score([1, 1, 1, 1])
2000
>>> score([4, 4, 4, 4, 4, 4])
3200
>>> score([2, 2, 3, 3, 6, 6])
1500
>>> score([1, 2])
0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

from .config import ConfigError, RuleConfig, check_bool, check_int, check_optional_int
from .dice import validate_dice

__all__ = [
    "BANK_FLAG",
    "NUM_DICE",
    "N_ACTIONS",
    "FarkleEvent",
    "FarkleRules",
    "dice_to_throw",
    "has_score",
    "score",
]

NUM_DICE = 6
#: Without a turn cap (``max_turns=None``), the largest ``bank_minimum`` allowed: above it, a
#: turn rarely reaches a bankable total and a game may never end.
MAX_UNCAPPED_BANK_MINIMUM = 2000
#: Without a turn cap and with bankruptcy, the largest ``target`` allowed: reaching 100,000 takes
#: about 170 turns of 600 points, all free of a first-throw farkle (2.3% each): ~2% of tries.
MAX_UNCAPPED_TARGET = 100_000
N_ACTIONS = 2 * 2**NUM_DICE
BANK_FLAG = 2**NUM_DICE


def _kind_points(face: int, count: int) -> int:
    base = 1000 if face == 1 else face * 100
    return base * 2 ** (count - 3)


@cache
def _score_sorted(dice: tuple[int, ...]) -> int:
    counts = [dice.count(f) for f in range(7)]
    best = 0
    if len(dice) == 6:
        nonzero = sorted(c for c in counts if c)
        if nonzero == [1] * 6:
            best = 2000  # straight
        elif nonzero == [2, 2, 2]:
            best = 1500  # three pairs of three different faces
        elif nonzero == [3, 3]:
            best = 2500  # two triples of two different faces
    per_face = 0
    for face in range(1, 7):
        c = counts[face]
        if c == 0:
            continue
        if c >= 3:
            per_face += _kind_points(face, c)
        elif face == 1:
            per_face += 100 * c
        elif face == 5:
            per_face += 50 * c
        else:
            per_face = -1
            break
    return max(best, per_face)


def score(dice: Sequence[int]) -> int:
    """Points for setting aside exactly these dice (1 to 6, faces 1-6) from one throw.

    The dice are scored by their best split into combinations; 0 when any die belongs to no
    combination. Raises ``ValueError`` for wrong dice.
    """
    return _score_sorted(validate_dice(dice, counts=range(1, NUM_DICE + 1)))


@cache
def _has_score_sorted(dice: tuple[int, ...]) -> bool:
    n = len(dice)
    return any(_score_sorted(tuple(dice[i] for i in range(n) if m >> i & 1)) for m in range(1, 2**n))


def has_score(dice: Sequence[int]) -> bool:
    """True when some non-empty subset of this throw scores (else the throw is a farkle)."""
    return _has_score_sorted(validate_dice(dice, counts=range(1, NUM_DICE + 1)))


def dice_to_throw(n_dice: Any, set_aside_count: Any) -> Any:
    """Dice thrown after setting ``set_aside_count`` of ``n_dice`` aside: all six after hot dice
    (ints or arrays; meaningless where more dice are set aside than thrown).

    >>> dice_to_throw(6, 2), dice_to_throw(3, 3)
    (4, 6)
    """
    left = n_dice - set_aside_count
    return left + NUM_DICE * (left == 0)


@dataclass(frozen=True)
class FarkleRules(RuleConfig):
    """Rule parameters of Farkle (defaults from RULES.md)."""

    game: ClassVar[str] = "farkle"

    #: Banked total that ends the game (after the round is finished).
    target: int = 10_000
    #: Banking is allowed only when the turn total is greater than this.
    bank_minimum: int = 350
    #: A first throw that scores nothing wipes the player's banked total.
    bankruptcy: bool = True
    #: Turns per player after which the game stops, reported as truncation (None: no cap).
    max_turns: int | None = 100

    @property
    def n_actions(self) -> int:
        """Size of the discrete action space."""
        return N_ACTIONS

    def validate(self) -> None:
        check_int("target", self.target, 50, 1_000_000)
        check_int("bank_minimum", self.bank_minimum, 0, 100_000)
        check_bool("bankruptcy", self.bankruptcy)
        check_optional_int("max_turns", self.max_turns, 1, 100_000)
        if self.max_turns is None:  # no cap: refuse rules under which games (practically) never end
            if self.bank_minimum > MAX_UNCAPPED_BANK_MINIMUM:
                raise ConfigError(
                    f"bank_minimum={self.bank_minimum} with max_turns=None: a turn total above "
                    f"{self.bank_minimum} is so rare that games would practically never end; set max_turns "
                    f"(e.g. 100) or bank_minimum <= {MAX_UNCAPPED_BANK_MINIMUM}"
                )
            if self.bankruptcy and self.target > MAX_UNCAPPED_TARGET:
                raise ConfigError(
                    f"target={self.target} with bankruptcy=True and max_turns=None: a first-throw farkle "
                    f"(2.3% of turns) wipes a banked total, so games this long would practically never "
                    f"end; set max_turns (e.g. 100), bankruptcy=False or target <= {MAX_UNCAPPED_TARGET}"
                )


@dataclass(frozen=True)
class FarkleEvent:
    """One thing that happened, as kept in :attr:`dice_envs.engine.farkle_game.FarkleGame.history`.

    ``kind`` is one of ``throw``, ``set_aside``, ``bank``, ``farkle``, ``bankrupt``.
    """

    kind: str
    player: int
    dice: tuple[int, ...] = ()
    points: int = 0
