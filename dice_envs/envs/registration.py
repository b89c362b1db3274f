"""Registration of the Gymnasium ids (called once from ``dice_envs/__init__.py``).

Every game of :data:`dice_envs.games.GAME_SPECS` is registered under its ``env_id``, with its
Gymnasium class and native vector env as entry points (strings: registering imports nothing but
Gymnasium; re-registering is a no-op). A retired id (``dice_envs/Farkle-v0``) stays registered
with an entry point that raises ``gymnasium.error.DeprecatedEnv`` saying why and naming the
served id. ``gym.make`` returns the env unwrapped, so ``env.action_masks()`` is reachable.
"""

from __future__ import annotations

import functools
from typing import Any, NoReturn

import gymnasium as gym

from ..games import GAME_SPECS, GameSpec

__all__ = ["ENV_IDS", "register_envs"]


def _module_and_class(path: str) -> tuple[str, str]:
    """``("spiffel", "SpiffelEnv")`` of ``"dice_envs.envs.spiffel:SpiffelEnv"``."""
    module, _, cls = path.partition(":")
    return module.rpartition(".")[2], cls


#: id → (module of :mod:`dice_envs.envs`, class name, vector class name), from :data:`GAME_SPECS`.
ENV_IDS: dict[str, tuple[str, str, str]] = {
    s.env_id: (*_module_and_class(s.env_class), _module_and_class(s.vector_class)[1])
    for s in GAME_SPECS.values()
}


def _retired(spec: GameSpec, version: int, *args: Any, **kwargs: Any) -> NoReturn:
    """The entry point of a retired id: raises ``DeprecatedEnv`` naming the id that replaces it."""
    raise gym.error.DeprecatedEnv(spec.retired_message(version))


def register_envs() -> list[str]:
    """Register every id not registered yet; return the ids registered by this call."""
    added = []
    for spec in GAME_SPECS.values():
        for version, env_id in enumerate(spec.retired_env_ids):
            if env_id not in gym.registry:
                retired = functools.partial(_retired, spec, version)
                gym.register(id=env_id, entry_point=retired, vector_entry_point=retired)
                added.append(env_id)
        env_id = spec.env_id
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=spec.env_class,
            vector_entry_point=spec.vector_class,
            # gym.make then returns the env itself, so ``env.action_masks()`` works as sb3-contrib
            # and users expect (Gymnasium 1.x wrappers no longer forward attributes). The env
            # enforces reset-before-step itself and passes the env checkers (see tests).
            order_enforce=False,
            disable_env_checker=True,
        )
        added.append(env_id)
    return added
