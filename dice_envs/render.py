"""Text rendering of a game: the score card of a scorecard game, the table of a Farkle game.

Both environments (PettingZoo and Gymnasium) render through :func:`render_text`; the
``"ansi"`` render mode returns the text, ``"human"`` prints it.

The score card follows the seed's game pad, a column per player; a box struck out (0 points)
shows ``XXX``, an open box ``.``; below it the current throw, held dice in brackets.

>>> from dice_envs.rules import make_rules

>>> from dice_envs.engine import new_game
>>> game = new_game(make_rules("spiffel"), num_players=2, seed=3)
>>> text = render_scorecard(game)
>>> "grand total" in text and "throw 1/3" in text
True
"""

from __future__ import annotations

from collections.abc import Sequence

from .engine import FarkleGame, ScorecardGame
from .rules.scorecard import UPPER_FACES

__all__ = ["format_dice", "render_farkle", "render_scorecard", "render_text", "set_aside_this_turn"]

_LABEL_WIDTH = 18
_COL_WIDTH = 10


def format_dice(dice: Sequence[int], held: Sequence[int] | None = None) -> str:
    """The dice as text; dice whose faces are in ``held`` (as a multiset) are shown in brackets.

    >>> format_dice((2, 3, 3, 5, 6), held=(3, 6))
    '2 [3] 3 5 [6]'
    """
    pool = list(held or ())
    out = []
    for f in dice:
        if f in pool:
            pool.remove(f)
            out.append(f"[{f}]")
        else:
            out.append(str(f))
    return " ".join(out)


def _row(label: str, cells: Sequence[str]) -> str:
    return f"{label:<{_LABEL_WIDTH}}" + "".join(f"{c:>{_COL_WIDTH}}" for c in cells)


def _names(n: int, current: int | None, names: Sequence[str] | None) -> list[str]:
    base = list(names) if names is not None else [f"player_{i}" for i in range(n)]
    return [f"{b}*" if i == current else b for i, b in enumerate(base)]


def render_scorecard(
    game: ScorecardGame, held: Sequence[int] | None = None, names: Sequence[str] | None = None
) -> str:
    """The game pad of a scorecard game (Spiffel, Dice Poker, Yahtzee) as text.

    ``held``: faces the current player kept at his last re-throw (shown in brackets);
    ``names``: column titles (default ``player_0`` ...). ``*`` marks the player to move.
    """
    r = game.rules
    n = game.num_players
    current = None if game.done else game.current_player
    title = f"{r.game} - " + (
        "game over" if game.done else f"round {game.round + 1}/{r.num_boxes}, player_{current} to move"
    )
    lines = [title, _row("", _names(n, current, names))]

    def box_cell(p: int, b: int) -> str:
        v = game.cards[p].boxes[b]
        return "." if v is None else ("XXX" if v == 0 else str(v))

    upper = [b for b, name in enumerate(game.categories) if name in UPPER_FACES]
    lower = [b for b, name in enumerate(game.categories) if name not in UPPER_FACES]
    for b in upper:
        lines.append(_row(game.categories[b], [box_cell(p, b) for p in range(n)]))
    lines.append(_row("upper total", [str(game.upper_total(p)) for p in range(n)]))
    lines.append(_row(f"bonus (>={r.upper_bonus_threshold})", [str(game.upper_bonus(p)) for p in range(n)]))
    for b in lower:
        lines.append(_row(game.categories[b], [box_cell(p, b) for p in range(n)]))
    lines.append(_row("lower total", [str(game.lower_total(p)) for p in range(n)]))
    lines.append(_row(f"{r.five_kind_box} bonus", [str(game.five_kind_bonus_points(p)) for p in range(n)]))
    lines.append(_row("grand total", [str(game.total(p)) for p in range(n)]))
    if game.done:
        lines.append("winners: " + ", ".join(f"player_{w}" for w in game.winners()))
    else:
        bonus_due, joker = game.joker_status()
        extra = (" - bonus due" if bonus_due else "") + (" - joker" if joker else "")
        lines.append(
            f"dice: {format_dice(game.dice, held)}   throw {game.throw}/{r.num_throws}"
            + ("   ([n] held)" if held else "")
            + extra
        )
    return "\n".join(lines)


def set_aside_this_turn(game: FarkleGame) -> list[tuple[int, ...]]:
    """Dice the current player set aside so far this turn (one tuple per set-aside)."""
    out: list[tuple[int, ...]] = []
    for ev in reversed(game.history):
        if ev.kind in ("bank", "farkle", "bankrupt") or ev.player != game.current_player:
            break
        if ev.kind == "set_aside":
            out.append(ev.dice)
    return out[::-1]


def render_farkle(game: FarkleGame, names: Sequence[str] | None = None) -> str:
    """The Farkle table as text: banked totals, turn total, dice set aside, current throw."""
    r = game.rules
    n = game.num_players
    current = None if game.done else game.current_player
    status = (
        "game over" + (" (truncated)" if game.truncated else "")
        if game.done
        else (f"player_{current} to move")
    )
    lines = [f"farkle - target {r.target}, bank above {r.bank_minimum} - {status}"]
    if game.final_round_by is not None and not game.done:
        lines[0] += f" - final round (player_{game.final_round_by} reached the target)"
    for p, name in enumerate(_names(n, current, names)):
        lines.append(f"  {name:<14}{game.banked[p]:>8}   turns {game.turns[p]}")
    if game.done:
        lines.append("winners: " + ", ".join(f"player_{w}" for w in game.winners()))
        return "\n".join(lines)
    aside = set_aside_this_turn(game)
    lines.append(f"turn total: {game.turn_total}")
    lines.append("set aside: " + (" | ".join(" ".join(map(str, d)) for d in aside) if aside else "-"))
    lines.append(f"throw: {format_dice(game.dice)}   ({game.dice_left} dice)")
    return "\n".join(lines)


def render_text(
    game: ScorecardGame | FarkleGame, held: Sequence[int] | None = None, names: Sequence[str] | None = None
) -> str:
    """:func:`render_farkle` or :func:`render_scorecard`, whichever fits ``game``."""
    if isinstance(game, FarkleGame):
        return render_farkle(game, names)
    return render_scorecard(game, held, names)
