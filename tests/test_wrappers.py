"""SingleAgentEnv: generic over AEC envs, opponents inside step(), reward accumulation, seeding."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from pettingzoo import AECEnv

from agents import RandomAgent
from dice_envs.multiagent import farkle_v1, spiffel_v0
from dice_envs.wrappers import SingleAgentEnv


class Nim(AECEnv):
    """A toy AEC game unrelated to dice: take 1-3 stones in turn, who takes the last wins.

    Flat observations with the mask in ``info`` (the other PettingZoo convention), a reward to
    *both* seats on every move (+1 stone taken to the mover, -1 to the other) and +10/-10 at the end.
    """

    metadata: ClassVar[dict] = {"render_modes": [], "name": "nim"}

    def __init__(self, stones=10):
        super().__init__()
        self.stones0 = stones
        self.possible_agents = ["a", "b"]
        self._obs = {a: spaces.Box(0, stones, (1,), np.float32) for a in self.possible_agents}
        self._act = {a: spaces.Discrete(4) for a in self.possible_agents}

    def observation_space(self, agent):
        return self._obs[agent]

    def action_space(self, agent):
        return self._act[agent]

    def _mask(self):
        return np.array([0] + [int(k <= self.stones) for k in (1, 2, 3)], dtype=np.int8)

    def reset(self, seed=None, options=None):
        self.stones = self.stones0
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.agent_selection = "a"
        self.infos = {"a": {"action_mask": self._mask()}, "b": {}}

    def observe(self, agent):
        return np.array([self.stones], dtype=np.float32)

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent]:
            self._was_dead_step(action)
            return
        assert self._mask()[action], f"illegal {action}"
        other = "b" if agent == "a" else "a"
        self.stones -= action
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {agent: float(action), other: -float(action)}
        if self.stones == 0:
            self.rewards[agent] += 10.0
            self.rewards[other] -= 10.0
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = other
        self.infos = {agent: {}, other: {"action_mask": self._mask()}}
        self._accumulate_rewards()


class TakeOne:
    def act(self, observation, action_mask):
        assert action_mask[1] == 1
        return 1


def test_generic_over_a_non_dice_aec_env_with_info_masks():
    env = SingleAgentEnv(Nim(10), [TakeOne()], seat=0)
    obs, info = env.reset(seed=0)
    assert obs.tolist() == [10.0] and info["action_mask"].tolist() == [0, 1, 1, 1]
    # learner takes 3 (+3), opponent takes 1 (-1 to the learner): reward of the step = 2
    obs, reward, terminated, _, info = env.step(3)
    assert obs.tolist() == [6.0] and reward == 2.0 and not terminated
    obs, reward, terminated, _, _ = env.step(3)  # 6 -> 3 -> 2
    assert obs.tolist() == [2.0] and reward == 2.0
    obs, reward, terminated, _, info = env.step(2)  # takes the last two: +2 +10
    assert terminated and reward == 12.0 and not info["action_mask"].any()


def test_rewards_arriving_on_the_opponents_move_are_counted():
    env = SingleAgentEnv(Nim(5), [TakeOne()], seat=0)
    env.reset(seed=0)
    obs, reward, terminated, _, _ = env.step(3)  # 5 -> 2 -> 1: +3 -1
    assert reward == 2.0 and not terminated
    # seat 1: the opponent moves first (inside reset); its move's reward is carried into step 1
    env = SingleAgentEnv(Nim(2), [TakeOne()], seat=1)
    obs, _info = env.reset(seed=0)
    assert obs.tolist() == [1.0]
    _, reward, terminated, _, _ = env.step(1)  # -1 (carried) + 1 + 10
    assert terminated and reward == 10.0
    # the opponent takes the last stone: the learner's -10 arrives on the opponent's move
    env = SingleAgentEnv(Nim(2), [TakeOne()], seat=0)
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(1)
    assert terminated and reward == 1.0 - 1.0 - 10.0


def test_check_env_on_the_generic_wrapper():
    check_env(SingleAgentEnv(spiffel_v0.raw_env(num_players=2), [RandomAgent()]), skip_render_check=True)


def test_opponents_fill_the_other_seats_in_order():
    seen = {}

    class Spy:
        def __init__(self, name):
            self.name = name

        def act(self, observation, action_mask):
            seen.setdefault(self.name, set()).add(env.aec.game.current_player)
            return int(np.flatnonzero(action_mask)[-1])

    env = SingleAgentEnv(spiffel_v0.raw_env(num_players=3), [Spy("x"), Spy("y")], seat=1)
    env.reset(seed=0)
    while True:
        *_, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[-1]))
        if terminated or truncated:
            break
    assert seen == {"x": {0}, "y": {2}}


def test_seed_replays_dice_opponents_and_seat():
    def episode(seed):
        env = SingleAgentEnv(farkle_v1.raw_env(num_players=3, target=1000), [RandomAgent(), RandomAgent()])
        env.reset(seed=seed)
        actions = []
        while True:
            a = int(np.flatnonzero(env.action_masks())[0])
            actions.append(a)
            _obs, _r, te, tr, info = env.step(a)
            if te or tr:
                return info["seat"], env.aec.game.history, info["final_scores"].tolist()

    assert episode(7) == episode(7)
    assert episode(7) != episode(8)


def test_opponent_illegal_action_names_the_opponent():
    class Cheater:
        def act(self, observation, action_mask):
            return 0

        def __repr__(self):
            return "Cheater()"

    env = SingleAgentEnv(spiffel_v0.raw_env(num_players=2), [Cheater()], seat=1)
    with pytest.raises(ValueError, match=r"opponent Cheater\(\) in seat player_0 chose an illegal action"):
        env.reset(seed=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"opponents": []}, "2 seats need 1 opponents, got 0"),
        ({"opponents": [object()]}, "has no act"),
        ({"opponents": [TakeOne()], "seat": 5}, "seat must be"),
        ({"opponents": [TakeOne()], "seat": True}, "seat must be"),
        ({"opponents": [TakeOne()], "illegal_action": "skip"}, "allowed: penalize, raise"),
    ],
)
def test_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SingleAgentEnv(Nim(), **kwargs)


def test_step_before_reset_is_an_error():
    env = SingleAgentEnv(Nim(), [TakeOne()])
    with pytest.raises(RuntimeError, match="reset"):
        env.step(1)
