"""The games themselves: rule configurations, dice and the scoring functions.

:data:`GAMES` maps each game's name to its rules class (``spiffel``, ``dice_poker`` and ``yahtzee``
are :class:`~.scorecard.ScorecardRules`, ``farkle`` :class:`~.farkle.FarkleRules`); the game flow
lives one layer down, in :mod:`dice_envs.engine` (``new_game`` is there).

>>> rules = make_rules("dice_poker", upper_bonus_threshold=70)
>>> rules.upper_bonus_threshold, rules.num_boxes
(70, 15)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import dice_poker, farkle, spiffel, yahtzee
from .config import ConfigError, RuleConfig
from .dice_poker import DicePokerRules
from .farkle import FarkleRules
from .scorecard import ScorecardRules
from .spiffel import SpiffelRules
from .yahtzee import YahtzeeRules

__all__ = [
    "GAMES",
    "ConfigError",
    "DicePokerRules",
    "FarkleRules",
    "RuleConfig",
    "ScorecardRules",
    "SpiffelRules",
    "YahtzeeRules",
    "dice_poker",
    "farkle",
    "load_rules",
    "make_rules",
    "rules_class",
    "spiffel",
    "yahtzee",
]

#: Rule configuration class of each game, by name.
GAMES: dict[str, type[RuleConfig]] = {
    "spiffel": SpiffelRules,
    "dice_poker": DicePokerRules,
    "yahtzee": YahtzeeRules,
    "farkle": FarkleRules,
}


def rules_class(game: str) -> type[RuleConfig]:
    """The rule configuration class of ``game``; ``ConfigError`` names the games otherwise."""
    key = str(game).lower().replace("-", "_")
    if key not in GAMES:
        raise ConfigError(f"unknown game {game!r}; games: {', '.join(GAMES)}")
    return GAMES[key]


def make_rules(game: str | RuleConfig, **params: Any) -> RuleConfig:
    """Rule configuration of ``game`` with some parameters changed (validated).

    ``game`` may also be a configuration already, which is then updated with ``params``.
    """
    if isinstance(game, RuleConfig):
        return game.replace(**params) if params else game
    return rules_class(game).from_dict(params)


def load_rules(game: str, path: str | Path | None = None, **overrides: Any) -> RuleConfig:
    """Rules of ``game`` from a YAML file (default: none, i.e. RULES.md's defaults) plus overrides."""
    cls = rules_class(game)
    base = cls.from_yaml(path) if path is not None else cls()
    return base.replace(**overrides) if overrides else base
