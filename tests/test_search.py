"""The search agents and their learner: turn search over learned values (agents.search)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.search.agent import SearchAgent, load_value_model
from agents.search.config import SearchConfig
from agents.search.learner import run
from agents.search.play import engine_states, play_games
from agents.search.value import LearnedValues, ValueNet, state_features
from agents.solver.scorecard import turn_solver
from dice_envs.engine.scorecard import ScorecardEngine
from dice_envs.rules import ConfigError, make_rules
from tests.floats import assert_close

REPO = Path(__file__).resolve().parents[1]
TINY = {
    "iterations": 3,
    "games_per_iteration": 16,
    "fit_steps": 4,
    "batch_size": 32,
    "eval_every": 2,
    "eval_games": 8,
    "final_eval_games": 16,
    "checkpoint_every": 1,
    "hidden": [16],
    "progress_bar": False,
}


def _solver(game: str = "spiffel"):
    return turn_solver(make_rules(game))


def _train(folder: Path, resume: bool = False, **values) -> Path:
    cfg = SearchConfig.from_dict({"name": "tiny", **TINY, **values})
    run(cfg, folder, resume, "test")
    return folder / "tiny.npz"


@pytest.mark.parametrize("game", ["spiffel", "yahtzee", "dice_poker"])
def test_learned_values_read_like_the_table(game):
    solver = _solver(game)
    net = ValueNet.random(solver, hidden=(8,), seed=1)
    V = LearnedValues(net, solver)
    masks = np.array([0, 3, 0, (1 << solver.k) - 1])
    u = np.array([0, 10, solver.T, 5])
    z = np.array([0, 0, 0, 0])
    got = V[masks, u, z]
    direct = net(state_features(solver, masks[:3], u[:3], z[:3]))
    assert_close(got[:3], direct)
    assert got[3] == 0.0  # exact: a filled card is worth 0 by the rules
    assert_close(V[masks, u, z], got)  # read again: from the kept values
    assert V[masks[:2], u[:2]].shape == (2, solver.Z)


def test_state_features_name_the_state():
    solver = _solver()
    x = state_features(solver, np.array([0, (1 << 6) - 1]), np.array([0, 63]), np.array([0, 0]))
    k = solver.k
    assert x[0, :k].sum() == k and x[1, :k].sum() == k - 6  # open boxes
    assert x[0, k] == 1 and x[1, k + 63] == 1  # upper total one-hot
    assert x[0, -2] == 1 and x[1, -2] == 1  # bonus within reach / reached
    no_reach = state_features(solver, np.array([(1 << 5) - 1]), np.array([10]), np.array([0]))
    assert no_reach[0, -2] == 0  # only the sixes left: 10 + 30 < 63


def test_turn_search_over_the_exact_table_is_its_bellman_backup():
    """Searching each turn over the solver's own table gives back that table's values: the
    targets the learner fits are exact Bellman backups of the turn (chance handled exactly)."""
    from agents.solver.scorecard import solve_scorecard

    solver = _solver("yahtzee")
    exact = solve_scorecard(make_rules("yahtzee")).values
    out = play_games(solver, exact, games=8, seed=3)
    assert_close(out.targets, exact[out.states[:, 0], out.states[:, 1], out.states[:, 2]], rtol=1e-9)


def test_play_games_records_every_turn_start():
    solver = _solver()
    V = LearnedValues(ValueNet.random(solver, hidden=(8,), seed=0), solver)
    out = play_games(solver, V, games=5, seed=11)
    assert out.states.shape == (5 * 13, 3)
    filled = np.array([bin(m).count("1") for m in out.states[:, 0]]).reshape(5, 13)
    assert (filled == np.arange(13)).all()  # turn t starts with t boxes filled
    assert (out.scores >= 0).all() and 5 * 13 <= out.steps <= 5 * 13 * 3
    again = play_games(solver, LearnedValues(V.net, solver), games=5, seed=11)
    assert (again.scores == out.scores).all()  # same seed, same games


def test_engine_states_read_the_card():
    solver = _solver()
    eng = ScorecardEngine(make_rules("spiffel"), 1, seed=0)
    eng.cards[0, 0, solver.five] = 50
    eng.cards[0, 0, 5] = 24
    eng.upper[0, 0], eng.bonuses[0, 0] = 24, 1
    ((mask, u, z),) = engine_states(solver, eng, np.array([0]))
    assert mask == (1 << solver.five) | (1 << 5) and u == 24 and z == 2


def test_learner_from_scratch_writes_a_model_and_touches_no_solver_table(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("DICE_ENVS_CACHE", str(cache))
    path = _train(tmp_path / "run")
    assert list(cache.iterdir()) == []  # the learner never solved nor read a table
    net, card = load_value_model(path, make_rules("spiffel"))
    assert card["algorithm"] == "search-value" and card["trainer"] == "search"
    assert "no solver values read" in card["learner"]
    assert card["games"] == 3 * 16 and card["evaluation"]["games"] == 16
    assert len(card["learning_curve"]) == 2 and {"games", "wall_s", "eval"} <= set(card["learning_curve"][0])
    assert (tmp_path / "run" / "learning_curve.png").is_file()
    assert net.hidden == [16]


def test_same_seed_same_model_and_resume_continues_exactly(tmp_path):
    a = _train(tmp_path / "a", iterations=4)
    b = _train(tmp_path / "b", iterations=4)
    assert a.read_bytes() == b.read_bytes()
    c = _train(tmp_path / "c", iterations=4)
    ckpts = sorted((tmp_path / "c" / "checkpoints").iterdir())
    assert [p.name for p in ckpts] == ["iter-0000003.npz", "iter-0000004.npz"]  # the newest two
    ckpts[-1].unlink()  # as if killed during the last iteration
    c.unlink()
    c = _train(tmp_path / "c", resume=True, iterations=4)
    assert c.read_bytes() == a.read_bytes()  # continued exactly: network, Adam, buffer, dice
    rows = (tmp_path / "c" / "progress.csv").read_text().splitlines()
    assert len(rows) == 1 + 4  # the rows past the checkpoint were replaced, not repeated
    longer = _train(tmp_path / "c", resume=True, iterations=6)
    assert len((tmp_path / "c" / "progress.csv").read_text().splitlines()) == 1 + 6
    assert json.loads(longer.with_suffix(".json").read_text())["games"] == 6 * 16


def test_resume_refuses_another_config(tmp_path):
    _train(tmp_path / "r", iterations=2)
    with pytest.raises(ConfigError, match="fit_steps"):
        _train(tmp_path / "r", resume=True, iterations=3, fit_steps=5)


def test_search_specs_load_and_play(tmp_path):
    import gymnasium as gym

    import dice_envs  # noqa: F401  (registers the ids)

    path = _train(tmp_path / "run")
    for spec in (str(path), f"search:{path}"):
        bot = agents.load(spec, game="spiffel")
        assert isinstance(bot, SearchAgent) and bot.spec == f"search:{path}"
    env = gym.make("dice_envs/Spiffel-v0")
    obs, info = env.reset(seed=0)
    done, total = False, 0.0
    while not done:
        obs, r, term, trunc, info = env.step(bot.act(obs, info["action_mask"]))
        total, done = total + r, term or trunc
    assert not trunc and total > 0
    with pytest.raises(ConfigError, match="not a yahtzee one"):
        agents.load(str(path), game="yahtzee")


def test_value_models_are_checked(tmp_path):
    path = _train(tmp_path / "run")
    card = json.loads(path.with_suffix(".json").read_text())
    torn = tmp_path / "torn.npz"
    torn.write_bytes(path.read_bytes()[:-10])
    torn.with_suffix(".json").write_text(json.dumps(card))
    with pytest.raises(ConfigError, match="SHA-256"):
        agents.load(str(torn))
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, w0=np.array([object()], dtype=object))
    card["weights_sha256"] = hashlib.sha256(pickled.read_bytes()).hexdigest()
    pickled.with_suffix(".json").write_text(json.dumps(card))
    with pytest.raises(ConfigError, match="holds object values; allowed: plain numbers"):
        agents.load(str(pickled))


def test_search_over_a_policy_model_says_what_fits():
    with pytest.raises(ConfigError, match="needs a value model"):
        agents.load("search:pretrained:spiffel")
    with pytest.raises(ConfigError, match="search spec needs a model"):
        agents.load("search:")


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ({"game": "farkle"}, "trains spiffel"),
        ({"hidden": [0]}, "hidden"),
        ({"iterations": 0}, "iterations"),
        ({"num_players": 2}, "solitaire"),
        ({"fit_step": 3}, "did you mean 'fit_steps'"),
    ],
)
def test_config_errors_name_the_key(values, match):
    with pytest.raises(ConfigError, match=match):
        SearchConfig.from_dict(values)


def test_train_command_runs_a_search_recipe(tmp_path):
    sets = [f"--set={k}={json.dumps(v)}" for k, v in TINY.items() if k != "progress_bar"]
    cmd = [
        sys.executable,
        "-m",
        "agents.commands.cli",
        "train",
        "--config",
        "spiffel-search-quick",
        *sets,
        "--no-progress",
        "--out",
        str(tmp_path / "q"),
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "spiffel-search-quick.npz" in done.stdout and "s.e." in done.stdout
    bad = subprocess.run(
        [*cmd[:-1], str(tmp_path / "r"), "--total-timesteps", "5"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert bad.returncode == 2 and "iterations" in bad.stderr and not (tmp_path / "r").exists()


def test_search_over_a_farkle_model_is_the_planner():
    from agents.players.planner import PlannerAgent

    bot = agents.load("search:pretrained:farkle-scratch-ppo", game="farkle", num_players=2)
    assert isinstance(bot, PlannerAgent)
    for game in ("farkle", "yahtzee"):
        assert "search:<model>" in agents.known_specs(game)
