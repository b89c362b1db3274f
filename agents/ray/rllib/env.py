"""Every game's PettingZoo AEC env as an RLlib ``MultiAgentEnv`` (new API stack).

:class:`DiceMultiAgentEnv` drives each game's PettingZoo ``raw_env``
(:func:`dice_envs.games.raw_env_class`) and shows it to RLlib turn by turn:

* only the agent to move observes ``{"observations": float32, "action_mask": float32 0/1}``, so
  RLlib asks exactly that agent for an action;
* rewards go to every seat they concern on the step they happen (RLlib keeps a seat's reward
  until its next observation); at the end every seat gets its final observation, reward and
  ``terminated`` (or ``truncated``: Farkle's ``max_turns``);
* an illegal action: ``illegal_action="penalize"`` (default; RLlib's env checker steps a random
  action) ends the game with ``illegal_reward`` for the offender (:mod:`dice_envs.outcome`);
  ``"raise"`` raises the raw env's ``ValueError``, so a policy that samples one stops the run.

``env_config``: ``game`` (required), ``num_players`` (default 2), ``reward``,
``illegal_action``, ``illegal_reward`` and any rule parameter.

>>> env = DiceMultiAgentEnv({"game": "farkle", "num_players": 2, "target": 1000})
>>> obs, infos = env.reset(seed=0)
>>> list(obs), sorted(obs["player_0"])
(['player_0'], ['action_mask', 'observations'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from dice_envs.games import GAME_SPECS, raw_env_class
from dice_envs.multiagent.base import DiceAECEnv
from dice_envs.options import ILLEGAL_ACTION_MODES, check_illegal_action
from dice_envs.outcome import is_legal, step_outcome
from dice_envs.rules import GAMES, ConfigError

__all__ = ["ILLEGAL_ACTION_MODES", "DiceMultiAgentEnv"]


class DiceMultiAgentEnv(MultiAgentEnv):
    """One dice game as an RLlib multi-agent env (see the module docstring)."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        params = dict(config or {})
        game = params.pop("game", None)
        if game not in GAME_SPECS:
            raise ConfigError(f"env_config needs 'game', one of {', '.join(GAMES)}; got {game!r}")
        num_players = params.pop("num_players", 2)
        self.illegal_action = check_illegal_action(params.pop("illegal_action", "penalize"))
        self.illegal_reward = float(params.pop("illegal_reward", -1.0))
        #: Illegal actions this env has seen (penalize mode) since it was made.
        self.illegal_actions = 0
        self._over = True
        self.aec: DiceAECEnv = raw_env_class(game)(num_players=num_players, **params)
        self.possible_agents = list(self.aec.possible_agents)
        self.agents = list(self.possible_agents)
        self.action_spaces = {a: self.aec.action_space(a) for a in self.possible_agents}
        mask = gym.spaces.Box(0.0, 1.0, (int(self.action_spaces["player_0"].n),), np.float32)
        features = {a: self.aec.observation_space(a)["observation"] for a in self.possible_agents}
        self.observation_spaces = {
            a: gym.spaces.Dict({"observations": space, "action_mask": mask}) for a, space in features.items()
        }
        # Kept for RLlib's env checker and for older code that reads the joint spaces.
        self.observation_space = gym.spaces.Dict(self.observation_spaces)
        self.action_space = gym.spaces.Dict(self.action_spaces)

    @property
    def rules(self) -> Any:
        """The rule configuration of the game."""
        return self.aec.rules

    @property
    def num_players(self) -> int:
        return self.aec.num_players

    def _obs(self, agent: str) -> dict[str, np.ndarray]:
        o = self.aec.observe(agent)
        return {
            "observations": np.asarray(o["observation"], dtype=np.float32),
            "action_mask": np.asarray(o["action_mask"], dtype=np.float32),
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self.aec.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        self._over = False
        # the agent to move; everyone when the game ended before any decision (degenerate rules only)
        agents = self.possible_agents if self.aec.game.done else [self.aec.agent_selection]
        return {a: self._obs(a) for a in agents}, {a: dict(self.aec.infos[a]) for a in agents}

    def step(
        self, action_dict: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        agent = self.aec.agent_selection
        if self._over or self.aec.game is None or self.aec.game.done:
            raise RuntimeError("step() after the game ended; call reset()")
        if agent not in action_dict:
            raise ValueError(f"it is {agent}'s turn; got actions for {sorted(action_dict)}")
        extra = sorted(set(action_dict) - {agent})
        if extra:
            raise ValueError(f"only {agent} may act now; got actions also for {extra}")
        action = int(np.asarray(action_dict[agent]).item())
        if self.illegal_action == "penalize" and not is_legal(action, self.aec.action_mask(agent)):
            return self._penalize(agent, action)
        self.aec.step(action)  # the raw env's check: ValueError naming the legal actions
        rewards = {a: float(r) for a, r in self.aec.rewards.items() if r != 0.0}
        if self.aec.game.done:  # the raw env set the end's rewards and flags (dice_envs.outcome)
            everyone = self.possible_agents
            obs = {a: self._obs(a) for a in everyone}
            rewards = {a: float(self.aec.rewards[a]) for a in everyone}
            terms = {a: bool(self.aec.terminations[a]) for a in everyone}
            truncs = {a: bool(self.aec.truncations[a]) for a in everyone}
            terms["__all__"], truncs["__all__"] = all(terms.values()), all(truncs.values())
            infos = {a: dict(self.aec.infos[a]) for a in everyone}
            self._over = True
            return obs, rewards, terms, truncs, infos
        nxt = self.aec.agent_selection
        rewards.setdefault(nxt, 0.0)
        going = {"__all__": False}
        return {nxt: self._obs(nxt)}, rewards, going, dict(going), {nxt: dict(self.aec.infos[nxt])}

    def _penalize(self, offender: str, action: int) -> tuple[Any, ...]:
        self.illegal_actions += 1
        self._over = True
        end = step_outcome(
            self.num_players, illegal=True, actor=self.aec.seat(offender), illegal_reward=self.illegal_reward
        )
        everyone = self.possible_agents
        obs = {a: self._obs(a) for a in everyone}
        rewards = {a: float(end.rewards[i]) for i, a in enumerate(everyone)}
        terms = {a: bool(end.terminated) for a in everyone}
        truncs = {a: bool(end.truncated) for a in everyone}
        terms["__all__"], truncs["__all__"] = bool(end.terminated), bool(end.truncated)
        legal = np.flatnonzero(self.aec.action_mask(offender)).tolist()
        info = {**self.aec.infos[offender], "illegal_action": action, "offender": offender, "legal": legal}
        return obs, rewards, terms, truncs, {a: dict(info) for a in everyone}

    def render(self) -> str | None:
        return self.aec.render()
