"""Numpy tables derived from the scoring functions of :mod:`dice_envs.rules`.

Nothing here is hand-written: every score comes from :func:`dice_envs.rules.scorecard.box_score`
or :func:`dice_envs.rules.farkle.score`, and every legality flag from
:func:`dice_envs.rules.dice.is_canonical_selection`. Tables are built once per process and
cached (``functools.cache``); tests compare them with the functions.

Scorecard tables index the 252 sorted five-dice throws (``ROLLS``) and the 462 multisets of
0-5 kept dice (``KEEPS``). The probabilities of throws are the forward model's
(:func:`dice_envs.forward.throw_outcomes`, :mod:`dice_envs.forward.turns`).

>>> t = scorecard_tables()
>>> t.rolls.shape, len(t.keeps)
((252, 5), 462)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from .rules.dice import is_canonical_selection
from .rules.farkle import NUM_DICE, _has_score_sorted, _score_sorted, dice_to_throw
from .rules.scorecard import N_REROLL_ACTIONS, ScorecardRules, _box_score_cached

__all__ = [
    "FarkleTables",
    "FarkleTurnTables",
    "ScoreTables",
    "ScorecardTables",
    "face_code",
    "farkle_tables",
    "farkle_turn_tables",
    "multiset_prob",
    "multisets",
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


def multisets(n: int) -> list[tuple[int, ...]]:
    """The multisets of ``n`` dice (faces 1 to 6) as sorted tuples, in ascending order."""
    return list(itertools.combinations_with_replacement(range(1, 7), n))


@dataclass(frozen=True)
class ScorecardTables:
    """Game-independent tables of the five-dice games."""

    rolls: np.ndarray  # (252, 5) int8, sorted throws
    roll_index: dict[tuple[int, ...], int]
    keeps: list[tuple[int, ...]]  # 462 multisets of 0-5 dice
    keep_index: dict[tuple[int, ...], int]
    reroll_keep: np.ndarray  # (252, 32) int16, kept multiset after re-throwing a mask
    reroll_legal: np.ndarray  # (252, 32) bool, canonical non-empty re-throw masks
    reroll_count: np.ndarray  # (32,) dice re-thrown by each mask
    five_kind: np.ndarray  # (252,) bool
    #: ``code_roll[code]``: index in ``rolls`` of the five faces with this face code (``6**5``
    #: entries). ``kept_code[roll, mask]``: the code of the dice kept by re-throw ``mask``, placed
    #: after the ``reroll_count[mask]`` re-thrown ones, so ``code_roll[kept_code[roll, mask] +
    #: fresh]`` is the throw that results when the re-thrown dice show the faces of code ``fresh``.
    code_roll: np.ndarray  # (7776,) int16
    kept_code: np.ndarray  # (252, 32) int32


@cache
def scorecard_tables() -> ScorecardTables:
    """Build (once) the throw / keep tables of the five-dice games."""
    rolls = multisets(5)
    roll_index = {r: i for i, r in enumerate(rolls)}
    keeps = [k for n in range(6) for k in multisets(n)]
    keep_index = {k: i for i, k in enumerate(keeps)}
    reroll_keep = np.zeros((len(rolls), N_REROLL_ACTIONS), dtype=np.int16)
    reroll_legal = np.zeros((len(rolls), N_REROLL_ACTIONS), dtype=bool)
    kept_code = np.zeros((len(rolls), N_REROLL_ACTIONS), dtype=np.int32)
    for ri, r in enumerate(rolls):
        for m in range(N_REROLL_ACTIONS):
            kept = tuple(r[i] for i in range(5) if not m >> i & 1)
            reroll_keep[ri, m] = keep_index[kept]
            reroll_legal[ri, m] = m != 0 and is_canonical_selection(r, m)
            kept_code[ri, m] = face_code(kept) * 6 ** (5 - len(kept))
    code_roll = np.zeros(6**5, dtype=np.int16)
    for faces in itertools.product(range(1, 7), repeat=5):
        code_roll[face_code(faces)] = roll_index[tuple(sorted(faces))]
    arr = np.array(rolls, dtype=np.int8)
    return ScorecardTables(
        rolls=arr,
        roll_index=roll_index,
        keeps=keeps,
        keep_index=keep_index,
        reroll_keep=reroll_keep,
        reroll_legal=reroll_legal,
        reroll_count=np.array([bin(m).count("1") for m in range(N_REROLL_ACTIONS)], dtype=np.int8),
        five_kind=arr[:, 0] == arr[:, 4],
        code_roll=code_roll,
        kept_code=kept_code,
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

    ``rolls[n]`` lists the sorted throws of ``n`` dice, ``points[n]`` (throws × 64) the points
    of each canonical scoring selection mask (0 where the mask is not legal) and ``farkle[n]``
    whether the throw scores nothing.
    """

    rolls: dict[int, list[tuple[int, ...]]]
    roll_index: dict[tuple[int, ...], int]
    points: dict[int, np.ndarray]
    farkle: dict[int, np.ndarray]


@cache
def farkle_tables() -> FarkleTables:
    """Build (once) the Farkle throw tables from :func:`dice_envs.rules.farkle.score`."""
    rolls, points, farkle = {}, {}, {}
    index: dict[tuple[int, ...], int] = {}
    for n in range(1, NUM_DICE + 1):
        rs = multisets(n)
        rolls[n] = rs
        index.update({r: i for i, r in enumerate(rs)})
        pts = np.zeros((len(rs), 2**NUM_DICE), dtype=np.int32)
        for ri, r in enumerate(rs):
            for m in range(1, 2**n):
                if is_canonical_selection(r, m):
                    pts[ri, m] = _score_sorted(tuple(r[i] for i in range(n) if m >> i & 1))
        points[n] = pts
        farkle[n] = np.array([not _has_score_sorted(r) for r in rs])
    return FarkleTables(rolls=rolls, roll_index=index, points=points, farkle=farkle)


