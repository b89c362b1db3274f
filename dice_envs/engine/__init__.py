"""The engines: each family's game flow written once on arrays, as N games or as one.

* :mod:`.scorecard_flow` — the scorecard games' rule functions (five-of-a-kind bonus, joker,
  forced order, upper bonus, legal actions, turn advance) on one game or a batch;
* :mod:`.farkle_turn` — Farkle's turn flow (set-aside, farkle and bankruptcy, bank minimum,
  hot dice, final round, ``max_turns``) the same way;
* :class:`~.scorecard.ScorecardEngine` / :class:`~.farkle.FarkleEngine` — N games stepped at once
  (state arrays, masks, steps, observations; :func:`make_engine` picks the family's);
* :class:`~.scorecard_game.ScorecardGame` / :class:`~.farkle_game.FarkleGame` — one game (one row
  of the same flow, plus history and descriptions; :func:`new_game` picks the family's);
* :mod:`.dice` — where the batched engines' dice come from (:class:`RandomDice`,
  :class:`ScriptedDice` to replay the faces a one-game machine throws).

The batched engines share one interface: ``reset(games)``, ``action_masks(games)``,
``step(actions, games)`` (returns per-seat rewards as :meth:`ScorecardGame.apply` /
:meth:`FarkleGame.apply` do), ``observe(seat, games)`` (the :mod:`dice_envs.encoding`
observation), and the state arrays ``current``, ``done``, ``truncated``, ``totals``.

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
