"""The Gymnasium env of a dice game: its PettingZoo AEC env seen from the learner's seat.

:class:`DiceEnv` adds no game flow of its own: it builds the game's ``raw_env``
(:mod:`dice_envs.multiagent`), resolves the opponent specs, and hands both to
:class:`dice_envs.wrappers.SingleAgentEnv`. Each game module (:mod:`.spiffel`, ...) documents
its spaces.

Keyword arguments (all optional): those of the :ref:`gym-keywords` table (the fields of
:class:`dice_envs.options.EnvOptions` and the game's rule parameters), or ``options=`` alone.

``info`` holds the PettingZoo env's infos (:mod:`dice_envs.multiagent.base`) plus ``action_mask``
(int8) and ``seat``; after an illegal action under ``"penalize"`` also ``illegal_action``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..multiagent.base import DiceAECEnv
from ..opponents import resolve_opponents
from ..options import EnvOptions, options_of
from ..wrappers import SingleAgentEnv

__all__ = ["DiceEnv"]


class DiceEnv(SingleAgentEnv):
    """Gymnasium env of one game (subclasses set :attr:`aec_class`); kwargs in the module docstring."""

    aec_class: ClassVar[type[DiceAECEnv]]

    def __init__(self, **kwargs: Any) -> None:
        #: The validated options this env was built from (:class:`dice_envs.options.EnvOptions`).
        self.options: EnvOptions = options_of(self.aec_class.game_name, kwargs, "gymnasium")
        opts = self.options
        aec = self.aec_class(options=opts)
        self.rules = opts.rules
        self.reward_mode = opts.reward
        super().__init__(
            aec,
            resolve_opponents(opts.opponents, opts.rules, opts.num_players),
            seat=opts.seat,
            illegal_action=opts.illegal_action,
            illegal_reward=opts.illegal_reward,
        )
        self.num_players = opts.num_players

    @property
    def game(self) -> Any:
        """The rules engine's game state of the current episode."""
        return self.aec.game

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(opponents={self.opponents!r}, seat={self.fixed_seat}, "
            f"reward={self.reward_mode!r})"
        )
