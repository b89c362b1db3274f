"""Scoring functions against every worked example of the rule texts (as settled by RULES.md).

Each game module's public ``score`` is the subject; the engine and the tables are tested elsewhere
against these same functions.
"""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from dice_envs.rules import dice_poker, farkle, spiffel, yahtzee
from dice_envs.rules.scorecard import box_score

SCORE_FUNCTIONS = {
    "spiffel": spiffel.score,
    "dice_poker": dice_poker.score,
    "yahtzee": yahtzee.score,
}
ALL_THROWS = list(itertools.combinations_with_replacement(range(1, 7), 5))


# --------------------------------------------------------------------------- Spiffel (rule text 000)
@pytest.mark.parametrize(
    ("box", "dice", "points"),
    [
        ("threes", [3, 3, 3, 1, 6], 9),  # "three 3s ... a total of 9 points in the field 3s"
        ("full_house", [3, 3, 3, 5, 5], 25),  # "three 3s and two 5s"
        ("full_house", [5, 3, 5, 3, 3], 25),
        ("small_straight", [1, 2, 3, 4, 6], 30),  # "1, 2, 3, 4"
        ("small_straight", [2, 3, 4, 5, 5], 30),  # "2, 3, 4, 5"
        ("small_straight", [3, 4, 5, 6, 1], 30),
        ("large_straight", [1, 2, 3, 4, 5], 40),  # "1, 2, 3, 4, 5"
        ("large_straight", [2, 3, 4, 5, 6], 40),
        ("spiffel", [3, 3, 3, 3, 3], 50),  # "five 3s"
        ("three_of_a_kind", [4, 4, 4, 1, 2], 15),
        ("three_of_a_kind", [4, 4, 4, 4, 2], 18),
        ("four_of_a_kind", [6, 6, 6, 6, 2], 26),
        ("four_of_a_kind", [6, 6, 6, 6, 6], 30),
        ("chance", [1, 2, 3, 4, 6], 16),
        ("ones", [1, 1, 2, 2, 1], 3),
        ("sixes", [6, 6, 6, 6, 6], 30),
    ],
)
def test_spiffel_worked_examples(box: str, dice: list[int], points: int) -> None:
    assert spiffel.score(box, dice) == points


@pytest.mark.parametrize(
    ("box", "dice"),
    [
        ("full_house", [3, 3, 3, 5, 6]),
        ("full_house", [3, 3, 5, 5, 6]),
        ("full_house", [3, 3, 3, 3, 5]),
        ("small_straight", [1, 2, 3, 5, 6]),
        ("small_straight", [1, 1, 2, 2, 3]),
        ("large_straight", [1, 2, 3, 4, 6]),
        ("large_straight", [2, 3, 4, 5, 5]),
        ("spiffel", [3, 3, 3, 3, 4]),
        ("three_of_a_kind", [1, 1, 2, 2, 3]),
        ("four_of_a_kind", [6, 6, 6, 2, 2]),
        ("threes", [1, 2, 4, 5, 6]),
    ],
)
def test_spiffel_non_fitting_throws_score_zero(box: str, dice: list[int]) -> None:
    assert spiffel.score(box, dice) == 0


@pytest.mark.parametrize("fn", [spiffel.score, dice_poker.score, yahtzee.score])
def test_five_of_a_kind_is_a_full_house_only_under_the_joker(fn) -> None:
    assert fn("full_house", [4, 4, 4, 4, 4]) == 0
    assert fn("full_house", [4, 4, 4, 4, 4], joker=True) == 25
    assert fn("small_straight", [4, 4, 4, 4, 4]) == 0
    assert fn("small_straight", [4, 4, 4, 4, 4], joker=True) == 30
    assert fn("large_straight", [4, 4, 4, 4, 4]) == 0
    assert fn("large_straight", [4, 4, 4, 4, 4], joker=True) == 40
    # every other box scores normally under the joker
    assert fn("fours", [4, 4, 4, 4, 4], joker=True) == 20
    assert fn("ones", [4, 4, 4, 4, 4], joker=True) == 0
    assert fn("chance", [4, 4, 4, 4, 4], joker=True) == 20
    assert fn("three_of_a_kind", [4, 4, 4, 4, 4], joker=True) == 20


