"""Trained-model loading: model cards, mismatches, missing files, deterministic batched acting."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import agents
from agents.learned import (
    CARD_FORMAT,
    LearnedAgent,
    card_path,
    check_card,
    make_card,
    pretrained_names,
    read_card,
    write_card,
)
from dice_envs.encoding import encode, encoding_id, observation_size
from dice_envs.rules import ConfigError, make_rules, new_game


def test_card_round_trip(tmp_path) -> None:
    rules = make_rules("dice_poker", poker_bonus_limit=3)
    card = make_card(rules, 2, config={"lr": 3e-4}, steps=123, wall_time_s=1.5, command="train")
    path = write_card(tmp_path / "m.zip", card)
    assert path == tmp_path / "m.json" == card_path(tmp_path / "m.zip")
    back = read_card(tmp_path / "m.zip")
    assert back == json.loads(json.dumps(card))
    assert (
        back["format"] == CARD_FORMAT and back["observation_encoding"] == encoding_id(rules) == "scorecard-v1"
    )
    assert back["n_actions"] == 47 and back["rules"]["poker_bonus_limit"] == 3
    check_card(back, rules, 2)  # fits


def test_card_mismatches_are_named(tmp_path) -> None:
    card = make_card(make_rules("spiffel"), 1)
    with pytest.raises(ConfigError, match=r"game: expected 'farkle', the file holds 'spiffel'"):
        check_card(card, make_rules("farkle"), 1)
    with pytest.raises(ConfigError, match=r"num_players: expected 2, the file holds 1"):
        check_card(card, make_rules("spiffel"), 2)
    with pytest.raises(ConfigError, match=r"upper_bonus_threshold expected 60, the file holds 63"):
        check_card(card, make_rules("spiffel", upper_bonus_threshold=60), 1)
    stale = dict(card, observation_encoding="scorecard-v0")
    with pytest.raises(
        ConfigError, match=r"observation_encoding: expected 'scorecard-v1', the file holds 'scorecard-v0'"
    ):
        check_card(stale, make_rules("spiffel"), 1)


def test_bad_cards_and_missing_files(tmp_path) -> None:
    with pytest.raises(ConfigError, match="model file not found"):
        agents.load(str(tmp_path / "nothing.zip"), game="spiffel")
    with pytest.raises(ConfigError, match="no pretrained model 'nobody'"):
        agents.load("pretrained:nobody", game="spiffel")
    (tmp_path / "m.zip").write_bytes(b"not a model")
    with pytest.raises(ConfigError, match="model card not found"):
        agents.load(str(tmp_path / "m.zip"), game="spiffel")
    (tmp_path / "m.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ConfigError, match="not a model card"):
        read_card(tmp_path / "m.zip")
    card = make_card(make_rules("spiffel"), 1)
    del card["steps"]
    with pytest.raises(ConfigError, match="lacks steps"):
        write_card(tmp_path / "m.zip", card)
    assert isinstance(pretrained_names(), list)


class _ShapeEnv(gym.Env):
    """Just the spaces of a game (MaskablePPO needs an env to build a model)."""

    def __init__(self, rules, num_players: int) -> None:
        n = observation_size(rules, num_players)
        self.observation_space = gym.spaces.Box(-10.0, 10.0, shape=(n,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(rules.n_actions)

    def reset(self, *, seed=None, options=None):
        return np.zeros(self.observation_space.shape, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(self.observation_space.shape, dtype=np.float32), 0.0, True, False, {}

    def action_masks(self) -> np.ndarray:
        return np.ones(self.action_space.n, dtype=bool)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    rules = make_rules("spiffel")
    path = tmp_path_factory.mktemp("model") / "tiny-spiffel.zip"
    model = MaskablePPO(
        "MlpPolicy",
        _ShapeEnv(rules, 1),
        policy_kwargs={"net_arch": [8]},
        n_steps=8,
        batch_size=8,
        seed=0,
        device="cpu",
    )
    from agents.model_io import save_model

    save_model(model, path, make_card(rules, 1, steps=0, command="test"))
    return path


def test_learned_agent_acts_legally_and_deterministically(tiny_model) -> None:
    rules = make_rules("spiffel")
    agent = agents.load(str(tiny_model), game="spiffel", seed=0)
    assert isinstance(agent, LearnedAgent)
    obs, masks = [], []
    for seed in range(16):
        g = new_game(rules, seed=seed)
        obs.append(encode(g, 0))
        masks.append(g.action_mask())
    single = [agent.act(o, m) for o, m in zip(obs, masks, strict=True)]
    assert all(m[a] for a, m in zip(single, masks, strict=True))
    assert agent.act_batch(np.array(obs), np.array(masks)).tolist() == single
    assert [agent.act(o, m) for o, m in zip(obs, masks, strict=True)] == single
    # a whole game through the engine
    g = new_game(rules, seed=99)
    while not g.done:
        g.apply(agent.act(encode(g, 0), g.action_mask()))


def test_model_for_another_game_is_refused(tiny_model) -> None:
    with pytest.raises(ConfigError) as err:
        agents.load(str(tiny_model), game="dice_poker")
    msg = str(err.value)
    assert "game: expected 'dice_poker', the file holds 'spiffel'" in msg
    assert "n_actions: expected 47, the file holds 45" in msg
    # another number of seats is not a mismatch: the solitaire model plays a seat of a 2-player
    # game through its seat view (agents.views)
    assert agents.load(str(tiny_model), game="spiffel", num_players=2).num_players == 2
