"""PettingZoo AEC env of Dice Poker.

Rules: rule text ``003``: 15 rounds of up to 3 throws with 5 dice; every Poker after the first
+100 and a forced joker.

=====================  ==================================================================
Import                 ``from dice_envs.multiagent import dice_poker_v0``
Agents                 ``player_0 .. player_{N-1}``, ``N = num_players`` (1 to 8, default 2)
Action space           ``Discrete(47)``: ``1..31`` re-throw the dice whose bits are set
                       (positions in the sorted dice), ``32 + k`` enter the throw in box ``k``;
                       ``0`` is never legal
Boxes (``k``)          ones twos threes fours fives sixes pair two_pairs three_of_a_kind four_of_a_kind
                       full_house small_straight large_straight poker chance
Observation            dict: ``observation`` ``Box(float32, (92 + 17·(N-1),))`` =
                       :func:`dice_envs.encoding.encode` from the agent's seat (``scorecard-v1``);
                       ``action_mask`` ``Box(int8, (47,))``, zeros when not to move
Turn                   an agent keeps the turn for all decisions of its turn (re-throws, entry)
Reward                 ``"win"`` (default, N >= 2): zero-sum at the end (+1 / -1 with 2 players,
                       shared wins split); ``"score"`` (default solitaire): points as entered,
                       bonuses included, summing to the grand total
Rules                  keyword parameters of :class:`dice_envs.rules.DicePokerRules`
Version                ``dice_poker_v0``
=====================  ==================================================================

Version history:

* ``dice_poker_v0``: observation ``scorecard-v1``, the only one this module has served since it was first
  published.

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
    """The wrapped Dice Poker env (:func:`~dice_envs.multiagent.base.make_env`).

    ``kwargs``: ``num_players`` (default 2), ``render_mode``, ``reward``, ``illegal_reward``,
    ``rules``, rule parameters; or ``options=`` alone (:mod:`dice_envs.options`).
    """
    return make_env(raw_env, **kwargs)