# --------------------------------------------------------------------------- Dice Poker (rule text 003)
@pytest.mark.parametrize(
    ("box", "dice", "points"),
    [
        ("pair", [5, 5, 3, 2, 1], 16),
        ("two_pairs", [2, 2, 5, 5, 1], 15),
        ("three_of_a_kind", [5, 5, 5, 2, 5], 22),  # RULES.md: the rule text's "= 21" is a slip
        ("four_of_a_kind", [1, 1, 1, 1, 3], 7),
        ("full_house", [2, 2, 2, 3, 3], 25),
        ("small_straight", [2, 3, 4, 5, 5], 30),
        ("large_straight", [2, 3, 4, 5, 6], 40),
        ("poker", [3, 3, 3, 3, 3], 50),
        ("chance", [2, 3, 5, 6, 6], 22),
        ("ones", [1, 1, 1, 1, 3], 4),
        ("fives", [5, 5, 5, 2, 5], 20),
    ],
)
def test_dice_poker_worked_examples(box: str, dice: list[int], points: int) -> None:
    assert dice_poker.score(box, dice) == points


def test_dice_poker_three_of_a_kind_follows_the_rule_not_the_slip() -> None:
    assert dice_poker.score("three_of_a_kind", [5, 5, 5, 2, 5]) != 21
    assert dice_poker.score("three_of_a_kind", [5, 5, 5, 2, 5]) == 5 + 5 + 5 + 2 + 5


def test_dice_poker_pair_and_two_pairs() -> None:
    assert dice_poker.score("pair", [1, 2, 3, 4, 6]) == 0
    assert dice_poker.score("pair", [6, 6, 6, 6, 6]) == 30
    # a full house qualifies as two pairs, four of a kind (one face) does not
    assert dice_poker.score("two_pairs", [2, 2, 2, 3, 3]) == 12
    assert dice_poker.score("two_pairs", [4, 4, 4, 4, 1]) == 0
    assert dice_poker.score("two_pairs", [4, 4, 4, 4, 4]) == 0
    assert dice_poker.score("two_pairs", [2, 2, 5, 6, 1]) == 0


def test_boxes_of_one_game_are_unknown_in_another() -> None:
    with pytest.raises(ValueError, match="pair"):
        spiffel.score("pair", [5, 5, 3, 2, 1])
    with pytest.raises(ValueError, match="poker"):
        spiffel.score("poker", [3, 3, 3, 3, 3])
    with pytest.raises(ValueError, match="spiffel"):
        dice_poker.score("spiffel", [3, 3, 3, 3, 3])
    with pytest.raises(ValueError, match="yahtzee"):
        spiffel.score("yahtzee", [3, 3, 3, 3, 3])
    assert yahtzee.score("yahtzee", [3, 3, 3, 3, 3]) == 50


# --------------------------------------------------------------------------- invariances
@pytest.mark.parametrize("game", list(SCORE_FUNCTIONS))
def test_scorecard_score_ignores_order_and_accepts_numpy(game: str) -> None:
    fn = SCORE_FUNCTIONS[game]
    rng = np.random.default_rng(3)
    cats = {"spiffel": spiffel, "dice_poker": dice_poker, "yahtzee": yahtzee}[game].CATEGORIES
    for _ in range(40):
        dice = [int(x) for x in rng.integers(1, 7, size=5)]
        perm = list(rng.permutation(dice))
        for box in cats:
            assert fn(box, dice) == fn(box, perm) == fn(box, np.array(dice, dtype=np.int64))


@pytest.mark.parametrize("game", list(SCORE_FUNCTIONS))
def test_upper_boxes_count_their_face_for_every_throw(game: str) -> None:
    fn = SCORE_FUNCTIONS[game]
    for face, box in enumerate(["ones", "twos", "threes", "fours", "fives", "sixes"], start=1):
        for throw in ALL_THROWS:
            assert fn(box, throw) == face * throw.count(face)
            assert fn(box, throw, joker=True) == face * throw.count(face)


