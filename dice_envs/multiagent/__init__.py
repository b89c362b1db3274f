"""PettingZoo AEC environments, one module per game (PettingZoo classic style).

>>> from dice_envs.multiagent import spiffel_v0
>>> env = spiffel_v0.env(num_players=3)
>>> env.reset(seed=1)
>>> env.possible_agents
['player_0', 'player_1', 'player_2']

Each module has ``env(num_players=2, render_mode=None, **kwargs)`` (wrapped) and ``raw_env``
(game logic only); :mod:`.base` holds the shared flow :class:`~.base.DiceAECEnv`.
"""

from __future__ import annotations

from . import dice_poker_v0, farkle_v0, spiffel_v0, yahtzee_v0
from .base import DiceAECEnv, win_rewards

__all__ = ["DiceAECEnv", "dice_poker_v0", "farkle_v0", "spiffel_v0", "win_rewards", "yahtzee_v0"]
