"""Registration of the Gymnasium ids (called once from ``dice_envs/__init__.py``).

* ``dice_envs/Spiffel-v0``: ``dice_envs.envs.spiffel:SpiffelEnv``,
  vector ``dice_envs.vector:SpiffelVectorEnv``
* ``dice_envs/DicePoker-v0``: ``dice_envs.envs.dice_poker:DicePokerEnv``,
  vector ``dice_envs.vector:DicePokerVectorEnv``
* ``dice_envs/Yahtzee-v0``: ``dice_envs.envs.yahtzee:YahtzeeEnv``,
  vector ``dice_envs.vector:YahtzeeVectorEnv``
* ``dice_envs/Farkle-v0``: ``dice_envs.envs.farkle:FarkleEnv``,
  vector ``dice_envs.vector:FarkleVectorEnv``

``gym.make`` returns the env unwrapped (no order-enforcing or passive-checker wrapper), so
``env.action_masks()`` is reachable directly.

Entry points are strings, so registering imports nothing but Gymnasium; re-registering is a
no-op (safe on re-import).
"""

from __future__ import annotations

import gymnasium as gym

__all__ = ["ENV_IDS", "register_envs"]

#: id → (module, class name, vector class name).
ENV_IDS: dict[str, tuple[str, str, str]] = {
    "dice_envs/Spiffel-v0": ("spiffel", "SpiffelEnv", "SpiffelVectorEnv"),
    "dice_envs/DicePoker-v0": ("dice_poker", "DicePokerEnv", "DicePokerVectorEnv"),
    "dice_envs/Yahtzee-v0": ("yahtzee", "YahtzeeEnv", "YahtzeeVectorEnv"),
    "dice_envs/Farkle-v0": ("farkle", "FarkleEnv", "FarkleVectorEnv"),
}


def register_envs() -> list[str]:
    """Register every id not registered yet; return the ids registered by this call."""
    added = []
    for env_id, (module, cls, vector_cls) in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=f"dice_envs.envs.{module}:{cls}",
            vector_entry_point=f"dice_envs.vector:{vector_cls}",
            # gym.make then returns the env itself, so ``env.action_masks()`` works as sb3-contrib
            # and users expect (Gymnasium 1.x wrappers no longer forward attributes). The env
            # enforces reset-before-step itself and passes the env checkers (see tests).
            order_enforce=False,
            disable_env_checker=True,
        )
        added.append(env_id)
    return added
