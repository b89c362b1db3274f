"""PettingZoo AEC environments, one module per game (PettingZoo classic style).

>>> from dice_envs.multiagent import spiffel_v0
>>> env = spiffel_v0.env(num_players=3)
>>> env.reset(seed=1)
>>> env.possible_agents
['player_0', 'player_1', 'player_2']

Each module has ``env(num_players=2, render_mode=None, **kwargs)`` (wrapped) and ``raw_env``
(game logic only); :mod:`dice_envs.multiagent.base` holds the shared flow :class:`~.base.DiceAECEnv`.

The module of a retired env version (``farkle_v0``: its observation changed) is not served:
``from dice_envs.multiagent import farkle_v0`` raises ``ImportError`` naming ``farkle_v1``
(:meth:`dice_envs.games.GameSpec.retired_message`).
"""

from __future__ import annotations

from typing import Any

from ..games import GAME_SPECS
from . import dice_poker_v0, farkle_v1, spiffel_v0, yahtzee_v0
from .base import DiceAECEnv, win_rewards

__all__ = ["DiceAECEnv", "dice_poker_v0", "farkle_v1", "spiffel_v0", "win_rewards", "yahtzee_v0"]


def __getattr__(name: str) -> Any:
    """A retired module's name raises ``ImportError`` saying why and naming its replacement."""
    for spec in GAME_SPECS.values():
        for version in range(spec.version):
            if name == spec.versioned_aec_name(version):
                raise ImportError(spec.retired_message(version, pettingzoo=True), name=f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
