"""dice-envs: reinforcement-learning environments for Spiffel, Dice Poker, Farkle and Yahtzee.

Layers (each uses only those above it): :mod:`dice_envs.rules` (the games) →
:mod:`dice_envs.tables` (numpy tables derived from the rules) → :mod:`dice_envs.encoding`
(observations) → environments.
"""

from __future__ import annotations

from . import rules
from .rules import GAMES, ConfigError, make_rules, new_game

__version__ = "0.1.0"

__all__ = ["GAMES", "ConfigError", "__version__", "make_rules", "new_game", "rules"]
