"""Farkle ("Space Dice"), the push-your-luck game of seed ``001``.

Scoring combinations, each made within one throw ("the combination should be roll in single
roll"): single 1 = 100, single 5 = 50; three of a kind = face × 100 (three 1s = 1000) and "every
other appearance of the same value doubles the previous number of points"; a straight
1-2-3-4-5-6 = 2000; three pairs of three different faces = 1500; two triples = 2500. A set of
dice is scored by the best split into combinations.

A turn (RULES.md): throw six dice; set aside one or more scoring dice, every one of them part of a
combination; then bank (only when the turn total is greater than ``bank_minimum``) or throw the
rest. A throw with nothing scoring is a farkle and loses the turn total; when all six are set
aside (hot dice) all six may be thrown again. Bankruptcy: "When a player's turn and in its first
roll not fit any combination of scoring, he losing all previously accumulated points."

Actions (``n_actions = 128``): ``mask + 64 * bank`` where bit ``i`` of ``mask`` sets aside die
``i`` of the current throw (sorted ascending) and ``bank`` is 1 to bank afterwards, 0 to throw
the remaining dice. Among masks selecting the same multiset only the smallest is legal.

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

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

import numpy as np

from .config import ConfigError, RuleConfig, check_bool, check_int, check_optional_int
from .dice import DiceSource, is_canonical_selection, validate_dice

__all__ = ["NUM_DICE", "N_ACTIONS", "FarkleEvent", "FarkleGame", "FarkleRules", "has_score", "score"]

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


@cache
def _scoring_selections(dice: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """``(mask, points)`` of every canonical scoring selection of a sorted throw, masks ascending."""
    out = []
    n = len(dice)
    for mask in range(1, 1 << n):
        if is_canonical_selection(dice, mask):
            pts = _score_sorted(tuple(dice[i] for i in range(n) if mask >> i & 1))
            if pts > 0:
                out.append((mask, pts))
    return tuple(out)


@cache
def _selection_points(dice: tuple[int, ...]) -> dict[int, int]:
    """:func:`_scoring_selections` as a mapping ``mask -> points`` (cached; do not mutate)."""
    return dict(_scoring_selections(dice))


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
    """One thing that happened, as kept in :attr:`FarkleGame.history`.

    ``kind`` is one of ``throw``, ``set_aside``, ``bank``, ``farkle``, ``bankrupt``.
    """

    kind: str
    player: int
    dice: tuple[int, ...] = ()
    points: int = 0


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

    rules: FarkleRules
    num_players: int = 1
    seed: int | None = None
    rng: np.random.Generator | None = None
    opening: Sequence[int] | None = None
    banked: list[int] = field(init=False)
    turns: list[int] = field(init=False)
    current_player: int = field(init=False, default=0)
    turn_total: int = field(init=False, default=0)
    dice: tuple[int, ...] = field(init=False, default=())
    first_throw: bool = field(init=False, default=True)
    final_round_by: int | None = field(init=False, default=None)
    done: bool = field(init=False, default=False)
    truncated: bool = field(init=False, default=False)
    history: list[FarkleEvent] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.rules, FarkleRules):
            raise ConfigError(f"rules must be a FarkleRules instance, got {type(self.rules).__name__}")
        check_int("num_players", self.num_players, 1, 8)
        self.dice_source = DiceSource(self.rng if self.rng is not None else np.random.default_rng(self.seed))
        if self.opening is not None:
            self.dice_source.inject(*validate_dice(self.opening, counts=(NUM_DICE,)))
        self.banked = [0] * self.num_players
        self.turns = [0] * self.num_players
        self._pending = [0] * self.num_players
        self._start_turn()

    # ------------------------------------------------------------------ actions
    @staticmethod
    def action(positions: Sequence[int], bank: bool) -> int:
        """The action that sets aside the dice at these positions, then banks or throws on."""
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
        mask, bank = action % BANK_FLAG, action >= BANK_FLAG
        chosen = [self.dice[i] for i in range(len(self.dice)) if mask >> i & 1]
        return f"set aside {chosen} then {'bank' if bank else 'throw on'}"

    def selection_points(self, mask: int) -> int:
        """Points of setting aside the dice selected by ``mask`` (0 if not a scoring set)."""
        n = len(self.dice)
        if mask <= 0 or mask >= 1 << n:
            return 0
        return _score_sorted(tuple(self.dice[i] for i in range(n) if mask >> i & 1))

    def legal_actions(self) -> list[int]:
        """Legal actions of the current player, ascending."""
        if self.done:
            return []
        selections = _scoring_selections(self.dice)
        need = self.rules.bank_minimum - self.turn_total  # bank when points > need
        return [m for m, _ in selections] + [m + BANK_FLAG for m, pts in selections if pts > need]

    def _legal_points(self, a: int) -> int | None:
        """Points set aside by action ``a`` if it is legal (``a in self.legal_actions()``), else None."""
        if not 0 < a < N_ACTIONS or self.done:
            return None
        mask, bank = a % BANK_FLAG, a >= BANK_FLAG
        points = _selection_points(self.dice).get(mask)
        if points is None or (bank and points <= self.rules.bank_minimum - self.turn_total):
            return None
        return points

    def action_mask(self) -> np.ndarray:
        """``int8`` mask over the whole action space: 1 where the action is legal."""
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        mask[self.legal_actions()] = 1
        return mask

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
        return len(self.dice)

    # ------------------------------------------------------------------ transitions
    def _throw(self, n: int) -> None:
        self.dice = tuple(sorted(self.dice_source.throw(n)))
        self.history.append(FarkleEvent("throw", self.current_player, self.dice))

    def _start_turn(self) -> None:
        """Open turns until one needs a decision (or the game ends)."""
        while not self.done:
            self.turn_total = 0
            self.first_throw = True
            self._throw(NUM_DICE)
            if _has_score_sorted(self.dice):
                return
            p = self.current_player
            self.history.append(FarkleEvent("farkle", p, self.dice))
            if self.rules.bankruptcy and self.banked[p]:
                self._pending[p] -= self.banked[p]
                self.history.append(FarkleEvent("bankrupt", p, self.dice, -self.banked[p]))
                self.banked[p] = 0
            self._end_turn()

    def _end_turn(self) -> None:
        p = self.current_player
        self.turns[p] += 1
        self.dice = ()
        if self.final_round_by is None and self.banked[p] >= self.rules.target:
            self.final_round_by = p
        last_seat = p == self.num_players - 1
        if last_seat and self.final_round_by is not None:
            self.done = True
        elif last_seat and self.rules.max_turns is not None and self.turns[p] >= self.rules.max_turns:
            self.done = True
            self.truncated = True
        else:
            self.current_player = (p + 1) % self.num_players

    def apply(self, action: int) -> list[int]:
        """Apply a legal action; return each seat's change of banked total (indexed by seat).

        Raises ``ValueError`` naming the legal actions when ``action`` is not legal; the state
        is then unchanged.
        """
        if self.done:
            raise ValueError("the game is over; no action is legal")
        a = int(action) if isinstance(action, (int, np.integer)) and not isinstance(action, bool) else None
        points = self._legal_points(a) if a is not None else None
        if a is None or points is None:
            legal = self.legal_actions()
            raise ValueError(
                f"illegal action {action!r} ({self.describe_action(a) if a is not None else 'not an int'}) "
                f"for player {self.current_player} with dice {list(self.dice)} and turn total "
                f"{self.turn_total}; legal actions: {legal}"
            )
        self._pending = [0] * self.num_players
        p = self.current_player
        mask, bank = a % BANK_FLAG, a >= BANK_FLAG
        chosen = tuple(self.dice[i] for i in range(len(self.dice)) if mask >> i & 1)
        self.turn_total += points
        self.history.append(FarkleEvent("set_aside", p, chosen, points))
        left = len(self.dice) - len(chosen)
        if bank:
            self.banked[p] += self.turn_total
            self._pending[p] += self.turn_total
            self.history.append(FarkleEvent("bank", p, (), self.turn_total))
            self._next_turn()
        else:
            self.first_throw = False
            self._throw(left if left else NUM_DICE)  # hot dice: all six again
            if not _has_score_sorted(self.dice):
                self.history.append(FarkleEvent("farkle", p, self.dice, -self.turn_total))
                self._next_turn()
        return list(self._pending)

    def _next_turn(self) -> None:
        self.turn_total = 0
        self._end_turn()
        if not self.done:
            self._start_turn()

    def clone(self) -> FarkleGame:
        """A deep copy (its own dice source, same generator state)."""
        return copy.deepcopy(self)

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
