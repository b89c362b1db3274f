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
    from agents.training.threads import choose_threads, fastest_threads, most_threads_within

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


def test_the_thread_governor_follows_the_machine_and_records_it() -> None:
    """``ThreadGovernor``: an update twice as slow as the fastest at its count measures again (here
    a stub measure), a reduced count is measured again every ``recheck`` updates to take the cores
    back, a measurement that keeps the count makes the slower time the new normal, and a fixed
    count (``active=False``) is never touched."""
    from agents.model_card import machine_info
    from agents.training.threads import ThreadGovernor

    answers = iter([2, 1, 2])  # what each measurement finds fastest
    asked: list[int] = []

    def measure(cores: int) -> int:
        asked.append(cores)
        return next(answers)

    before = torch.get_num_threads()
    try:
        gov = ThreadGovernor(2, 2, active=True, recheck=3, measure=measure)
        assert [gov.after_update(t) for t in (1.0, 1.2, 1.9)] == [None, None, None] and not asked
        assert gov.after_update(2.5) is None and asked == [2]  # slowed; measured: 2 stays, 2.5 is normal
        assert gov.after_update(4.0) is None and len(asked) == 1  # under 2 x 2.5
        assert gov.after_update(5.5) == 1 and torch.get_num_threads() == 1  # slowed again: 1 is faster
        assert [gov.after_update(t) for t in (3.0, 3.0)] == [None, None]
        assert gov.after_update(3.0) == 2 and gov.threads == 2  # 3 updates at 1: measured, back to 2
        assert gov.updates == {2: 6, 1: 3}
        card = machine_info("cpu", gov.threads, gov.updates)
        assert card["torch_threads"] == 2 and card["torch_threads_updates"] == {"1": 3, "2": 6}
        assert "torch_threads_updates" not in machine_info("cpu", 2, {2: 9})
        fixed = ThreadGovernor(2, 2, active=False, measure=measure)
        assert all(fixed.after_update(t) is None for t in (1.0, 10.0, 100.0)) and len(asked) == 3
    finally:
        torch.set_num_threads(before)


def test_the_sb3_path_governs_threads_by_update_time_less_its_callbacks() -> None:
    """``trainer: sb3``: the time from one rollout's start to the next, less what the callbacks
    took (an evaluation is not a slowed machine), goes to the governor once per update."""
    import time
    from types import SimpleNamespace

    from stable_baselines3.common.callbacks import BaseCallback

    from agents.training.sb3_train import governed_callbacks

    class Evaluation(BaseCallback):  # stands for an evaluation or a checkpoint: slow, in on_step
        def _on_step(self) -> bool:
            time.sleep(0.5)
            return True

    class Spy:
        def __init__(self) -> None:
            self.threads, self.seconds = 2, []

        def after_update(self, seconds: float) -> None:
            self.seconds.append(seconds)

    spy = Spy()
    callbacks = governed_callbacks([Evaluation()], spy)
    callbacks.init_callback(SimpleNamespace(logger=None, num_timesteps=0, get_env=lambda: None))
    for _ in range(3):  # three updates: rollout (one step, with an evaluation), then training
        callbacks.on_rollout_start()
        time.sleep(0.05)
        assert callbacks.on_step()
        callbacks.on_rollout_end()
        time.sleep(0.05)
    callbacks.on_rollout_start()
    assert len(spy.seconds) == 3  # one per finished update; the first start has nothing to report
    assert all(0.1 <= s < 0.45 for s in spy.seconds), spy.seconds  # 0.1 s of work, not 0.6 s
