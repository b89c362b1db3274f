"""Reports of a run: the ``results.json`` schema, ``games.csv`` and the plots.

:func:`write_outputs` writes ``results.json`` (:data:`RESULTS_SCHEMA`), ``games.csv`` (one row per
game, enough to replay it) and ``scores.png`` / ``win_matrix.png``, each atomically.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.evaluation.runner import MAX_PLAYERS
from dice_envs.io import atomic_open, atomic_write_bytes, atomic_write_text, check_out_dir
from dice_envs.rules import GAMES

if TYPE_CHECKING:
    from agents.evaluation.tournament import EvaluationResult

__all__ = ["OUTPUT_FILES", "RESULTS_SCHEMA", "write_outputs"]

_NUM = {"type": "number"}
_NUM_OR_NULL = {"type": ["number", "null"]}
_PAIR = {"type": "array", "items": _NUM, "minItems": 2, "maxItems": 2}

#: JSON schema of ``results.json``.
RESULTS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["game", "players", "games", "seed", "rules", "optimum", "total_games", "agents", "pairings"],
    "properties": {
        "game": {"enum": list(GAMES)},
        "players": {"type": "integer", "minimum": 1, "maximum": MAX_PLAYERS},
        "games": {"type": "integer", "minimum": 1},
        "seed": {"type": "integer"},
        "rules": {"type": "object"},
        "optimum": _NUM_OR_NULL,
        "total_games": {"type": "integer", "minimum": 1},
        "agents": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "type": "object",
                "required": ["games", "mean_score", "ci95", "median", "std", "win_rate", "rating"],
                "properties": {
                    "games": {"type": "integer", "minimum": 1},
                    "mean_score": _NUM,
                    "ci95": _PAIR,
                    "median": _NUM,
                    "std": {"type": "number", "minimum": 0},
                    "win_rate": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                    "win_rate_ci95": {"oneOf": [_PAIR, {"type": "null"}]},
                    "rating": _NUM_OR_NULL,
                    "rating_ci95": {"oneOf": [_PAIR, {"type": "null"}]},
                    "rating_sd": _NUM_OR_NULL,
                    "upper_bonus_rate": {"type": "number", "minimum": 0, "maximum": 1},
                    "five_kind_rate": {"type": "number", "minimum": 0, "maximum": 1},
                    "gap_to_optimum": _NUM_OR_NULL,
                    "target_rate": {"type": "number", "minimum": 0, "maximum": 1},
                    "mean_turns": _NUM,
                    "mean_turns_to_target": _NUM_OR_NULL,
                },
            },
        },
        "pairings": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["agents", "games", "wins", "win_rate", "ci95"],
                "properties": {
                    "agents": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                    "games": {"type": "integer", "minimum": 1},
                    "wins": {"type": "array", "items": _NUM},
                    "win_rate": {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}},
                    "ci95": {"type": "array", "items": _PAIR},
                    "seat_games": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
                },
            },
        },
    },
}


#: The files :func:`write_outputs` may write into its folder.
OUTPUT_FILES = ("results.json", "games.csv", "scores.png", "win_matrix.png", "exact.json")


def write_outputs(
    result: EvaluationResult, out_dir: str | Path, plots: bool = True, overwrite: bool = False
) -> dict[str, Path]:
    """Write ``results.json``, ``games.csv`` (a row per game, enough to replay it with
    :func:`agents.evaluation.replay`) and (``plots``) ``scores.png`` / ``win_matrix.png`` (tables
    only), atomically; return the paths by kind. An existing file is a :class:`FileExistsError`
    unless ``overwrite`` (checked for all files before any is written).
    """
    out = Path(out_dir)
    if not overwrite:
        check_out_dir(out, force=False, files=OUTPUT_FILES)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    summary = result.summary()
    paths["results"] = out / "results.json"
    atomic_write_text(paths["results"], json.dumps(summary, indent=2) + "\n", overwrite=overwrite)

    paths["games"] = out / "games.csv"
    k = result.players
    with atomic_open(paths["games"], "w", overwrite=overwrite, newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        head = ["pairing", "game", "rotation", "seat_order", "seed"]
        for s in range(k):
            head += [f"seat{s}_agent", f"seat{s}_score", f"seat{s}_turns", f"seat{s}_agent_seed"]
        w.writerow([*head, "winners", "truncated"])
        for rec in result.records:
            row: list[Any] = [rec.pairing, rec.deal, rec.rotation, "|".join(rec.seats), rec.seed]
            for s in range(k):
                row += [rec.seats[s], rec.scores[s], rec.turns[s], rec.agent_seeds[s]]
            w.writerow([*row, "|".join(rec.seats[s] for s in rec.winners), int(rec.truncated)])

    if plots:
        paths["scores"] = _plot_scores(result, out / "scores.png", overwrite)
        if not result.solitaire:
            paths["win_matrix"] = _plot_win_matrix(result, out / "win_matrix.png", overwrite)
    return paths


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save_figure(plt: Any, fig: Any, path: Path, overwrite: bool) -> Path:
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, dpi=100, format="png")
    plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue(), overwrite=overwrite)


def _plot_scores(result: EvaluationResult, path: Path, overwrite: bool = False) -> Path:
    plt = _pyplot()
    per_agent = {a: [rec.scores[s] for rec in result.records for s, b in enumerate(rec.seats) if b == a]
                 for a in result.agents}  # fmt: skip
    lo = min(min(v) for v in per_agent.values())
    hi = max(max(v) for v in per_agent.values())
    bins = np.linspace(lo, hi + 1, 41) if hi > lo else 10
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for a, v in per_agent.items():
        line = ax.hist(v, bins=bins, histtype="step", linewidth=1.6, label=f"{a} (mean {np.mean(v):.1f})")
        ax.axvline(float(np.mean(v)), color=line[2][0].get_edgecolor(), linestyle="--", linewidth=1)
    if result.optimum is not None:
        ax.axvline(result.optimum, color="black", linewidth=1, label=f"optimum {result.optimum:.1f}")
    mode = "solitaire" if result.solitaire else f"{result.players}-player"
    n_games = len(next(iter(per_agent.values())))
    ax.set_title(f"{result.game} {mode}: score distribution ({n_games} games per agent)")
    ax.set_xlabel("final score")
    ax.set_ylabel("games")
    ax.legend(fontsize=8)
    return _save_figure(plt, fig, path, overwrite)


def _plot_win_matrix(result: EvaluationResult, path: Path, overwrite: bool = False) -> Path:
    plt = _pyplot()
    m = result.win_matrix()
    n = len(result.agents)
    fig, ax = plt.subplots(figsize=(1.2 * n + 3, 1.0 * n + 2))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="RdYlGn")
    for i in range(n):
        for j in range(n):
            if not np.isnan(m[i, j]):
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=9)
    ax.set_xticks(range(n), result.agents, rotation=30, ha="right")
    ax.set_yticks(range(n), result.agents)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    ax.set_title(f"{result.game} {result.players}-player win rate (row vs column)")
    fig.colorbar(im, ax=ax, fraction=0.046)
    return _save_figure(plt, fig, path, overwrite)
