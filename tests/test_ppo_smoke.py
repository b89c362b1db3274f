"""Smoke test: sb3-contrib MaskablePPO trains on every registered env and predicts legal actions."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401 - registers the ids
from dice_envs.envs import ENV_IDS

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parents[1]


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


@pytest.mark.parametrize("env_id", list(ENV_IDS))
def test_maskable_ppo_learns_and_predicts_legal_actions(env_id):
    kwargs = {"target": 2000} if "Farkle" in env_id else {}
    env = gym.make(env_id, opponents=["random"], **kwargs)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=256,
        batch_size=128,
        n_epochs=2,
        policy_kwargs={"net_arch": [32, 32]},
        seed=0,
        device="cpu",
    )
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))

    play = gym.make(env_id, opponents=["random"], illegal_action="raise", **kwargs)
    obs, info = play.reset(seed=3)
    steps = 0
    while True:
        mask = play.unwrapped.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=steps % 2 == 0)
        assert mask[int(action)] == 1
        obs, _, terminated, truncated, info = play.step(action)
        steps += 1
        if terminated or truncated:
            break
    assert steps > 5 and len(info["final_scores"]) == 2


def readme_example() -> str:
    """The MaskablePPO example of the README (the first python block using gym.make + MaskablePPO)."""
    text = (ROOT / "README.md").read_text()
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        if "MaskablePPO" in block and "gym.make(" in block:
            return block
    raise AssertionError("README.md has no python example with gym.make and MaskablePPO")


def test_readme_example_runs(capsys):
    code = readme_example()
    assert len(code.strip().splitlines()) < 20
    namespace: dict = {}
    exec(compile(code, "README example", "exec"), namespace)
    assert "final scores" in capsys.readouterr().out
    info = namespace["info"]
    assert np.asarray(info["action_mask"]).sum() == 0 and "final_scores" in info


def test_every_readme_python_example_runs(capsys):
    """Every python block of the README runs as written (the training one is small)."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert len(blocks) >= 3
    for i, code in enumerate(blocks):
        exec(compile(code, f"README python block {i}", "exec"), {"__name__": f"readme_{i}"})
