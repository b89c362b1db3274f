"""PettingZoo AEC env of Yahtzee (``from dice_envs.multiagent import yahtzee_v0``).

Agents ``player_0 .. player_{N-1}`` play the game of :mod:`dice_envs.envs.yahtzee` (rule
parameters of :class:`dice_envs.rules.YahtzeeRules`); the flow is :mod:`dice_envs.multiagent.base`'s.

>>> e = env(num_players=2)
>>> e.reset(seed=0)
>>> e.agent_selection, int(e.action_space("player_0").n)
('player_0', 45)
>>> e.observation_space("player_0")["observation"].shape
(101,)
"""

from __future__ import annotations

from typing import Any, ClassVar

from pettingzoo import AECEnv

from .base import DiceAECEnv, make_env

__all__ = ["env", "raw_env"]


class raw_env(DiceAECEnv):
    """Yahtzee game logic (no wrappers); see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {**DiceAECEnv.metadata, "name": "yahtzee_v0"}
    game_name: ClassVar[str] = "yahtzee"


def env(**kwargs: Any) -> AECEnv:
    """The wrapped Yahtzee env (:func:`~dice_envs.multiagent.base.make_env`, same keywords)."""
    return make_env(raw_env, **kwargs)
