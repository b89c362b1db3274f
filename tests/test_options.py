"""The env options (``dice_envs.options.EnvOptions``): one object, validated once, for every face.

Each face (Gymnasium env, PettingZoo env and raw_env, native vector env) builds its options with
the same validator, refuses unknown keys by name, and accepts a ready ``EnvOptions`` as
``options=``, behaving exactly as when built from the same keywords.
"""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401 - registers the ids
from dice_envs.engine.dice import RandomDice
from dice_envs.multiagent import farkle_v1, spiffel_v0
from dice_envs.options import OPTION_KEYS, EnvOptions, check_seat, options_of
from dice_envs.rules import ConfigError, FarkleRules, SpiffelRules, make_rules
from dice_envs.vector import FarkleVectorEnv, SpiffelVectorEnv
from dice_envs.wrappers import SingleAgentEnv

FACES = {
    "gymnasium": lambda **kw: gym.make("dice_envs/Spiffel-v0", **kw).unwrapped,
    "pettingzoo": lambda **kw: spiffel_v0.env(**kw).unwrapped,
    "raw_env": lambda **kw: spiffel_v0.raw_env(**kw),
    "vector": lambda **kw: gym.make_vec("dice_envs/Spiffel-v0", num_envs=2, **kw),
}


@pytest.mark.parametrize("face", list(FACES))
def test_unknown_key_names_it_and_every_allowed_key(face):
    with pytest.raises(ConfigError) as err:
        FACES[face](upper_bonus_treshold=60)
    text = str(err.value)
    assert "unknown keyword 'upper_bonus_treshold' for the spiffel " in text
    assert "(did you mean 'upper_bonus_threshold'?); allowed: " in text
    for key in (*SpiffelRules.parameter_names(), *OPTION_KEYS[face]):
        assert key in text


