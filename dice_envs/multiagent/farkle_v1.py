"""PettingZoo AEC env of Farkle (rule text ``001``, "Space Dice"): six dice, push your luck.

=====================  ==================================================================
Import                 ``from dice_envs.multiagent import farkle_v1``
Agents                 ``player_0 .. player_{N-1}``, ``N = num_players`` (1 to 8, default 2)
Action space           ``Discrete(128)``: ``mask + 64 * bank``; bit ``i`` of ``mask`` sets aside
                       die ``i`` of the sorted throw, ``bank = 1`` banks afterwards (only when the
                       turn total then exceeds ``bank_minimum``), ``0`` throws the rest on
Observation            dict: ``observation`` ``Box(float32, (48 + 2N,))`` =
                       :func:`dice_envs.encoding.encode` from the agent's seat (``farkle-v3``);
                       ``action_mask`` ``Box(int8, (128,))``, zeros when not to move
Turn                   an agent keeps the turn until it banks or farkles; throws needing no
                       decision (opening throws, farkles, bankruptcies) are played by the engine
Reward                 ``"win"`` (default, N >= 2): zero-sum at the end (+1 / -1 with 2 players,
                       shared wins split); ``"score"`` (default solitaire): change of the banked
                       total, so a bankruptcy is a negative reward to the bankrupt seat, given on
                       the step that caused it (possibly another agent's)
End                    terminated when the round in which someone reached ``target`` is over;
                       truncated after ``max_turns`` turns per player
Rules                  keyword parameters of :class:`dice_envs.rules.FarkleRules`
Version                ``farkle_v1``
=====================  ==================================================================

Version history:

* ``farkle_v1``: observation ``farkle-v3`` only, ``48 + 2N`` values: ``farkle-v2`` with the own
  seat (one-hot) appended after ``lead``.
* ``farkle_v0``, retired: it served ``farkle-v1`` (``49 + N`` values, an always-zero spare slot
  after ``lead``), then ``farkle-v2`` (``48 + N``, the spare slot dropped), then ``farkle-v3``.
  ``from dice_envs.multiagent import farkle_v0`` raises ``ImportError`` saying so and naming
  ``farkle_v1``.

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
    """The wrapped Farkle env (:func:`~dice_envs.multiagent.base.make_env`).

    ``kwargs``: ``num_players`` (default 2), ``render_mode``, ``reward``, ``illegal_reward``,
    ``rules``, rule parameters; or ``options=`` alone (:mod:`dice_envs.options`).
    """
    return make_env(raw_env, **kwargs)
