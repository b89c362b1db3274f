"""The native vector envs: spaces, observations, masks, rewards, autoreset, opponents, seeding.

Gymnasium has no checker for vector envs, so shapes, dtypes and both autoreset modes are checked
here by hand, and every observation / mask is compared with the scalar encoding of the same
state (``engine.to_game(i)`` rebuilt as a rules-engine game).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from dice_envs.encoding import encode, observation_size
from dice_envs.multiagent.base import win_rewards
from dice_envs.rules import ConfigError, make_rules
from dice_envs.vector import (
    DicePokerVectorEnv,
    FarkleVectorEnv,
    SpiffelVectorEnv,
    YahtzeeVectorEnv,
)

CLASSES = {
    "spiffel": SpiffelVectorEnv,
    "dice_poker": DicePokerVectorEnv,
    "yahtzee": YahtzeeVectorEnv,
    "farkle": FarkleVectorEnv,
}
IDS = {
    "spiffel": "dice_envs/Spiffel-v0",
    "dice_poker": "dice_envs/DicePoker-v0",
    "yahtzee": "dice_envs/Yahtzee-v0",
    "farkle": "dice_envs/Farkle-v1",
}


def random_actions(rng, mask):
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


def check_against_scalar(env, obs, info, rows):
    """Observation and mask of game ``i`` equal the scalar encoding of the same state."""
    for i in rows:
        g = env.engine.to_game(int(i))
        seat = int(info["seat"][i])
        assert obs[i].tobytes() == encode(g, seat).tobytes()
        expected = g.action_mask() if not env._over[i] else np.zeros(env.n_actions, dtype=np.int8)
        np.testing.assert_array_equal(info["action_mask"][i], expected)


@pytest.mark.parametrize("game", list(CLASSES))
def test_spaces_and_dtypes_match_the_scalar_env(game):
    env = CLASSES[game](num_envs=5, opponents=["random"])
    obs, info = env.reset(seed=0)
    n_obs = observation_size(make_rules(game), 2)
    n_act = make_rules(game).n_actions
    assert obs.shape == (5, n_obs) and obs.dtype == np.float32
    assert info["action_mask"].shape == (5, n_act) and info["action_mask"].dtype == np.int8
    assert env.action_masks().shape == (5, n_act)
    assert env.single_action_space == gym.spaces.Discrete(n_act)
    assert env.action_space.shape == (5,)
    assert env.observation_space.shape == (5, n_obs)
    assert env.single_observation_space.contains(obs[0])
    if IDS[game] in gym.registry:
        scalar = gym.make(IDS[game], opponents=["random"])
        assert scalar.observation_space == env.single_observation_space
        assert scalar.action_space == env.single_action_space
    obs, rewards, term, trunc, info = env.step(random_actions(np.random.default_rng(0), info["action_mask"]))
    assert rewards.shape == term.shape == trunc.shape == (5,)
    assert rewards.dtype == np.float64 and term.dtype == trunc.dtype == np.bool_
    assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP


@pytest.mark.parametrize(
    ("game", "kwargs"),
    [
        ("spiffel", {}),
        ("dice_poker", {"opponents": ["random", "random"], "reward": "score"}),
        ("yahtzee", {"opponents": ["random"], "seat": 1, "reward": "score"}),
        ("farkle", {"opponents": ["random"], "reward": "score", "max_turns": 15}),
        ("farkle", {"max_turns": 10}),
    ],
)
def test_score_rewards_sum_to_final_totals_and_obs_match(game, kwargs):
    n = 24
    env = CLASSES[game](num_envs=n, **kwargs)
    obs, info = env.reset(seed=11)
    rng = np.random.default_rng(1)
    returns, finished = np.zeros(n), 0
    for t in range(400):
        check_against_scalar(env, obs, info, range(t % 4, n, 4))
        obs, rewards, term, trunc, info = env.step(random_actions(rng, info["action_mask"]))
        returns += rewards
        ended = term | trunc
        for i in np.flatnonzero(ended):
            assert returns[i] == info["final_scores"][i, info["seat"][i]]
            assert not info["action_mask"][i].any()  # episode over: all zeros
            finished += 1
        returns[ended] = 0.0
        if game == "farkle" and trunc.any():
            assert env.engine.truncated[trunc].all()
    assert finished >= n


@pytest.mark.parametrize("game", ["spiffel", "farkle"])
def test_win_rewards_are_zero_sum_end_rewards(game):
    env = CLASSES[game](
        num_envs=16, opponents=["random", "random"], **({"max_turns": 8} if game == "farkle" else {})
    )
    assert env.reward_mode == "win"
    _, info = env.reset(seed=5)
    rng = np.random.default_rng(2)
    seen = set()
    for _ in range(600):
        _obs, rewards, term, trunc, info = env.step(random_actions(rng, info["action_mask"]))
        ended = term | trunc
        assert (rewards[~ended] == 0).all()
        for i in np.flatnonzero(ended):
            expected = win_rewards(info["final_scores"][i].tolist())[info["seat"][i]]
            assert rewards[i] == pytest.approx(expected)
            seen.add(round(float(rewards[i]), 3))
    assert len(seen) >= 2  # wins and losses both occur
    assert set(np.unique(info["seat"])) <= {0, 1, 2}


def test_next_step_autoreset_ignores_the_action_after_the_end():
    env = FarkleVectorEnv(num_envs=8, max_turns=2)
    _, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(200):
        _obs, _rewards, term, trunc, info = env.step(random_actions(rng, info["action_mask"]))
        ended = term | trunc
        if ended.any():
            break
    assert ended.any()
    assert not info["action_mask"][ended].any()
    # any action (even an illegal one) for a finished game is ignored: the game is reset
    actions = random_actions(rng, info["action_mask"])
    actions[ended] = 0
    obs2, rewards2, term2, trunc2, info2 = env.step(actions)
    assert (rewards2[ended] == 0).all() and not (term2 | trunc2)[ended].any()
    assert (env.engine.turns[ended].sum(axis=1) == 0).all()
    check_against_scalar(env, obs2, info2, np.flatnonzero(ended))


def test_same_step_autoreset_reports_final_obs():
    env = SpiffelVectorEnv(num_envs=6, autoreset_mode="same_step")
    assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    returns, done_once = np.zeros(6), False
    for _ in range(200):
        obs, rewards, term, _trunc, info = env.step(random_actions(rng, info["action_mask"]))
        returns += rewards
        if term.any():
            done_once = True
            for i in np.flatnonzero(term):
                final = info["final_obs"][i]
                assert final.shape == obs[i].shape and not np.array_equal(final, obs[i])
                assert returns[i] == info["final_info"]["final_scores"][i, 0]
                assert env.engine.round[i] == 0  # already reset
                assert info["action_mask"][i].any()  # the fresh game's mask
            assert info["_final_obs"].tolist() == term.tolist()
            returns[term] = 0
        check_against_scalar(env, obs, info, range(6))
    assert done_once


def test_illegal_actions_penalize_or_raise_without_touching_state():
    env = YahtzeeVectorEnv(num_envs=4)
    obs, info = env.reset(seed=9)
    before = env.engine.cards.copy(), env.engine.roll.copy()
    actions = random_actions(np.random.default_rng(0), info["action_mask"])
    actions[2] = 0  # never legal
    obs2, rewards, term, _trunc, info2 = env.step(actions)
    assert term[2] and rewards[2] == -1.0 and info2["illegal_action"][2]
    assert obs2[2].tobytes() == obs[2].tobytes()
    assert env.engine.roll[2] == before[1][2] and (env.engine.cards[2] == before[0][2]).all()
    assert not term[[0, 1, 3]].any()

    strict = SpiffelVectorEnv(num_envs=3, illegal_action="raise")
    obs, info = strict.reset(seed=1)
    state = strict.engine.roll.copy(), strict.engine.throw.copy()
    bad = random_actions(np.random.default_rng(0), info["action_mask"])
    bad[1] = 99
    with pytest.raises(ValueError, match=r"illegal action 99 in game 1 .* legal actions: \["):
        strict.step(bad)
    assert (strict.engine.roll == state[0]).all() and (strict.engine.throw == state[1]).all()
    with pytest.raises(ValueError, match="expected 3 actions"):
        strict.step(np.zeros(2, dtype=np.int64))


def test_bad_options_name_the_value():
    with pytest.raises(ConfigError, match="upper_bonus_treshold"):
        SpiffelVectorEnv(num_envs=2, upper_bonus_treshold=60)
    with pytest.raises(ConfigError, match="reward 'win' needs at least 2 players"):
        SpiffelVectorEnv(num_envs=2, reward="win")
    with pytest.raises(ConfigError, match="num_players=3 does not fit 1 opponents"):
        FarkleVectorEnv(num_envs=2, opponents=["random"], num_players=3)
    with pytest.raises(ConfigError, match="autoreset_mode"):
        FarkleVectorEnv(num_envs=2, autoreset_mode="sometimes")
    with pytest.raises(ConfigError, match="seat"):
        FarkleVectorEnv(num_envs=2, seat=2)
    with pytest.raises(ConfigError, match="illegal_action"):
        FarkleVectorEnv(num_envs=2, illegal_action="ignore")


def test_rule_parameters_reach_the_engine():
    env = DicePokerVectorEnv(num_envs=2, upper_bonus_threshold=70, num_throws=2)
    assert env.rules.upper_bonus_threshold == 70 and env.engine.num_throws == 2
    obs, _ = env.reset(seed=0)
    assert obs.shape == (2, observation_size(env.rules, 1))


def test_seeding_replays_every_game():
    def play(seed):
        env = FarkleVectorEnv(num_envs=8, opponents=["random"], seat=None)
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        trace = [obs.copy()]
        for _ in range(50):
            obs, r, *_rest, info = env.step(random_actions(rng, info["action_mask"]))
            trace.append(obs.copy())
            trace.append(r.copy())
        return np.concatenate([t.ravel() for t in trace])

    np.testing.assert_array_equal(play(4), play(4))
    assert not np.array_equal(play(4), play(5))


class CountingAgent:
    """An opponent with act_batch that records its batch sizes (plays the first legal action)."""

    def __init__(self):
        self.batches = []

    def act(self, observation, action_mask):
        raise AssertionError("act_batch should be used")

    def act_batch(self, observations, action_masks):
        assert observations.dtype == np.float32 and action_masks.dtype == np.int8
        self.batches.append(len(observations))
        return np.argmax(action_masks, axis=1)


class ActOnlyAgent:
    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[-1])


def test_opponents_act_in_batches_and_act_only_agents_work():
    counting = CountingAgent()
    env = SpiffelVectorEnv(num_envs=32, opponents=[counting, ActOnlyAgent()], seat=2, reward="score")
    obs, info = env.reset(seed=0)
    assert max(counting.batches) == 32  # seat 0 opens every game: one batched call
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, _r, _term, _trunc, info = env.step(random_actions(rng, info["action_mask"]))
        check_against_scalar(env, obs, info, range(0, 32, 5))
    assert (env.engine.current[~env._over] == 2).all()


def test_make_vec_uses_the_native_env():
    if IDS["spiffel"] not in gym.registry:
        pytest.skip("gym ids not registered")
    env = gym.make_vec(
        IDS["spiffel"], num_envs=4, vectorization_mode="vector_entry_point", upper_bonus_threshold=60
    )
    assert isinstance(env.unwrapped, SpiffelVectorEnv)
    assert env.unwrapped.rules.upper_bonus_threshold == 60
    obs, _info = env.reset(seed=0)
    assert obs.shape == (4, 86)
    env = gym.make_vec(IDS["farkle"], num_envs=3, opponents=["random"])
    assert isinstance(env.unwrapped, FarkleVectorEnv) and env.unwrapped.num_players == 2


def test_render_ansi():
    env = FarkleVectorEnv(num_envs=2, render_mode="ansi")
    env.reset(seed=0)
    texts = env.render()
    assert len(texts) == 2 and all(isinstance(t, str) and t for t in texts)
    assert SpiffelVectorEnv(num_envs=1).render() is None
