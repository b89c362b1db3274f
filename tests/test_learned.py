"""Trained-model loading: model cards, mismatches, missing files, deterministic batched acting."""

from __future__ import annotations

import json

import numpy as np
import pytest

import agents
from agents.models.card import (
    CARD_FORMAT,
    card_path,
    card_rules,
    card_spaces,
    check_card,
    make_card,
    read_card,
    write_card,
)
from agents.players.model import ModelAgent, pretrained_names
from dice_envs.encoding import encode, encoding_id
from dice_envs.engine import new_game
from dice_envs.rules import ConfigError, make_rules


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


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from agents.training.policy import SpacesOnlyEnv

    rules = make_rules("spiffel")
    path = tmp_path_factory.mktemp("model") / "tiny-spiffel.zip"
    model = MaskablePPO(
        "MlpPolicy",
        SpacesOnlyEnv(*card_spaces(make_card(rules, 1))),
        policy_kwargs={"net_arch": [8]},
        n_steps=8,
        batch_size=8,
        seed=0,
        device="cpu",
    )
    from agents.models.files import save_model

    save_model(model, path, make_card(rules, 1, steps=0, command="test"))
    return path


def test_learned_agent_acts_legally_and_deterministically(tiny_model) -> None:
    rules = make_rules("spiffel")
    agent = agents.load(str(tiny_model), game="spiffel", seed=0)
    assert isinstance(agent, ModelAgent)
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
    # one line that says what the file is and what fits, not every rule that differs
    assert msg.endswith(
        "tiny-spiffel.zip is a spiffel model, not a dice_poker one; "
        "models for dice_poker: pretrained:dice_poker, pretrained:dice_poker-scratch, "
        "pretrained:dice_poker-search"
    )
    # another number of seats is not a mismatch: the solitaire model plays a seat of a 2-player
    # game through its seat view (agents.models.seat_views)
    assert agents.load(str(tiny_model), game="spiffel", num_players=2).num_players == 2


def test_card_provenance_and_rules() -> None:
    rules = make_rules("farkle", target=5000)
    bare = make_card(rules, 2, command="test")
    assert not {"created", "seed", "library_versions", "code_revision"} & set(bare)
    run = make_card(rules, 2, seed=7, provenance=True, trainer="x")
    keys = list(run)
    provenance = ["created", "seed", "library_versions", "code_revision", "trainer"]
    assert keys[keys.index("command") + 1 :] == provenance
    assert run["seed"] == 7 and {"python", "dice_envs", "torch"} <= set(run["library_versions"])
    assert card_rules(run) == rules
    with pytest.raises(
        ConfigError, match=r"m\.json: the model card names an unknown game 'chess'; known: spiffel"
    ):
        card_rules(dict(run, game="chess"), "m.json")
    with pytest.raises(ConfigError, match="the card's rules do not describe a farkle game"):
        card_rules(dict(run, rules={"no_such_rule": 1}))


def test_one_agent_class_samples_legally_and_reproducibly(tiny_model) -> None:
    rules = make_rules("spiffel")
    obs, masks = [], []
    for seed in range(32):
        g = new_game(rules, seed=seed)
        obs.append(encode(g, 0))
        masks.append(g.action_mask())
    obs, masks = np.array(obs), np.array(masks)
    greedy = agents.load(str(tiny_model), deterministic=True)
    in_memory = ModelAgent(greedy.policy)  # an in-memory network: the same class, the same actions
    assert in_memory.act_batch(obs, masks).tolist() == greedy.act_batch(obs, masks).tolist()
    assert in_memory.card is None and greedy.card["game"] == "spiffel"
    first, second = (agents.load(str(tiny_model), deterministic=False, seed=3) for _ in range(2))
    drawn = [first.act_batch(obs, masks) for _ in range(8)]
    assert [second.act_batch(obs, masks).tolist() for _ in range(8)] == [d.tolist() for d in drawn]
    assert all(masks[np.arange(len(d)), d].all() for d in drawn)
    assert len({tuple(d) for d in drawn}) > 1  # sampling, not argmax
    with pytest.raises(ValueError, match=r"the network reads \(batch, 86\)"):
        greedy.act_batch(obs[:, :10], masks)
    with pytest.raises(
        ConfigError, match="takes no option 'temperature'; its options: device, deterministic"
    ):
        agents.load(str(tiny_model), temperature=2.0)
