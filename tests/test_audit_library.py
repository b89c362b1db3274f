"""Regression tests for the bad-input audit of the library entry points (items 7, 9, 10, 12, 14, 15,
18 and 19 of the audit): each refusal comes early, by name, in one line, and nothing is written.

Nothing here starts Ray or trains; the models are tiny and built in memory.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401
from agents.base import RandomAgent
from agents.ray.sweep import load_sweep
from dice_envs.multiagent import farkle_v1, spiffel_v0
from dice_envs.rules import ConfigError, make_rules
from dice_envs.vector.sb3 import SB3VecEnv

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "train" / "tiny_ppo.yaml"


def _script(name: str) -> ModuleType:
    """``scripts/<name>.py`` imported as a module (its ``main(argv)`` is then called in-process)."""
    spec = importlib.util.spec_from_file_location(f"_audit_script_{name}", ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- 7: sweep files
def _sweep(tmp_path: Path, body: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(f"base: {TINY}\n{body}\n")
    return path


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("seed: abc", "seed must be a non-negative integer, got 'abc'"),
        ("seed: -1", "seed must be a non-negative integer, got -1"),
        ("seed: true", "seed must be a non-negative integer"),
        ("cpus_per_trial: lots", "cpus_per_trial must be a number >= 1, got 'lots'"),
        ("cpus_per_trial: -2", "cpus_per_trial must be a number >= 1, got -2"),
        ("cpus_per_trial: 0", "cpus_per_trial must be a number >= 1"),
        ("set: abc", "set must be a mapping of training config keys"),
        ("set: [abc]", "set entries must look like key=value"),
        ("set: [3]", "set entries must look like key=value"),
        ("set: [n_epochs=0]", r"set: .*'n_epochs' must be an integer in \[1, 1000\], got 0"),
        ("set: {n_epochs: 0}", r"set: .*'n_epochs' must be an integer in \[1, 1000\], got 0"),
    ],
)
def test_load_sweep_checks_the_scalar_keys(tmp_path, body, match) -> None:
    path = _sweep(tmp_path, body + "\nspace: {n_epochs: {choice: [2, 4]}}")
    with pytest.raises(ConfigError, match=match) as err:
        load_sweep(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


@pytest.mark.parametrize(
    ("space", "match"),
    [
        (
            "{n_epochs: {choice: [2, -3]}}",
            r"space\.n_epochs: choice value -3 \(entry 2 of 2\) is refused: .*n_epochs",
        ),
        ("{n_epochs: {choice: [0, 2]}}", r"space\.n_epochs: choice value 0 \(entry 1 of 2\) is refused"),
        ("{n_epochs: {grid_search: [2, 1001]}}", r"grid_search value 1001 \(entry 2 of 2\) is refused"),
        (
            "{game: {choice: [chess]}}",
            r"space\.game: choice value 'chess' \(entry 1 of 1\) is refused: .*spiffel",
        ),
        ("{learning_rate: {uniform: [-5, 7]}}", r"uniform low -5\.0 is refused: .*learning_rate"),
        ("{learning_rate: {uniform: [1.0e-4, 7]}}", r"uniform high 7\.0 is refused"),
        ("{learning_rate: {loguniform: [1.0e-4, 3]}}", r"loguniform high 3\.0 is refused"),
        ("{gamma: {uniform: [0.9, 1.5]}}", r"space\.gamma: uniform high 1\.5 is refused"),
        ("{n_epochs: {uniform: [1, 4]}}", r"uniform low 1\.0 is refused: .*integer"),  # Tune draws floats
        ("{n_epochs: {randint: [1, 1002]}}", r"randint high - 1 = 1001 is refused"),
        ("{n_epochs: 0}", r"space\.n_epochs: fixed value 0 is refused"),
        ("{learning_rate: {uniform: [0.01, 0.001]}}", r"uniform needs low < high"),
        ("{learning_rate: {uniform: [.nan, 0.1]}}", r"two finite numbers"),
    ],
)
def test_load_sweep_checks_every_value_of_the_space(tmp_path, space, match) -> None:
    path = _sweep(tmp_path, f"space: {space}")
    with pytest.raises(ConfigError, match=match) as err:
        load_sweep(path)
    assert "\n" not in str(err.value)


def test_load_sweep_accepts_a_good_file_without_ray(tmp_path) -> None:
    ray_before = "ray" in sys.modules
    path = _sweep(
        tmp_path,
        "set: [total_timesteps=2048]\nseed: 3\ncpus_per_trial: 2\n"
        "space: {learning_rate: {loguniform: [1.0e-4, 1.0e-2]}, n_epochs: {choice: [1, 2]},"
        " gamma: {uniform: [0.9, 1.0]}, batch_size: {randint: [32, 65]}}",
    )
    sweep = load_sweep(path)
    assert sweep["seed"] == 3 and sweep["cpus_per_trial"] == 2.0
    assert sweep["base"]["total_timesteps"] == 2048
    if not ray_before:  # the checks need no Ray
        assert "ray" not in sys.modules


def test_sweep_script_refuses_a_file_as_out(tmp_path, capsys) -> None:
    sweep = _script("sweep")
    target = tmp_path / "myfile.txt"
    target.write_text("precious\n")
    spec = _sweep(tmp_path, "space: {n_epochs: {choice: [2]}}")
    for out in (target, target / "sub"):
        assert sweep.main([str(spec), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and "file" in err
    assert target.read_text() == "precious\n"
    bad = _sweep(tmp_path, "space: {n_epochs: {choice: [0]}}", "bad.yaml")
    assert sweep.main([str(bad), "--out", str(tmp_path / "new")]) == 2
    assert "choice value 0 (entry 1 of 1) is refused" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


# --------------------------------------------------------------------------- model files (9, 10)
sb3_contrib = pytest.importorskip("sb3_contrib")


def _saved_model(path: Path, seed: int, *, nan: bool = False) -> Path:
    import torch
    from sb3_contrib import MaskablePPO

    from agents.models.card import card_spaces, make_card
    from agents.models.files import save_model
    from agents.training.policy import SpacesOnlyEnv

    rules = make_rules("spiffel")
    env = SpacesOnlyEnv(*card_spaces(make_card(rules, 1)))
    model = MaskablePPO(
        "MlpPolicy", env, policy_kwargs={"net_arch": [8]}, n_steps=8, batch_size=8, seed=seed, device="cpu"
    )
    if nan:
        with torch.no_grad():
            model.policy.action_net.weight[0, 0] = float("nan")
            model.policy.value_net.bias[0] = float("inf")
    return save_model(model, path, make_card(rules, 1, steps=100, wall_time_s=1.0, seed=seed, command="t"))


@pytest.fixture(scope="module")
def members(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("audit_members")
    return [_saved_model(folder / f"m{s}.zip", s) for s in range(2)]


def test_a_model_with_non_finite_weights_is_refused_by_name(tmp_path) -> None:
    import agents
    from agents.models.card import read_card
    from agents.models.files import load_policy

    path = _saved_model(tmp_path / "nan.zip", 0, nan=True)
    want = rf"{path}: weights hold non-finite values \(NaN/inf\) in action_net\.weight"
    with pytest.raises(ConfigError, match=want):
        agents.load(str(path))
    with pytest.raises(ConfigError, match=want):
        load_policy(path, read_card(path))
    with pytest.raises(ConfigError, match="non-finite"):
        gym.make("dice_envs/Spiffel-v0", num_players=2, opponents=[str(path)])


def test_merge_refuses_a_member_given_twice(members, tmp_path) -> None:
    from agents.training.ensemble import merge_model_files

    with pytest.raises(ConfigError, match=r"member 1 .*m0\.zip.* is the same file as member 0"):
        merge_model_files([members[0], members[0]], tmp_path / "a.zip")
    copy = tmp_path / "copy" / "m0.zip"
    copy.parent.mkdir()
    shutil.copy(members[0], copy)
    shutil.copy(members[0].with_suffix(".json"), copy.with_suffix(".json"))
    with pytest.raises(ConfigError, match=r"member 2 .*copy.*has the same weights as member 0"):
        merge_model_files([members[0], members[1], copy], tmp_path / "b.zip")
    assert not (tmp_path / "a.zip").exists() and not (tmp_path / "b.zip").exists()


def test_merge_never_replaces_one_of_its_inputs(members, tmp_path) -> None:
    from agents.training.ensemble import merge_model_files

    a = tmp_path / "a.zip"
    shutil.copy(members[0], a)
    shutil.copy(members[0].with_suffix(".json"), a.with_suffix(".json"))
    before = _sha(a), _sha(a.with_suffix(".json"))
    with pytest.raises(ConfigError, match=r"is member 0 .*even with --force"):
        merge_model_files([a, members[1]], a, overwrite=True)
    with pytest.raises(ConfigError, match=r"is member 0"):  # the same file by another name
        merge_model_files([a, members[1]], tmp_path / "x" / ".." / "a.zip", overwrite=True)
    assert (_sha(a), _sha(a.with_suffix(".json"))) == before
    merge = _script("merge_models")
    assert merge.main([str(a), str(members[1]), "--out", str(a), "--force"]) == 2
    assert (_sha(a), _sha(a.with_suffix(".json"))) == before


def test_merge_script_checks_the_curve_before_writing(members, tmp_path, capsys) -> None:
    merge = _script("merge_models")
    out = tmp_path / "ens.zip"
    folder = tmp_path / "outdir"
    folder.mkdir()
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file where a folder would be\n")
    for curve, match in [
        (folder, "is a folder"),
        (tmp_path / "curves.txt", "must end in .png"),
        (blocker / "c.png", "notes.txt is a file, not a folder"),
        (out, "must end in .png"),  # so never the merged model, a member or one of their files
    ]:
        rc = merge.main([*map(str, members), "--out", str(out), "--curve", str(curve), "--force"])
        err = capsys.readouterr().err
        assert rc == 2 and match in err and err.count("\n") == 1
        assert not out.exists() and not out.with_suffix(".json").exists()
    # the good case still merges; a new folder for the curve is made, as for --out
    curve = tmp_path / "new" / "curves.png"
    assert merge.main([*map(str, members), "--out", str(out), "--curve", str(curve)]) == 0
    assert out.is_file() and curve.is_file()


# --------------------------------------------------------------------------- 12: PettingZoo env()
@pytest.mark.parametrize("action", [45, -1, 1000, np.int64(-1), np.array([45])])
def test_pettingzoo_env_penalizes_an_out_of_range_action(action) -> None:
    env = spiffel_v0.env(num_players=2)
    env.reset(seed=0)
    before = env.unwrapped.game.summary()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(action)  # as an illegal in-range action: the game ends, -1 to the offender
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": 0.0}
    assert env.unwrapped.game.summary() == before
    for _ in range(2):  # the dead agents step out with None, as PettingZoo requires
        env.step(None)
    assert env.agents == []


def test_pettingzoo_env_out_of_range_under_python_O() -> None:
    code = (
        "import warnings; warnings.simplefilter('ignore')\n"
        "from dice_envs.multiagent import farkle_v1\n"
        "for a in (128, -1, 1000):\n"
        "    e = farkle_v1.env(num_players=2); e.reset(seed=0); e.step(a)\n"
        "    assert e.rewards['player_0'] == -1.0 and all(e.terminations.values()), e.rewards\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.split()[-1] == "ok", done.stderr[-2000:]


def test_pettingzoo_env_refuses_non_integers_and_none_while_playing() -> None:
    env = farkle_v1.env(num_players=2)
    env.reset(seed=0)
    for bad in (None, 1.5, "1"):
        with pytest.raises(TypeError, match="an action must be an integer"):
            env.step(bad)
    assert not any(env.terminations.values())


# --------------------------------------------------------------------------- 14, 15, 18: Gymnasium
@pytest.mark.parametrize(
    ("env_id", "spec"), [("dice_envs/Spiffel-v0", "bogus"), ("dice_envs/Farkle-v1", "pretrained:spiffel")]
)
def test_make_vec_refuses_a_bad_opponent_at_construction(env_id, spec) -> None:
    with pytest.raises(ConfigError):
        gym.make(env_id, opponents=[spec])
    with pytest.raises(ConfigError):
        gym.make_vec(env_id, num_envs=2, opponents=[spec])


def test_step_before_reset_names_the_reason() -> None:
    env = gym.make("dice_envs/Spiffel-v0")
    with pytest.raises(RuntimeError, match=r"^call reset\(\) before step\(\)$"):
        env.step(1)
    _, info = env.reset(seed=0)
    env.step(0)  # illegal: the episode ends with the penalty
    with pytest.raises(RuntimeError, match="the episode is over"):
        env.step(int(np.flatnonzero(info["action_mask"])[0]))


@pytest.mark.parametrize("n", [0, -4, 2.0, "a", True])
def test_num_envs_errors_do_not_call_it_a_rule_parameter(n) -> None:
    for build in (
        lambda: gym.make_vec("dice_envs/Spiffel-v0", num_envs=n),
        lambda: SB3VecEnv("farkle", num_envs=n),
    ):
        with pytest.raises(ConfigError, match=r"^num_envs must be an integer in \[1, 16777216\]") as err:
            build()
        assert "rule parameter" not in str(err.value)


# --------------------------------------------------------------------------- 19: the random agent
def test_random_agent_checks_the_mask_length() -> None:
    agent = RandomAgent(seed=0, rules="spiffel")
    obs = np.zeros(86, dtype=np.float32)
    with pytest.raises(ValueError, match=r"mask of shape \(3,\) does not fit spiffel.*Discrete\(45\)"):
        agent.act(obs, np.ones(3, np.int8))
    with pytest.raises(ValueError, match=r"shape \(2, 3\) does not fit spiffel"):
        agent.act_batch(np.zeros((2, 86), np.float32), np.ones((2, 3), np.int8))
    with pytest.raises(ValueError, match="1-D"):
        agent.act(obs, np.ones((1, 45), np.int8))
    mask = np.zeros(45, np.int8)
    mask[[3, 40]] = 1
    assert agent.act(obs, mask) in (3, 40)
    assert RandomAgent(seed=0, rules=make_rules("farkle")).n_actions == 128


def test_loaded_random_agent_checks_the_mask_length() -> None:
    import agents

    with pytest.raises(ValueError, match="does not fit spiffel"):
        agents.load("random", game="spiffel").act(np.zeros(86, np.float32), np.ones(3, np.int8))


@pytest.mark.parametrize(
    ("game", "spec"),
    [(g, s) for g in ("spiffel", "yahtzee") for s in ("greedy", "heuristic")]
    + [("farkle", s) for s in ("greedy", "heuristic", "max-expected")],
)
def test_built_in_agents_refuse_a_mask_of_another_width(game: str, spec: str) -> None:
    import gymnasium as gym

    import agents
    from dice_envs.games import game_spec

    obs, info = gym.make(game_spec(game).env_id).reset(seed=0)
    agent = agents.load(spec, game=game)
    with pytest.raises(ValueError, match=f"does not fit {game}: its action space is Discrete"):
        agent.act(obs, np.ones(3, np.int8))
    with pytest.raises(ValueError, match=r"of shape \(1, 3\) does not fit"):
        agent.act_batch(obs[None], np.ones((1, 3), np.int8))
    assert info["action_mask"][agent.act(obs, info["action_mask"])] == 1  # the right width still plays


def test_load_sweep_finds_shipped_bases_and_refuses_a_key_twice(tmp_path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("base: tiny_ppo\nspace: {n_epochs: {choice: [2, 3]}}\n")
    assert load_sweep(path)["base"]["name"] == "tiny_ppo"  # a shipped recipe, from any directory
    path.write_text("base: nope\nspace: {n_epochs: {choice: [2]}}\n")
    with pytest.raises(
        ConfigError, match=r"base config file not found: nope \(shipped train configs: .*tiny_ppo"
    ):
        load_sweep(path)
    path.write_text("base: tiny_ppo\nseed: 1\nseed: 2\nspace: {n_epochs: {choice: [2]}}\n")
    with pytest.raises(ConfigError, match="key 'seed' is given twice"):
        load_sweep(path)
