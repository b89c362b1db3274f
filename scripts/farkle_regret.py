#!/usr/bin/env python
"""Where two-player Farkle agents lose: the chance of winning each agent's decisions give away.

Every decision of each agent, playing ``--opponent`` (default ``win-optimal``) with its seat
alternating, is scored against the exact tables of ``win-optimal``
(:func:`agents.evaluation.regret.farkle_regret`), split by kind of mistake. Against
``win-optimal`` its mean is the win-rate deficit ``0.5 - win rate`` in expectation.

    python scripts/farkle_regret.py                                    # the default agents
    python scripts/farkle_regret.py --agents pretrained:farkle-scratch runs/f/f.zip --games 2000
    python scripts/farkle_regret.py --rules target=2000 --out runs/regret.json

Prints a Markdown table; ``--out`` also writes the figures as JSON (atomically; an existing
file needs ``--force``). Every input is checked before any game: the default agents leave out
models trained for other rules; a given agent that does not fit the rules is refused.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.cli import error
from agents.evaluation import parse_rule_overrides
from agents.evaluation.regret import FARKLE_MISTAKES, check_json_out, farkle_regret, fitting_specs, write_json
from agents.registry import check_fit, check_seed_arg
from dice_envs.rules import ConfigError, FarkleRules, make_rules

#: The default ``--agents``; those that do not fit the rules (models trained for others) are left out.
AGENTS = ["max-expected", "heuristic", "pretrained:farkle", "pretrained:farkle-scratch"]


def check_args(args: argparse.Namespace) -> tuple[FarkleRules, list[str], list[str]]:
    """Every input checked before any game (``ConfigError``, one line naming the flag): the rules,
    each agent spec against them, ``--seed`` and ``--out``. Returns the rules, the agents to score and the
    default agents left out (they do not fit the rules)."""
    rules = make_rules("farkle", **parse_rule_overrides(args.rules))
    assert isinstance(rules, FarkleRules)
    try:
        check_fit(args.opponent, rules, 2)
    except ConfigError as exc:
        raise ConfigError(f"--opponent: {exc}") from None
    specs, left_out = fitting_specs(args.agents, AGENTS, rules, "--agents")
    check_seed_arg(args.seed, "--seed", none=False)
    if args.out is not None:
        check_json_out(args.out, args.force)
    return rules, specs, left_out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--agents",
        nargs="+",
        default=None,
        help=f"agent specs or model files (default: those of {', '.join(AGENTS)} that fit the rules)",
    )
    p.add_argument("--opponent", default="win-optimal", help="the agents' opponent (agent spec)")
    p.add_argument("--games", type=int, default=500, help="games per agent (seats alternate)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="e.g. --rules target=5000")
    p.add_argument("--out", type=Path, default=None, help="also write the figures as JSON here")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    args = p.parse_args(argv)
    try:
        rules, specs, left_out = check_args(args)  # before any game
        rows, results = [], []
        for spec in specs:
            t = time.perf_counter()
            r = farkle_regret(spec, args.opponent, rules, games=args.games, seed=args.seed)
            results.append({**r.to_dict(), "seconds": time.perf_counter() - t})
            kinds = " | ".join(f"{100 * r.by_kind[k]:.2f}" for k in FARKLE_MISTAKES)
            lo, hi = r.ci95
            rows.append(
                f"| `{spec}` | **{100 * r.mean:.2f}** [{100 * lo:.2f}, {100 * hi:.2f}] | {kinds} "
                f"| {100 * r.wrong:.1f}% of {r.decisions} |"
            )
    except (ConfigError, ValueError, FileNotFoundError) as exc:
        return error(exc)
    print(
        f"Chance of winning given away per game against optimal play, in points of % ({args.games} games "
        f"each vs {args.opponent}, seats alternating, seed {args.seed}):\n"
    )
    print("| agent | per game [95% CI] | " + " | ".join(FARKLE_MISTAKES) + " | decisions that lose |")
    print("|---|---:|" + "---:|" * len(FARKLE_MISTAKES) + "---:|")
    print("\n".join(rows))
    if left_out:
        print(f"\n(left out of the default agents, as they do not fit these rules: {', '.join(left_out)})")
    if args.out is not None:
        figures = {"rules": rules.to_dict(), "games": args.games, "results": results}
        try:  # checked up front; this fails only if the path changed during the run
            write_json(args.out, figures, overwrite=args.force)
        except OSError as exc:
            return error(f"cannot write --out {args.out}: {exc}", 1)
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
