"""Sphinx extension: the N-player Farkle figures, rendered from their dated records.

On ``builder-inited`` it writes two build outputs (the suffix keeps them from being pages of their
own): ``docs/_generated/farkle-multiplayer.inc``, which ``docs/guide/multiplayer.md`` includes,
what each N-player Farkle equilibrium of :data:`RECORD` (``scripts/solve_farkle_field.py``) cost
and gave, as a table; and ``docs/_generated/farkle-exploitability.inc``, which
``docs/leaderboard.md`` includes, the exploitability of every Farkle agent at three and four
seats from :data:`EXPLOITABILITY` (``scripts/farkle_exploitability.py``).
"""

from __future__ import annotations

import itertools
import json
import shlex
from pathlib import Path
from typing import Any

from gamepages import _table, _write

#: The dated record of the N-player equilibria, relative to the docs folder.
RECORD = Path("benchmarks/2026-12-07-epyc-2core/farkle-multiplayer.json")
#: The fragment written, relative to the docs folder.
FRAGMENT = Path("_generated") / "farkle-multiplayer.inc"
#: The dated records of N-seat exploitability, relative to the docs folder.
EXPLOITABILITY = [
    Path("benchmarks/2026-12-07-xeon-2core/farkle-exploitability-3p.json"),
    Path("benchmarks/2026-12-07-xeon-2core/farkle-exploitability-3p-search.json"),
    Path("benchmarks/2026-12-08-xeon-2core/farkle-exploitability-4p.json"),
]
#: Their fragment, included by the leaderboard page.
EXPLOITABILITY_FRAGMENT = Path("_generated") / "farkle-exploitability.inc"
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


def exploitability_fragment(records: dict[Path, dict[str, Any]]) -> str:
    """The Markdown of the exploitability records (``scripts/farkle_exploitability.py``): per
    number of seats (a heading each where the records hold several), one table over their agents,
    ranked as ``dice-envs leaderboard`` ranks them, then where each record comes from and the
    agents it could not measure."""
    groups: dict[int, dict[Path, dict[str, Any]]] = {}
    for path, record in records.items():
        groups.setdefault(record["players"], {})[path] = record
    if len(groups) == 1:
        return _seats_fragment(records)
    return "\n".join(
        f"### {players} seats\n\n{_seats_fragment(group)}" for players, group in sorted(groups.items())
    )


def _seats_fragment(records: dict[Path, dict[str, Any]]) -> str:
    """:func:`exploitability_fragment` of records of one number of seats."""
    from agents.evaluation.exploitability import exploitability_table

    found = {spec: r for record in records.values() for spec, r in record["agents"].items()}
    first = next(iter(records.values()))
    rules = ", ".join(f"{k} {v}" for k, v in first["rules"].items() if k != "max_turns")
    text = "\n".join(exploitability_table(found)) or "No agent's measure has ended in these records yet."
    text += (
        f"\n\n{first['players']} seats, default rules but the target ({rules}; the solved game has no "
        "turn limit). Exploitability is what a best-responding seat gains over its share on average "
        "over the seats (NashConv / seats); *seconds* is the wall time of the agent's best responses. "
        "From the dated records:\n"
    )
    for path, record in records.items():
        for i, run in enumerate([record, *record.get("resumed", [])]):
            hw, rev = run["hardware"], run["revision"]
            text += (
                f"\n- {{download}}`{path.name} </{path}>`{' (resumed)' if i else ''}: `{run['command']}` "
                f"({run['date']}, {hw['cores']} cores of {hw['cpu']}, code revision "
                f"`{str(rev.get('git_commit', '?'))[:7]}`)"
            )
    for record in records.values():
        for spec, why in record["skipped"].items():
            text += f"\n- `{spec}` is not measured: {why}"
        for spec, seats in record.get("partial", {}).items():
            solved = ", ".join(f"seat {s} {c:.2%}" for s, c in sorted(seats.items()))
            text += (
                f"\n- `{spec}` is not measured in full: its run was stopped after the best responses "
                f"of {len(seats)} of its {record['players']} seats, kept in the record ({solved})"
            )
        for spec in _stopped(record):
            text += (
                f"\n- `{spec}` is not measured: its run was stopped before the best responses to it "
                "ended (the record's page says why)"
            )
    return text + "\n"


def _stopped(record: dict[str, Any]) -> list[str]:
    """The agents its command names (``--agents``) that the record neither measured nor skipped:
    the script writes its record after every agent, so a stopped run names them only there."""
    words = shlex.split(record["command"])
    named = words[words.index("--agents") + 1 :] if "--agents" in words else []
    named = list(itertools.takewhile(lambda w: not w.startswith("--"), named))
    done = {**record["agents"], **record["skipped"], **record.get("partial", {})}
    return [s for s in named if s not in done]


def generate(app: Any) -> None:
    src = Path(app.srcdir)
    (src / FRAGMENT.parent).mkdir(exist_ok=True)
    record = json.loads((src / RECORD).read_text(encoding="utf-8"))
    _write(src / FRAGMENT, fragment(record))
    records = {path: json.loads((src / path).read_text(encoding="utf-8")) for path in EXPLOITABILITY}
    _write(src / EXPLOITABILITY_FRAGMENT, exploitability_fragment(records))


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
