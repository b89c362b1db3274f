"""Equity lost against the exact three-seat Farkle equilibrium (agents.evaluation.field_regret):
the solved agent's action values, the measure, and the leaderboard's N-seat section."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.commands import leaderboard
from agents.commands.leaderboard_field import FIELD_REGRET_FILE
from agents.evaluation.field_regret import field_regret
from agents.players.field_optimal import equilibrium_agent
from agents.solver.farkle_field import equilibrium
from dice_envs.encoding import encode
from dice_envs.engine import new_game
from dice_envs.rules import ConfigError, FarkleRules

#: Short turns and a final round: the three-seat solve takes seconds.
CHEAP = FarkleRules(target=300, bank_minimum=50)


@pytest.fixture(scope="module")
def solution():
    return equilibrium(CHEAP, 3, cap=0)


def test_the_solved_agent_takes_an_action_of_the_highest_value(solution) -> None:
    bot = equilibrium_agent(CHEAP, 3, solution=solution)
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(30):
        g = new_game(CHEAP, num_players=3, seed=seed)
        while not g.done:
            obs, mask = encode(g, g.current_player), g.action_mask()
            values = bot.action_values(obs, mask)
            assert np.isneginf(values[~mask.astype(bool)]).all()  # illegal: -inf
            legal = values[mask.astype(bool)]
            assert (np.isnan(legal) | ((legal >= 0.0) & (legal <= 1.0))).all()  # chances of winning
            chosen = bot.act(obs, mask)
            assert values[chosen] == pytest.approx(np.nanmax(values), abs=1e-12)
            checked += 1
            g.apply(chosen if rng.random() < 0.7 else int(rng.choice(np.flatnonzero(mask))))
    assert checked > 100


def test_the_equilibrium_loses_nothing_and_a_weak_agent_loses_equity(solution) -> None:
    eq = field_regret(equilibrium_agent(CHEAP, 3, solution=solution), CHEAP, 3, games=9, solution=solution)
    assert eq.mean == 0.0 and eq.wrong == 0.0 and eq.decisions > 0 and eq.unscored == 0
    greedy = field_regret("greedy", CHEAP, 3, games=30, seed=1, solution=solution)
    assert greedy.games == 30 and len(greedy.per_game) == 30
    assert greedy.mean == pytest.approx(float(np.mean(greedy.per_game)))
    assert greedy.ci95[0] > 0.0 and 0.0 < greedy.wrong <= 1.0
    bot = agents.load("greedy", CHEAP, 3, seed=1)
    again = field_regret(bot, CHEAP, 3, games=30, seed=1, solution=solution)
    assert again.per_game == greedy.per_game  # exact: the same games, summed in the same order


def test_bad_input_is_refused() -> None:
    with pytest.raises(ConfigError, match="needs farkle rules"):
        field_regret("greedy", "spiffel", 3)
    with pytest.raises(ConfigError, match="games must be a positive integer"):
        field_regret("greedy", CHEAP, 3, games=0)
    with pytest.raises(ConfigError, match="equilibrium is solved at reduced targets only; got 3 seats"):
        field_regret("greedy", FarkleRules(), 3)


def test_the_leaderboard_ranks_agents_by_equity_lost_at_three_seats(tmp_path: Path, monkeypatch) -> None:
    specs = ["greedy", "win-optimal", "pretrained:no-such-bot"]
    monkeypatch.setattr(leaderboard, "candidate_specs", lambda game: specs)
    out, runs = tmp_path / "lb.md", tmp_path / "runs"
    argv = ["--only", "farkle", "--games", "3", "--regret-games", "6", "--workers", "1", "--quiet"]
    argv += ["--no-exact"]  # no two-player table: its win-optimal solves the default target
    argv += ["--out", str(out), "--runs", str(runs), "--field-target", "300"]
    assert leaderboard.main(argv) == 0
    page = out.read_text()
    assert "--field-target 300 --field-seats 3" in page.splitlines()[2]
    section = page[page.index("## farkle — 3 players at target 300, ranked by chance of winning lost") :]
    saved = json.loads((runs / "farkle-3p" / FIELD_REGRET_FILE).read_text())
    assert saved["players"] == 3 and saved["target"] == 300 and set(saved["skipped"]) == {specs[2]}
    assert saved["agents"]["win-optimal"]["mean"] == 0.0
    rows = [line for line in section.splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")]
    assert [r.split("|")[2].strip() for r in rows] == ["`win-optimal`", "`greedy`"]
    assert f"{saved['agents']['greedy']['mean']:.2%}" in rows[1]
    assert "`pretrained:no-such-bot`" in section and "ranked by exploitability" not in page
    assert not (runs / "farkle-3p" / "exploitability.json").exists()
