"""Env ids keep their word: each version serves one observation, retired ids say so, cards name theirs.

The table of games (:mod:`dice_envs.games`) names the observation encoding each env version
served; the registered ids, the PettingZoo modules, the envs' own encodings and the model cards
(``env_id``) all follow it. Every shipped model plays the env its card names.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import gymnasium as gym
import pytest

import dice_envs.multiagent  # registers the ids too
from dice_envs.encoding import encoding_id
from dice_envs.games import GAME_SPECS, env_id_of, game_spec, load_object
from dice_envs.rules import ConfigError, make_rules

PRETRAINED = Path(__file__).resolve().parents[1] / "agents" / "pretrained"
CARDS = sorted(p for p in PRETRAINED.glob("*.json") if p.with_suffix(".zip").is_file())
RETIRED_GYM = re.escape(
    "Environment `dice_envs/Farkle-v0` is retired because its observation changed: it served the "
    "observation encodings farkle-v1, then farkle-v2, then farkle-v3. Please use `dice_envs/Farkle-v1`, "
    "which serves farkle-v3 only."
)


@pytest.mark.parametrize("name", list(GAME_SPECS))
def test_each_served_id_gives_the_encoding_of_its_table_row(name: str) -> None:
    spec = GAME_SPECS[name]
    assert spec.encoding == encoding_id(make_rules(name))  # the table agrees with the layouts
    assert spec.env_id in gym.registry and spec.env_id_of(spec.encoding) == spec.env_id
    assert gym.make(spec.env_id).unwrapped.encoding == spec.encoding
    assert gym.make_vec(spec.env_id, num_envs=1).encoding == spec.encoding
    module = load_object(spec.aec_module)
    assert module.raw_env().encoding == spec.encoding
    assert module.raw_env.metadata["name"] == spec.aec_module.rpartition(".")[2]
    assert spec.aec_module.rpartition(".")[2] in dice_envs.multiagent.__all__


def test_versions_follow_the_observation_history() -> None:
    assert {s.env_id for s in GAME_SPECS.values()} == {
        "dice_envs/Spiffel-v0",
        "dice_envs/DicePoker-v0",
        "dice_envs/Yahtzee-v0",
        "dice_envs/Farkle-v1",
    }
    assert [s.retired_env_ids for s in GAME_SPECS.values() if s.retired_env_ids] == [("dice_envs/Farkle-v0",)]
    assert env_id_of("farkle", "farkle-v1") == env_id_of("farkle", "farkle-v2") == "dice_envs/Farkle-v0"
    assert env_id_of("farkle", "farkle-v3") == "dice_envs/Farkle-v1"
    assert env_id_of("spiffel", "scorecard-v0") is None and env_id_of("chess", "scorecard-v1") is None


def test_a_retired_gymnasium_id_says_why_and_names_its_replacement() -> None:
    makes = [
        lambda: gym.make("dice_envs/Farkle-v0"),
        lambda: gym.make("dice_envs/Farkle-v0", opponents=["random"], target=3000),
        lambda: gym.make_vec("dice_envs/Farkle-v0", num_envs=2),
    ]
    for make in makes:  # Gymnasium warns that the id is out of date, then the entry point raises
        with (
            pytest.warns(DeprecationWarning, match="out of date"),
            pytest.raises(gym.error.DeprecatedEnv, match=RETIRED_GYM),
        ):
            make()
    with pytest.raises(ConfigError, match=RETIRED_GYM):  # wherever a game is named by its env id
        game_spec("dice_envs/Farkle-v0")


def test_a_retired_pettingzoo_module_says_why_and_names_its_replacement() -> None:
    expected = re.escape(
        "PettingZoo env `dice_envs.multiagent.farkle_v0` is retired because its observation changed: "
        "it served the observation encodings farkle-v1, then farkle-v2, then farkle-v3. Please use "
        "`dice_envs.multiagent.farkle_v1`, which serves farkle-v3 only."
    )
    with pytest.raises(ImportError, match=expected):
        from dice_envs.multiagent import farkle_v0  # noqa: F401
    with pytest.raises(AttributeError, match=expected):
        dice_envs.multiagent.farkle_v0  # noqa: B018
    with pytest.raises(AttributeError):
        dice_envs.multiagent.chess_v0  # noqa: B018
    assert importlib.import_module("dice_envs.multiagent.farkle_v1").raw_env.metadata["name"] == "farkle_v1"


def test_the_card_names_its_env_id_and_an_older_card_gets_it(tmp_path: Path) -> None:
    from agents.models.card import make_card, read_card, validate_card, write_card

    card = make_card(make_rules("farkle"), 2, command="test")
    assert card["env_id"] == "dice_envs/Farkle-v1"
    assert list(card).index("env_id") == list(card).index("observation_encoding") + 1
    with pytest.raises(
        ConfigError, match=r"env_id 'dice_envs/Farkle-v0' does not fit .*'dice_envs/Farkle-v1'"
    ):
        validate_card(dict(card, env_id="dice_envs/Farkle-v0"), "x.json")
    older = {k: v for k, v in card.items() if k != "env_id"}
    (tmp_path / "old.json").write_text(json.dumps(dict(older, observation_encoding="farkle-v2")))
    assert read_card(tmp_path / "old.zip")["env_id"] == "dice_envs/Farkle-v0"
    write_card(tmp_path / "new.zip", older)
    assert read_card(tmp_path / "new.zip")["env_id"] == "dice_envs/Farkle-v1"


@pytest.mark.parametrize("card_file", CARDS, ids=lambda p: p.stem)
def test_every_shipped_model_plays_the_env_its_card_names(card_file: Path) -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from agents.models.card import read_card

    card = json.loads(card_file.read_text())
    assert card["env_id"] == env_id_of(card["game"], card["observation_encoding"])
    assert read_card(card_file)["env_id"] == card["env_id"]
    assert card["env_id"] not in game_spec(card["game"]).retired_env_ids  # no model of a retired observation
    opponents = ["random"] * (card["num_players"] - 1)
    model = MaskablePPO.load(card_file.with_suffix(".zip"), device="cpu")
    env = gym.make(card["env_id"], opponents=opponents, illegal_action="raise")
    assert model.observation_space.shape == env.observation_space.shape
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            mask = env.action_masks()
            action, _ = model.predict(obs, action_masks=mask, deterministic=True)
            assert mask[int(action)]
            obs, _, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        assert info["game_over"]
