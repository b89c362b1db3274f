"""The search agents and their learner: turn search over learned values (agents.players.search,
agents.training.search)."""

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
from agents.players.search.agent import SearchAgent, load_value_model
from agents.players.search.play import engine_states, play_games
from agents.players.search.value import LearnedValues, ValueNet, feature_size, state_features
from agents.solver.scorecard import turn_solver
from agents.training.search.config import SearchConfig
from agents.training.search.learner import EVAL_SEED_OFFSET, run
from dice_envs.engine.scorecard import ScorecardEngine
from dice_envs.rules import ConfigError, make_rules
from dice_envs.rules.scorecard import N_REROLL_ACTIONS
from dice_envs.tables import scorecard_tables
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


class _ExactNet:
    """A stand-in for a :class:`ValueNet` that answers the solver's exact value of each state,
    read back from its features (:func:`state_features`): a search agent over it searches over
    the exact table through :class:`LearnedValues`, as it searches over a network."""

    def __init__(self, solver, table: np.ndarray) -> None:
        self.solver, self.table = solver, table
        self.weights = [np.zeros((feature_size(solver), 1))]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        k, U, Z = self.solver.k, self.solver.U, self.solver.Z
        mask = (x[:, :k] < 0.5) @ (1 << np.arange(k))
        return self.table[mask, x[:, k : k + U].argmax(axis=1), x[:, k + U : k + U + Z].argmax(axis=1)]


def _action_value(plan, roll: int, throw: int, action: int) -> float:
    """What ``action`` is worth under a turn plan at throw ``throw`` of roll index ``roll``."""
    if action >= N_REROLL_ACTIONS:
        return float(plan.box_values[action - N_REROLL_ACTIONS, roll])
    return float(plan.keep_values[throw - 1][scorecard_tables().reroll_keep[roll, action]])


@pytest.mark.parametrize("game", ["spiffel", "yahtzee"])
def test_search_over_the_exact_values_plays_like_optimal(game):
    """The search agent over the solver's exact values takes optimal's action at every decision of
    100 games (where the two differ, both actions are worth the same: a tie)."""
    from agents.players.scorecard import OptimalAgent
    from agents.solver.scorecard import solve_scorecard

    rules = make_rules(game)
    solution = solve_scorecard(rules)
    optimal = OptimalAgent(rules, solution=solution)
    search = SearchAgent(rules, net=_ExactNet(_solver(game), solution.values))
    engine = ScorecardEngine(rules, 100, seed=7)
    decisions = same = 0
    while not engine.done.all():
        g = np.flatnonzero(~engine.done)
        obs, masks = engine.observe(0, g), engine.action_masks(g)
        want, got = optimal.act_batch(obs, masks), search.act_batch(obs, masks)
        decisions, same = decisions + len(g), same + int((want == got).sum())
        for i in np.flatnonzero(want != got).tolist():
            mask, u, z, roll, throw = (int(a[0]) for a in optimal.turn_states(obs[i : i + 1]))
            plan = solution.plan(mask, min(u, solution.solver.T), z)
            assert_close(_action_value(plan, roll, throw, got[i]), _action_value(plan, roll, throw, want[i]))
        engine.step(want, g)
    assert decisions > 100 * 13 and same > 0.99 * decisions, (same, decisions)


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


def _block_solver_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every way to the exact solver's values raise: solving a table (``TurnSolver.solve``,
    ``solve_scorecard`` wherever it was imported) and loading a cached one (``cached_array``). The
    solver's turn search over other values (``turn_solver``, ``box_values_of``, ``turn_plans``)
    stays: the learner searches its turns with it."""
    from agents.solver import cache, scorecard

    def refuse(*args, **kwargs):
        raise AssertionError("the exact solver's values were read")

    monkeypatch.setattr(scorecard.TurnSolver, "solve", refuse)
    originals = {"solve_scorecard": scorecard.solve_scorecard, "cached_array": cache.cached_array}
    for name, original in originals.items():
        for module in list(sys.modules.values()):
            if module is not None and vars(module).get(name) is original:
                monkeypatch.setattr(module, name, refuse)


def test_learner_from_scratch_writes_a_model_and_touches_no_solver_table(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("DICE_ENVS_CACHE", str(cache))
    _block_solver_values(monkeypatch)  # nor in memory: any read of the solver's values fails the run
    path = _train(tmp_path / "run")
    assert list(cache.iterdir()) == []  # the learner never solved nor read a table
    net, card = load_value_model(path, make_rules("spiffel"))
    assert card["algorithm"] == "search-value" and card["trainer"] == "search"
    assert "no solver values read" in card["learner"]
    assert card["games"] == 3 * 16 and card["evaluation"]["games"] == 16
    assert len(card["learning_curve"]) == 2 and {"games", "wall_s", "eval"} <= set(card["learning_curve"][0])
    assert (tmp_path / "run" / "learning_curve.png").is_file()
    assert net.hidden == [16]


def test_a_short_run_plays_clearly_better_than_its_random_start(tmp_path):
    """16 iterations of 32 games (a few seconds) lift the mean of 300 evaluation games well above
    the random network the run starts from, on the same dice (paired: the margin is 3 standard
    errors of the per-game differences). Deterministic: the run and the games are seeded."""
    cfg = {"iterations": 16, "games_per_iteration": 32, "fit_steps": 100, "batch_size": 128}
    cfg |= {"buffer_iterations": 2, "learning_rate": 3e-3, "lr_final": 1e-3, "hidden": [32]}
    path = _train(tmp_path / "run", **cfg, eval_every=0, final_eval_games=0, checkpoint_every=0)
    solver = _solver()
    trained, _ = load_value_model(path)
    start = ValueNet.random(solver, cfg["hidden"], seed=0)  # the learner's start: seed 0's weights
    seed = EVAL_SEED_OFFSET  # dice the run never trained on
    diff = (
        play_games(solver, LearnedValues(trained, solver), 300, seed).scores
        - play_games(solver, LearnedValues(start, solver), 300, seed).scores
    )
    se = diff.std(ddof=1) / np.sqrt(len(diff))
    assert diff.mean() > 3 * se, (diff.mean(), se)


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
        ({"game": "farkle"}, "trains Farkle for the win"),
        ({"game": "chess"}, "trains spiffel"),
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


def test_resume_may_change_the_final_evaluation_opponents(tmp_path):
    """They set only the final table, which the resumed run writes with the new ones."""
    _train(tmp_path / "r", iterations=2, final_eval_opponents=["greedy"])
    path = _train(tmp_path / "r", resume=True, iterations=3, final_eval_opponents=["heuristic"])
    rows = json.loads(path.with_suffix(".json").read_text())["evaluation"]["rows"]
    assert [r["agent"] for r in rows] == ["trained", "heuristic"]
