"""PettingZoo AEC env of Dice Poker (``from dice_envs.multiagent import dice_poker_v0``).

Agents ``player_0 .. player_{N-1}`` play the game of :mod:`dice_envs.envs.dice_poker` (rule
parameters of :class:`dice_envs.rules.DicePokerRules`); the flow is :mod:`dice_envs.multiagent.base`'s.

>>> e = env(num_players=2)
>>> e.reset(seed=0)
>>> e.agent_selection, int(e.action_space("player_0").n)
('player_0', 47)
>>> e.observation_space("player_0")["observation"].shape
(109,)
"""

from __future__ import annotations

from typing import Any, ClassVar

from pettingzoo import AECEnv

from .base import DiceAECEnv, make_env

__all__ = ["env", "raw_env"]


class raw_env(DiceAECEnv):
    """Dice Poker game logic (no wrappers); see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {**DiceAECEnv.metadata, "name": "dice_poker_v0"}
    game_name: ClassVar[str] = "dice_poker"


def env(**kwargs: Any) -> AECEnv:
    """The wrapped Dice Poker env (:func:`~dice_envs.multiagent.base.make_env`, same keywords)."""
    return make_env(raw_env, **kwargs)
