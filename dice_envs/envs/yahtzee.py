"""Gymnasium env of Yahtzee: ``gym.make("dice_envs/Yahtzee-v0")``.

=====================  ==================================================================
Action space           ``Discrete(45)``: ``1..31`` re-throw the dice whose bits are set
                       (positions in the sorted dice), ``32 + k`` enter the throw in box ``k``
                       (:data:`dice_envs.rules.yahtzee.CATEGORIES`); ``0`` never legal
Observation space      ``Box(float32, (86 + 15·(N-1),))``: :func:`dice_envs.encoding.encode` from the
                       learner's seat (``scorecard-v1``), ``N`` = number of players
Episode                the learner's 13 rounds (with opponents: until every seat filled
                       its card); opponents move inside ``step()``
=====================  ==================================================================

>>> env = YahtzeeEnv()
>>> obs, info = env.reset(seed=0)
>>> obs.shape, int(env.action_space.n), env.encoding
((86,), 45, 'scorecard-v1')
"""

from __future__ import annotations

from typing import ClassVar

from ..multiagent.yahtzee_v0 import raw_env
from .base import DiceEnv

__all__ = ["YahtzeeEnv"]


class YahtzeeEnv(DiceEnv):
    """Yahtzee from one seat; see the module docstring and :mod:`dice_envs.envs.base`."""

    aec_class: ClassVar[type[raw_env]] = raw_env
