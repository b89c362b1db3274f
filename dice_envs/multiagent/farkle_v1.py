"""PettingZoo AEC env of Farkle (``from dice_envs.multiagent import farkle_v1``).

Agents ``player_0 .. player_{N-1}`` play the game of :mod:`dice_envs.envs.farkle` (rule
parameters of :class:`dice_envs.rules.FarkleRules`); the flow is :mod:`dice_envs.multiagent.base`'s.

Throws needing no decision (opening throws, farkles, bankruptcies) are played by the
engine. Version history: :mod:`dice_envs.envs.farkle`'s; the retired ``farkle_v0`` raises
``ImportError`` naming ``farkle_v1``.

>>> e = env(num_players=3, target=2000)
>>> e.reset(seed=0)
>>> int(e.action_space("player_0").n), e.observation_space("player_0")["observation"].shape
(128, (54,))
"""

from __future__ import annotations

from typing import Any, ClassVar

from pettingzoo import AECEnv

from .base import DiceAECEnv, make_env

__all__ = ["env", "raw_env"]


class raw_env(DiceAECEnv):
    """Farkle game logic (no wrappers); see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {**DiceAECEnv.metadata, "name": "farkle_v1"}
    game_name: ClassVar[str] = "farkle"


def env(**kwargs: Any) -> AECEnv:
    """The wrapped Farkle env (:func:`~dice_envs.multiagent.base.make_env`, same keywords)."""
    return make_env(raw_env, **kwargs)
