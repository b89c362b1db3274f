"""Gymnasium env of Dice Poker: ``gym.make("dice_envs/DicePoker-v0")``.

=====================  ==================================================================
Action space           ``Discrete(47)``: ``1..31`` re-throw the dice whose bits are set
                       (positions in the sorted dice), ``32 + k`` enter the throw in box ``k``
                       (:data:`dice_envs.rules.dice_poker.CATEGORIES`); ``0`` never legal
Observation space      ``Box(float32, (92 + 17·(N-1),))``: :func:`dice_envs.encoding.encode` from the
                       learner's seat (``scorecard-v1``), ``N`` = number of players
Episode                the learner's 15 rounds (with opponents: until every seat filled
                       its card); opponents move inside ``step()``
=====================  ==================================================================

>>> env = DicePokerEnv()
>>> obs, info = env.reset(seed=0)
>>> obs.shape, int(env.action_space.n), env.encoding
((92,), 47, 'scorecard-v1')
"""

from __future__ import annotations

from typing import ClassVar

from ..multiagent.dice_poker_v0 import raw_env
from .base import DiceEnv

__all__ = ["DicePokerEnv"]


class DicePokerEnv(DiceEnv):
    """Dice Poker from one seat; see the module docstring and :mod:`dice_envs.envs.base`."""

    aec_class: ClassVar[type[raw_env]] = raw_env
