#!/usr/bin/env python
"""Solve N-player Farkle exactly (every seat playing to win) at reduced targets and record the solves.

For each ``--targets`` value: :func:`agents.solver.farkle_field.equilibrium` with ``--players``
seats (default rules otherwise), timed, with every seat's chance of winning from the start, the
sweeps and their residuals. With two players the solve is checked against
:func:`agents.solver.farkle_win.solve_farkle_win` (solved afresh): the largest difference of any
turn-start value.

Examples::

    python scripts/solve_farkle_field.py --players 2 --targets 500 --out runs/farkle-field
    flock /tmp/heavy.lock python scripts/solve_farkle_field.py --players 3 --targets 500 1000 \\
        --out docs/benchmarks/2026-12-07-epyc-2core --append

``--out FOLDER`` receives ``farkle-multiplayer.json`` (the record: one entry per run of this
script, with its date, command, code revision and hardware) and ``farkle-multiplayer.md`` (the
same as a page), both written atomically after each solve. Existing files are refused unless
``--force`` (start the record afresh) or ``--append`` (add this run to the record there). Every
input is checked before the first solve.
"""

from __future__ import annotations

import argparse
import inspect
import json
import platform
import resource
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.benchmark.rates import available_cores, cpu_name
from agents.commands.cli import error
from agents.evaluation.regret import write_json
from agents.solver.farkle_field import equilibrium
from agents.solver.farkle_win import STEP, solve_farkle_win
from dice_envs.io import atomic_write_text, check_out_dir
from dice_envs.rules import ConfigError, FarkleRules, make_rules
from dice_envs.version import code_revision

#: The record's file names in ``--out`` (``.json`` and ``.md``).
NAME = "farkle-multiplayer"
#: The player counts this script solves (the solve grows steeply with each seat).
PLAYERS = (2, 3, 4)
#: The equilibrium's convergence tolerance (its default, recorded with each run).
TOL: float = inspect.signature(equilibrium).parameters["tol"].default


def check_args(args: argparse.Namespace) -> list[FarkleRules]:
    """Every input checked before the first solve (``ConfigError`` naming the flag); the rules to solve."""
    if args.cap < 0 or args.cap % STEP:
        raise ConfigError(f"--cap must be a non-negative multiple of {STEP} points, got {args.cap}")
    if len(set(args.targets)) != len(args.targets):
        raise ConfigError(f"--targets holds a target twice: {args.targets}")
    rules = []
    for target in args.targets:
        try:
            r = make_rules("farkle", target=target)
        except ConfigError as exc:
            raise ConfigError(f"--targets {target}: {exc}") from None
        assert isinstance(r, FarkleRules)
        rules.append(r)
    try:
        out = check_out_dir(args.out, force=args.force or args.append, files=[f"{NAME}.json", f"{NAME}.md"])
    except OSError as exc:
        raise ConfigError(str(exc)) from None
    if args.append:
        read_record(out / f"{NAME}.json")
    return rules


