"""Native vectorised environments: many games stepped at once by table-driven numpy engines.

* the batched engines they step live one layer down, in :mod:`dice_envs.engine`
  (:func:`make_engine`, :class:`ScorecardEngine`, :class:`FarkleEngine`, the dice streams
  :class:`RandomDice` / :class:`ScriptedDice`); they are re-exported here;
* :mod:`.env` — Gymnasium ``VectorEnv``s :class:`SpiffelVectorEnv`, :class:`DicePokerVectorEnv`,
  :class:`YahtzeeVectorEnv`, :class:`FarkleVectorEnv` (``gym.make_vec("dice_envs/Spiffel-v0",
  num_envs=N)``);
* :mod:`.sb3` — :class:`~dice_envs.vector.sb3.SB3VecEnv`, the stable-baselines3 ``VecEnv``
  adapter (for sb3-contrib's ``MaskablePPO``); imports SB3 only when used.

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
