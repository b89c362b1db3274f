"""Every table entry equals the scoring / legality function it is derived from."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from dice_envs.rules import DicePokerRules, SpiffelRules, YahtzeeRules, dice_poker, farkle, spiffel, yahtzee
from dice_envs.rules.dice import is_canonical_selection
from dice_envs.tables import farkle_tables, multiset_prob, score_tables, scorecard_tables

SCORECARD = [(SpiffelRules, spiffel), (DicePokerRules, dice_poker), (YahtzeeRules, yahtzee)]


def test_rolls_are_every_sorted_throw() -> None:
    t = scorecard_tables()
    counts = Counter(tuple(sorted(r)) for r in itertools.product(range(1, 7), repeat=5))
    assert len(t.rolls) == len(counts) == 252
    assert [tuple(int(x) for x in r) for r in t.rolls] == sorted(counts)
    for i, r in enumerate(t.rolls):
        key = tuple(int(x) for x in r)
        assert t.roll_index[key] == i
    assert np.array_equal(t.five_kind, [r[0] == r[4] for r in t.rolls])
    assert int(t.five_kind.sum()) == 6


def test_multiset_prob() -> None:
    assert multiset_prob(()) == 1.0
    assert Fraction(multiset_prob((1, 2))).limit_denominator(10**6) == Fraction(2, 36)
    assert Fraction(multiset_prob((3, 3, 3))).limit_denominator(10**6) == Fraction(1, 216)


def test_reroll_tables_match_is_canonical_selection() -> None:
    t = scorecard_tables()
    assert t.reroll_legal.shape == t.reroll_keep.shape == (252, 32)
    for ri, r in enumerate(t.rolls):
        dice = tuple(int(x) for x in r)
        seen = set()
        for m in range(32):
            assert bool(t.reroll_legal[ri, m]) == (m != 0 and is_canonical_selection(dice, m))
            kept = tuple(dice[i] for i in range(5) if not m >> i & 1)
            assert t.keeps[t.reroll_keep[ri, m]] == kept
            if t.reroll_legal[ri, m]:
                assert kept not in seen
                seen.add(kept)
        # every multiset of re-thrown dice is reachable by exactly one legal mask
        distinct = {tuple(sorted(c)) for n in range(5) for c in itertools.combinations(dice, n)}
        assert seen == distinct
    assert t.reroll_count.tolist() == [bin(m).count("1") for m in range(32)]


@pytest.mark.parametrize(("rules_class", "module"), SCORECARD)
def test_score_tables_equal_the_score_function(rules_class, module) -> None:
    t = scorecard_tables()
    s = score_tables(rules_class)
    k = len(module.CATEGORIES)
    assert s.normal.shape == s.joker.shape == (252, k)
    for ri, r in enumerate(t.rolls):
        dice = [int(x) for x in r]
        for bi, box in enumerate(module.CATEGORIES):
            assert s.normal[ri, bi] == module.score(box, dice)
            assert s.joker[ri, bi] == module.score(box, dice, joker=True)
    upper = ["ones", "twos", "threes", "fours", "fives", "sixes"]
    assert s.upper.tolist() == [b in upper for b in module.CATEGORIES]
    assert s.face_box.tolist() == [-1] + [module.CATEGORIES.index(b) for b in upper]
    assert module.CATEGORIES[s.five_kind_box] == rules_class.five_kind_box
    assert score_tables(rules_class) is s  # cached


def test_farkle_tables_equal_the_score_function() -> None:
    t = farkle_tables()
    for n in range(1, 7):
        rolls = t.rolls[n]
        assert rolls == list(itertools.combinations_with_replacement(range(1, 7), n))
        assert t.points[n].shape == (len(rolls), 64)
        for ri, r in enumerate(rolls):
            assert t.roll_index[r] == ri
            assert bool(t.farkle[n][ri]) == (not farkle.has_score(r))
            for m in range(64):
                pts = int(t.points[n][ri, m])
                if m == 0 or m >= 1 << n or not is_canonical_selection(r, m):
                    assert pts == 0
                else:
                    assert pts == farkle.score([r[i] for i in range(n) if m >> i & 1])
    assert farkle_tables() is t
