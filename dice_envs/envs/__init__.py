"""Gymnasium environments, one module per game, registered as ``dice_envs/<Game>-v0``.

>>> import gymnasium as gym
>>> import dice_envs
>>> env = gym.make("dice_envs/Spiffel-v0")
>>> obs, info = env.reset(seed=0)
>>> int(info["action_mask"].sum()) > 0
True

The classes (``SpiffelEnv``, ``DicePokerEnv``, ``YahtzeeEnv``, ``FarkleEnv``) are imported on first
use, so that ``import dice_envs`` (which registers the ids) stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

from .registration import ENV_IDS, register_envs

__all__ = ["ENV_IDS", "DiceEnv", "DicePokerEnv", "FarkleEnv", "SpiffelEnv", "YahtzeeEnv", "register_envs"]

_LAZY = {cls: module for module, cls, _ in ENV_IDS.values()} | {"DiceEnv": "base"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
