"""PettingZoo AEC env of Spiffel.

Rules: rule text ``000``: 13 rounds of up to 3 throws with 5 dice; second Spiffel +100 once and a free joker.

=====================  ==================================================================
Import                 ``from dice_envs.multiagent import spiffel_v0``
Agents                 ``player_0 .. player_{N-1}``, ``N = num_players`` (1 to 8, default 2)
Action space           ``Discrete(45)``: ``1..31`` re-throw the dice whose bits are set
                       (positions in the sorted dice), ``32 + k`` enter the throw in box ``k``;
                       ``0`` is never legal
Boxes (``k``)          ones twos threes fours fives sixes three_of_a_kind four_of_a_kind full_house
                       small_straight large_straight spiffel chance
Observation            dict: ``observation`` ``Box(float32, (86 + 15·(N-1),))`` =
                       :func:`dice_envs.encoding.encode` from the agent's seat (``scorecard-v1``);
                       ``action_mask`` ``Box(int8, (45,))``, zeros when not to move
Turn                   an agent keeps the turn for all decisions of its turn (re-throws, entry)
Reward                 ``"win"`` (default, N >= 2): zero-sum at the end (+1 / -1 with 2 players,
                       shared wins split); ``"score"`` (default solitaire): points as entered,
                       bonuses included, summing to the grand total
Rules                  keyword parameters of :class:`dice_envs.rules.SpiffelRules`
Version                ``spiffel_v0``
=====================  ==================================================================

Version history:

* ``spiffel_v0``: observation ``scorecard-v1``, the only one this module has served since it was first
  published.

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
    """Spiffel game logic (no wrappers); see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {**DiceAECEnv.metadata, "name": "spiffel_v0"}
    game_name: ClassVar[str] = "spiffel"


def env(**kwargs: Any) -> AECEnv:
    """The wrapped Spiffel env (:func:`~dice_envs.multiagent.base.make_env`).

    ``kwargs``: ``num_players`` (default 2), ``render_mode``, ``reward``, ``illegal_reward``,
    ``rules``, rule parameters; or ``options=`` alone (:mod:`dice_envs.options`).
    """
    return make_env(raw_env, **kwargs)
