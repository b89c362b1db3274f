#!/usr/bin/env python
"""Sweep our trainer's hyper-parameters on Ray Tune: every trial one training run with its own folder.

Examples::

    python scripts/sweep.py configs/sweeps/tiny.yaml --out runs/sweep-tiny
    ray start --head && python scripts/sweep.py configs/sweeps/tiny.yaml --out runs/s --address auto

Writes ``OUT/trials/<trial>/`` (one run folder each: model, card, curve), ``OUT/summary.csv``,
``OUT/summary.md`` and ``OUT/trials.png``; prints the table. Exit status 2 on bad input (refused
before Ray starts), 1 when a trial failed (its reason in the summary's error column), else 0.
The sweep file format is documented in ``agents/ray/sweep.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.cli import error
from agents.ray.sweep import check_out, load_sweep, run_sweep
from dice_envs.rules import ConfigError


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sweep", type=Path, help="sweep YAML (base, space, num_samples, metric, ...)")
    p.add_argument("--out", required=True, type=Path, help="a new (or empty) output folder")
    p.add_argument("--address", default=None, help="an existing Ray cluster (auto, host:6379); default local")
    p.add_argument("--num-samples", type=int, default=None, help="override num_samples")
    args = p.parse_args(argv)
    try:
        check_out(args.out)  # a file, or a folder that is not empty: refused before anything runs
        sweep = load_sweep(args.sweep)
        if args.num_samples is not None:
            if args.num_samples < 1:
                raise ConfigError(f"--num-samples must be >= 1, got {args.num_samples}")
            sweep["num_samples"] = args.num_samples
        rows = run_sweep(sweep, args.out, address=args.address)
    except ConfigError as exc:
        return error(exc)
    summary = args.out / "summary.md"
    print(summary.read_text())
    failed = sum("error" in r for r in rows)
    if failed:
        why = f"their reasons are in the error column of {summary}"
        return error(f"{failed} of {len(rows)} trials failed; {why}", 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
