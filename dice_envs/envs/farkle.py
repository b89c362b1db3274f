"""Gymnasium env of Farkle: ``gym.make("dice_envs/Farkle-v1")``.

=====================  ==================================================================
Action space           ``Discrete(128)``: ``mask + 64 * bank``; bit ``i`` of ``mask`` sets aside
                       die ``i`` of the sorted throw; ``bank = 1`` banks afterwards, ``0`` throws
                       the remaining dice (all six after hot dice)
Observation space      ``Box(float32, (48 + 2N,))``: :func:`dice_envs.encoding.encode` from the
                       learner's seat (``farkle-v3``), ``N`` = number of players
Reward                 ``"score"`` (default in solitaire): change of the learner's banked total
                       (bankruptcy counts negative), summing to its final total; ``"win"``
                       (default with opponents): +1 / -1 at the end with two players,
                       zero-sum and split on shared wins
Episode                terminated when the round in which a seat reached ``target`` is over;
                       truncated after ``max_turns`` turns per seat (default 100)
=====================  ==================================================================

Version history:

* ``v1``: observation ``farkle-v3`` only, ``48 + 2N`` values: ``farkle-v2`` with the own seat
  (one-hot) appended after ``lead``.
* ``v0``, retired: it served ``farkle-v1`` (``49 + N`` values, an always-zero spare slot after
  ``lead``), then ``farkle-v2`` (``48 + N``, the spare slot dropped), then ``farkle-v3``.
  ``gym.make("dice_envs/Farkle-v0")`` raises ``gymnasium.error.DeprecatedEnv`` saying so and
  naming ``dice_envs/Farkle-v1``.

>>> env = FarkleEnv(opponents=["random"], target=3000)
>>> obs, info = env.reset(seed=0)
>>> obs.shape, int(env.action_space.n), env.encoding
((52,), 128, 'farkle-v3')
"""

from __future__ import annotations

from typing import ClassVar

from ..multiagent.farkle_v1 import raw_env
from .base import DiceEnv

__all__ = ["FarkleEnv"]


class FarkleEnv(DiceEnv):
    """Farkle from one seat; see the module docstring and :mod:`dice_envs.envs.base`."""

    aec_class: ClassVar[type[raw_env]] = raw_env
