"""Gymnasium envs: registration, env checkers, masks, seeding, illegal actions, opponents, rewards."""

from __future__ import annotations

import importlib
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import dice_envs
from dice_envs.encoding import encode
from dice_envs.envs import ENV_IDS, register_envs
from dice_envs.multiagent import win_rewards
from dice_envs.rules import ConfigError

IDS = list(ENV_IDS)
OPPONENT_SETS = [[], ["random"], ["random", "random"]]


def builtin_specs(game: str) -> list[str]:
    """Every seat-taking agent of ``game`` that agents.load knows (a threshold instance for
    ``threshold:N``, a planner over a shipped bot for ``planner:<model>``, a shipped value model (a
    planner for Farkle) for ``search:<model>``, the shipped 2-player bot
    where one fits; not ``human``)."""
    from agents.registry import known_specs

    not_seats = {"human", "pretrained:<name>", "a path to a .zip model"}
    examples = {
        "threshold:N": "threshold:500",
        "planner:<model>": "planner:pretrained:farkle-scratch",
        "search:<model>": "search:pretrained:" + ("farkle-scratch" if game == "farkle" else f"{game}-search"),
        "best-response:<spec>": "best-response:greedy",
    }
    specs = [examples.get(s, s) for s in known_specs(game) if s not in not_seats]
    return specs + (["pretrained:farkle"] if game == "farkle" else [])


def reduced(spec: str) -> dict:
    """A best response is solved at reduced targets only (``TARGET_LIMITS``): it plays to 300
    with a bank minimum of 50 (its solve four times cheaper than at the default minimum)."""
    return {"target": 300, "bank_minimum": 50} if spec.startswith("best-response:") else {}


GAME_OF = {env_id: module for env_id, (module, _, _) in ENV_IDS.items()}
OPPONENT_CASES = [(env_id, spec) for env_id in IDS for spec in builtin_specs(GAME_OF[env_id])]


def fast(env_id: str) -> dict:
    """Rule parameters that keep Farkle episodes short."""
    return {"target": 1500} if "Farkle" in env_id else {}


def make(env_id: str, **kwargs):
    return gym.make(env_id, **{**fast(env_id), **kwargs}).unwrapped


def rollout(env, seed, policy_seed=None, record=False):
    """Play one episode with random legal actions; return (rewards, last info, trace)."""
    rng = np.random.default_rng(seed if policy_seed is None else policy_seed)
    obs, info = env.reset(seed=seed)
    rewards, trace = [], [(obs.copy(), info["seat"])]
    while True:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        if record:
            trace.append((obs.copy(), reward, terminated, truncated, action))
        if terminated or truncated:
            return rewards, info, trace


def test_ids_registered_with_vector_entry_points():
    for env_id, (_, cls, vector_cls) in ENV_IDS.items():
        spec = gym.spec(env_id)
        assert spec.entry_point.endswith(f":{cls}")
        assert spec.vector_entry_point == f"dice_envs.vector:{vector_cls}"
    assert set(IDS) == {
        "dice_envs/Spiffel-v0",
        "dice_envs/DicePoker-v0",
        "dice_envs/Yahtzee-v0",
        "dice_envs/Farkle-v1",
    }


def test_registration_is_idempotent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert register_envs() == []
        importlib.reload(dice_envs)
    assert all(env_id in gym.registry for env_id in IDS)


@pytest.mark.parametrize("opponents", OPPONENT_SETS, ids=["solitaire", "1opp", "2opp"])
@pytest.mark.parametrize("env_id", IDS)
def test_env_checkers(env_id, opponents):
    env = gym.make(env_id, opponents=opponents)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no checker warning at all
        check_env(env.unwrapped)
        sb3_check_env(env.unwrapped, warn=True)


@pytest.mark.parametrize("env_id", IDS)
def test_mask_is_the_engines_legal_actions(env_id):
    env = make(env_id, opponents=["random"], seat=1)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    steps = 0
    while True:
        g = env.game
        assert g.current_player == 1
        legal = g.legal_actions()
        mask = env.action_masks()
        assert mask.dtype == np.int8 and mask.shape == (env.action_space.n,)
        assert np.flatnonzero(mask).tolist() == legal
        np.testing.assert_array_equal(info["action_mask"], mask)
        np.testing.assert_array_equal(obs, encode(g, 1))
        obs, _, terminated, truncated, info = env.step(int(rng.choice(legal)))
        steps += 1
        if terminated or truncated:
            break
    assert steps > 10
    assert not info["action_mask"].any() and not env.action_masks().any()


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_episode_with_opponents(env_id):
    env_a = make(env_id, opponents=["random", "random"], reward="score")
    env_b = make(env_id, opponents=["random", "random"], reward="score")
    _, info_a, trace_a = rollout(env_a, seed=11, policy_seed=1, record=True)
    _, info_b, trace_b = rollout(env_b, seed=11, policy_seed=1, record=True)
    assert info_a["final_scores"].tolist() == info_b["final_scores"].tolist()
    assert trace_a[0][1] == trace_b[0][1]  # seat
    assert len(trace_a) == len(trace_b)
    for x, y in zip(trace_a[1:], trace_b[1:], strict=True):
        np.testing.assert_array_equal(x[0], y[0])
        assert x[1:] == y[1:]
    assert env_a.game.history == env_b.game.history  # opponents' moves included
    # another seed gives another game
    _, info_c, _ = rollout(env_a, seed=12, policy_seed=1)
    assert (
        env_a.game.history != env_b.game.history
        or info_c["final_scores"].tolist() != info_a["final_scores"].tolist()
    )


