"""Any PettingZoo AEC env plus opponent agents, seen from one seat as a Gymnasium env.

:class:`SingleAgentEnv` needs only the AEC API. The opponents play their turns inside
:meth:`~SingleAgentEnv.step`, and the learner's reward sums its AEC rewards over all those
moves. ``reset(seed=)`` seeds the learner's seat, the dice and every opponent from one
generator. Illegal actions follow :mod:`dice_envs.outcome`'s rule (``"penalize"`` by default,
so the random actions env checkers send are safe); a non-integer is refused in either mode.

>>> from dice_envs.multiagent import farkle_v1
>>> env = SingleAgentEnv(farkle_v1.raw_env(num_players=2), ["random"], seat=1)
>>> obs, info = env.reset(seed=0)
>>> info["seat"], obs.shape, int(env.action_masks().sum()) > 0
(1, (52,), True)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .checks import as_action, check_illegal_reward, check_seed, reset_needed
from .opponents import as_opponent_list, resolve_opponents
from .options import check_illegal_action, check_seat
from .outcome import illegal_action_error, is_legal, step_outcome

__all__ = ["SingleAgentEnv"]

_MAX_REDEALS = 1000


class SingleAgentEnv(gym.Env):
    """A Gymnasium env: one seat of ``aec_env``, the other seats played by ``opponents``.

    Args:
        aec_env: a PettingZoo AEC env (unwrapped game logic is best: this wrapper handles
            illegal actions itself).
        opponents: one agent per other seat (``act(observation, action_mask) -> int``) or an
            agent spec string, as ``gym.make`` takes them (``"heuristic"``, ``"pretrained:farkle"``,
            a model path; :mod:`dice_envs.opponents`); they take the other seats in seat order.
        seat: the learner's seat, or ``None`` for a random seat each episode.
        illegal_action: ``"penalize"`` or ``"raise"`` (see the module docstring).
        illegal_reward: the reward of an illegal action under ``"penalize"``.

    A refused ``seat``, ``illegal_action`` or ``illegal_reward`` is a ``ConfigError``, as in
    :mod:`dice_envs.options`.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        aec_env: Any,
        opponents: Sequence[Any] = (),
        seat: int | None = None,
        illegal_action: str = "penalize",
        illegal_reward: float = -1.0,
    ) -> None:
        self.aec = aec_env
        self.possible_agents = list(aec_env.possible_agents)
        n = len(self.possible_agents)
        self.opponents = list(as_opponent_list(opponents))
        if len(self.opponents) != n - 1:
            raise ValueError(
                f"{n} seats need {n - 1} opponents, got {len(self.opponents)}: {self.opponents!r}"
            )
        if any(isinstance(o, (str, Path)) for o in self.opponents):
            # The same specs as gym.make: resolved by the opponent registry for this game's rules.
            rules = getattr(getattr(aec_env, "unwrapped", aec_env), "rules", None)
            if rules is None:
                raise ValueError(
                    f"opponent specs {self.opponents!r} need a dice-envs AEC env (one with .rules); "
                    "pass agent objects with act(observation, action_mask) for other envs"
                )
            self.opponents = resolve_opponents(self.opponents, rules, n)
        for o in self.opponents:
            if not callable(getattr(o, "act", None)):
                raise ValueError(f"opponent {o!r} has no act(observation, action_mask) method")
        self.fixed_seat = check_seat(seat, n)
        self.illegal_action = check_illegal_action(illegal_action)
        self.illegal_reward = check_illegal_reward(illegal_reward)
        space = aec_env.observation_space(self.possible_agents[0])
        self._dict_obs = isinstance(space, spaces.Dict) and "observation" in space.spaces
        self.observation_space = space["observation"] if self._dict_obs else space
        self.action_space = aec_env.action_space(self.possible_agents[0])
        self.render_mode = getattr(aec_env, "render_mode", None)
        #: The observation encoding's id (``"scorecard-v1"``, ...) where the AEC env names one.
        self.encoding = getattr(getattr(aec_env, "unwrapped", aec_env), "encoding", None)
        if self.encoding is not None:
            self.metadata = {**type(self).metadata, "encoding": self.encoding}
        self.seat = self.fixed_seat if self.fixed_seat is not None else 0
        self._learner = self.possible_agents[self.seat]
        self._seat_opponent: dict[str, Any] = {}
        self._obs: np.ndarray | None = None
        self._mask: np.ndarray = np.zeros(self._n_actions(), dtype=np.int8)
        self._over = True
        self._carry = 0.0

    # ------------------------------------------------------------------ helpers
    def _n_actions(self) -> int:
        return int(getattr(self.action_space, "n", 0))

    def _split(self, agent: str) -> tuple[np.ndarray, np.ndarray]:
        raw = self.aec.observe(agent)
        if self._dict_obs:
            return np.asarray(raw["observation"]), np.asarray(raw["action_mask"], dtype=np.int8)
        mask = self.aec.infos.get(agent, {}).get("action_mask")
        if mask is None:
            mask = np.ones(self._n_actions(), dtype=np.int8)
        return np.asarray(raw), np.asarray(mask, dtype=np.int8)

    def _game_over(self) -> bool:
        a = self._learner
        return a not in self.aec.agents or self.aec.terminations[a] or self.aec.truncations[a]

    def _learner_reward(self) -> float:
        return float(self.aec.rewards.get(self._learner, 0.0))

    def _play_opponents(self) -> float:
        """Let the opponents move until the learner must decide or the game ends."""
        gained = 0.0
        while not self._game_over() and self.aec.agent_selection != self._learner:
            agent = self.aec.agent_selection
            obs, mask = self._split(agent)
            opponent = self._seat_opponent[agent]
            action = opponent.act(obs, mask)
            try:
                self.aec.step(action)
            except ValueError as e:
                raise ValueError(f"opponent {opponent!r} in seat {agent} chose an illegal action: {e}") from e
            gained += self._learner_reward()
        return gained

    def _info(self) -> dict[str, Any]:
        info = {
            k: (v.copy() if isinstance(v, np.ndarray) else list(v) if isinstance(v, list) else v)
            for k, v in self.aec.infos[self._learner].items()
        }
        info["seat"] = self.seat
        info["action_mask"] = self._mask.copy()
        return info

    def _observe_learner(self) -> np.ndarray:
        obs, mask = self._split(self._learner)
        self._obs = obs
        self._mask = mask.copy() if not self._game_over() else np.zeros_like(mask)
        return obs.copy()

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=check_seed(seed))
        n = len(self.possible_agents)
        for _ in range(_MAX_REDEALS):
            seat = int(self.np_random.integers(n))
            seeds = self.np_random.integers(0, 2**63 - 1, size=n, dtype=np.int64)
            self.seat = self.fixed_seat if self.fixed_seat is not None else seat
            self._learner = self.possible_agents[self.seat]
            others = [a for a in self.possible_agents if a != self._learner]
            self._seat_opponent = dict(zip(others, self.opponents, strict=True))
            self.aec.reset(seed=int(seeds[0]))
            for opponent, s in zip(self.opponents, seeds[1:], strict=True):
                if callable(getattr(opponent, "reset", None)):
                    opponent.reset(seed=int(s))
            self._carry = self._learner_reward() + self._play_opponents()
            if not self._game_over():
                break
            # The game ended before the learner had a decision (only with degenerate rules,
            # e.g. a tiny Farkle max_turns): deal again from the same generator.
        else:  # pragma: no cover - needs rules where the learner never gets a decision
            raise RuntimeError(f"the learner never got a decision in {_MAX_REDEALS} games")
        self._over = False
        obs = self._observe_learner()
        return obs, self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._obs is None:
            raise RuntimeError(reset_needed("step"))
        if self._over:
            raise RuntimeError("the episode is over; call reset() before step()")
        a = as_action(action)  # TypeError / ValueError for a non-integer, whatever the mode
        if not is_legal(a, self._mask):
            if self.illegal_action == "raise":
                raise illegal_action_error(action, self._mask, f" for seat {self.seat}")
            end = step_outcome(
                len(self.possible_agents), illegal=True, actor=self.seat, illegal_reward=self.illegal_reward
            )
            self._over = True
            info = self._info()
            info["illegal_action"] = action
            info["action_mask"] = np.zeros_like(self._mask)
            assert self._obs is not None
            reward = float(end.rewards[self.seat])
            return self._obs.copy(), reward, bool(end.terminated), bool(end.truncated), info
        self.aec.step(a)
        reward = self._carry + self._learner_reward()
        self._carry = 0.0
        reward += self._play_opponents()
        obs = self._observe_learner()
        terminated = truncated = False
        if self._game_over():
            self._over = True
            terminated = bool(self.aec.terminations.get(self._learner, True))
            truncated = bool(self.aec.truncations.get(self._learner, False))
        return obs, float(reward), terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's int8 action mask (sb3-contrib's ``MaskablePPO`` calls this)."""
        if self._obs is None:
            raise RuntimeError(reset_needed("action_masks"))
        return self._mask.copy()

    def render(self) -> Any:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
