"""``scripts/train_rllib.py``: bad input fails before Ray starts or anything is written; the card's config.

No Ray is started here: ``ensure_ray`` is replaced by a function that fails the test, so an option
that slipped past the checks would show up as that failure, not as a Ray run.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dice_envs.rules import ConfigError

pytest.importorskip("ray")  # agents.ray.rllib needs the [ray] extra (part of [dev])

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "train_rllib.py"


def _cli() -> Any:
    spec = importlib.util.spec_from_file_location("train_rllib_cli", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cli() -> Any:
    return _cli()


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    import agents.evaluation.pool

    def fail(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("Ray was started for a command line that should have been refused")

    monkeypatch.setattr(agents.evaluation.pool, "ensure_ray", fail)


BAD = [
    (
        ["--opponents", "randm"],
        "error: --opponents: unknown agent spec 'randm' for farkle; known: random, greedy, heuristic, "
        "max-expected, threshold:N",
    ),
    (["--net-arch", "0"], "error: --net-arch must be a non-empty list of layer sizes in [1, 65536]"),
    (["--net-arch", "64", "0"], "error: --net-arch must be a non-empty list of layer sizes"),
    (["--seed", "-1"], "error: --seed must be an integer in [0, 9223372036854775807], got -1"),
    (["--lr", "-1"], "error: --lr must be a number in (0, 1], got -1.0"),
    (["--lr", "0"], "error: --lr must be a number in (0, 1], got 0.0"),
    (["--entropy", "-1"], "error: --entropy must be a number in [0, 10], got -1.0"),
    (["--cpus", "0"], "error: --cpus must be >= 1, got 0"),
    (["--cpus", "2", "--address", "auto"], "error: --cpus sets the CPUs of a local Ray"),
    (["--name", "../evil"], "error: --name must be a plain run name"),
    (["--name", "sub/x"], "error: --name must be a plain run name"),
    (
        ["--players", "1", "--opponents", "random"],
        "error: --opponents need --players >= 2 (a solitaire game has none), got --players 1",
    ),
    (["--players", "1", "--snapshots", "1"], "error: --snapshots need --players >= 2"),
    (["--players", "0"], "error: --players must be an integer in [1, 8], got 0"),
    (["--opponents"], "error: --opponents must name at least one agent spec when --players > 1"),
    (["--opponents", "human"], "error: agent spec 'human' cannot play on Ray workers"),
    (["--opponents", "optimal"], "error: --opponents: agent spec 'optimal' is not available for farkle"),
    (["--opponents", "pretrained:spiffel"], "error: pretrained:spiffel"),  # a model of another game
    (["--minibatch", "512", "--batch", "256"], "error: --minibatch (512) must not exceed --batch (256)"),
    (["--snapshot-every", "0"], "error: --snapshot-every must be >= 1, got 0"),
    (["--env-runners", "-1"], "error: --env-runners must be >= 0, got -1"),
    (["--epochs", "0"], "error: --epochs must be >= 1, got 0"),
    (["--rules", "foo=1"], "error: unknown keyword 'foo' for the farkle"),
]


@pytest.mark.parametrize(("extra", "message"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_options_fail_before_ray_and_write_nothing(
    cli: Any, no_ray: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    out = tmp_path / "runs" / "r2b"
    assert cli.main(["--game", "farkle", *extra, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err
    assert "models for farkle" in err or "pretrained" not in message
    assert not (tmp_path / "runs").exists() and not (tmp_path / "evil.zip").exists()


def test_unknown_game_and_file_out(cli: Any, no_ray: None, tmp_path: Path, capsys: Any) -> None:
    assert cli.main(["--game", "chess", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith("error: --game must be one of spiffel, dice_poker")
    (tmp_path / "f").write_text("x")
    assert cli.main(["--game", "farkle", "--out", str(tmp_path / "f")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_the_command_line_answers_one_line_and_exit_status_2(tmp_path: Path) -> None:
    out = tmp_path / "r2b"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--game", "farkle", "--opponents", "randm", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --opponents: unknown agent spec 'randm' for farkle; known: random")
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert not out.exists()


def test_ppo_config_refuses_bad_values_before_any_worker() -> None:
    from agents.ray.rllib import ppo_config

    with pytest.raises(ConfigError, match="unknown agent spec 'randm'"):
        ppo_config("farkle", opponents=["randm"])
    with pytest.raises(ConfigError, match="config 'net_arch'"):
        ppo_config("farkle", net_arch=[0])
    with pytest.raises(ConfigError, match="config 'seed'"):
        ppo_config("farkle", seed=-1)
    with pytest.raises(ConfigError, match="snapshots must be an integer >= 0"):
        ppo_config("farkle", snapshots=-1)


def _run(cli: Any, argv: list[str]) -> tuple[Any, Any]:
    args = cli.build_parser().parse_args(argv)
    _, run = cli.check_args(args)
    return args, run


def test_solitaire_records_no_opponents(cli: Any, tmp_path: Path) -> None:
    args, run = _run(cli, ["--game", "spiffel", "--players", "1", "--out", str(tmp_path / "o")])
    card = cli.card_config(args, run)
    assert card["opponents"] == [] and card["rllib"]["opponents"] == [] and card["num_players"] == 1
    assert card["reward"] == "score" and card["self_play"] is False
    assert not (tmp_path / "o").exists()


def test_card_config_holds_the_runs_settings(cli: Any, tmp_path: Path) -> None:
    import agents
    from agents.ray.rllib.env import DiceMultiAgentEnv
    from agents.ray.rllib.export import TRAINER, export_policy
    from agents.ray.rllib.module import MaskedPPOModule

    argv = ["--game", "farkle", "--rules", "target=1000", "--opponents", "heuristic", "--snapshots", "1"]
    argv += ["--snapshot-every", "2", "--env-runners", "2", "--iterations", "3", "--batch", "256"]
    argv += ["--minibatch", "64", "--epochs", "1", "--lr", "0.001", "--entropy", "0.01", "--seed", "7"]
    argv += ["--net-arch", "16", "--name", "tiny", "--out", str(tmp_path / "o")]
    args, run = _run(cli, argv)
    env = DiceMultiAgentEnv({"game": "farkle", "target": 1000})
    module = MaskedPPOModule(
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config={"net_arch": [16], "activation": "tanh"},
    )
    path, card_file = export_policy(
        module, tmp_path / "tiny.zip", env.rules, 2, seed=args.seed, config=cli.card_config(args, run)
    )
    card = json.loads(card_file.read_text())
    config = card["config"]
    expected = {
        "name": "tiny",
        "game": "farkle",
        "num_players": 2,
        "reward": "win",
        "opponents": ["heuristic"],
        "learning_rate": 0.001,
        "ent_coef": 0.01,
        "batch_size": 64,
        "n_epochs": 1,
        "n_envs": 2,
        "n_steps": 128,
        "total_timesteps": 768,
        "seed": 7,
        "net_arch": [16],
        "self_play": True,
        "pool_size": 1,
        "pool_builtin": ["heuristic"],
        "pool_builtin_prob": 0.5,
        "snapshot_freq": 512,
        "trainer": "rllib",
    }
    assert {k: config[k] for k in expected} == expected
    assert config["rules"]["target"] == 1000 and config["rllib"]["batch"] == 256
    assert not {"vec_env", "bc_epochs", "eval_freq", "clip_range", "device"} & set(config)  # no defaults
    assert card["trainer"] == TRAINER and card["seed"] == 7
    agent = agents.load(str(path), game=env.rules, num_players=2)  # the card still loads
    assert agent.num_players == 2