def test_seat_is_drawn_from_the_seed_and_can_be_fixed():
    env = make("dice_envs/Spiffel-v0", opponents=["random", "random"])
    seats = {env.reset(seed=s)[1]["seat"] for s in range(30)}
    assert seats == {0, 1, 2}
    assert [env.reset(seed=5)[1]["seat"] for _ in range(3)] == [env.reset(seed=5)[1]["seat"]] * 3
    fixed = make("dice_envs/Spiffel-v0", opponents=["random", "random"], seat=2)
    assert {fixed.reset(seed=s)[1]["seat"] for s in range(10)} == {2}


class RecordingAgent:
    """A deterministic opponent (highest legal action) that records its reset seeds."""

    def __init__(self):
        self.seeds = []

    def reset(self, seed=None):
        self.seeds.append(seed)

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[-1])


def test_agent_objects_are_used_as_is_and_reseeded():
    opp = RecordingAgent()
    env = make("dice_envs/Yahtzee-v0", opponents=[opp])
    assert env.opponents[0] is opp
    env.reset(seed=3)
    env.reset(seed=3)
    env.reset(seed=4)
    assert opp.seeds[0] == opp.seeds[1] != opp.seeds[2]
    assert all(isinstance(s, int) for s in opp.seeds)


@pytest.mark.parametrize(("env_id", "spec"), OPPONENT_CASES)
def test_builtin_opponents_play_inside_step(env_id, spec):
    if spec.startswith(("pretrained:", "planner:", "search:")):  # a shipped bot plays its card's rules
        env = gym.make(env_id, opponents=[spec], seat=0, reward="score")
    else:
        env = make(env_id, opponents=[spec], seat=0, reward="score", **reduced(spec))
    rewards, info, _ = rollout(env, seed=2)
    g = env.game
    assert g.done
    assert sum(rewards) == info["final_scores"][0] == g.totals()[0]
    assert info["final_scores"][1] == g.totals()[1]
    if hasattr(g, "cards"):
        assert all(v is not None for v in g.cards[1].boxes)  # the opponent filled its card
    else:
        assert g.turns[1] > 0 and any(ev.player == 1 and ev.kind == "set_aside" for ev in g.history)


@pytest.mark.parametrize("opponents", OPPONENT_SETS, ids=["solitaire", "1opp", "2opp"])
@pytest.mark.parametrize("env_id", IDS)
def test_score_reward_sums_to_final_total(env_id, opponents):
    env = make(env_id, opponents=opponents, reward="score")
    for seed in range(2):
        rewards, info, _ = rollout(env, seed)
        assert sum(rewards) == info["final_scores"][info["seat"]]
        assert info["final_scores"].tolist() == env.game.totals()
        assert np.flatnonzero(info["winners"]).tolist() == list(env.game.winners())
        assert env.encoding == ("farkle-v3" if "Farkle" in env_id else "scorecard-v1")


def test_score_reward_counts_bankruptcy_on_opponents_moves():
    """A Farkle bankruptcy of the learner happens on an opponent's step; it must reach the learner."""
    env = make("dice_envs/Farkle-v1", opponents=["random"], seat=1, reward="score", target=3000)
    bankrupt_episodes = 0
    for seed in range(25):
        env.reset(seed=seed)
        total = 0.0
        while True:
            mask = env.action_masks()
            banks = np.flatnonzero(mask[64:]) + 64
            action = int(banks[0]) if banks.size else int(np.flatnonzero(mask)[0])
            _obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            if terminated or truncated:
                break
        assert total == info["final_scores"][1]
        if any(ev.kind == "bankrupt" and ev.player == 1 for ev in env.game.history):
            bankrupt_episodes += 1
    assert bankrupt_episodes > 0


@pytest.mark.parametrize("env_id", IDS)
def test_win_reward(env_id):
    env = make(env_id, opponents=["random", "random"])
    assert env.reward_mode == "win"
    for seed in range(2):
        rewards, info, _ = rollout(env, seed)
        assert all(r == 0 for r in rewards[:-1])
        assert rewards[-1] == win_rewards(info["final_scores"])[info["seat"]]
    two = make(env_id, opponents=["random"])
    rewards, info, _ = rollout(two, 0)
    scores = info["final_scores"]
    me, other = scores[info["seat"]], scores[1 - info["seat"]]
    assert rewards[-1] == (1.0 if me > other else -1.0 if me < other else 0.0)