def test_sum_boxes_score_the_sum_exactly_when_the_shape_fits() -> None:
    for throw in ALL_THROWS:
        counts = sorted((throw.count(f) for f in set(throw)), reverse=True)
        total = sum(throw)
        assert spiffel.score("chance", throw) == total
        assert spiffel.score("three_of_a_kind", throw) == (total if counts[0] >= 3 else 0)
        assert spiffel.score("four_of_a_kind", throw) == (total if counts[0] >= 4 else 0)
        assert dice_poker.score("pair", throw) == (total if counts[0] >= 2 else 0)
        two = len(counts) >= 2 and counts[1] >= 2
        assert dice_poker.score("two_pairs", throw) == (total if two else 0)
        assert spiffel.score("full_house", throw) == (25 if counts == [3, 2] else 0)
        assert spiffel.score("spiffel", throw) == (50 if counts == [5] else 0)
        faces = set(throw)
        small = any({f, f + 1, f + 2, f + 3} <= faces for f in (1, 2, 3))
        large = faces in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6})
        for fn in SCORE_FUNCTIONS.values():
            assert fn("small_straight", throw) == (30 if small else 0)
            assert fn("large_straight", throw) == (40 if large else 0)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("fn", [spiffel.score, dice_poker.score, yahtzee.score])