@pytest.mark.parametrize(
    ("face", "key"),
    [
        ("raw_env", "illegal_reward"),
        ("raw_env", "opponents"),
        ("pettingzoo", "seat"),
        ("gymnasium", "num_envs"),
    ],
)
def test_keys_of_other_faces_are_unknown(face, key):
    with pytest.raises(ConfigError, match=f"unknown keyword '{key}' for the spiffel"):
        FACES[face](**{key: 1})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"reward": "money"}, "unknown reward 'money'; allowed: score, win"),
        ({"reward": "win"}, "reward 'win' needs at least 2 players"),
        ({"num_players": 0}, r"num_players must be an integer in \[1, 8\], got 0"),
        ({"num_players": 9}, r"num_players must be an integer in \[1, 8\], got 9"),
        ({"num_players": True}, "num_players must be an integer"),
        ({"opponents": ["random"] * 8}, r"num_players must be an integer in \[1, 8\], got 9"),
        ({"opponents": ["random"], "num_players": 3}, r"num_players=3 does not fit 1 opponents \(needs 2\)"),
        ({"opponents": [42]}, "opponent 0 must be an agent spec string or an object with act"),
        ({"opponents": 42}, "opponents must be a list of agent specs or agents, got 42"),
        ({"num_players": 2, "seat": 2}, r"seat must be None \(random\) or an integer in \[0, 1\], got 2"),
        ({"num_players": 2, "seat": 0.5}, "seat must be None"),
        ({"illegal_action": "ignore"}, "unknown illegal_action 'ignore'; allowed: penalize, raise"),
        ({"illegal_reward": float("nan")}, "illegal_reward must be a finite number"),
        ({"render_mode": "video"}, "unknown render_mode 'video'; allowed: None, ansi, human, rgb_array"),
        ({"rules": FarkleRules()}, "rules for 'farkle' given to the spiffel env; pass a SpiffelRules"),
        ({"rules": "yahtzee"}, "rules 'yahtzee' given to the spiffel env; pass a SpiffelRules, a dict"),
        ({"upper_bonus_threshold": -3}, r"'upper_bonus_threshold' must be an integer in \[0, 105\], got -3"),
    ],
)
def test_bad_values_name_the_value_and_the_allowed_ones(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        EnvOptions.from_kwargs("spiffel", kwargs)


def test_defaults_and_normalisation():
    solo = EnvOptions.from_kwargs("spiffel", {})
    assert (solo.opponents, solo.num_players, solo.reward, solo.seat) == ((), 1, "score", None)
    assert (solo.illegal_action, solo.illegal_reward, solo.render_mode) == ("penalize", -1.0, None)
    assert solo.rules == make_rules("spiffel") and solo.game == "spiffel"
    three = EnvOptions("yahtzee", num_players=3, seat=np.int64(2), illegal_reward=np.int64(-2))
    assert three.opponents == ("random", "random") and three.reward == "win"
    assert type(three.seat) is int and three.seat == 2 and type(three.illegal_reward) is float
    one = EnvOptions.from_kwargs("farkle", {"opponents": "greedy", "target": 2000, "reward": "score"})
    assert one.opponents == ("greedy",) and one.num_players == 2 and one.rules.target == 2000
    assert one.reward == "score"
    # the PettingZoo faces seat two players unless told otherwise
    assert options_of("spiffel", {}, "pettingzoo").num_players == 2
    assert options_of("spiffel", {"num_players": 1}, "raw_env").reward == "score"


def test_frozen_and_replace_checks_again():
    opts = EnvOptions("farkle", opponents=["random"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.seat = 1  # type: ignore[misc]
    assert dataclasses.replace(opts, seat=1).seat == 1
    with pytest.raises(ConfigError, match=r"seat must be .*\[0, 1\], got 5"):
        dataclasses.replace(opts, seat=5)
    with pytest.raises(ConfigError, match="rules must be a rule configuration or a game name"):
        EnvOptions(42)  # type: ignore[arg-type]
    assert check_seat(None, 3) is None and check_seat(np.int8(1), 2) == 1


def _farkle_options() -> EnvOptions:
    return EnvOptions.from_kwargs("farkle", {"opponents": ["random"], "target": 1500, "seat": 1})


def test_the_same_object_configures_every_face():
    opts = _farkle_options()
    envs = [
        gym.make("dice_envs/Farkle-v1", options=opts).unwrapped,
        farkle_v1.env(options=opts).unwrapped,
        farkle_v1.raw_env(options=opts),
        gym.make_vec("dice_envs/Farkle-v1", num_envs=3, options=opts),
    ]
    for env in envs:
        assert env.options is opts and env.rules is opts.rules and env.num_players == 2
        assert env.reward_mode == "win"
    assert envs[0].fixed_seat == 1 and envs[3].fixed_seat == 1
    assert envs[3].illegal_reward == -1.0 and envs[3].num_envs == 3
    assert envs[0].aec.options is opts  # the Gymnasium env hands its options to its AEC env


def test_an_options_object_plays_as_its_keywords():
    kwargs = {"opponents": ["random"], "target": 1500, "seat": 1}
    for make in (
        lambda **kw: gym.make("dice_envs/Farkle-v1", **kw),
        lambda **kw: FarkleVectorEnv(num_envs=4, **kw),
    ):
        a, b = make(options=_farkle_options()), make(**kwargs)
        (oa, ia), (ob, ib) = a.reset(seed=3), b.reset(seed=3)
        rng = np.random.default_rng(0)
        for _ in range(30):
            np.testing.assert_array_equal(oa, ob)
            mask = np.asarray(ia["action_mask"], dtype=bool)
            if mask.ndim == 1:
                act = int(rng.choice(np.flatnonzero(mask)))
            else:
                act = np.argmax(rng.random(mask.shape) * mask, axis=1)
            oa, ra, ta, _, ia = a.step(act)
            ob, rb, tb, _, ib = b.step(act)
            np.testing.assert_array_equal(ra, rb)
            np.testing.assert_array_equal(ta, tb)
            np.testing.assert_array_equal(ia["action_mask"], ib["action_mask"])
            if np.any(ta):
                break
    pz_opts = EnvOptions.from_kwargs("farkle", {"num_players": 3, "target": 1500})
    e, f = farkle_v1.env(options=pz_opts), farkle_v1.env(num_players=3, target=1500)
    e.reset(seed=1)
    f.reset(seed=1)
    assert e.possible_agents == f.possible_agents
    np.testing.assert_array_equal(e.observe("player_0")["observation"], f.observe("player_0")["observation"])


@pytest.mark.parametrize("face", list(FACES))
def test_options_come_alone_and_fit_the_game(face):
    with pytest.raises(ConfigError, match=r"options= comes alone; got also 'joker'"):
        FACES[face](options=EnvOptions("spiffel"), joker=False)
    with pytest.raises(ConfigError, match="options for 'farkle' given to the spiffel"):
        FACES[face](options=EnvOptions("farkle"))
    with pytest.raises(ConfigError, match=r"options must be an EnvOptions, got \{'num_players': 2\}"):
        FACES[face](options={"num_players": 2})


def test_vector_env_checks_its_own_render_modes():
    ansi = SpiffelVectorEnv(num_envs=1, options=EnvOptions("spiffel", render_mode="ansi"))
    assert ansi.render_mode == "ansi"
    with pytest.raises(ConfigError, match="unknown render_mode 'human'; allowed: None, ansi"):
        SpiffelVectorEnv(num_envs=1, options=EnvOptions("spiffel", render_mode="human"))


def test_single_agent_env_checks_with_the_same_functions():
    aec = spiffel_v0.raw_env(num_players=2)
    with pytest.raises(ConfigError, match=r"seat must be None \(random\) or an integer in \[0, 1\], got 2"):
        SingleAgentEnv(aec, ["random"], seat=2)
    with pytest.raises(ConfigError, match="unknown illegal_action 'skip'; allowed: penalize, raise"):
        SingleAgentEnv(aec, ["random"], illegal_action="skip")


def test_vector_env_reseeds_the_dice_stream_it_gave_its_engine():
    env = SpiffelVectorEnv(num_envs=3)
    engine, dice = env.engine, env.engine.dice
    first, _ = env.reset(seed=7)
    assert env.engine is engine and env.engine.dice is dice  # one engine, one stream, re-seeded
    env.step(np.argmax(env.action_masks(), axis=1))
    again, _ = env.reset(seed=7)
    np.testing.assert_array_equal(first, again)


def test_reseeded_dice_match_fresh_dice():
    games = np.arange(5)
    used = RandomDice(1, buffer=8)
    used.codes(games, 5)
    used.reseed(np.random.default_rng(9))
    fresh = RandomDice(9, buffer=8)
    for count in (5, 2, 6, 3):
        np.testing.assert_array_equal(used.codes(games, count), fresh.codes(games, count))


@pytest.mark.parametrize("face", list(FACES))
def test_rules_as_a_dict_equal_the_same_rules_as_keywords(face):
    as_dict = FACES[face](rules={"upper_bonus": 50, "joker": False})
    as_keywords = FACES[face](upper_bonus=50, joker=False)
    assert as_dict.rules == as_keywords.rules == make_rules("spiffel", upper_bonus=50, joker=False)
    assert FACES[face](rules={"upper_bonus": 50}, upper_bonus=50).rules.upper_bonus == 50
    with pytest.raises(ConfigError, match=r"\['upper_bonus'\] given twice to the spiffel"):
        FACES[face](rules={"upper_bonus": 50}, upper_bonus=40)
    with pytest.raises(
        ConfigError, match="unknown rule parameter 'bogus' for spiffel; allowed: upper_bonus_threshold"
    ):
        FACES[face](rules={"bogus": 1})
    with pytest.raises(
        ConfigError, match=r"rules 5 given to the spiffel .*a dict of rule parameters \(allowed: "
    ):
        FACES[face](rules=5)