def read_record(path: Path) -> dict[str, Any]:
    """The record at ``path`` (``ConfigError`` if it is missing or not a record of this script)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--append: cannot read the record {path}: {exc}") from None
    if not isinstance(record, dict) or not isinstance(record.get("runs"), list):
        raise ConfigError(f"--append: {path} is not a record of scripts/solve_farkle_field.py (no 'runs')")
    return record


def solve(rules: FarkleRules, players: int, cap: int) -> dict[str, Any]:
    """One equilibrium, timed, as the record's entry (two players: checked against ``solve_farkle_win``)."""
    wall, cpu = time.perf_counter(), time.process_time()
    sol = equilibrium(rules, players, cap=cap, tol=TOL)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    sweeps = sol.log[1:]  # row 0: the final-round part, solved once before the sweeps
    entry: dict[str, Any] = {
        "players": players,
        "target": rules.target,
        "rules": {k: v for k, v in rules.to_dict().items() if k != "max_turns"},
        "cap": cap,
        "tol": TOL,
        "win_probability": [sol.win_probability(s) for s in range(players)],
        "sweeps": len(sweeps),
        "final_residual": sweeps[-1]["residual"],
        "final_round_s": round(sol.log[0]["seconds"], 2),
        "total_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "residuals": [row["residual"] for row in sweeps],
        "sweep_end_s": [round(row["seconds"], 2) for row in sweeps],
    }
    if players == 2:
        start = time.perf_counter()
        ref = solve_farkle_win(rules, cap=cap, use_cache=False)
        diff = max(
            float(np.abs(ref.S0 - sol.values[0, ..., 0]).max()),
            float(np.abs(ref.S1 - sol.values[1, ..., 1]).max()),
        )
        entry["two_player_check"] = {
            "max_abs_difference": diff,
            "solve_farkle_win_s": round(time.perf_counter() - start, 2),
        }
    entry["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return entry


def page(record: dict[str, Any]) -> str:
    """The record as a Markdown page (a run per section)."""
    lines = [
        "# Multi-player Farkle: exact equilibria at reduced targets\n",
        f"Written by `scripts/solve_farkle_field.py` together with `{NAME}.json`, which holds every "
        "figure below and each solve's residual after every sweep. Each seat maximises its own "
        "chance of winning (`agents.solver.farkle_field.equilibrium`, default rules but the "
        "target, no turn limit). *Final round*: the part of the solve spent on the final round, "
        "before the sweeps; *in all*: the whole solve, wall time; *peak RSS*: the process's peak "
        "resident memory by the end of the solve (its earlier solves included). With two players the "
        "`2-player check` is the largest difference of any turn-start value from "
        "`agents.solver.farkle_win.solve_farkle_win` (solved afresh).\n",
    ]
    for n, run in enumerate(record["runs"], start=1):
        hw, rev = run["hardware"], run["revision"]
        commit = str(rev.get("git_commit", rev["version"]))[:7] + (
            " (modified)" if rev.get("git_dirty") else ""
        )
        lines += [
            f"## Run {n}, {run['date']}\n",
            f"{hw['cpu']}, {hw['cores']} cores; Python {hw['python']}, numpy {hw['numpy']}; "
            f"code revision `{commit}`; cap {run['cap']} points, tolerance {run['tol']:g}. Command:\n",
            f"    {run['command']}\n",
            "| Players | Target | P(win) by seat | Sweeps | Final residual | Final round | In all "
            "| Peak RSS | 2-player check |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for e in run["solves"]:
            check = e.get("two_player_check")
            lines.append(
                f"| {e['players']} | {e['target']:,} | "
                + " / ".join(f"{p:.6f}" for p in e["win_probability"])
                + f" | {e['sweeps']} | {e['final_residual']:.1e} | {e['final_round_s']:.1f} s "
                f"| {e['total_s']:.1f} s | {e['peak_rss_mib']:,.0f} MiB | "
                + (f"{check['max_abs_difference']:.1e}" if check else "")
                + " |"
            )
        lines.append("")
    return "\n".join(lines)


def write(out: Path, record: dict[str, Any]) -> None:
    """Both files of the record, each atomically."""
    write_json(out / f"{NAME}.json", record)
    atomic_write_text(out / f"{NAME}.md", page(record), overwrite=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--players", type=int, choices=PLAYERS, required=True, help="seats at the table")
    ap.add_argument("--targets", type=int, nargs="+", required=True, help="targets to solve (points)")
    ap.add_argument("--cap", type=int, default=0, help="points above the target a seat may reach")
    ap.add_argument("--out", type=Path, required=True, help="folder of the record")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--force", action="store_true", help="overwrite the record in --out")
    group.add_argument("--append", action="store_true", help="add this run to the record in --out")
    args = ap.parse_args(argv)
    try:  # every input checked before the first solve, which may take minutes
        all_rules = check_args(args)
    except ConfigError as exc:
        return error(exc)
    out = Path(args.out)
    record = read_record(out / f"{NAME}.json") if args.append else {"runs": []}
    run: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "command": shlex.join(
            ["python", "scripts/solve_farkle_field.py", *(sys.argv[1:] if argv is None else argv)]
        ),
        "revision": code_revision(),
        "hardware": {
            "cpu": cpu_name(),
            "cores": available_cores(),
            "python": platform.python_version(),
            "numpy": np.__version__,
        },
        "cap": args.cap,
        "tol": TOL,
        "solves": [],
    }
    record["runs"].append(run)
    for rules in all_rules:
        entry = solve(rules, args.players, args.cap)
        run["solves"].append(entry)
        check = entry.get("two_player_check")
        print(
            f"{args.players} players, target {rules.target}: P(win) by seat "
            + ", ".join(f"{p:.6f}" for p in entry["win_probability"])
            + f"; {entry['sweeps']} sweeps, residual {entry['final_residual']:.1e}; "
            f"final round {entry['final_round_s']:.1f} s, in all {entry['total_s']:.1f} s"
            + (f"; vs solve_farkle_win {check['max_abs_difference']:.1e}" if check else ""),
            flush=True,
        )
        write(out, record)  # after each solve: a long run keeps what it measured
    print(f"wrote {out / NAME}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
