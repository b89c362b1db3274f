"""Minari datasets with the exact value of every action (agents.evaluation.datasets, dice-envs datasets)."""

from __future__ import annotations

import math

import minari
import numpy as np
import pytest

from agents.commands.cli import main as cli_main
from agents.evaluation.datasets import collect, dataset_id, summarize
from agents.evaluation.regret import TIE, scorecard_regret
from agents.players.win_optimal import WinOptimalAgent
from agents.solver.scorecard import solve_scorecard
from dice_envs.rules import ConfigError, make_rules

FARKLE_SMALL = {"target": 400}


@pytest.fixture(autouse=True)
def datasets_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))


def _losses(ds) -> list[np.ndarray]:
    """Per episode, each decision's best value minus the taken action's, checked against the data."""
    out = []
    for ep in ds.iterate_episodes():
        values, taken = ep.infos["action_values"], ep.infos["action_value"]
        n = len(ep.actions)
        assert values.shape[0] == taken.shape[0] == n + 1 and values.dtype == np.float64
        assert np.isneginf(values[-1]).all() and math.isnan(taken[-1])  # the last observation: no decision
        legal = ep.infos["action_mask"][:n] > 0
        assert np.isfinite(values[:n][legal]).all() and np.isneginf(values[:n][~legal]).all()
        assert np.array_equal(taken[:n], values[np.arange(n), ep.actions])  # exact: the same float64
        out.append(values[:n].max(axis=1) - taken[:n])
    return out


def _check_env(ds) -> None:
    env = ds.recover_environment()
    assert env.observation_space == ds.observation_space and env.action_space == ds.action_space
    _, info = env.reset(seed=1)
    step = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert env.observation_space.contains(step[0])


def test_optimal_spiffel_takes_a_best_action_at_every_decision():
    ds = collect("spiffel", "optimal", 20, seed=3)
    assert ds.spec.dataset_id == "dice_envs/spiffel/optimal-v0" == dataset_id("spiffel", "optimal")
    assert ds.total_episodes == 20 and ds.total_steps >= 20 * 13
    assert max(loss.max() for loss in _losses(ds)) <= TIE
    meta = ds.storage.metadata
    assert meta["ref_max_score"] == pytest.approx(solve_scorecard(make_rules("spiffel")).expected_score())
    assert 0 < meta["ref_min_score"] < meta["ref_max_score"] / 2  # random scores a fraction of it
    assert meta["algorithm_name"] == "optimal" and "dice_envs/Spiffel-v0" in meta["description"]
    _check_env(minari.load_dataset("dice_envs/spiffel/optimal-v0"))


def test_win_optimal_farkle_takes_a_best_action_against_win_optimal_inside():
    ds = collect("farkle", "win-optimal", 20, rules=FARKLE_SMALL)
    assert ds.total_episodes == 20
    assert max(loss.max() for loss in _losses(ds)) <= TIE
    values = np.concatenate([ep.infos["action_value"][:-1] for ep in ds.iterate_episodes()])
    assert ((values >= 0) & (values <= 1 + TIE)).all()  # chances of winning
    env = ds.recover_environment()
    assert env.spec.kwargs == {**FARKLE_SMALL, "opponents": ["win-optimal"], "seat": 0}
    p = WinOptimalAgent(make_rules("farkle", **FARKLE_SMALL)).solution.win_probability()
    assert ds.storage.metadata["ref_max_score"] == pytest.approx(2 * p - 1)
    _check_env(ds)


def test_random_losses_agree_with_scorecard_regret():
    ds = collect("spiffel", "random", 20, seed=5)
    per_episode = np.array([loss[loss > TIE].sum() for loss in _losses(ds)])
    reg = np.array(scorecard_regret("random", "spiffel", games=20, seed=5).per_game)
    assert per_episode.min() > 0
    se = math.sqrt(per_episode.var(ddof=1) / 20 + reg.var(ddof=1) / 20)  # other dice, same policy
    assert abs(per_episode.mean() - reg.mean()) < 4 * se
    s = summarize(ds)
    assert s["episodes"] == 20 and s["decisions"] == sum(len(loss) for loss in _losses(ds))
    assert s["loss_per_episode"] == pytest.approx(per_episode.mean(), rel=1e-12)
    assert 0 < s["best_share"] < 1 and s["loss_per_decision"] > 0
    assert s["mean_return"] == pytest.approx(np.mean([ep.rewards.sum() for ep in ds.iterate_episodes()]))


def test_bad_input_and_an_existing_dataset_are_refused(capsys):
    with pytest.raises(ConfigError, match=r"allowed: optimal, .*random"):
        collect("spiffel", "win-optimal", 2)
    with pytest.raises(ConfigError, match="2 players"):
        collect("farkle", "random", 2, players=3)
    assert cli_main(["datasets", "--game", "chess", "--policy", "random", "--episodes", "2"]) == 2
    assert "allowed: spiffel, dice_poker, yahtzee, farkle" in capsys.readouterr().err
    argv = ["datasets", "--game", "spiffel", "--policy", "greedy", "--episodes", "2"]
    assert cli_main(argv) == 0
    capsys.readouterr()
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert "dice_envs/spiffel/greedy-v0 exists" in err and "--force" in err
    assert cli_main([*argv[:-1], "3", "--force"]) == 0
    assert minari.load_dataset("dice_envs/spiffel/greedy-v0").total_episodes == 3


def test_check_datasets_script_reports_what_the_data_shows(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "check_datasets.py"
    spec = importlib.util.spec_from_file_location("_script_check_datasets", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    collect("spiffel", "optimal", 3, seed=1)
    collect("spiffel", "random", 3, seed=1)
    assert script.main(["dice_envs/spiffel/optimal-v0", "dice_envs/spiffel/random-v0", "--regret", "3"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| `")]
    optimal, random = (row.split(" | ") for row in rows)
    assert optimal[3] == "100.00%" and optimal[6] == "0 (0)" and optimal[-1] == "yes |"
    assert float(random[6].split()[0]) > 0 and random[7].count("[") == 1  # random's regret beside it
