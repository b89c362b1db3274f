"""Regret against the exact optimum and win-rate deficits (agents.regret)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.base import BaseAgent
from agents.regret import exact_references, exact_table, farkle_win_deficit, scorecard_regret
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
    assert r.mean == 0.0 and all(g == 0.0 for g in r.per_game)


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
    assert refs["win-optimal"]["win_deficit"] == 0.0 and "win_deficit" in refs["heuristic"]
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
    assert refs["optimal"]["regret"] == 0.0 and refs["greedy"]["regret"] > 0
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
