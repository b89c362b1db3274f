"""Numpy tables derived from the scoring functions of :mod:`dice_envs.rules`.

Nothing here is hand-written: every score comes from :func:`dice_envs.rules.scorecard.box_score`
or :func:`dice_envs.rules.farkle.score`, and every legality flag from
:func:`dice_envs.rules.dice.is_canonical_selection`. Tables are built once per process and
cached (``functools.cache``); tests compare them with the functions.

Scorecard tables index the 252 sorted five-dice throws (``ROLLS``) and the 462 multisets of
0-5 kept dice (``KEEPS``).

>>> t = scorecard_tables()
>>> t.rolls.shape, t.keeps_count, t.keep_to_roll.shape
((252, 5), 462, (462, 252))
>>> float(t.roll_prob.sum())
1.0
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from .rules.dice import is_canonical_selection
from .rules.farkle import NUM_DICE, _has_score_sorted, _score_sorted
from .rules.scorecard import N_REROLL_ACTIONS, ScorecardRules, _box_score_cached

__all__ = [
    "FarkleTables",
    "ScoreTables",
    "ScorecardTables",
    "farkle_tables",
    "multiset_prob",
    "score_tables",
    "scorecard_tables",
]


def multiset_prob(dice: tuple[int, ...]) -> float:
    """Probability that throwing ``len(dice)`` dice gives this multiset."""
    n = len(dice)
    perms = math.factorial(n)
    for f in set(dice):
        perms //= math.factorial(dice.count(f))
    return perms / 6**n


def _multisets(n: int) -> list[tuple[int, ...]]:
    return list(itertools.combinations_with_replacement(range(1, 7), n))


@dataclass(frozen=True)
class ScorecardTables:
    """Game-independent tables of the five-dice games."""

    rolls: np.ndarray  # (252, 5) int8, sorted throws
    roll_index: dict[tuple[int, ...], int]
    roll_prob: np.ndarray  # (252,) probability of each throw of five dice
    keeps: list[tuple[int, ...]]  # 462 multisets of 0-5 dice
    keep_index: dict[tuple[int, ...], int]
    keep_to_roll: np.ndarray  # (462, 252) P(roll | keep)
    reroll_keep: np.ndarray  # (252, 32) int16, kept multiset after re-throwing a mask
    reroll_legal: np.ndarray  # (252, 32) bool, canonical non-empty re-throw masks
    reroll_count: np.ndarray  # (32,) dice re-thrown by each mask
    five_kind: np.ndarray  # (252,) bool

    @property
    def keeps_count(self) -> int:
        """Number of keep multisets (462)."""
        return len(self.keeps)


@cache
def scorecard_tables() -> ScorecardTables:
    """Build (once) the throw / keep tables of the five-dice games."""
    rolls = _multisets(5)
    roll_index = {r: i for i, r in enumerate(rolls)}
    keeps = [k for n in range(6) for k in _multisets(n)]
    keep_index = {k: i for i, k in enumerate(keeps)}
    keep_to_roll = np.zeros((len(keeps), len(rolls)))
    for ki, k in enumerate(keeps):
        for add in _multisets(5 - len(k)):
            keep_to_roll[ki, roll_index[tuple(sorted(k + add))]] += multiset_prob(add)
    reroll_keep = np.zeros((len(rolls), N_REROLL_ACTIONS), dtype=np.int16)
    reroll_legal = np.zeros((len(rolls), N_REROLL_ACTIONS), dtype=bool)
    for ri, r in enumerate(rolls):
        for m in range(N_REROLL_ACTIONS):
            reroll_keep[ri, m] = keep_index[tuple(r[i] for i in range(5) if not m >> i & 1)]
            reroll_legal[ri, m] = m != 0 and is_canonical_selection(r, m)
    arr = np.array(rolls, dtype=np.int8)
    return ScorecardTables(
        rolls=arr,
        roll_index=roll_index,
        roll_prob=np.array([multiset_prob(r) for r in rolls]),
        keeps=keeps,
        keep_index=keep_index,
        keep_to_roll=keep_to_roll,
        reroll_keep=reroll_keep,
        reroll_legal=reroll_legal,
        reroll_count=np.array([bin(m).count("1") for m in range(N_REROLL_ACTIONS)], dtype=np.int8),
        five_kind=arr[:, 0] == arr[:, 4],
    )


@dataclass(frozen=True)
class ScoreTables:
    """Box scores of every throw for one scorecard game."""

    normal: np.ndarray  # (252, K) int16
    joker: np.ndarray  # (252, K) int16, joker scoring
    upper: np.ndarray  # (K,) bool, upper boxes
    face_box: np.ndarray  # (7,) index of the upper box of each face (-1 if none)
    five_kind_box: int


@cache
def score_tables(rules_class: type[ScorecardRules]) -> ScoreTables:
    """Score tables of a scorecard game, from :func:`~dice_envs.rules.scorecard.box_score`."""
    from .rules.scorecard import UPPER_FACES

    t = scorecard_tables()
    cats = rules_class.categories
    normal = np.zeros((len(t.rolls), len(cats)), dtype=np.int16)
    joker = np.zeros_like(normal)
    for ri, r in enumerate(t.roll_index):
        for bi, b in enumerate(cats):
            normal[ri, bi] = _box_score_cached(b, r, False)
            joker[ri, bi] = _box_score_cached(b, r, True)
    face_box = np.full(7, -1, dtype=np.int16)
    for bi, b in enumerate(cats):
        if b in UPPER_FACES:
            face_box[UPPER_FACES[b]] = bi
    return ScoreTables(
        normal=normal,
        joker=joker,
        upper=np.array([b in UPPER_FACES for b in cats]),
        face_box=face_box,
        five_kind_box=cats.index(rules_class.five_kind_box),
    )


@dataclass(frozen=True)
class FarkleTables:
    """Tables of Farkle throws of 1-6 dice.

    ``rolls[n]`` lists the sorted throws of ``n`` dice, ``prob[n]`` their probabilities,
    ``points[n]`` (throws × 64) the points of each canonical scoring selection mask (0 where the
    mask is not legal) and ``farkle[n]`` whether the throw scores nothing.
    """

    rolls: dict[int, list[tuple[int, ...]]]
    roll_index: dict[tuple[int, ...], int]
    prob: dict[int, np.ndarray]
    points: dict[int, np.ndarray]
    farkle: dict[int, np.ndarray]


@cache
def farkle_tables() -> FarkleTables:
    """Build (once) the Farkle throw tables from :func:`dice_envs.rules.farkle.score`."""
    rolls, prob, points, farkle = {}, {}, {}, {}
    index: dict[tuple[int, ...], int] = {}
    for n in range(1, NUM_DICE + 1):
        rs = _multisets(n)
        rolls[n] = rs
        index.update({r: i for i, r in enumerate(rs)})
        prob[n] = np.array([multiset_prob(r) for r in rs])
        pts = np.zeros((len(rs), 2**NUM_DICE), dtype=np.int32)
        for ri, r in enumerate(rs):
            for m in range(1, 2**n):
                if is_canonical_selection(r, m):
                    pts[ri, m] = _score_sorted(tuple(r[i] for i in range(n) if m >> i & 1))
        points[n] = pts
        farkle[n] = np.array([not _has_score_sorted(r) for r in rs])
    return FarkleTables(rolls=rolls, roll_index=index, prob=prob, points=points, farkle=farkle)
