"""The quick start: a search recipe whose run ends with the built-in agents' table on the same dice."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from agents.commands.train import main
from agents.players.search.agent import SearchAgent, load_value_model
from agents.registry import load
from agents.training.recipes import find_config
from agents.training.score_table import GameStats, format_table, play_games
from agents.training.search.config import SearchConfig
from agents.training.search.learner import EVAL_SEED_OFFSET, run
from dice_envs.rules import ConfigError, make_rules
from tests.floats import assert_close

TINY = {
    "name": "tiny",
    "iterations": 2,
    "games_per_iteration": 16,
    "fit_steps": 4,
    "batch_size": 32,
    "eval_every": 1,
    "eval_games": 8,
    "final_eval_games": 16,
    "checkpoint_every": 1,
    "hidden": [16],
    "progress_bar": False,
}


def test_the_quick_start_is_a_search_recipe_ending_with_every_baseline() -> None:
    cfg = SearchConfig.from_yaml(find_config("configs/train/quickstart.yaml", "train"))
    assert cfg.name == "quickstart" and cfg.trainer == "search" and cfg.game == "spiffel"
    assert sorted(cfg.final_eval_opponents) == ["greedy", "heuristic", "optimal", "random"]
    assert cfg.final_eval_games >= 1000  # a table that separates the trained agent from heuristic


def test_the_final_table_plays_every_agent_on_the_card_s_dice(tmp_path: Path) -> None:
    cfg = SearchConfig.from_dict({**TINY, "final_eval_opponents": ["greedy", "random"]})
    result = run(cfg, tmp_path / "run", False, "test")
    lines = result.table.splitlines()
    assert "16 games per agent, every agent on the same dice" in lines[0]
    assert [line.split()[0] for line in lines[3:]] == ["trained", "greedy", "random"]
    card = json.loads(result.card_path.read_text())
    rows = card["evaluation"]["rows"]
    assert [r["agent"] for r in rows] == ["trained", "greedy", "random"]
    assert all(r["games"] == 16 and "scores" not in r for r in rows)
    assert card["evaluation"]["mean_score"] == rows[0]["mean_score"]  # exact: the same float copied
    # the trained row is the saved model's agent on those dice, and so is every baseline's row
    rules = make_rules("spiffel")
    net, _ = load_value_model(result.model_path, rules)
    seed = EVAL_SEED_OFFSET + 7_777_777 + cfg.seed
    again = play_games(SearchAgent(rules, net=net), rules, 16, seed=seed)
    assert_close(again.mean_score, rows[0]["mean_score"])
    greedy = play_games(load("greedy", game=rules, num_players=1, seed=seed), rules, 16, seed=seed)
    assert_close(greedy.mean_score, rows[1]["mean_score"])


def test_the_table_gives_each_agent_s_points_behind_optimal_on_the_same_dice() -> None:
    best = np.array([250.0, 240.0, 260.0])
    rows = [
        GameStats("trained", "solitaire", 3, 248.0, 7.0, 0, 0, 0, scores=np.array([248.0, 241.0, 255.0])),
        GameStats("optimal", "solitaire", 3, 250.0, 10.0, 0, 0, 0, scores=best),
    ]
    lines = format_table(rows).splitlines()
    assert "behind optimal" in lines[0]
    trained = lines[2].split()
    gaps = np.array([2.0, -1.0, 5.0])
    # exact: the printed one-decimal strings of 2.0 and 3/sqrt(3), far from a rounding edge
    assert trained[-2:] == [f"{gaps.mean():.1f}", f"{gaps.std(ddof=1) / math.sqrt(3):.1f}"]
    assert lines[3].split()[-2:] == ["0.0", "0.0"]
    assert "behind optimal" not in format_table(rows[:1])  # no optimal row: no column


def test_a_bad_final_eval_opponent_is_refused_before_training() -> None:
    with pytest.raises(ConfigError, match=r"'final_eval_opponents': unknown agent spec 'heuristc'"):
        SearchConfig.from_dict({**TINY, "final_eval_opponents": ["heuristc"]})
    with pytest.raises(ConfigError, match="'final_eval_opponents' is for solitaire runs"):
        SearchConfig.from_dict(
            {**TINY, "num_players": 2, "reward": "win", "final_eval_opponents": ["heuristic"]}
        )
    with pytest.raises(ConfigError, match="must be a list of agent spec strings"):
        SearchConfig.from_dict({**TINY, "final_eval_opponents": "heuristic"})


def test_the_quick_start_command_writes_a_new_folder_each_run(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["--config", "configs/train/quickstart.yaml", "--no-progress"]
    for key in ("iterations", "games_per_iteration", "fit_steps", "eval_games", "final_eval_games", "hidden"):
        value = [16] if key == "hidden" else TINY[key]
        argv += ["--set", f"{key}={value}"]
    argv += ["--set", "final_eval_opponents=[greedy,random]"]  # optimal would solve its table first
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert main(argv) == 0
    assert (tmp_path / "runs/quickstart/quickstart.npz").is_file()
    assert (tmp_path / "runs/quickstart-2/quickstart.npz").is_file()  # the first run is kept
    for name in ("trained", "greedy", "random"):
        assert f"\n{name} " in first
