"""Regret against the exact optimum and win-rate deficits (agents.evaluation.regret)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.base import BaseAgent
from agents.evaluation.regret import exact_references, exact_table, farkle_win_deficit, scorecard_regret
from agents.solver.scorecard import solve_scorecard
from dice_envs.encoding import decode
from dice_envs.engine import new_game
from dice_envs.rules import ConfigError, make_rules
from dice_envs.rules.scorecard import N_REROLL_ACTIONS
from dice_envs.tables import scorecard_tables

ROOT = Path(__file__).resolve().parents[1]
RULES = make_rules("yahtzee")


def test_the_optimal_agent_has_no_regret():
    r = scorecard_regret("optimal", RULES, games=4, seed=11)
    assert r.games == 4 and r.decisions > 4 * 13
    assert r.mean == 0.0 and all(g == 0.0 for g in r.per_game)  # exact: losses within TIE count as none


class _Deviant(BaseAgent):
    """Plays ``optimal`` except at the first decision of a game, where it scores ``chance``."""

    def __init__(self) -> None:
        super().__init__()
        self.opt = agents.load("optimal", game=RULES)
        self.chance = N_REROLL_ACTIONS + RULES.categories.index("chance")

    def act(self, observation, action_mask):
        view = decode(observation, RULES, 1)
        if view.round == 0 and view.throw == 1:
            return self.chance
        return self.opt.act(observation, action_mask)


def test_one_deviation_loses_exactly_that_states_value_difference():
    sol = solve_scorecard(RULES)
    t = scorecard_tables()
    plan = sol.plan(0, 0, 0)  # the empty card
    expected = []
    for i in range(5):
        g = new_game(RULES, num_players=1, seed=20 + i)
        r = t.roll_index[tuple(g.dice)]
        keep = plan.keep_values[0][t.reroll_keep[r, 1:N_REROLL_ACTIONS]].max()
        best = max(plan.box_values[:, r].max(), keep)
        expected.append(best - plan.box_values[RULES.categories.index("chance"), r])
    res = scorecard_regret(_Deviant(), RULES, games=5, seed=20)
    assert np.allclose(res.per_game, expected, rtol=0, atol=1e-9)
    assert min(expected) > 0  # chance on the first throw of the game is never optimal
    lo, hi = res.ci95
    assert lo <= res.mean <= hi


def test_regret_orders_agents_and_rejects_bad_input():
    r_greedy = scorecard_regret("greedy", RULES, games=6, seed=0)
    r_random = scorecard_regret("random", RULES, games=6, seed=0)
    assert 0 < r_greedy.mean < r_random.mean
    with pytest.raises(ConfigError, match="scorecard game"):
        scorecard_regret("random", "farkle", games=1)
    with pytest.raises(ConfigError, match="games"):
        scorecard_regret("random", RULES, games=0)


def test_farkle_deficit_and_report_hooks():
    rules = make_rules("farkle", target=400)
    d, (lo, hi), m = farkle_win_deficit("threshold:400", rules, games=600, seed=2)
    assert lo <= d <= hi and d > 0 and m.games_per_seat == 600  # a fixed threshold loses to the optimum
    refs = exact_references(rules, ["win-optimal", "heuristic"], 2, 200, 1)
    assert refs["win-optimal"]["win_deficit"] == 0.0  # exact: the reference itself is not played
    assert "win_deficit" in refs["heuristic"]
    table = exact_table(refs)
    assert table[0].startswith("| agent | win-rate deficit") and len(table) == 4
    assert exact_references(rules, ["heuristic"], 1, 10, 0) == {}


def test_evaluate_cli_writes_exact_references(tmp_path):
    out = tmp_path / "e"
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "evaluate.py"), "--game", "yahtzee", "--agents", "greedy",
         "optimal", "--games", "3", "--out", str(out), "--workers", "1", "--no-plots"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    refs = json.loads((out / "exact.json").read_text())
    assert refs["optimal"]["regret"] == 0.0  # exact: a loss within regret.TIE counts as none
    assert refs["greedy"]["regret"] > 0
    assert "regret per game" in run.stdout


def test_win_optimal_is_a_known_spec_in_tournaments_and_refused_elsewhere():
    """evaluate() / the leaderboard check every spec before playing: win-optimal must pass for
    Farkle (it plays a 2-player round robin) and be refused, naming the choices, for a scorecard game."""
    from agents.evaluation import evaluate
    from agents.registry import check_spec

    check_spec("win-optimal", "farkle")
    with pytest.raises(ConfigError, match=r"'win-optimal' is not available for spiffel; known: .*optimal"):
        check_spec("win-optimal", "spiffel")
    res = evaluate("farkle", ["win-optimal", "threshold:400"], games=40, players=2, seed=3,
                   rules={"target": 400}, workers=1)  # fmt: skip
    assert res.agents == ["win-optimal", "threshold:400"] and len(res.records) == 80  # both seat orders
    orders = {("win-optimal", "threshold:400"), ("threshold:400", "win-optimal")}
    assert {r.seats for r in res.records} == orders


# ---------------------------------------------------------------- Farkle, per decision
FARKLE_SMALL = make_rules("farkle", target=400)


class _FarkleDeviant(BaseAgent):
    """Plays ``win-optimal`` except at its first decision of each game, where it takes the legal
    action the tables rate worst (throwing on from a settled turn included); ``losses`` holds what
    that decision gave away, per game."""

    def __init__(self) -> None:
        super().__init__()
        from agents.players.win_optimal import WinOptimalAgent

        self.judge = WinOptimalAgent(FARKLE_SMALL, 2)  # its seat read from the observation
        self.first = True
        self.losses: list[float] = []

    def reset(self, seed=None):
        super().reset(seed)
        self.first = True

    def act(self, observation, action_mask):
        from agents.evaluation.regret import farkle_decision_values

        if not self.first:
            return self.judge.act(observation, action_mask)
        self.first = False
        values = farkle_decision_values(self.judge, observation[None], action_mask[None])[0]
        legal = np.isfinite(values)
        worst = int(np.flatnonzero(legal)[np.argmin(values[legal])])
        self.losses.append(float(values.max() - values[worst]))
        return worst


def test_farkle_regret_is_zero_for_win_optimal_and_exactly_one_deviation_otherwise():
    from agents.evaluation.regret import farkle_regret

    r = farkle_regret("win-optimal", rules=FARKLE_SMALL, games=20, seed=3)
    assert r.mean == 0.0 and r.wrong == 0.0 and r.decisions > 20
    dev = _FarkleDeviant()
    res = farkle_regret(dev, rules=FARKLE_SMALL, games=12, seed=5)  # seats 0, 1, 0, 1, ...
    assert len(dev.losses) == 12 and sum(x > 0 for x in dev.losses) >= 8  # some have one legal action
    assert np.allclose(res.per_game, dev.losses, rtol=0, atol=1e-12)
    assert res.wrong == pytest.approx(sum(x > 0 for x in dev.losses) / res.decisions)


def test_farkle_regret_matches_the_win_rate_deficit_and_splits_by_mistake():
    """Against win-optimal the expected regret per game is exactly the deficit 0.5 - win rate: the
    regret estimate (no dice noise between a decision's options) must fall in the deficit's
    interval, and be far tighter than it."""
    from agents.evaluation.regret import FARKLE_MISTAKES, farkle_regret

    r = farkle_regret("threshold:300", rules=FARKLE_SMALL, games=1000, seed=0)
    d, (lo, hi), _ = farkle_win_deficit("threshold:300", FARKLE_SMALL, games=2000, seed=1)
    assert d > 0 and lo <= r.mean <= hi
    assert (r.ci95[1] - r.ci95[0]) < (hi - lo)
    assert set(r.by_kind) == set(FARKLE_MISTAKES) and min(r.by_kind.values()) >= 0
    assert sum(r.by_kind.values()) == pytest.approx(r.mean, rel=1e-9)
    assert 0 < r.wrong < 1 and np.isfinite(r.per_game).all()
    again = farkle_regret("threshold:300", rules=FARKLE_SMALL, games=50, seed=0)
    assert again.per_game == r.per_game[:50]  # exact: one machine, the same seed plays the same games
    with pytest.raises(ConfigError, match="farkle rules"):
        farkle_regret("random", rules="spiffel", games=1)
    with pytest.raises(ConfigError, match="games"):
        farkle_regret("random", rules=FARKLE_SMALL, games=0)


def test_farkle_regret_script_table_json_and_refusals(tmp_path):
    out = tmp_path / "r.json"
    script = [
        sys.executable,
        str(ROOT / "scripts" / "farkle_regret.py"),
        "--rules",
        "target=400",
        "--games",
        "6",
    ]
    run = subprocess.run(
        [*script, "--agents", "threshold:300", "--out", str(out)], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    assert "| `threshold:300` | **" in run.stdout and "banked too soon" in run.stdout
    data = json.loads(out.read_text())
    assert data["rules"]["target"] == 400 and data["results"][0]["games"] == 6
    before = out.read_bytes()
    again = subprocess.run(
        [*script, "--agents", "heuristic", "--out", str(out)], capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 2 and "--force" in again.stderr and out.read_bytes() == before
    bad = subprocess.run([*script, "--rules", "targt=1"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "allowed: target" in bad.stderr
