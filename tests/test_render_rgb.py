"""``render_mode="rgb_array"`` on every env: constant-size uint8 frames of the dice and card, videos."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import RenderCollection

import dice_envs  # noqa: F401
from dice_envs.engine import new_game
from dice_envs.multiagent import dice_poker_v0, farkle_v1, spiffel_v0, yahtzee_v0
from dice_envs.render import render_text
from dice_envs.render_rgb import _GLYPHS, frame_size, render_rgb, text_image
from dice_envs.rules import make_rules

ENV_IDS = ["dice_envs/Spiffel-v0", "dice_envs/DicePoker-v0", "dice_envs/Yahtzee-v0", "dice_envs/Farkle-v1"]
MODULES = [spiffel_v0, dice_poker_v0, yahtzee_v0, farkle_v1]


def test_glyphs_are_distinct_and_text_is_drawn() -> None:
    flat = _GLYPHS.reshape(len(_GLYPHS), -1)
    assert len(_GLYPHS) == 95 and not flat[0].any()  # space is blank
    assert len({row.tobytes() for row in flat}) == 95  # every printable character differs
    ink = text_image("AB", lines=1, columns=2)
    assert ink.shape == (11, 12)
    assert (ink[:, :6] == _GLYPHS[ord("A") - 32]).all() and (ink[:, 6:] == _GLYPHS[ord("B") - 32]).all()


def _dice_band_dice(frame: np.ndarray) -> int:
    """Dice drawn in the band: count dark die borders along the row through their top edges."""
    row = (frame[16, :, :].astype(int).sum(axis=1) < 150).astype(int)
    return int(np.sum(np.diff(np.concatenate([[0], row])) == 1))


@pytest.mark.parametrize("game", ["spiffel", "farkle"])
def test_frame_shows_the_dice_and_the_text(game: str) -> None:
    g = new_game(make_rules(game), num_players=2, seed=1)
    frame = render_rgb(g)
    assert frame.shape == (*frame_size(), 3) and frame.dtype == np.uint8
    assert _dice_band_dice(frame) == len(g.dice)
    ink = text_image(render_text(g))
    text = frame[88:]
    assert (text[ink] == [20, 20, 30]).all() and (text[~ink] == [250, 248, 240]).all()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gym_envs_render_rgb_frames_of_one_size(env_id: str) -> None:
    env = RenderCollection(gym.make(env_id, opponents=["random"], render_mode="rgb_array"))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        done = terminated or truncated
    frames = env.render()
    assert len(frames) > 10
    assert {f.shape for f in frames} == {(*frame_size(), 3)}
    assert all(f.dtype == np.uint8 for f in frames)
    assert len({f.tobytes() for f in frames}) > len(frames) // 2  # the picture follows the game


@pytest.mark.parametrize("module", MODULES, ids=[m.__name__.split(".")[-1] for m in MODULES])
def test_pettingzoo_envs_render_rgb(module) -> None:
    env = module.env(num_players=3, render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]))
    second = env.render()
    assert first.shape == second.shape == (*frame_size(), 3)
    assert not (first == second).all()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_record_video_on_every_env(env_id: str, tmp_path) -> None:
    pytest.importorskip("moviepy", reason="RecordVideo needs moviepy: pip install 'dice-envs[video]'")
    from gymnasium.wrappers import RecordVideo

    base = (
        gym.make(env_id, opponents=["random"], render_mode="rgb_array", max_turns=5)
        if "Farkle" in env_id
        else gym.make(env_id, render_mode="rgb_array")
    )
    env = RecordVideo(base, str(tmp_path), episode_trigger=lambda e: True, disable_logger=True)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(base.action_masks()))))
        done = terminated or truncated
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000
