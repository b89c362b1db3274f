"""The stable-baselines3 adapter: VecEnv API, masks for MaskablePPO, terminal observations."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
sb3_contrib = pytest.importorskip("sb3_contrib")

from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

from dice_envs.vector import FarkleVectorEnv, SpiffelVectorEnv  # noqa: E402
from dice_envs.vector.sb3 import SB3VecEnv  # noqa: E402


def test_masks_terminal_observations_and_seeding():
    venv = SB3VecEnv("farkle", num_envs=8, max_turns=3)
    assert is_masking_supported(venv)
    venv.seed(3)
    obs = venv.reset()
    assert obs.shape == (8, 50) and venv.observation_space.shape == (50,)  # 48 + 2 x 1 player
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(300):
        masks = get_action_masks(venv)
        assert masks.shape == (8, 128) and masks.any(axis=1).all()
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
        obs, rewards, dones, infos = venv.step(actions)
        assert rewards.dtype == np.float32 and len(infos) == 8
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == (50,)
            assert infos[i]["TimeLimit.truncated"] in (True, False)
            ended += 1
        assert all("terminal_observation" not in infos[i] for i in np.flatnonzero(~dones))
    assert ended > 0
    assert venv.env_method("action_masks", indices=[1, 2]).shape == (2, 128)
    assert venv.get_attr("num_players") == [1] * 8
    assert venv.env_is_wrapped(object) == [False] * 8


def test_seed_replays_the_dice():
    def first_obs(seed):
        venv = SB3VecEnv("yahtzee", num_envs=8)
        venv.seed(seed)
        return venv.reset()

    np.testing.assert_array_equal(first_obs(3), first_obs(3))
    assert not np.array_equal(first_obs(3), first_obs(4))


def test_adapter_rejects_next_step_envs():
    with pytest.raises(ValueError, match="same_step"):
        SB3VecEnv(SpiffelVectorEnv(num_envs=2))
    inner = FarkleVectorEnv(num_envs=2, autoreset_mode="same_step")
    assert SB3VecEnv(inner).num_envs == 2


def test_maskable_ppo_trains_on_the_native_env():
    from sb3_contrib import MaskablePPO

    venv = VecMonitor(SB3VecEnv("spiffel", num_envs=16))
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=16,
        batch_size=64,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [32]},
    )
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    obs = venv.reset()
    masks = get_action_masks(venv)
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert masks[np.arange(16), actions].all()
