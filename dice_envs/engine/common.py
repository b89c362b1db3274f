"""What the engines share: reading the action handed to a one-game ``apply``, and the frame of
the two batched engines (:class:`BatchedEngine`)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..rules.config import ConfigError, RuleConfig, check_int, is_int
from .dice import DiceStream, RandomDice

__all__ = ["BatchedEngine", "integer_action"]


def integer_action(action: object, done: bool) -> int | None:
    """The first step of every ``apply``: a finished game refuses any action (``ValueError``);
    otherwise ``action`` as a Python ``int``, or ``None`` when it is not an integer (bools are not).

    >>> integer_action(np.int64(3), False), integer_action(True, False), integer_action("3", False)
    (3, None, None)
    """
    if done:
        raise ValueError("the game is over; no action is legal")
    return int(action) if is_int(action) else None


class BatchedEngine:
    """``num_games`` games of ``num_players`` seats, stepped together: what both families share.

    ``dice`` supplies the throws (default: :class:`RandomDice` seeded with ``seed``). Methods
    take an optional index array ``games`` (default: all games); rows of their inputs and
    outputs follow it. A family's engine names its rules class, its one-game machine
    (``ROW_FIELDS``, ``from_row``), its ``fresh_rows`` and ``legal_masks``, and writes
    ``_build_tables`` (its lookups), ``_open_turns`` (the throws that start the turns of rows
    ``g``) and ``_step`` (one step of rows ``g``).
    """

    family: ClassVar[str]
    rules_class: ClassVar[type]
    game_class: ClassVar[Any]
    _fresh_rows: Any
    _legal_masks: Any
    last_rewards: np.ndarray

    def __init__(
        self,
        rules: RuleConfig,
        num_games: int,
        num_players: int = 1,
        dice: DiceStream | None = None,
        seed: int | None = None,
    ) -> None:
        if not isinstance(rules, self.rules_class):
            kind = self.rules_class.__name__
            raise ConfigError(f"rules must be a {kind} instance, got {type(rules).__name__}")
        check_int("num_games", num_games, 1, 1 << 24)
        check_int("num_players", num_players, 1, 8)
        self.rules = rules
        self.num_games, self.num_players = int(num_games), int(num_players)
        self.n_actions = rules.n_actions
        self.dice: DiceStream = dice if dice is not None else RandomDice(seed)
        self._all = np.arange(self.num_games)
        self._fresh = self._fresh_rows(rules, self.num_players, 1)
        for name, value in self._fresh_rows(rules, self.num_players, self.num_games).items():
            setattr(self, name, value)
        self._build_tables()  # type: ignore[attr-defined]
        self.reset()

    def _games(self, games: np.ndarray | None) -> np.ndarray:
        return self._all if games is None else np.asarray(games, dtype=np.int64)

    def to_game(self, i: int) -> Any:
        """Game ``i`` as the family's one-game machine (for checks, rendering, or continuing it with
        the rules engine; its dice come from a fresh generator). The ``history`` is not kept by the
        batched engine and starts empty."""
        row = {name: getattr(self, name)[int(i)] for name in self.game_class.ROW_FIELDS}
        return self.game_class.from_row(self.rules, self.num_players, row)

    def reset(self, games: np.ndarray | None = None) -> None:
        """Start fresh games: seat 0's opening throw is made (in Farkle, again after each farkle)."""
        g = self._games(games)
        for name, value in self._fresh.items():
            getattr(self, name)[g] = value
        self._open_turns(g)  # type: ignore[attr-defined]

    def action_masks(self, games: np.ndarray | None = None) -> np.ndarray:
        """Legal actions, ``(n, n_actions)`` bool (all False where a game is done)."""
        return self._legal_masks(self, slice(None) if games is None else self._games(games))

    def step(self, actions: np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
        """Apply one legal action per game (not checked: see :meth:`action_masks`).

        Returns what each seat gained, ``(n, num_players)``: its points (Farkle: the change of its
        banked total), as the one-game machine's ``apply`` returns them.
        """
        g = self._games(games)
        if games is None:
            self.last_rewards.fill(0)
        else:
            self.last_rewards[g] = 0
        self._step(np.asarray(actions, dtype=np.int64), g)  # type: ignore[attr-defined]
        return self.last_rewards.copy() if games is None else self.last_rewards[g]
