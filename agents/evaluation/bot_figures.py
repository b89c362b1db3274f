"""The measured figures of the shipped bots as Markdown tables, rendered from their record.

``scripts/measure_bots.py --record`` writes every figure once, with its provenance (date,
machine, code revision, command), to ``agents/pretrained/measurements.json``. A page shows
them only between marker comments, each block rendered by :func:`render_table`:

.. code-block:: markdown

    <!-- figures:headline -->
    (the table, written by ``python scripts/measure_bots.py --render``)
    <!-- /figures -->

:func:`render_blocks` rewrites every block of a page's text (:data:`BLOCKS` names them);
``tests/test_figures.py`` fails when a page's block differs from what the record renders, so no
figure is typed by hand.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dice_envs.rules import ConfigError

__all__ = ["BLOCKS", "RECORD", "render_blocks", "render_table"]

#: The record of the shipped bots' figures.
RECORD = Path(__file__).resolve().parents[1] / "pretrained" / "measurements.json"

GAME_NAMES = {"spiffel": "Spiffel", "dice_poker": "Dice Poker", "yahtzee": "Yahtzee", "farkle": "Farkle"}
_BLOCK = re.compile(r"(<!-- figures:([\w-]+) -->\n)(.*?)(<!-- /figures -->)", re.S)


def _lost(entry: Mapping[str, Any]) -> str:
    """Points lost per game with its 95% interval (3 decimals below 1 point, else 2)."""
    r = entry["regret"]
    d = 3 if r["mean"] < 1 else 2
    return f"{r['mean']:.{d}f} [{r['ci95'][0]:.{d}f}, {r['ci95'][1]:.{d}f}]"


def _mean(entry: Mapping[str, Any]) -> str:
    return f"{entry['mean_score']:.2f} ± {entry['stderr']:.2f}"


def _optimal_mean(entry: Mapping[str, Any]) -> str:
    return f"{entry['optimal_mean_score']:.2f}"


def _solitaire(records: Mapping[str, Any], keep: Callable[[str, Mapping[str, Any]], bool]) -> list[tuple]:
    """``(game, name, entry)`` of the solitaire bots ``keep`` admits, by game, then least points lost."""
    rows = [
        (e["game"], name, e)
        for name, e in records.items()
        if e["num_players"] == 1 and "agent" not in e and "regret" in e and keep(name, e)
    ]
    return sorted(rows, key=lambda r: (r[0], r[2]["regret"]["mean"]))


def _provenance(entries: list[Mapping[str, Any]]) -> list[str]:
    """One line per distinct command behind ``entries``: seed, date, machine, code revision."""
    seen: dict[tuple, None] = {}
    for e in entries:
        m = e["machine"]
        where = f"{m['cores']} cores of {m['cpu']}"
        seen[(e["command"], str(e["seed"]), e["date"], where, e["revision"][:12])] = None
    return [f"`{c}` (seed {s}; {d}, {w}, code revision `{r}`)" for c, s, d, w, r in seen]


def _sources(entries: list[Mapping[str, Any]]) -> str:
    games = sorted({(e["games"], e["regret"]["games"], str(e["seed"])) for e in entries})
    counts = "; ".join(
        f"mean scores over {g:,} games, points lost over {r:,} games, seed {s}" for g, r, s in games
    )
    lines = "\n".join(f"- {p}" for p in _provenance(entries))
    return (
        f"Points lost per game against the optimum [95% CI] and mean score ± s.e., every agent on the "
        f"same dice ({counts}); from `agents/pretrained/measurements.json`, measured by\n\n{lines}\n"
    )


def _table(head: list[str], rows: list[list[str]], text_columns: int) -> str:
    """A Markdown table: the first ``text_columns`` columns left-aligned, the figures right-aligned."""
    align = ["---"] * text_columns + ["---:"] * (len(head) - text_columns)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in rows)]) + "\n"


def _solitaire_table(rows: list[tuple], timed: bool = False) -> str:
    """Every bot of ``rows``; ``timed`` adds the wall time its scored games took (one process)."""
    head = ["bot", "game", "points lost per game", "mean score", "`optimal`, same dice", "exact optimum"]
    body = [
        [f"`{name}`", GAME_NAMES[g], _lost(e), _mean(e), _optimal_mean(e), f"{e['optimum']:.2f}"]
        + ([f"{e['play_seconds']:.0f} s"] if timed else [])
        for g, name, e in rows
    ]
    head += ["time of its scored games"] if timed else []
    return _table(head, body, 2) + "\n" + _sources([e for _, _, e in rows])


def _headline(records: Mapping[str, Any]) -> str:
    """Per solitaire game: ``optimal``, the bot losing the fewest points, the PPO bot trained from
    scratch (``<game>-scratch``) and ``heuristic``."""
    body, used = [], []
    for game in sorted({e["game"] for e in records.values() if e["num_players"] == 1 and "regret" in e}):
        bots = _solitaire(records, lambda n, e, g=game: e["game"] == g)
        ppo = [r for r in bots if r[1] == f"{game}-scratch"]
        picks = [
            (
                f"`optimal` (exact optimum {records[f'{game}:optimal']['optimum']:.2f})",
                records[f"{game}:optimal"],
            ),
            (f"`{bots[0][1]}` (best learned bot)", bots[0][2]),
            *((f"`{n}` (PPO from scratch)", e) for _, n, e in ppo),
            ("`heuristic`", records[f"{game}:heuristic"]),
        ]
        for i, (label, e) in enumerate(picks):
            body.append([GAME_NAMES[game] if i == 0 else "", label, _lost(e), _mean(e)])
            used.append(e)
    return (
        _table(["game", "agent", "points lost per game", "mean score, same dice"], body, 2)
        + "\n"
        + _sources(used)
    )


def _ranking(records: Mapping[str, Any]) -> str:
    """Per solitaire game, every bot and reference agent of the record ranked by points lost."""
    body, used = [], []
    for game in sorted({e["game"] for e in records.values() if e["num_players"] == 1}):
        entries = [(e.get("agent", name), e) for name, e in records.items() if e["num_players"] == 1]
        ranked = sorted((r for r in entries if r[1]["game"] == game), key=lambda r: r[1]["regret"]["mean"])
        for rank, (name, e) in enumerate(ranked, 1):
            body.append([str(rank), f"`{name}`", GAME_NAMES[game], _lost(e), _mean(e)])
            used.append(e)
    head = ["rank", "agent", "game", "points lost per game", "mean score, same dice"]
    return _table(head, body, 3) + "\n" + _sources(used)


def _game_label(entry: Mapping[str, Any]) -> str:
    """The game, its seats and the rules that differ from the game's defaults (``rules``), e.g.
    ``Farkle, 3 players, target 300``."""
    changed = [
        f"{k.replace('_', ' ')} {f'{v:,}' if type(v) is int else str(v).lower()}"
        for k, v in entry.get("rules", {}).items()
    ]
    return ", ".join([GAME_NAMES[entry["game"]], f"{entry['num_players']} players", *changed])


def _multiplayer(records: Mapping[str, Any]) -> str:
    """Every multi-player bot's share of wins against each opponent it was measured against."""
    body, used = [], []
    for name, e in sorted(records.items(), key=lambda kv: (kv[1]["game"], kv[0])):
        if e["num_players"] < 2:
            continue
        used.append(e)
        for opp, v in e["vs"].items():
            lo, hi = v["win_share_ci95"]
            share = f"{100 * v['win_share']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
            body.append(
                [
                    f"`{name}`",
                    _game_label(e),
                    f"`{opp}`",
                    share,
                    f"{v['games']:,}",
                ]
            )
    head = ["bot", "game", "against", "share of wins (a tie 1/2) [95% CI]", "games"]
    note = (
        "Seats balanced (every deal in every seat); from `agents/pretrained/measurements.json`, "
        "measured by\n\n" + "\n".join(f"- {p}" for p in _provenance(used)) + "\n"
    )
    return _table(head, body, 3) + "\n" + note


#: Block name -> its renderer over the record.
BLOCKS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "headline": _headline,
    "solitaire": lambda rec: _solitaire_table(_solitaire(rec, lambda n, e: True)),
    "search": lambda rec: _solitaire_table(_solitaire(rec, lambda n, e: "-search" in n), timed=True),
    "multiplayer": _multiplayer,
    "ranking": _ranking,
}


def render_table(name: str, records: Mapping[str, Any]) -> str:
    """The Markdown of block ``name`` (one of :data:`BLOCKS`) from ``records``."""
    if name not in BLOCKS:
        raise ConfigError(f"unknown figures block {name!r}; blocks: {', '.join(BLOCKS)}")
    return BLOCKS[name](records)


def render_blocks(text: str, records: Mapping[str, Any]) -> str:
    """``text`` with every ``<!-- figures:NAME -->`` ... ``<!-- /figures -->`` block re-rendered."""
    return _BLOCK.sub(lambda m: m[1] + "\n" + render_table(m[2], records) + "\n" + m[4], text)