@pytest.mark.parametrize("env_id", IDS)
def test_illegal_action_raise_keeps_state(env_id):
    env = make(env_id, illegal_action="raise", opponents=["random"])
    obs, info = env.reset(seed=4)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    before = env.game.clone()
    with pytest.raises(ValueError, match=rf"illegal action {illegal} .*legal actions: \[") as exc:
        env.step(illegal)
    assert str(np.flatnonzero(info["action_mask"]).tolist()) in str(exc.value)
    assert env.game.summary() == before.summary() and env.game.dice == before.dice
    assert env.game.history == before.history
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"])
    with pytest.raises(ValueError, match="illegal action"):
        env.step(env.action_space.n + 3)
    obs2, *_ = env.step(int(np.flatnonzero(env.action_masks())[0]))  # still playable
    assert obs2.shape == obs.shape


@pytest.mark.parametrize("env_id", IDS)
def test_illegal_action_penalize(env_id):
    env = make(env_id, opponents=["random"], illegal_reward=-5.0)
    assert env.illegal_action == "penalize"
    obs, info = env.reset(seed=4)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    before = env.game.clone()
    obs2, reward, terminated, truncated, info2 = env.step(illegal)
    assert (reward, terminated, truncated) == (-5.0, True, False)
    assert info2["illegal_action"] == illegal and not info2["action_mask"].any()
    np.testing.assert_array_equal(obs2, obs)
    assert env.game.summary() == before.summary() and env.game.history == before.history
    with pytest.raises(RuntimeError, match="reset"):
        env.step(int(np.flatnonzero(info["action_mask"])[0]))
    env.reset(seed=4)
    assert env.action_masks().any()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"upper_bonus_treshold": 60}, r"unknown keyword 'upper_bonus_treshold'.*upper_bonus_threshold"),
        ({"opponents": ["random"], "num_players": 3}, "num_players=3 does not fit 1 opponents"),
        ({"reward": "money"}, "allowed: score, win"),
        ({"reward": "win"}, "at least 2 players"),
        ({"opponents": ["nobody"]}, "nobody"),
        ({"opponents": [42]}, "42"),
    ],
)
def test_bad_config(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        gym.make("dice_envs/Spiffel-v0", **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"illegal_action": "ignore"}, "allowed: penalize, raise"), ({"seat": 2}, r"seat must be.*\[0, 0\]")],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("dice_envs/Spiffel-v0", **kwargs)


def test_num_players_alone_means_random_opponents_and_rules_apply():
    env = make("dice_envs/DicePoker-v0", num_players=3, upper_bonus_threshold=70)
    assert len(env.opponents) == 2 and env.observation_space.shape == (92 + 2 * 17,)
    env.reset(seed=0)
    assert env.game.rules.upper_bonus_threshold == 70 and env.game.num_players == 3


@given(seed=st.integers(0, 2**32 - 1), n_opp=st.integers(0, 2))
@settings(max_examples=15, deadline=None)
def test_property_obs_and_mask_follow_the_engine(seed, n_opp):
    env = make("dice_envs/Spiffel-v0", opponents=["random"] * n_opp)
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    for _ in range(40):
        g = env.game
        assert np.flatnonzero(env.action_masks()).tolist() == g.legal_actions()
        np.testing.assert_array_equal(obs, encode(g, info["seat"]))
        obs, _, terminated, truncated, info = env.step(int(rng.choice(g.legal_actions())))
        if terminated or truncated:
            break


def test_rules_object_and_single_opponent_spec():
    from dice_envs.rules import FarkleRules, SpiffelRules

    env = make("dice_envs/Spiffel-v0", rules=SpiffelRules(upper_bonus_threshold=50), opponents="random")
    assert env.num_players == 2 and env.rules.upper_bonus_threshold == 50
    env.reset(seed=0)
    assert env.game.rules is env.rules
    with pytest.raises(ConfigError, match="rules for 'farkle' given to the spiffel env"):
        gym.make("dice_envs/Spiffel-v0", rules=FarkleRules())


def test_farkle_truncation_and_redeal():
    """With one turn per seat the learner's only turn may be a farkle: reset deals again."""
    from agents import RandomAgent

    class CountingRandom(RandomAgent):
        resets = 0

        def reset(self, seed=None):
            CountingRandom.resets += 1
            super().reset(seed)

    env = make("dice_envs/Farkle-v1", opponents=[CountingRandom()], seat=1, max_turns=1, reward="score")
    n_truncated = 0
    for seed in range(150):
        _, info = env.reset(seed=seed)
        assert env.action_masks().any() and env.game.current_player == 1 and not env.game.done
        total, terminated, truncated = 0.0, False, False
        while not (terminated or truncated):
            _, reward, terminated, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[-1]))
            total += reward
        assert info["truncated"] is truncated and total == info["final_scores"][1]
        n_truncated += truncated
    assert n_truncated > 0
    assert CountingRandom.resets > 150  # some games were dealt again
