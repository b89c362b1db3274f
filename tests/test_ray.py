"""Ray / RLlib: the MultiAgentEnv, the masking module, PPO on Ray, export, tournaments, sweeps.

One local Ray session (2 CPUs, no dashboard) serves the whole module; nets and batches are tiny.
Illegal actions are made to raise inside the env (``illegal_action="raise"``), so a training
iteration that ever sampled one would fail.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import dice_envs  # noqa: F401
from agents.ray.rllib.env import DiceMultiAgentEnv
from agents.ray.rllib.module import MaskedPPOModule, apply_mask
from agents.training.policy import MASKED_LOGIT
from dice_envs.multiagent import farkle_v1, spiffel_v0
from dice_envs.rules import GAMES, ConfigError

ray = pytest.importorskip("ray")  # the [ray] extra is part of [dev]: present in CI

from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    """One small local Ray for the module."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


# ---------------------------------------------------------------------------- the env
@pytest.mark.parametrize("game", list(GAMES))
@pytest.mark.parametrize("players", [1, 2, 3])
def test_multiagent_env_passes_rllib_checker(game: str, players: int) -> None:
    env = DiceMultiAgentEnv({"game": game, "num_players": players})
    check_multiagent_environments(env)
    obs, _ = env.reset(seed=0)
    ((agent, o),) = obs.items()
    assert env.observation_spaces[agent].contains(o)
    assert o["action_mask"].sum() >= 1


