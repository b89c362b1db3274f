"""The trainer's settings as users give them: numbers in recipes and overrides, and the keys and
values of earlier versions, refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from agents.training.config import TrainConfig  # noqa: E402
from dice_envs.rules import ConfigError  # noqa: E402


def test_numbers_in_exponent_notation_are_numbers(tmp_path: Path) -> None:
    """``1e-3`` is a number on the command line and in a recipe (PyYAML alone reads the string
    ``'1e-3'`` and the config refused it as "not a number"); other strings stay strings."""
    from agents.evaluation import parse_rule_overrides

    overrides = ["learning_rate=1e-3", "lr_final=5E-5", "ent_coef=+1.5e-2"]
    cfg = TrainConfig.from_dict({}).with_overrides(overrides)
    assert (cfg.learning_rate, cfg.lr_final, cfg.ent_coef) == (0.001, 5e-5, 0.015)
    recipe = tmp_path / "r.yaml"
    recipe.write_text("game: spiffel\nlearning_rate: 3e-3\nadam_eps: 1.0e-5\n")
    cfg = TrainConfig.from_yaml(recipe)
    assert cfg.learning_rate == 0.003 and cfg.adam_eps == 1e-5
    parsed = parse_rule_overrides(["a=2e3", "b=1e3x", "c=e3", "d=12"])
    assert parsed == {"a": 2000.0, "b": "1e3x", "c": "e3", "d": 12}
    with pytest.raises(ConfigError, match="'name' must be a plain run name"):
        TrainConfig.from_dict({}).with_overrides(["name=1e-3/x"])


def test_removed_keys_are_refused_by_name(tmp_path: Path) -> None:
    """A config still naming a removed key (``precision``) gets an error naming the key and saying
    it was removed, from a recipe, an override or a mapping; ``torch_threads: 0`` (a count measured
    for the machine) was removed too and is refused saying so. The default count is a fixed 1."""
    recipe = tmp_path / "old.yaml"
    recipe.write_text("game: spiffel\nprecision: bfloat16\n")
    with pytest.raises(ConfigError, match=r"old.yaml: training config key 'precision' was removed \(") as err:
        TrainConfig.from_yaml(recipe)
    assert "delete it from the config" in str(err.value) and "did you mean" not in str(err.value)
    with pytest.raises(ConfigError, match="training config key 'precision' was removed"):
        TrainConfig.from_dict({}).with_overrides(["precision=float32"])
    removed_zero = r"'torch_threads' must be an integer in \[1, 4096\], got 0: .* was removed"
    with pytest.raises(ConfigError, match=removed_zero):
        TrainConfig.from_dict({"torch_threads": 0})
    assert TrainConfig.from_dict({}).torch_threads == 1


def test_a_run_of_an_earlier_version_resumes(tmp_path: Path) -> None:
    """A run folder whose ``config.json`` holds a removed key at the value every run had before
    (``precision: float32``) resumes; another value of it is a config that differs."""
    import json

    from agents.training.train import check_resume

    cfg = TrainConfig.from_dict({"name": "old"})
    (tmp_path / "config.json").write_text(json.dumps({**cfg.to_dict(), "precision": "float32"}))
    check_resume(cfg, tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({**cfg.to_dict(), "precision": "bfloat16"}))
    with pytest.raises(ConfigError, match=r"differs from the run's .* in precision"):
        check_resume(cfg, tmp_path)


def test_a_budget_between_rollouts_is_rounded_up_and_said(tmp_path: Path, capsys) -> None:
    """A PPO update learns from a whole rollout of ``n_envs x n_steps`` steps, so 100 steps at
    8 x 8 train 128: the trainer says so before it starts, its progress bar counts to 128 (it
    counted to 100 and then past it), and the run reports the 128 it trained."""
    from agents.training.train import train

    cfg = TrainConfig.from_dict({}).with_overrides(
        [
            "total_timesteps=100", "n_envs=8", "n_steps=8", "batch_size=32", "net_arch=[8]",
            "eval_freq=0", "checkpoint_freq=0", "final_eval_games=0", "tensorboard=false",
        ]
    )  # fmt: skip
    assert cfg.planned_timesteps() == 128 and cfg.planned_timesteps(done=64) == 128
    assert cfg.with_overrides(["total_timesteps=128"]).planned_timesteps() == 128
    result = train(cfg, out=tmp_path / "run", command="pytest")
    err = capsys.readouterr().err
    assert result.steps == 128
    assert "total_timesteps 100 rounded up to 128: whole rollouts of n_envs x n_steps = 8 x 8 = 64" in err
    assert "/128 " in err and "/100 " not in err  # the bar's total
