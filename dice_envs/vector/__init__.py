"""Native vectorised environments: many games stepped at once by table-driven numpy engines.

The Gymnasium vector envs of :mod:`.env` (``gym.make_vec(id, num_envs=N)``) and the
stable-baselines3 adapter :class:`~dice_envs.vector.sb3.SB3VecEnv` (imported on use); the batched
engines of :mod:`dice_envs.engine` they step are re-exported here.

>>> import numpy as np
>>> env = FarkleVectorEnv(num_envs=2, opponents=["random"], seat=0)
>>> obs, info = env.reset(seed=1)
>>> obs.shape, info["action_mask"].shape
((2, 52), (2, 128))
"""

from __future__ import annotations

from typing import Any

from ..engine import DiceStream, Engine, FarkleEngine, RandomDice, ScorecardEngine, ScriptedDice, make_engine
from .env import DicePokerVectorEnv, DiceVectorEnv, FarkleVectorEnv, SpiffelVectorEnv, YahtzeeVectorEnv

__all__ = [
    "DicePokerVectorEnv",
    "DiceStream",
    "DiceVectorEnv",
    "Engine",
    "FarkleEngine",
    "FarkleVectorEnv",
    "RandomDice",
    "SB3VecEnv",
    "ScorecardEngine",
    "ScriptedDice",
    "SpiffelVectorEnv",
    "YahtzeeVectorEnv",
    "make_engine",
]


def __getattr__(name: str) -> Any:
    if name == "SB3VecEnv":  # lazy: stable-baselines3 is an optional dependency
        from .sb3 import SB3VecEnv

        return SB3VecEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
