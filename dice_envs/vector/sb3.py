"""A stable-baselines3 ``VecEnv`` over a native vector env (for sb3-contrib's ``MaskablePPO``).

SB3 steps ``VecEnv``\\ s with same-step autoreset and a list of info dicts, the finished
episode's last observation in ``info["terminal_observation"]``. :class:`SB3VecEnv` adapts a
:class:`~dice_envs.vector.env.DiceVectorEnv` (built in ``"same_step"`` mode) to that API, and
answers ``env_method("action_masks")`` with all games' masks at once, which is what
``sb3_contrib.common.maskable.utils.get_action_masks`` asks for. stable-baselines3 is imported
only when this module is.

>>> venv = SB3VecEnv("spiffel", num_envs=8)
>>> venv.seed(0)
[0, 1, 2, 3, 4, 5, 6, 7]
>>> obs = venv.reset()
>>> obs.shape, venv.env_method("action_masks").shape
((8, 86), (8, 45))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from ..games import vector_env_class
from .env import DiceVectorEnv

__all__ = ["SB3VecEnv"]


class SB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` of ``num_envs`` games of ``game`` (a name, or a ready :class:`DiceVectorEnv`).

    Keyword arguments go to the vector env (rule parameters, ``opponents``, ``seat``,
    ``reward``, ...); ``autoreset_mode`` is always ``"same_step"``.
    """

    def __init__(self, game: str | DiceVectorEnv, num_envs: int = 1, **kwargs: Any) -> None:
        if isinstance(game, DiceVectorEnv):
            if kwargs:
                raise ValueError(f"options {sorted(kwargs)} are ignored when a vector env is given")
            if game.autoreset_mode != gym.vector.AutoresetMode.SAME_STEP:
                raise ValueError("SB3VecEnv needs a vector env with autoreset_mode='same_step'")
            self.venv = game
        else:
            cls = vector_env_class(game)
            self.venv = cls(num_envs=num_envs, autoreset_mode="same_step", **kwargs)
        super().__init__(
            self.venv.num_envs, self.venv.single_observation_space, self.venv.single_action_space
        )
        self._actions: np.ndarray | None = None

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        obs, _info = self.venv.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, terminations, truncations, info = self.venv.step(self._actions)
        dones = terminations | truncations
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final_obs = info["final_obs"]
            final = info["final_info"]
            for i in np.flatnonzero(dones):
                d = infos[i]
                d["terminal_observation"] = final_obs[i]
                d["TimeLimit.truncated"] = bool(truncations[i] and not terminations[i])
                d["final_scores"] = final["final_scores"][i].tolist()
                if "illegal_action" in final and final["illegal_action"][i]:
                    d["illegal_action"] = True
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.venv, attr_name)  # AttributeError when missing (has_attr relies on it)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> Sequence[Any]:
        """``"action_masks"``: the masks of the selected games, ``(n, n_actions)`` int8 (a
        sequence of per-game masks, as ``get_action_masks`` stacks them). Other methods are
        called once on the vector env and the result repeated per game."""
        if method_name == "action_masks":
            masks = self.venv.action_masks()
            return masks if indices is None else masks[self._indices(indices)]
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def action_masks(self) -> np.ndarray:
        """All games' masks, ``(num_envs, n_actions)`` int8."""
        return self.venv.action_masks()

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None for _ in range(self.num_envs)]
