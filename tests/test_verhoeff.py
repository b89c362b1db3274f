"""Yahtzee's two joker conventions: official forced joker and Verhoeff's, in rules, vector engine, solver."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_solver import _engine_value

from agents.solver import expected_score
from agents.solver.scorecard import TurnSolver
from dice_envs.engine import new_game
from dice_envs.rules import ConfigError, make_rules
from dice_envs.rules.scorecard import N_REROLL_ACTIONS, UPPER_FACES

VERHOEFF = make_rules("yahtzee", joker_rule="verhoeff")


def _yahtzee_thrown(rules, face: int, filled: dict[str, int]):
    g = new_game(rules, seed=0)
    card = g.cards[0]
    for name, pts in filled.items():
        card.boxes[rules.categories.index(name)] = pts
    g.dice = (face,) * 5
    g.round = len(filled)
    return g


def _legal_boxes(g) -> list[str]:
    return [g.categories[a - N_REROLL_ACTIONS] for a in g.legal_actions() if a >= N_REROLL_ACTIONS]


def test_the_two_optima_with_their_sources() -> None:
    # Verhoeff's optimal solitaire player: 254.5896; the official forced joker: 254.5877
    assert expected_score(VERHOEFF) == pytest.approx(254.5896, abs=5e-5)
    assert expected_score(make_rules("yahtzee")) == pytest.approx(254.5877, abs=5e-5)


def test_verhoeff_any_open_box_fixed_scores_only_with_the_face_box_filled() -> None:
    open_face = _yahtzee_thrown(VERHOEFF, 4, {"yahtzee": 50})
    assert set(_legal_boxes(open_face)) == set(VERHOEFF.categories) - {"yahtzee"}  # any open box
    bonus_due, joker = open_face.joker_status()
    assert bonus_due and not joker
    fh = VERHOEFF.categories.index("full_house")
    assert open_face.box_points(fh) == 0  # the fours box is open: no joker
    filled_face = _yahtzee_thrown(VERHOEFF, 4, {"yahtzee": 0, "fours": 8})
    assert filled_face.joker_status() == (False, True)
    assert filled_face.box_points(fh) == 25
    assert filled_face.box_points(VERHOEFF.categories.index("large_straight")) == 40
    assert set(_legal_boxes(filled_face)) == set(VERHOEFF.categories) - {"yahtzee", "fours"}
    # the official rule forces the open fours box
    forced = _yahtzee_thrown(make_rules("yahtzee"), 4, {"yahtzee": 50})
    assert _legal_boxes(forced) == ["fours"]


def test_joker_rule_is_validated_and_on_the_card() -> None:
    assert make_rules("yahtzee").to_dict()["joker_rule"] == "forced"
    with pytest.raises(ConfigError, match=r"'joker_rule' must be one of forced, verhoeff, got 'free'"):
        make_rules("yahtzee", joker_rule="free")
    with pytest.raises(ConfigError, match="joker_rule"):
        make_rules("spiffel", joker_rule="verhoeff")


@settings(max_examples=12)
@given(
    threshold=st.sampled_from([0, 7, 30, 63]),
    bonus=st.sampled_from([0, 100]),
    data=st.data(),
)
def test_solver_transitions_match_the_engine_under_verhoeff(threshold, bonus, data) -> None:
    """End games solved by the solver and by brute force over the rules engine agree."""
    rules = make_rules(
        "yahtzee", joker_rule="verhoeff", num_throws=1, upper_bonus_threshold=threshold, yahtzee_bonus=bonus
    )
    cats = rules.categories
    k = len(cats)
    open_boxes = data.draw(st.lists(st.integers(0, k - 1), min_size=2, max_size=2, unique=True))
    g = new_game(rules, seed=0)
    card = g.cards[0]
    for b, name in enumerate(cats):
        if b in open_boxes:
            continue
        if name in UPPER_FACES:
            card.boxes[b] = UPPER_FACES[name] * data.draw(st.integers(0, 5))
        elif name == "yahtzee":
            card.boxes[b] = data.draw(st.sampled_from([0, 50]))
        else:
            card.boxes[b] = 0
    if card.boxes[cats.index("yahtzee")] == 50:
        card.five_kind_bonuses = data.draw(st.integers(0, 3))
    card.upper_bonus_paid = g.upper_total(0) >= threshold
    g.round = k - 2
    core = TurnSolver(rules)
    mask = sum(1 << b for b in range(k) if b not in open_boxes)
    values = core.solve(start_mask=mask)
    u = min(g.upper_total(0), threshold)
    z = core.z_of(card.boxes[cats.index("yahtzee")], card.five_kind_bonuses)
    assert values[mask, u, z] == pytest.approx(_engine_value(g, {}), abs=1e-9)
