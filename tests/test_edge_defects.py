"""Edges of the library's entry points: calls before ``reset()``, seeds and generators handed to the
engine, and the score functions' arguments; each refused by name, saying what is allowed."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401 - registers the ids
from dice_envs.engine import make_engine, new_game
from dice_envs.multiagent import dice_poker_v0, farkle_v1, spiffel_v0, yahtzee_v0
from dice_envs.rules import ConfigError, dice_poker, spiffel, yahtzee
from dice_envs.rules.scorecard import KNOWN_BOXES, box_score
from dice_envs.vector import FarkleVectorEnv, SpiffelVectorEnv

AEC = [spiffel_v0, dice_poker_v0, yahtzee_v0, farkle_v1]
AEC_IDS = [m.__name__.rsplit(".", 1)[1] for m in AEC]


# ----------------------------------------------------------------------------- before reset()
@pytest.mark.parametrize("module", AEC, ids=AEC_IDS)
def test_raw_env_calls_before_reset_name_the_missing_reset(module) -> None:
    env = module.raw_env(num_players=2)
    name = env.metadata["name"]
    calls = {
        "observe": lambda: env.observe("player_0"),
        "step": lambda: env.step(33),
        "last": env.last,
        "action_mask": env.action_mask,
    }
    for method, call in calls.items():
        with pytest.raises(RuntimeError, match=rf"^{name}: call reset\(\) before {method}\(\)$"):
            call()
    with pytest.raises(RuntimeError, match=r"call reset\(\) before action_mask\(\)"):
        env.action_mask("player_1")
    env.reset(seed=0)  # then every call works
    obs, _, terminated, truncated, _ = env.last()
    assert obs["action_mask"].any() and not (terminated or truncated)
    assert env.action_mask().any() and env.observe("player_0")["observation"].shape


@pytest.mark.parametrize("module", AEC, ids=AEC_IDS)
def test_raw_env_render_before_reset_says_reset_is_needed(module) -> None:
    assert module.raw_env(render_mode="ansi").render().endswith(r"call reset() before render()")
    frame = module.raw_env(render_mode="rgb_array").render()  # a blank frame, as video recorders need
    assert frame.ndim == 3 and frame.dtype == np.uint8


def test_gymnasium_env_calls_before_reset_name_the_missing_reset() -> None:
    for env in (gym.make("dice_envs/Spiffel-v0").unwrapped, gym.make("dice_envs/Farkle-v1").unwrapped):
        with pytest.raises(RuntimeError, match=r"^call reset\(\) before step\(\)$"):
            env.step(33)
        with pytest.raises(RuntimeError, match=r"^call reset\(\) before action_masks\(\)$"):
            env.action_masks()
        _, info = env.reset(seed=0)
        np.testing.assert_array_equal(env.action_masks(), info["action_mask"])


def test_vector_env_calls_before_reset_name_the_missing_reset() -> None:
    for cls in (SpiffelVectorEnv, FarkleVectorEnv):
        env = cls(num_envs=2, render_mode="ansi")
        with pytest.raises(RuntimeError, match=r"^call reset\(\) before step\(\)$"):
            env.step(np.zeros(2, dtype=np.int64))
        with pytest.raises(RuntimeError, match=r"^call reset\(\) before action_masks\(\)$"):
            env.action_masks()
        assert all(t.endswith("call reset() before render()") for t in env.render())
        _, info = env.reset(seed=0)
        np.testing.assert_array_equal(env.action_masks(), info["action_mask"])
        assert "player_0 to move" in env.render()[0]


# ----------------------------------------------------------------------------- seeds and rng
BAD_SEEDS = [-1, "abc", 1.5, True, [1, 2]]


@pytest.mark.parametrize("game", ["spiffel", "farkle"])
@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_new_game_refuses_a_bad_seed_by_name(game: str, seed) -> None:
    with pytest.raises(ConfigError, match=r"^seed must be None or a non-negative integer, got "):
        new_game(game, seed=seed)
    with pytest.raises(ConfigError, match=r"^seed must be None or a non-negative integer, got "):
        make_engine(game, num_games=2, seed=seed)


@pytest.mark.parametrize("game", ["spiffel", "farkle"])
@pytest.mark.parametrize("rng", [42, "abc", np.random.RandomState(0)], ids=["int", "str", "RandomState"])
def test_new_game_refuses_an_rng_that_is_not_a_generator(game: str, rng) -> None:
    with pytest.raises(ConfigError, match=r"^rng must be None or a numpy.random.Generator .*, got "):
        new_game(game, rng=rng)


@pytest.mark.parametrize("game", ["spiffel", "farkle"])
def test_new_game_takes_good_seeds_and_generators(game: str) -> None:
    for seed in (None, 0, np.int64(7), np.uint32(7), 2**63 - 1):
        assert new_game(game, seed=seed).legal_actions()
    a, b = new_game(game, seed=np.int64(7)), new_game(game, rng=np.random.default_rng(7))
    assert a.legal_actions() == b.legal_actions()
    assert make_engine(game, num_games=2, seed=np.uint8(3)) is not None


def test_evaluate_refuses_a_bad_seed_by_name() -> None:
    from agents.evaluation.tournament import evaluate

    for seed in (-1, "abc", 1.5, None):
        with pytest.raises(ConfigError, match=r"^seed must be a non-negative integer, got "):
            evaluate("spiffel", ["random"], games=2, seed=seed, workers=1)


# ----------------------------------------------------------------------------- score functions
SCORES = [spiffel.score, dice_poker.score, yahtzee.score]


@pytest.mark.parametrize("score", [*SCORES, box_score], ids=["spiffel", "dice_poker", "yahtzee", "box_score"])
@pytest.mark.parametrize("joker", ["no", 1, 0, None, "True", np.int64(1)], ids=repr)
def test_joker_must_be_a_bool(score, joker) -> None:
    with pytest.raises(ConfigError, match=r"^joker must be true or false, got "):
        score("full_house", [2, 2, 2, 2, 2], joker=joker)


@pytest.mark.parametrize("score", [*SCORES, box_score], ids=["spiffel", "dice_poker", "yahtzee", "box_score"])
def test_joker_takes_bools_and_numpy_bools(score) -> None:
    assert score("full_house", [2, 2, 2, 2, 2], joker=True) == 25
    assert score("full_house", [2, 2, 2, 2, 2], joker=np.bool_(True)) == 25
    assert score("full_house", [2, 2, 2, 2, 2], joker=False) == 0
    assert score("full_house", [2, 2, 2, 2, 2], joker=np.bool_(False)) == 0


@pytest.mark.parametrize("box", [["chance"], {"chance"}, None, 3, b"chance", "Chance"], ids=repr)
def test_box_score_names_an_unknown_box_and_the_allowed_ones(box) -> None:
    with pytest.raises(ConfigError) as err:
        box_score(box, [1, 2, 3, 4, 5])
    text = str(err.value)
    assert text.startswith(f"unknown box {box!r}; known boxes: ")
    assert all(name in text for name in KNOWN_BOXES)


@pytest.mark.parametrize("score", SCORES, ids=["spiffel", "dice_poker", "yahtzee"])
@pytest.mark.parametrize("box", [["chance"], None, "bogus"], ids=repr)
def test_score_names_an_unknown_box_and_the_games_boxes(score, box) -> None:
    with pytest.raises(
        ConfigError, match=rf"^unknown box {re.escape(repr(box))} for \w+; known boxes: ones, "
    ):
        score(box, [1, 2, 3, 4, 5])


@pytest.mark.parametrize("box", [["chance"], None, "bogus"], ids=repr)
def test_box_action_names_an_unknown_box_and_the_games_boxes(box) -> None:
    game = new_game("yahtzee", seed=0)
    with pytest.raises(
        ConfigError, match=rf"^unknown box {re.escape(repr(box))} for yahtzee; known boxes: ones, "
    ):
        game.box_action(box)
    assert game.box_action("chance") == 32 + 12


@pytest.mark.parametrize("bank", ["no", 1, None], ids=repr)
def test_farkle_action_bank_must_be_a_bool(bank) -> None:
    game = new_game("farkle", seed=0)
    with pytest.raises(ConfigError, match=r"^bank must be true or false, got "):
        game.action([0], bank=bank)
    assert (
        game.action([0], bank=np.bool_(True)) == game.action([0], bank=True) != game.action([0], bank=False)
    )
