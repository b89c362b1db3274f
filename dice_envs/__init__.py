"""dice-envs: reinforcement-learning environments for Spiffel, Dice Poker, Farkle and Yahtzee.

The :doc:`architecture page </architecture>` shows its layers, from the rules to the envs.

``import dice_envs`` registers the Gymnasium ids of :mod:`dice_envs.games` (``dice_envs/Spiffel-v0``,
``dice_envs/DicePoker-v0``, ``dice_envs/Yahtzee-v0``, ``dice_envs/Farkle-v1``).
"""

from __future__ import annotations

from . import rules
from .engine import new_game
from .envs.registration import register_envs
from .rules import GAMES, ConfigError, make_rules
from .version import __version__, code_revision

register_envs()


__all__ = [
    "GAMES",
    "ConfigError",
    "__version__",
    "code_revision",
    "make_rules",
    "new_game",
    "register_envs",
    "rules",
]
