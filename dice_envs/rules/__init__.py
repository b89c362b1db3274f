"""The games themselves: dice, scoring, rule configurations and one state machine per family.

=============  ===============================  ==========================================
name           rules class                      state machine
=============  ===============================  ==========================================
``spiffel``    :class:`~.spiffel.SpiffelRules`    :class:`~.scorecard_game.ScorecardGame`
``dice_poker`` :class:`~.dice_poker.DicePokerRules` :class:`~.scorecard_game.ScorecardGame`
``yahtzee``    :class:`~.yahtzee.YahtzeeRules`    :class:`~.scorecard_game.ScorecardGame`
``farkle``     :class:`~.farkle.FarkleRules`      :class:`~.farkle_game.FarkleGame`
=============  ===============================  ==========================================

>>> rules = make_rules("dice_poker", upper_bonus_threshold=70)
>>> game = new_game(rules, num_players=2, seed=1)
>>> len(game.legal_actions()) > 0
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from . import dice_poker, farkle, spiffel, yahtzee
from .config import ConfigError, RuleConfig
from .dice_poker import DicePokerRules
from .farkle import FarkleRules
from .farkle_game import FarkleGame
from .scorecard import ScorecardRules
from .scorecard_game import ScorecardGame
from .spiffel import SpiffelRules
from .yahtzee import YahtzeeRules

__all__ = [
    "GAMES",
    "ConfigError",
    "DicePokerRules",
    "FarkleGame",
    "FarkleRules",
    "Game",
    "RuleConfig",
    "ScorecardGame",
    "ScorecardRules",
    "SpiffelRules",
    "YahtzeeRules",
    "dice_poker",
    "farkle",
    "load_rules",
    "make_rules",
    "new_game",
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

Game = ScorecardGame | FarkleGame


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


def new_game(
    rules: RuleConfig | str,
    num_players: int = 1,
    seed: int | None = None,
    rng: np.random.Generator | None = None,
) -> Game:
    """A fresh game state for ``rules`` (a configuration or a game name)."""
    rules = make_rules(rules)
    if isinstance(rules, FarkleRules):
        return FarkleGame(rules, num_players=num_players, seed=seed, rng=rng)
    if isinstance(rules, ScorecardRules):
        return ScorecardGame(rules, num_players=num_players, seed=seed, rng=rng)
    raise ConfigError(f"no game engine for rules {type(rules).__name__}")  # pragma: no cover
