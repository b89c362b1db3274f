"""What a request to the game pad may say: refusals, names, die positions and moves as engine actions.

:func:`move_action` turns a move body (dice by their positions) into the engine's action, checking
only its shape; every refusal is a :class:`PadError` carrying the HTTP status.

>>> from dice_envs.engine import new_game
>>> g = new_game("spiffel", 1, seed=3)
>>> move_action(g, {"type": "score", "box": "chance"}) == g.box_action("chance")
True
>>> move_action(g, {"type": "jump"})
Traceback (most recent call last):
...
agents.web.protocol.PadError: unknown move type 'jump'; a scorecard move is 'roll' (with 'hold') or 'score'
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any

from agents.players.actions import hold_to_reroll_mask, select_mask
from dice_envs.engine import FarkleGame, ScorecardGame
from dice_envs.rules.farkle import BANK_FLAG

__all__ = ["NAME_LIMIT", "PadError", "clean_name", "die_positions", "move_action", "same_token"]

#: Longest player name kept (longer names are cut).
NAME_LIMIT = 24


class PadError(Exception):
    """A refused request: ``status`` is the HTTP status, ``message`` says why (and what is allowed)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def clean_name(value: Any, default: str) -> str:
    """A player name with its whitespace collapsed, at most :data:`NAME_LIMIT` characters.

    >>> clean_name("  Ada   Lovelace ", "Player 1"), clean_name(None, "Player 1")
    ('Ada Lovelace', 'Player 1')
    """
    if value is None or value == "":
        return default
    if not isinstance(value, str):
        raise PadError(400, f"a name must be a string, got {value!r}")
    name = " ".join(value.split())[:NAME_LIMIT]
    return name or default


def die_positions(value: Any, n: int, what: str) -> list[int]:
    """``value`` as sorted distinct die positions ``0..n-1`` (400 naming ``what`` otherwise)."""
    if not isinstance(value, list) or any(isinstance(p, bool) or not isinstance(p, int) for p in value):
        raise PadError(400, f"{what} must be a list of die positions 0-{n - 1}, got {value!r}")
    if any(not 0 <= p < n for p in value) or len(set(value)) != len(value):
        raise PadError(400, f"{what} must name distinct die positions 0-{n - 1}, got {value!r}")
    return sorted(value)


def same_token(given: Any, held: str | None) -> bool:
    """Whether ``given`` is the secret ``held`` (compared in constant time)."""
    return isinstance(given, str) and held is not None and hmac.compare_digest(given.encode(), held.encode())


def move_action(game: ScorecardGame | FarkleGame, body: Mapping[str, Any]) -> int:
    """The engine action a move body names (checked for shape, not yet for legality).

    ``{"action": int}`` names an engine action directly. A scorecard move is
    ``{"type": "roll", "hold": [positions]}`` or ``{"type": "score", "box": name}``; a Farkle
    move is ``{"type": "roll" | "bank", "take": [positions]}``.
    """
    if "action" in body:
        a = body["action"]
        if isinstance(a, bool) or not isinstance(a, int):
            raise PadError(400, f"'action' must be an integer action index, got {a!r}")
        return a
    kind = body.get("type")
    dice = game.dice
    if isinstance(game, ScorecardGame):
        if kind == "roll":
            hold = die_positions(body.get("hold", []), len(dice), "'hold'")
            if len(hold) == len(dice):
                raise PadError(400, "every die is held: unmark a die to roll it, or enter the throw in a box")
            return hold_to_reroll_mask(dice, [dice[i] for i in hold])
        if kind == "score":
            box = body.get("box")
            if box not in game.categories:
                raise PadError(400, f"unknown box {box!r}; boxes: {', '.join(game.categories)}")
            return game.box_action(box)
        raise PadError(
            400, f"unknown move type {kind!r}; a scorecard move is 'roll' (with 'hold') or 'score'"
        )
    if kind in ("roll", "bank"):
        take = die_positions(body.get("take"), len(dice), "'take'")
        if not take:
            raise PadError(400, "select the scoring dice to set aside first")
        return select_mask(dice, [dice[i] for i in take]) + (BANK_FLAG if kind == "bank" else 0)
    raise PadError(400, f"unknown move type {kind!r}; a Farkle move is 'roll' or 'bank' (with 'take')")
