"""Sphinx extension: the figures of the multi-player guide, rendered from their dated record.

On ``builder-inited`` it writes ``docs/_generated/farkle-multiplayer.inc`` (a build output; the
suffix keeps it from being a page of its own), which ``docs/guide/multiplayer.md`` includes: what
each N-player Farkle equilibrium of :data:`RECORD` (``scripts/solve_farkle_field.py``) cost and
gave, as a table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gamepages import _table, _write

#: The dated record of the N-player equilibria, relative to the docs folder.
RECORD = Path("benchmarks/2026-12-07-epyc-2core/farkle-multiplayer.json")
#: The fragment written, relative to the docs folder.
FRAGMENT = Path("_generated") / "farkle-multiplayer.inc"
DOCS = Path(__file__).resolve().parents[1]
#: The time a solve may take to count as solved "in time" (the guide's largest targets).
LIMIT_S = 1800


def fragment(record: dict[str, Any]) -> str:
    """The Markdown of the guide's figures: every solve of every run, by players and target."""
    solves = sorted(
        ((s, run) for run in record["runs"] for s in run["solves"]),
        key=lambda pair: (pair[0]["players"], pair[0]["target"]),
    )
    rows = [
        [
            s["players"],
            f"{s['target']:,}",
            " / ".join(f"{p:.4f}" for p in s["win_probability"]),
            s["sweeps"],
            f"{s['final_round_s']:.0f} s",
            f"{s['total_s']:.0f} s",
            f"{s['peak_rss_mib']:,.0f} MiB",
            f"{run['hardware']['cpu']}, {run['hardware']['cores']} cores, {run['date']}",
            f"`{run['revision'].get('git_commit', '?')[:7]}`",
        ]
        for s, run in solves
    ]
    checks = [s["two_player_check"]["max_abs_difference"] for s, _ in solves if "two_player_check" in s]
    caps = sorted({s["cap"] for s, _ in solves})
    tols = sorted({s["tol"] for s, _ in solves})
    text = _table(
        [
            "Players",
            "Target",
            "P(win) by seat",
            "Sweeps",
            "Final round",
            "In all",
            "Peak RSS",
            "Measured on",
            "Code",
        ],
        rows,
    )
    text += (
        f"\nDefault rules but the target, cap {' / '.join(map(str, caps))} points, sweeps until no value "
        f"changes by more than {' / '.join(f'{t:g}' for t in tols)}. Wall times: *final round* is the "
        "part solved before the sweeps, *in all* the whole solve; *peak RSS* the process's peak so far."
    )
    if checks:
        text += (
            f" With two players every turn-start value equals `solve_farkle_win`'s within {max(checks):.0e}."
        )
    largest: dict[int, int] = {}
    for s, _ in solves:
        if s["total_s"] <= LIMIT_S:
            largest[s["players"]] = max(largest.get(s["players"], 0), s["target"])
    text += (
        "\n\nThe largest target solved within 30 minutes so far: "
        + "; ".join(f"{n} players, {t:,}" for n, t in sorted(largest.items()))
        + " (larger targets were not tried, or did not finish in that time)."
    )
    page = f"../{RECORD.with_suffix('')}"
    return (
        text + f"\n\nFrom the dated record {{doc}}`{page}`, with each solve's residual after every sweep.\n"
    )


def generate(app: Any) -> None:
    src = Path(app.srcdir)
    (src / FRAGMENT.parent).mkdir(exist_ok=True)
    record = json.loads((src / RECORD).read_text(encoding="utf-8"))
    _write(src / FRAGMENT, fragment(record))


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
