"""The exact score distribution of the optimal solitaire player (:mod:`agents.solver.distribution`):
exact for every solitaire game, the distribution of the ``optimal`` agent's played games, and the
figures of the game pages those of their dated record."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from agents.solver import expected_score, score_distribution
from agents.solver.cache import cached_tables
from agents.solver.distribution import TOLERANCE, ScoreDistribution, _chi2_sf, fit_test
from dice_envs.rules import make_rules

pytest.importorskip("numba", reason="the exact score distribution needs the solver extra (numba)")

ROOT = Path(__file__).resolve().parents[1]
GAMES = ["spiffel", "dice_poker", "yahtzee"]


def _import(folder: str, name: str):  # a module of scripts/ or docs/_ext/
    sys.path.insert(0, str(ROOT / folder))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(ROOT / folder))


# Computing a distribution takes minutes (Dice Poker's about 7 on 2 cores): the suite computes
# Yahtzee's; those of Spiffel and Dice Poker are checked in their dated record, which
# scripts/score_distribution.py writes from the same code.
def test_yahtzee_sums_to_one_and_its_mean_is_the_solver_optimum() -> None:
    game = "yahtzee"
    dist = score_distribution(game)
    assert abs(dist.probabilities.sum() - 1.0) < TOLERANCE
    assert abs(dist.mean - expected_score(game)) < TOLERANCE
    assert dist.scores[0] >= 0 and (dist.probabilities > 0).all() and (np.diff(dist.scores) > 0).all()
    assert score_distribution(game) is dist  # memoized, and kept on disk
    assert any(row["kind"] == "score-distribution" and row["game"] == game for row in cached_tables())


def test_a_rule_variant_is_exact_too() -> None:
    rules = {"upper_bonus_threshold": 0, "joker": False, "yahtzee_bonus": 0, "num_throws": 2}
    dist = score_distribution("yahtzee", **rules)
    assert abs(dist.mean - expected_score("yahtzee", **rules)) < TOLERANCE
    assert abs(dist.probabilities.sum() - 1.0) < TOLERANCE
    if rules.get("yahtzee_bonus") == 0:  # no bonus: 13 boxes of at most 50 points and the upper bonus
        assert dist.scores[-1] <= 13 * 50 + 35
    assert dist.scores[0] >= 35  # the upper bonus is always paid


def test_played_games_of_the_optimal_agent_fit_the_exact_distribution_and_others_do_not() -> None:
    sample_scores = _import("scripts", "score_distribution").sample_scores
    rules = make_rules("yahtzee")
    dist = score_distribution(rules)
    fit = fit_test(dist, sample_scores(rules, 3000, seed=1))
    assert fit.games == 3000 and fit.dof >= 40
    assert fit.p_value > 1e-4, fit  # strict alpha: a wrong distribution fails far below it
    other = fit_test(dist, sample_scores(rules, 3000, seed=1, agent="heuristic"))
    assert other.p_value < 1e-6, other


def test_the_figures_of_a_distribution() -> None:
    d = ScoreDistribution(make_rules("yahtzee"), np.array([0, 10, 20]), np.array([0.2, 0.5, 0.3]))
    assert d.mean == pytest.approx(11.0, abs=1e-12)
    assert d.std == pytest.approx(7.0, abs=1e-12)  # sqrt(0.2 * 121 + 0.5 * 1 + 0.3 * 81)
    assert (d.median, d.percentile(0), d.percentile(20), d.percentile(20.5), d.percentile(100)) == (
        10,
        0,
        0,
        10,
        20,
    )
    assert d.at_least(10) == pytest.approx(0.8, abs=1e-12)
    assert (d.at_least(-5), d.at_least(21)) == (pytest.approx(1.0, abs=1e-12), 0.0)
    with pytest.raises(ValueError, match="a percentile is a number from 0 to 100, got 101"):
        d.percentile(101)
    with pytest.raises(ValueError, match="positive and sum to 1"):
        ScoreDistribution(d.rules, np.array([0, 10]), np.array([0.5, 0.4]))
    with pytest.raises(ValueError, match="two 1-D arrays of one length"):
        ScoreDistribution(d.rules, np.array([0, 10]), np.array([1.0]))
    with pytest.raises(ValueError):
        d.probabilities[0] = 1.0  # read-only


def test_the_chi_square_test() -> None:
    assert _chi2_sf(3.841458820694124, 1) == pytest.approx(0.05, rel=1e-9)
    assert _chi2_sf(18.307038053275146, 10) == pytest.approx(0.05, rel=1e-9)
    assert _chi2_sf(50.0, 10) == pytest.approx(2.669083e-07, rel=1e-5)
    d = ScoreDistribution(make_rules("yahtzee"), np.arange(100), np.full(100, 0.01))
    rng = np.random.default_rng(0)
    fair, skewed = rng.integers(0, 100, 20_000), rng.integers(0, 100, 20_000) // 1.1
    assert fit_test(d, fair).p_value > 1e-3
    assert fit_test(d, skewed).p_value < 1e-12
    with pytest.raises(ValueError, match="needs sampled scores"):
        fit_test(d, [])


def test_the_game_pages_show_the_record_and_the_record_is_what_the_code_computes() -> None:
    gamepages = _import("docs/_ext", "gamepages")
    record = gamepages.score_record()
    for game in GAMES:
        entry = record[game]
        scores, probabilities = np.array(entry["scores"]), np.array(entry["probabilities"])
        dist = ScoreDistribution(make_rules(game), scores, probabilities)
        assert entry["rules"] == make_rules(game).to_dict()
        assert abs(dist.probabilities.sum() - 1.0) < TOLERANCE
        assert abs(entry["mean"] - expected_score(game)) < TOLERANCE
        assert abs(dist.mean - entry["mean"]) < TOLERANCE
        assert entry["median"] == dist.median
        assert entry["percentiles"] == {q: dist.percentile(float(q)) for q in entry["percentiles"]}
        if game == "yahtzee":  # the one the suite computes (above)
            exact = score_distribution(game)
            assert entry["scores"] == exact.scores.tolist()
            # another CPU rounds the optimal policy's near-ties differently: the record made on an AMD
            # EPYC and an Intel Xeon's solve differ by up to 1.1e-9 in a probability (4e-9 in the CDF)
            assert np.allclose(entry["probabilities"], exact.probabilities, rtol=0, atol=1e-8)
        assert entry["sampled"]["games"] >= 100_000 and entry["sampled"]["p_value"] > 1e-4
        page = gamepages.score_section(game, f"{game}_scores.png")
        assert f"{entry['mean']:.4f} (the solver's optimum: {expected_score(game):.4f})" in page
        assert f"| Standard deviation | {entry['std']:.4f} |" in page
        assert f"| Median | {dist.median} |" in page
        for x in entry["at_least"]:
            assert f"| P(score ≥ {x}) | {dist.at_least(float(x)):.4f} |" in page
    assert gamepages.score_section("farkle", "farkle_scores.png") == ""
    md = (ROOT / "docs" / gamepages.SCORE_RECORD).with_suffix(".md").read_text(encoding="utf-8")
    words = " ".join(md.split())
    for key, e in record.items():  # the record's page quotes its own figures
        assert f"| `{key}` | {e['mean']:.4f} | {e['solver_expected_score']:.4f} | {e['std']:.4f} |" in words
    v = record["yahtzee:joker_rule=verhoeff"]
    assert f"mean {v['mean']:.4f}, standard deviation {v['std']:.4f}, median {v['median']}" in words
