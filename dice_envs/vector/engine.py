"""Batched engines of every ruleset: :func:`make_engine` picks the family's engine.

* :class:`~dice_envs.vector.scorecard.ScorecardEngine` — Spiffel, Dice Poker, Yahtzee;
* :class:`~dice_envs.vector.farkle.FarkleEngine` — Farkle.

Both share one interface: ``reset(games)``, ``action_masks(games)``, ``step(actions, games)``
(returns per-seat rewards as :meth:`ScorecardGame.apply` / :meth:`FarkleGame.apply` do),
``observe(seat, games)`` (the :mod:`dice_envs.encoding` observation), and the state arrays
``current``, ``done``, ``truncated``, ``totals``.

>>> eng = make_engine("yahtzee", num_games=8, num_players=2, seed=1)
>>> type(eng).__name__, eng.observe(0).shape
('ScorecardEngine', (8, 101))
"""

from __future__ import annotations

from ..rules import FarkleRules, RuleConfig, ScorecardRules, make_rules
from ..rules.config import ConfigError
from .dice import DiceStream
from .farkle import FarkleEngine
from .scorecard import ScorecardEngine

__all__ = ["Engine", "FarkleEngine", "ScorecardEngine", "make_engine"]

Engine = ScorecardEngine | FarkleEngine


def make_engine(
    rules: RuleConfig | str,
    num_games: int,
    num_players: int = 1,
    dice: DiceStream | None = None,
    seed: int | None = None,
) -> Engine:
    """The batched engine of ``rules`` (a configuration or a game name)."""
    rules = make_rules(rules)
    if isinstance(rules, FarkleRules):
        return FarkleEngine(rules, num_games, num_players, dice=dice, seed=seed)
    if isinstance(rules, ScorecardRules):
        return ScorecardEngine(rules, num_games, num_players, dice=dice, seed=seed)
    raise ConfigError(f"no batched engine for rules {type(rules).__name__}")  # pragma: no cover