def _play(env: DiceMultiAgentEnv, seed: int) -> tuple[list[int], dict[str, float], dict]:
    """A random legal game; returns the actions, each agent's summed reward and the last infos."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    actions, total = [], dict.fromkeys(env.possible_agents, 0.0)
    while True:
        assert len(obs) == 1  # only the agent to move observes
        ((agent, o),) = obs.items()
        a = int(rng.choice(np.flatnonzero(o["action_mask"])))
        actions.append(a)
        obs, rew, term, trunc, infos = env.step({agent: a})
        for k, v in rew.items():
            total[k] += v
        if term["__all__"] or trunc["__all__"]:
            assert set(obs) == set(env.possible_agents)  # every seat sees the end
            return actions, total, infos


@pytest.mark.parametrize(("game", "reward"), [("farkle", "score"), ("spiffel", "score"), ("farkle", "win")])
def test_env_replays_the_aec_game_and_loses_no_reward(game: str, reward: str) -> None:
    params = {"target": 1500} if game == "farkle" else {}
    env = DiceMultiAgentEnv({"game": game, "num_players": 3, "reward": reward, **params})
    actions, total, infos = _play(env, seed=5)
    raw = {"farkle": farkle_v1, "spiffel": spiffel_v0}[game].raw_env(num_players=3, reward=reward, **params)
    raw.reset(seed=5)
    aec_total = dict.fromkeys(raw.possible_agents, 0.0)
    for a in actions:
        raw.step(a)
        for k, v in raw.rewards.items():
            aec_total[k] += v
    assert raw.game.done
    assert total == pytest.approx(aec_total)
    final = infos["player_0"]["final_scores"]
    assert list(np.asarray(final).tolist()) == [int(t) for t in raw.game.totals()]
    if reward == "score" and game == "spiffel":
        assert [total[a] for a in env.possible_agents] == pytest.approx(np.asarray(final).tolist())


def test_env_illegal_action_modes() -> None:
    env = DiceMultiAgentEnv({"game": "farkle", "target": 1000})
    obs, _ = env.reset(seed=1)
    ((agent, o),) = obs.items()
    bad = int(np.flatnonzero(o["action_mask"] == 0)[0])
    _, rew, term, _, infos = env.step({agent: bad})
    assert term["__all__"] and rew[agent] == -1.0 and infos[agent]["illegal_action"] == bad
    assert env.illegal_actions == 1
    strict = DiceMultiAgentEnv({"game": "farkle", "target": 1000, "illegal_action": "raise"})
    obs, _ = strict.reset(seed=1)
    with pytest.raises(ValueError, match="legal actions"):
        strict.step({agent: bad})
    with pytest.raises(ConfigError, match="illegal_action"):
        DiceMultiAgentEnv({"game": "farkle", "illegal_action": "ignore"})
    with pytest.raises(ConfigError, match="game"):
        DiceMultiAgentEnv({"game": "chess"})


# ---------------------------------------------------------------------------- the module
def _module(game: str = "farkle", arch: tuple[int, ...] = (8,)) -> MaskedPPOModule:
    env = DiceMultiAgentEnv({"game": game})
    return MaskedPPOModule(
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config={"net_arch": list(arch), "activation": "tanh"},
    )


@functools.cache
def _farkle_module() -> MaskedPPOModule:
    return _module()


@settings(max_examples=25)
@given(
    st.lists(st.lists(st.booleans(), min_size=128, max_size=128), min_size=1, max_size=8), st.integers(0, 99)
)
def test_masked_logits_never_sample_an_illegal_action(masks: list[list[bool]], seed: int) -> None:
    m = torch.tensor(masks, dtype=torch.float32)
    m[:, seed % 128] = 1.0  # at least one legal action per row
    module = _farkle_module()
    torch.manual_seed(seed)
    x = torch.randn(len(masks), module.observation_space["observations"].shape[0]) * 50
    out = module.forward_exploration({Columns.OBS: {"observations": x, "action_mask": m}})
    dist = module.get_exploration_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
    draws = torch.stack([dist.sample() for _ in range(64)], dim=1)
    assert bool(m.gather(1, draws).all())
    assert bool((torch.exp(dist.logp(draws[:, 0])) > 0).all())
    logits = out[Columns.ACTION_DIST_INPUTS]
    assert bool((logits[m == 0] == MASKED_LOGIT).all())
    assert torch.equal(apply_mask(logits, m), logits)


# ---------------------------------------------------------------------------- PPO on Ray
def _train_one(game: str, env_config: dict[str, Any], **kw: Any) -> Any:
    from agents.ray.rllib import ppo_config

    cfg = ppo_config(
        game,
        num_players=2,
        env_config={**env_config, "illegal_action": "raise"},
        net_arch=(16,),
        train_batch_size=256,
        minibatch_size=64,
        num_epochs=1,
        seed=0,
        **kw,
    )
    algo = cfg.build_algo()
    result = algo.train()  # an illegal action would raise ValueError in the env -> RuntimeError here
    return algo, result


@pytest.fixture(scope="module")
def spiffel_algo(ray_session: None) -> Iterator[tuple[Any, dict]]:
    algo, result = _train_one("spiffel", {}, opponents=["random", "greedy"], snapshots=1)
    yield algo, result
    algo.stop()


def test_ppo_iteration_spiffel_two_players_only_legal_actions(spiffel_algo: tuple[Any, dict]) -> None:
    algo, result = spiffel_algo
    runners = result["env_runners"]
    steps = runners["num_module_steps_sampled"]
    assert steps["learner"] > 0 and sum(steps.values()) >= 256
    assert runners.get("num_env_step_failures_lifetime", 0) == 0
    assert result["snapshots"] == {"snapshot_0": 1}  # the frozen copy was refreshed
    learner = algo.get_module("learner").policy_state()
    snap = algo.get_module("snapshot_0").policy_state()
    assert all(torch.equal(learner[k], snap[k]) for k in learner)


def test_ppo_iteration_farkle_only_legal_actions(ray_session: None) -> None:
    algo, result = _train_one("farkle", {"target": 1000}, opponents=["heuristic", "threshold:300"])
    try:
        steps = result["env_runners"]["num_module_steps_sampled"]
        assert steps["learner"] > 0 and sum(steps.values()) >= 256
        assert set(steps) <= {"learner", "agent0-heuristic", "agent1-threshold_300"}
        assert result["env_runners"].get("num_env_step_failures_lifetime", 0) == 0
    finally:
        algo.stop()


def test_exported_policy_plays_as_an_opponent(spiffel_algo: tuple[Any, dict], tmp_path: Any) -> None:
    import agents
    from agents.ray.rllib import export_policy

    algo, _ = spiffel_algo
    path, card = export_policy(algo, tmp_path / "rllib_spiffel.zip", "spiffel", 2, steps=256)
    assert path.is_file() and card.is_file()
    import json

    config = json.loads(card.read_text())["config"]  # the run's settings (_train_one), no defaults
    assert config["batch_size"] == 64 and config["n_epochs"] == 1 and config["trainer"] == "rllib"
    assert config["learning_rate"] == pytest.approx(3e-4) and config["net_arch"] == [16]
    assert "n_envs" not in config and "total_timesteps" not in config
    with pytest.raises(ConfigError, match="exists"):
        export_policy(algo, path, "spiffel", 2)
    # the exported model decides exactly as the RLlib module's masked argmax
    module = algo.get_module("learner")
    loaded = agents.load(str(path), game="spiffel", num_players=2)
    env = DiceMultiAgentEnv({"game": "spiffel", "num_players": 2})
    obs_rows, masks = [], []
    for seed in range(4):
        obs, _ = env.reset(seed=seed)
        ((_, o),) = obs.items()
        obs_rows.append(o["observations"])
        masks.append(o["action_mask"])
    x, m = torch.tensor(np.stack(obs_rows)), torch.tensor(np.stack(masks))
    with torch.no_grad():
        logits = module.forward_inference({Columns.OBS: {"observations": x, "action_mask": m}})[
            Columns.ACTION_DIST_INPUTS
        ]
    expected = logits.argmax(dim=1).numpy()
    got = loaded.act_batch(np.stack(obs_rows), np.stack(masks).astype(np.int8))
    assert np.array_equal(got, expected)
    # and plays full games as an opponent in the registered Gymnasium env
    genv = gym.make("dice_envs/Spiffel-v0", opponents=[str(path)], illegal_action="raise")
    obs, info = genv.reset(seed=3)
    done = False
    while not done:
        obs, _, term, trunc, info = genv.step(int(np.flatnonzero(info["action_mask"])[-1]))
        done = term or trunc
    assert len(info["final_scores"]) == 2
    assert agents.load(str(path), game="spiffel", num_players=3).num_players == 3  # a seat view
    with pytest.raises(ConfigError, match=r"num_players|players"):
        agents.load(str(path), game="spiffel", num_players=1)  # a smaller table than it knows


# ---------------------------------------------------------------------------- tournaments
@pytest.mark.parametrize(
    ("game", "specs", "players"),
    [("farkle", ["random", "heuristic", "threshold:500"], 2), ("spiffel", ["random", "greedy"], 1)],
)
def test_evaluate_on_ray_equals_local_pool(
    ray_session: None, game: str, specs: list[str], players: int
) -> None:
    from agents.evaluation import evaluate

    kw = {
        "games": 4,
        "players": players,
        "seed": 11,
        "optimum": False,
        "rules": {"target": 1500} if game == "farkle" else None,
    }
    on_ray = evaluate(game, specs, workers=2, backend="ray", **kw)
    local = evaluate(game, specs, workers=2, **kw)
    assert on_ray.records == local.records
    assert on_ray.summary() == local.summary()
    with pytest.raises(ConfigError, match="backend"):
        evaluate(game, specs, backend="spark", **kw)


# ---------------------------------------------------------------------------- sweeps
def test_two_trial_sweep_writes_both_run_folders(
    ray_session: None, tmp_path: Any, capsys: Any, monkeypatch: Any
) -> None:
    import csv
    import json
    from pathlib import Path

    from agents.ray.sweep import load_sweep, run_sweep

    base = Path(__file__).resolve().parents[1] / "configs" / "train" / "tiny_ppo.yaml"
    spec = tmp_path / "sweep.yaml"
    spec.write_text(
        f"base: {base}\n"
        # Farkle 2-player: no exact-solver reference line to compute in the trials
        "set: {game: farkle, num_players: 2, rules: {target: 1000}, opponents: [random],"
        " total_timesteps: 1024, eval_freq: 1024, checkpoint_freq: 0, tensorboard: false,"
        " final_eval_games: 4, final_eval_opponents: [random], eval_episodes: 4}\n"
        "space:\n  learning_rate: {loguniform: [1.0e-4, 1.0e-2]}\n  n_epochs: {choice: [1, 2]}\n"
        "num_samples: 2\nmetric: eval\n"
    )
    rows = run_sweep(load_sweep(spec), tmp_path / "out")
    assert len(rows) == 2 and all("error" not in r for r in rows)
    folders = sorted((tmp_path / "out" / "trials").iterdir())
    assert len(folders) == 2 and {str(f) for f in folders} == {r["run_folder"] for r in rows}
    for folder, row in zip(folders, sorted(rows, key=lambda r: r["run_folder"]), strict=True):
        card = json.loads((folder / "tiny_ppo.json").read_text())
        assert (folder / "tiny_ppo.zip").is_file() and card["steps"] == 1024
        assert card["config"]["learning_rate"] == pytest.approx(row["learning_rate"])
        assert card["config"]["n_epochs"] == row["n_epochs"]
        assert 0 <= row["metric"] <= 1  # a win rate
        assert card["game"] == "farkle" and card["num_players"] == 2
    table = list(csv.DictReader((tmp_path / "out" / "summary.csv").open()))
    assert len(table) == 2 and (tmp_path / "out" / "trials.png").stat().st_size > 0
    assert "| trial |" in (tmp_path / "out" / "summary.md").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"base: {base}\nspace: {{learning_rte: {{choice: [1]}}}}\n")
    with pytest.raises(ConfigError, match="learning_rte"):
        load_sweep(bad)
    with pytest.raises(ConfigError, match="not empty"):
        run_sweep(load_sweep(spec), tmp_path / "out")
    if torch.cuda.is_available():
        return
    # a trial that fails at run time (no CUDA on its worker: the driver cannot see the workers'
    # devices): the summary still holds both trials, the failed one with its reason; exit status 1
    import importlib.util

    script = importlib.util.spec_from_file_location(
        "sweep_cli", Path(__file__).parents[1] / "scripts/sweep.py"
    )
    cli = importlib.util.module_from_spec(script)
    script.loader.exec_module(cli)
    mixed = tmp_path / "mixed.yaml"
    # its opponent: a model from the first sweep, by a path relative to the sweep's working
    # directory (Tune runs each trial in a folder of its own; the trial reads it from here)
    opponent = (folders[0] / "tiny_ppo.zip").relative_to(tmp_path)
    head = spec.read_text().split("space:")[0].replace("opponents: [random]", f"opponents: [{opponent}]")
    mixed.write_text(head + "space: {device: {grid_search: [cpu, cuda]}}\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert cli.main([str(mixed), "--out", str(tmp_path / "mixed")]) == 1
    summary = tmp_path / "mixed" / "summary.md"
    assert f"error: 1 of 2 trials failed; their reasons are in the error column of {summary}\n" in (
        capsys.readouterr().err
    )
    text = summary.read_text()
    assert text.startswith("Sweep: 2 trials (1 failed), metric eval (max)")
    reason = (
        "ConfigError: device 'cuda' was asked for but torch sees no CUDA device; use --device cpu or auto"
    )
    assert f"| {reason} |" in text and "\x1b" not in text and "ray::" not in text
    table = {r["device"]: r for r in csv.DictReader((tmp_path / "mixed" / "summary.csv").open())}
    assert table["cuda"]["error"] == reason and table["cuda"]["metric"] == "nan"
    assert not table["cpu"]["error"] and 0 <= float(table["cpu"]["metric"]) <= 1
    card = json.loads(Path(table["cpu"]["run_folder"], "tiny_ppo.json").read_text())
    assert card["config"]["opponents"] == [str(tmp_path / opponent)]