@pytest.mark.parametrize(
    ("dice", "match"),
    [
        ([1, 2, 3, 4], "expected 5 dice"),
        ([1, 2, 3, 4, 5, 6], "expected 5 dice"),
        ([], "expected 5 dice"),
        ([0, 1, 2, 3, 4], "integers 1-6"),
        ([1, 2, 3, 4, 7], "integers 1-6"),
        ([1, 2, 3, 4, -1], "integers 1-6"),
        ([1.0, 2, 3, 4, 5], "integers 1-6"),
        ([1.5, 2, 3, 4, 5], "integers 1-6"),
        ([True, 2, 3, 4, 5], "integers 1-6"),
        (["1", 2, 3, 4, 5], "integers 1-6"),
        ("12345", "sequence of integers 1-6"),
        (12345, "sequence of integers 1-6"),
        (None, "sequence of integers 1-6"),
    ],
)
def test_scorecard_score_rejects_bad_dice(fn, dice, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        fn("chance", dice)


@pytest.mark.parametrize(("module", "bad"), [(spiffel, "sevens"), (dice_poker, "Chance"), (yahtzee, "")])
def test_unknown_box_names_the_boxes(module, bad: str) -> None:
    with pytest.raises(ValueError) as err:
        module.score(bad, [1, 2, 3, 4, 5])
    message = str(err.value)
    assert repr(bad) in message
    for box in module.CATEGORIES:
        assert box in message


def test_box_score_rejects_unknown_box() -> None:
    with pytest.raises(ValueError, match="known boxes"):
        box_score("sevens", [1, 2, 3, 4, 5])


# --------------------------------------------------------------------------- Farkle (rule text 001)
@pytest.mark.parametrize(
    ("dice", "points"),
    [
        ([1], 100),
        ([5], 50),
        ([1, 5], 150),
        ([1, 1], 200),
        ([5, 5], 100),
        ([4, 4, 4], 400),  # "4 x 100 = 400"
        ([4, 4, 4, 4], 800),  # "4 x 100 x2 = 800"
        ([4, 4, 4, 4, 4], 1600),  # x4 (the rule text's "x2 x2 = 1600" example)
        ([4, 4, 4, 4, 4, 4], 3200),  # x8 per RULES.md
        ([2, 2, 2], 200),
        ([6, 6, 6], 600),
        ([5, 5, 5], 500),  # "In the same way is calculated combination of 5"
        ([5, 5, 5, 5], 1000),
        ([1, 1, 1], 1000),  # "1 1 1 ... 1000 points"
        ([1, 1, 1, 1], 2000),  # "1000 x2 = 2000"
        ([1, 1, 1, 1, 1], 4000),
        ([1, 1, 1, 1, 1, 1], 8000),
        ([2, 4, 1, 6, 5, 3], 2000),  # straight
        ([2, 2, 3, 3, 6, 6], 1500),  # three pairs
        ([1, 1, 3, 3, 5, 5], 1500),
        ([2, 2, 2, 4, 4, 4], 2500),  # two triples
        ([1, 1, 1, 5, 5, 5], 2500),
        ([3, 3, 3, 1], 400),
        ([3, 3, 3, 1, 5], 450),
        ([1, 1, 1, 5, 5], 1100),
        ([2, 2, 2, 2, 1, 5], 550),
        ([1, 1, 1, 1, 5, 5], 2100),  # four 1s + two 5s beats nothing special
    ],
)
def test_farkle_worked_examples(dice: list[int], points: int) -> None:
    assert farkle.score(dice) == points


@pytest.mark.parametrize(
    "dice",
    [
        [2],
        [3, 3],
        [1, 2],  # a set containing a non-scoring die scores nothing
        [5, 5, 5, 6],
        [4, 4, 4, 4, 2],
        [1, 2, 3, 4, 5],  # no partial straights
        [2, 2, 2, 2, 3, 3],  # a four of a kind and a pair are not three pairs
        [2, 2, 3, 3, 6],
        [4, 4],
    ],
)
def test_farkle_sets_with_a_non_scoring_die_score_zero(dice: list[int]) -> None:
    assert farkle.score(dice) == 0


def test_farkle_score_is_the_best_split() -> None:
    """For every set: splitting it into two scoring parts never beats scoring it whole."""
    sets = [s for n in range(2, 7) for s in itertools.combinations_with_replacement(range(1, 7), n)]
    for s in sets:
        whole = farkle.score(s)
        for n_left in range(1, len(s)):
            for left_idx in itertools.combinations(range(len(s)), n_left):
                left = [s[i] for i in left_idx]
                right = [s[i] for i in range(len(s)) if i not in left_idx]
                a, b = farkle.score(left), farkle.score(right)
                if a and b:
                    assert whole >= a + b, (s, left, right)


def _farkle_oracle(dice: tuple[int, ...]) -> int:
    """Best split of ``dice`` into RULES.md's combinations, by brute force (independent of the
    engine): each combination is a single 1 or 5, n >= 3 of a face, or a six-dice special."""
    if not dice:
        return 0
    best = -1  # -1: no split into combinations
    counts = Counter(dice)
    combos: list[tuple[tuple[int, ...], int]] = [((1,), 100), ((5,), 50)]
    for face, c in counts.items():
        for n in range(3, c + 1):
            combos.append(((face,) * n, (1000 if face == 1 else 100 * face) * 2 ** (n - 3)))
    if len(dice) == 6:
        shape = sorted(counts.values())
        if shape == [1] * 6:
            combos.append((dice, 2000))
        elif shape == [2, 2, 2]:
            combos.append((dice, 1500))
        elif shape == [3, 3]:
            combos.append((dice, 2500))
    for combo, points in combos:
        rest = Counter(dice)
        rest.subtract(Counter(combo))
        if min(rest.values()) < 0:
            continue
        sub = _farkle_oracle(tuple(sorted(rest.elements())))
        if sub >= 0:
            best = max(best, points + sub)
    return best


def test_farkle_score_equals_a_brute_force_best_split_for_every_set() -> None:
    for n in range(1, 7):
        for s in itertools.combinations_with_replacement(range(1, 7), n):
            assert farkle.score(s) == max(_farkle_oracle(s), 0), s


@pytest.mark.parametrize(
    ("dice", "match"),
    [
        ([], "expected 1 to 6 dice"),
        ([1] * 7, "expected 1 to 6 dice"),
        ([0], "integers 1-6"),
        ([7, 1], "integers 1-6"),
        ([1.0], "integers 1-6"),
        ([False, 1], "integers 1-6"),
        (["5"], "integers 1-6"),
        ("15", "sequence of integers 1-6"),
    ],
)
def test_farkle_score_rejects_bad_dice(dice, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        farkle.score(dice)
    with pytest.raises(ValueError, match=match):
        farkle.has_score(dice)


def test_has_score_matches_subsets() -> None:
    assert farkle.has_score([2, 2, 3, 4, 6, 6]) is False
    assert farkle.has_score([2, 2, 3, 3, 6, 6]) is True  # three pairs
    assert farkle.has_score([2, 3, 4, 6, 6, 1]) is True
    assert farkle.has_score([3, 3, 3]) is True
    assert farkle.has_score([2]) is False
    assert farkle.has_score([5]) is True


def _farkle_probability(n: int) -> Fraction:
    misses = sum(1 for t in itertools.product(range(1, 7), repeat=n) if not farkle.has_score(t))
    return Fraction(misses, 6**n)


def test_farkle_probability_reference_figures() -> None:
    assert _farkle_probability(1) == Fraction(2, 3)
    p6 = _farkle_probability(6)
    assert round(float(p6), 6) == 0.023148
    assert p6 == Fraction(1080, 46656)
    # more dice never make a farkle likelier
    probs = [_farkle_probability(n) for n in range(1, 6)] + [p6]
    assert probs == sorted(probs, reverse=True)
