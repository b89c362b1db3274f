#!/usr/bin/env python
"""Solve two-player Farkle exactly (both seats playing to win) and measure the solve.

Prints P(seat 0 wins), the solve's wall and CPU time, its peak memory (max RSS of the process),
the number of value-iteration sweeps, the head start (points given to the seat at a
disadvantage) that makes the game fairest, and optionally:

* ``--check-cap``: solves again with twice the cap and prints the largest change of any value;
* ``--matches N``: ``win-optimal`` against each ``--opponents`` spec, ``N`` games in each seat
  (native vector env), win rates with seats balanced. The default opponents leave out those
  that do not fit the rules (a model trained for others); a given one that does not is refused.

Examples::

    nice -n 10 python scripts/solve_farkle_win.py --no-cache --check-cap          # default rules
    python scripts/solve_farkle_win.py --target 1000 --bankruptcy false --matches 2000
    python scripts/solve_farkle_win.py --matches 2000 --out runs/farkle_win.json

``--out`` writes the figures as JSON (atomically; an existing file needs ``--force``). Every
input (rules, opponents, ``--out``) is checked before the solve.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.cli import error
from agents.evaluation.regret import check_json_out, farkle_match, fitting_specs, write_json
from agents.registry import check_seed_arg
from agents.solver.farkle_win import DEFAULT_CAP, STEP, FarkleWinSolution, solve_farkle_win
from dice_envs.rules import ConfigError, FarkleRules, make_rules

#: The default ``--opponents``; those that do not fit the rules solved (a model trained for
#: other rules) are left out, with a note.
OPPONENTS = ["max-expected", "heuristic", "threshold:400", "pretrained:farkle"]


def _bool(text: str) -> bool:
    low = text.lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def fairest_head_start(sol: FarkleWinSolution) -> dict[str, Any]:
    """The head start for the seat at a disadvantage that brings P(seat 0 wins) closest to 1/2."""
    p = sol.win_probability()
    behind = 0 if p < 0.5 else 1
    best = (abs(p - 0.5), 0, p)
    for h in range(STEP, sol.rules.target, STEP):
        q = sol.start_value(h, 0) if behind == 0 else sol.start_value(0, h)
        best = min(best, (abs(q - 0.5), h, q))
    return {"seat": behind, "points": best[1], "p_seat0": best[2]}


def check_args(args: argparse.Namespace) -> tuple[FarkleRules, list[str], list[str]]:
    """Every input checked before the solve (``ConfigError``, one line naming the flag): the rules,
    ``--matches``, ``--cap``, ``--seed``, each ``--opponents`` spec against the rules and ``--out``. Returns
    the rules, the opponents to play and the default opponents left out (they do not fit)."""
    rules = make_rules(
        "farkle", target=args.target, bank_minimum=args.bank_minimum, bankruptcy=args.bankruptcy
    )
    assert isinstance(rules, FarkleRules)
    if args.matches < 0 or args.cap < 0:
        flag, value = ("--matches", args.matches) if args.matches < 0 else ("--cap", args.cap)
        raise ConfigError(f"{flag} must be 0 or more, got {value}")
    check_seed_arg(args.seed, "--seed", none=False)
    opponents, left_out = fitting_specs(args.opponents, OPPONENTS, rules, "--opponents")
    if args.out is not None:
        check_json_out(args.out, args.force)
    return rules, opponents, left_out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--target", type=int, default=10_000)
    ap.add_argument("--bank-minimum", type=int, default=350)
    ap.add_argument("--bankruptcy", type=_bool, default=True)
    ap.add_argument("--cap", type=int, default=DEFAULT_CAP, help="points above the target seat 0 may reach")
    ap.add_argument("--no-cache", action="store_true", help="solve without reading or writing the cache")
    ap.add_argument("--check-cap", action="store_true", help="also solve with twice the cap and compare")
    ap.add_argument(
        "--matches", type=int, default=0, metavar="N", help="games per seat against each opponent"
    )
    ap.add_argument(
        "--opponents",
        nargs="+",
        default=None,
        help=f"agent specs (default: those of {', '.join(OPPONENTS)} that fit the rules)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    ap.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    args = ap.parse_args(argv)
    try:  # every input checked before the solve, which may take minutes
        rules, opponents, left_out = check_args(args)
    except ConfigError as exc:
        return error(exc)
    figures: dict[str, Any] = {"rules": {k: v for k, v in rules.to_dict().items() if k != "max_turns"}}
    wall, cpu = time.perf_counter(), time.process_time()
    sol = solve_farkle_win(rules, cap=args.cap, use_cache=not args.no_cache)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    p = sol.win_probability()
    figures.update(
        p_seat0=p,
        cap=args.cap,
        loaded_from_cache=sol.loaded_from_cache,
        solve_wall_s=round(wall, 1),
        solve_cpu_s=round(cpu, 1),
        peak_rss_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        sweeps=len(sol.log),
        last_residual=sol.log[-1]["residual"] if sol.log else None,
        threads=os.environ.get("DICE_ENVS_SOLVER_THREADS", "auto"),
    )
    how = "loaded from the cache" if sol.loaded_from_cache else f"solved in {len(sol.log)} sweeps"
    print(f"farkle {figures['rules']}: P(seat 0 wins) = {p:.10f}")
    print(f"{how}: wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS {figures['peak_rss_mib']:.0f} MiB")
    head = fairest_head_start(sol)
    figures["fairest_head_start"] = head
    print(
        f"fairest head start: seat {head['seat']} starts with {head['points']} points "
        f"-> P(seat 0 wins) = {head['p_seat0']:.4f}"
    )
    if args.check_cap:
        other = solve_farkle_win(rules, cap=2 * args.cap, use_cache=not args.no_cache)
        diff = max(float(abs(sol.S0 - other.S0).max()), float(abs(sol.S1 - other.S1).max()))
        figures["cap_doubling_max_change"] = diff
        print(f"cap {args.cap} -> {2 * args.cap}: largest change of a turn-start value {diff:.3g}")
    if args.matches:
        if left_out:
            print(
                f"(left out of the default opponents, as they do not fit these rules: {', '.join(left_out)})"
            )
        rows = []
        for spec in opponents:
            start = time.perf_counter()
            m = farkle_match("win-optimal", spec, rules, games=args.matches, seed=args.seed)
            lo, hi = m.ci95
            rows.append(m.to_dict())
            print(
                f"win-optimal vs {spec:<18} {m.win_rate:.2%} [{lo:.2%}, {hi:.2%}]  (seat 0 {m.share[0]:.2%}, "
                f"seat 1 {m.share[1]:.2%}; {2 * args.matches} games, {time.perf_counter() - start:.0f} s)"
            )
        figures["matches"] = rows
    if args.out is not None:
        try:  # checked up front; this fails only if the path changed during the run
            write_json(args.out, figures, overwrite=args.force)
        except OSError as exc:
            return error(f"cannot write --out {args.out}: {exc}", 1)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