def face_code(faces: tuple[int, ...] | list[int]) -> int:
    """The code of faces thrown in this order: ``sum((f_j - 1) * 6**j)``, uniform in ``[0, 6**c)``
    for ``c`` fair dice; the ``code_roll`` lookups turn it into a sorted throw's index.

    >>> face_code([1, 1, 1]), face_code([2]), face_code([1, 2])
    (0, 1, 6)
    """
    code = 0
    for f in reversed(faces):  # Horner's scheme: one multiply-add per die
        code = code * 6 + int(f) - 1
    return code


@dataclass(frozen=True)
class FarkleTurnTables:
    """Lookups of the Farkle turn flow (:mod:`dice_envs.engine.farkle_turn`), from
    :func:`farkle_tables`, over the 923 throws of 1-6 dice (by number of dice) and one more, the
    last, ``no_throw``: "no dice" (a finished game), with no legal action.

    ``faces[i]``: the sorted faces as a tuple (``()`` for ``no_throw``), ``roll_index`` its inverse;
    ``n_dice[i]`` their number; ``points[i, mask]`` the points of setting ``mask`` aside (0: not
    legal); ``farkle[i]`` whether nothing scores; ``next_dice[i, mask]``: dice thrown after
    setting ``mask`` aside (six after hot dice); ``code_roll[code_offset[n] + code]`` the throw of
    ``n`` dice with face code ``code``.

    Legal masks: banking needs ``turn total + points > bank_minimum``. With
    ``need = bank_minimum - turn total`` (points are multiples of ``step``), the mask of throw
    ``i`` is ``mask_rows[mask_row[i, bucket]]`` with ``bucket = clip(need // step + 1, 0,
    buckets - 1)``; ``mask_rows`` holds each distinct mask once.
    """

    no_throw: int
    points: np.ndarray  # (924, 64) int64
    farkle: np.ndarray  # (924,) bool
    n_dice: np.ndarray  # (924,) int64
    next_dice: np.ndarray  # (924, 64) int64
    code_offset: np.ndarray  # (7,) int64
    code_roll: np.ndarray  # (sum 6**n,) int64
    step: int
    buckets: int
    mask_row: np.ndarray  # (924, buckets) int64
    mask_rows: np.ndarray  # (rows, 128) bool
    faces: tuple[tuple[int, ...], ...]
    roll_index: dict[tuple[int, ...], int]


@cache
def farkle_turn_tables() -> FarkleTurnTables:
    """Build (once) the turn-flow lookups from :func:`farkle_tables`."""
    ft = farkle_tables()
    sizes = range(1, NUM_DICE + 1)
    faces = (*(r for n in sizes for r in ft.rolls[n]), ())
    roll_index = {f: i for i, f in enumerate(faces)}
    n, bank_flag = len(faces) - 1, 2**NUM_DICE
    points = np.zeros((n + 1, bank_flag), dtype=np.int64)
    points[:n] = np.concatenate([ft.points[k] for k in sizes])
    n_dice = np.array([len(f) for f in faces], dtype=np.int64)
    set_aside = np.array([bin(m).count("1") for m in range(bank_flag)], dtype=np.int64)
    next_dice = dice_to_throw(n_dice[:, None], set_aside[None, :])
    code_offset = np.concatenate([[0, 0], np.cumsum([6**k for k in range(1, NUM_DICE)])]).astype(np.int64)
    code_roll = np.zeros(int(code_offset[NUM_DICE]) + 6**NUM_DICE, dtype=np.int64)
    for k in sizes:
        for fs in itertools.product(range(1, 7), repeat=k):
            code_roll[code_offset[k] + face_code(fs)] = roll_index[tuple(sorted(fs))]
    step = math.gcd(*np.unique(points[points > 0]).tolist())
    top = int(points.max())
    buckets = top // step + 2  # bucket 0: need < 0; the last: need >= every value
    values = [np.unique(row[row > 0]) for row in points]
    width = max(len(v) for v in values)
    levels = np.full((n + 1, width), np.iinfo(np.int64).max, dtype=np.int64)
    mask_rows = np.zeros((n + 1, width + 1, 2 * bank_flag), dtype=bool)
    for i, v in enumerate(values):  # level k: the k smallest values cannot be banked
        levels[i, : len(v)] = v
        scoring = points[i] > 0
        mask_rows[i, :, :bank_flag] = scoring
        for k in range(len(v) + 1):
            mask_rows[i, k, bank_flag:] = scoring & (points[i] > (v[k - 1] if k else 0))
    floor = (np.arange(buckets) - 1) * step  # need in [floor, floor + step)
    level = (levels[:, :, None] <= floor[None, None, :]).sum(axis=1)
    mask_row = np.arange(n + 1)[:, None] * (width + 1) + level
    out = FarkleTurnTables(
        no_throw=n,
        points=points,
        farkle=np.append(np.concatenate([ft.farkle[k] for k in sizes]), False),
        n_dice=n_dice,
        next_dice=next_dice,
        code_offset=code_offset,
        code_roll=code_roll,
        step=step,
        buckets=buckets,
        mask_row=mask_row,
        mask_rows=mask_rows.reshape(-1, 2 * bank_flag),
        faces=faces,
        roll_index=roll_index,
    )
    for value in vars(out).values():  # shared by every game and engine: read-only
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return out
