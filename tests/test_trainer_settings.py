"""The trainer's settings as users give them: numbers in recipes and overrides, and the torch
thread count chosen for the machine."""

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


def test_thread_choice_is_measured_and_leaves_torch_as_it_was() -> None:
    """``torch_threads: 0`` measures the thread count (``fastest_threads``) without touching the
    run's torch thread count or global random state; an explicit count or a GPU is not measured."""
    from agents.training.ppo import choose_threads, fastest_threads, most_threads_within

    assert choose_threads(3, "cpu") == 3 and choose_threads(0, "cuda") == 1
    before = torch.get_num_threads()
    torch.manual_seed(7)
    expected = torch.rand(4)
    torch.manual_seed(7)
    assert fastest_threads(1) == 1 and fastest_threads(4, rounds=1) in (1, 2, 4)
    assert torch.equal(torch.rand(4), expected) and torch.get_num_threads() == before
    # the rule: the most threads within the tolerance of the fastest
    assert most_threads_within({1: 1.0, 2: 0.55, 4: 0.58, 8: 0.9}, 0.1) == 4
    assert most_threads_within({1: 1.0, 2: 1.2, 4: 3.0}, 0.1) == 1
