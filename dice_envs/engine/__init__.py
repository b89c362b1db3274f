"""The engines: each family's game flow written once on arrays, as N games or as one.

Each family's flow (:mod:`.scorecard_flow`, :mod:`.farkle_turn`) runs in a batched engine of
N games (:func:`make_engine`) and in a one-game machine (:func:`new_game`) that also keeps the
history and descriptions; :mod:`.dice` holds the dice streams of the batched engines.

The batched engines share :class:`~.common.BatchedEngine`'s frame and add ``observe(seat, games)``,
the :mod:`dice_envs.encoding` observation.

>>> eng = make_engine("yahtzee", num_games=8, num_players=2, seed=1)
>>> type(eng).__name__, eng.observe(0).shape
('ScorecardEngine', (8, 101))
>>> game = new_game("dice_poker", num_players=2, seed=1)
>>> type(game).__name__, len(game.legal_actions()) > 0
('ScorecardGame', True)
"""

from __future__ import annotations

import numpy as np

from ..rules import RuleConfig, make_rules
from ..rules.config import ConfigError
from .dice import DiceStream, RandomDice, ScriptedDice
from .farkle import FarkleEngine
from .farkle_game import FarkleGame
from .scorecard import ScorecardEngine
from .scorecard_game import ScorecardGame

__all__ = [
    "DiceStream",
    "Engine",
    "FarkleEngine",
    "FarkleGame",
    "Game",
    "RandomDice",
    "ScorecardEngine",
    "ScorecardGame",
    "ScriptedDice",
    "make_engine",
    "new_game",
]

Engine = ScorecardEngine | FarkleEngine
Game = ScorecardGame | FarkleGame


def _family(rules: RuleConfig) -> type[ScorecardEngine] | type[FarkleEngine]:
    """The batched engine class of ``rules``' family (its ``game_class`` is the one-game machine)."""
    for engine in (ScorecardEngine, FarkleEngine):
        if isinstance(rules, engine.rules_class):
            return engine
    raise ConfigError(f"no game engine for rules {type(rules).__name__}")  # pragma: no cover


def new_game(
    rules: RuleConfig | str,
    num_players: int = 1,
    seed: int | None = None,
    rng: np.random.Generator | None = None,
) -> Game:
    """A fresh game state for ``rules`` (a configuration or a game name)."""
    rules = make_rules(rules)
    return _family(rules).game_class(rules, num_players=num_players, seed=seed, rng=rng)


def make_engine(
    rules: RuleConfig | str,
    num_games: int,
    num_players: int = 1,
    dice: DiceStream | None = None,
    seed: int | None = None,
) -> Engine:
    """The batched engine of ``rules`` (a configuration or a game name)."""
    rules = make_rules(rules)
    return _family(rules)(rules, num_games, num_players, dice=dice, seed=seed)
