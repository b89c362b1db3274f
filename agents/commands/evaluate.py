"""Evaluate agents: a solitaire series or a seat-balanced round robin, with ratings and plots.

Examples::

    # Spiffel solitaire: 1000 games per agent, gap to the exact optimum
    dice-envs evaluate --game spiffel --agents random greedy optimal --games 1000
    # Farkle 2-player round robin: 200 deals per pairing, each played in both seat orders
    dice-envs evaluate --game farkle --agents random heuristic threshold:1000 --games 200 --out runs/f
    # changed rules
    dice-envs evaluate --game farkle --agents random heuristic --rules target=5000 --out /tmp/e

Writes ``OUT/results.json``, ``OUT/games.csv``, ``OUT/scores.png`` and (multi-player)
``OUT/win_matrix.png``, each atomically; prints a summary table (intervals are 95% confidence
intervals) and the folder it wrote. Without ``--out`` the folder is ``runs/eval-<game>``, or
``runs/eval-<game>-2``, ``-3``, ... when that one holds an earlier run. A given ``--out`` is checked
before any game is played: files of an earlier run there are not overwritten without ``--force``.
``--backend ray [--address ...]`` spreads the games over a Ray cluster (same results as the local
pool for the same seed). ``--exploitability`` (Farkle at the seats and reduced targets the
solver covers) adds each agent's exact exploitability, ``OUT/exploitability.json``. Exit status 2
on bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from agents.commands.cli import add_rules_option, error
from agents.evaluation import OUTPUT_FILES, default_players, evaluate, parse_rule_overrides, write_outputs
from agents.players.human import isatty
from agents.registry import check_seed_arg
from dice_envs.io import check_out_dir, fresh_folder
from dice_envs.rules import GAMES, ConfigError, make_rules, rules_class


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = argparse.ArgumentParser(
        prog="dice-envs evaluate",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1].replace("Examples::\n\n", "examples:\n").replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--game", required=True, help=f"one of: {', '.join(GAMES)}")
    p.add_argument("--agents", required=True, nargs="+", metavar="SPEC", help="agent specs (agents.load)")
    p.add_argument(
        "--games", type=int, default=100, help="games per agent (solitaire) or deals per pairing (tables)"
    )
    p.add_argument(
        "--players", type=int, default=None, help="seats per game (default: 1 scorecard games, 2 Farkle)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and agents (default 0)")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default runs/eval-<game>, or runs/eval-<game>-2, ... when that holds "
        "an earlier run)",
    )
    p.add_argument("--force", action="store_true", help="overwrite the files of an earlier run in --out")
    p.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    p.add_argument(
        "--backend", choices=("local", "ray"), default="local", help="local pool or Ray (same results)"
    )
    p.add_argument("--address", default=None, help="ray backend: an existing cluster (e.g. auto, host:6379)")
    add_rules_option(p, "target=5000")
    p.add_argument("--no-optimum", action="store_true", help="skip the exact-optimum lookup")
    p.add_argument(
        "--no-exact",
        action="store_true",
        help="skip the exact references (regret of scorecard solitaire agents, win-rate deficit of "
        "2-player Farkle agents against win-optimal; written to OUT/exact.json)",
    )
    p.add_argument(
        "--exploitability",
        action="store_true",
        help="farkle at a reduced target (agents.players.field_optimal.TARGET_LIMITS['best-response']): "
        "also each agent's exact exploitability at these rules and seats (costly; written to "
        "OUT/exploitability.json)",
    )
    p.add_argument(
        "--record-games",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write every game, decision by decision, to this game record file (JSON lines; "
        "each game is played a second time to note its decisions); read it with dice-envs review",
    )
    p.add_argument("--no-plots", action="store_true", help="write no scores.png / win_matrix.png")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no table")
    return p


def games_played(summary: dict[str, Any]) -> str:
    """What the games of a results.json dict were: per agent (solitaire) or per pairing (tables,
    each deal played once in every seat rotation), and how many in all."""
    total = summary["total_games"]
    if summary["players"] == 1:
        return f"{summary['games']} games per agent ({total} in all)"
    k, pairings = summary["players"], len(summary["pairings"])
    orders = "both seat orders" if k == 2 else f"all {k} seat rotations"
    return (
        f"{summary['games']} deals per pairing, each played in {orders} "
        f"({summary['games'] * k} games per pairing, {pairings} pairing{'s' * (pairings != 1)}, "
        f"{total} games in all)"
    )


def format_table(summary: dict[str, Any]) -> str:
    """A plain-text summary of a results.json dict."""
    lines = []
    solo = summary["players"] == 1
    head = f"{summary['game']} ({'solitaire' if solo else str(summary['players']) + '-player'}), "
    head += f"{games_played(summary)}, seed {summary['seed']}"
    if summary.get("optimum") is not None:
        head += f", optimum {summary['optimum']:.2f}"
    lines.append(head)
    for spec, s in summary["agents"].items():
        row = f"  {spec:<22} mean {s['mean_score']:9.2f} ± {s['mean_score'] - s['ci95'][0]:7.2f} (95% CI)"
        row += f"  median {s['median']:8.1f}  sd {s['std']:8.1f}"
        if "upper_bonus_rate" in s:
            row += f"  bonus {s['upper_bonus_rate']:.3f}  5-kind {s['five_kind_rate']:.3f}"
            if s.get("gap_to_optimum") is not None:
                row += f"  gap {s['gap_to_optimum']:.2f}"
        else:
            ttt = s.get("mean_turns_to_target")
            row += f"  target {s['target_rate']:.3f}  turns→target {ttt if ttt is None else round(ttt, 1)}"
        if s["win_rate"] is not None:
            lo, hi = s["rating_ci95"]
            row += f"  win {s['win_rate']:.3f}  rating {s['rating']:.0f} (95% CI {lo:.0f} to {hi:.0f})"
        lines.append(row)
    for p in summary["pairings"]:
        rates = "  ".join(
            f"{a} {r:.3f} [{lo:.3f}, {hi:.3f}]"
            for a, r, (lo, hi) in zip(p["agents"], p["win_rate"], p["ci95"], strict=True)
        )
        lines.append(f"  {' vs '.join(p['agents'])}: {p['games']} games, win rates [95% CI]: {rates}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = build_parser().parse_args(argv)
    t0 = time.perf_counter()
    try:
        check_seed_arg(args.seed, "--seed", none=False)
    except ConfigError as exc:
        return error(exc)
    if any(a.strip().lower() == "human" for a in args.agents) and not isatty(sys.stdin):
        return error("--agents human needs a terminal (stdin is not a tty)")
    try:  # the rules of --exploitability and the output folder are checked before any game is played
        overrides = parse_rule_overrides(args.rules)
        files = OUTPUT_FILES
        if args.exploitability:
            from agents.evaluation.exploitability import EXPLOITABILITY_FILE, check_exploitability

            rules = make_rules(args.game, **overrides)
            check_exploitability(rules, default_players(rules) if args.players is None else args.players)
            files = (*files, EXPLOITABILITY_FILE)
        if args.out is None:  # a new folder, never an earlier run's (as dice-envs train picks)
            args.out = fresh_folder(Path("runs") / f"eval-{rules_class(args.game)().game}")
            print(f"no --out given: writing to {args.out}", file=sys.stderr)
        check_out_dir(args.out, args.force, files=files)
        if args.record_games is not None and args.record_games.exists() and not args.force:
            raise ConfigError(f"--record-games {args.record_games} exists; pass --force to overwrite it")
    except (ConfigError, OSError) as exc:
        return error(exc)
    try:
        result = evaluate(
            args.game,
            args.agents,
            games=args.games,
            players=args.players,
            seed=args.seed,
            rules=overrides,
            workers=args.workers,
            progress=not args.quiet,
            optimum=not args.no_optimum,
            backend=args.backend,
            address=args.address,
        )
    except ConfigError as exc:
        return error(exc)
    try:
        paths = write_outputs(result, args.out, plots=not args.no_plots, overwrite=args.force)
    except OSError as exc:  # e.g. the folder was filled or made read-only while the games ran
        import tempfile

        rescue = Path(tempfile.mkdtemp(prefix="dice-envs-eval-"))
        write_outputs(result, rescue, plots=False)
        return error(f"{exc}; the results are saved in {rescue} instead")
    if args.record_games is not None:
        from agents.evaluation.gamerecord import evaluation_logs, write_records

        written = write_records(args.record_games, evaluation_logs(result), overwrite=args.force)
        if not args.quiet:
            print(f"wrote the game record {written} (read it with: dice-envs review {written})")
    if not args.no_exact:
        from agents.evaluation.regret import exact_references, exact_table, write_json

        refs = exact_references(result.rules, result.agents, result.players, args.games, args.seed)
        if refs:
            paths["exact"] = write_json(args.out / "exact.json", refs)
            if not args.quiet:
                print("\n".join(exact_table(refs)))
    if args.exploitability:
        from agents.evaluation.exploitability import agent_exploitability, exploitability_table
        from agents.evaluation.regret import write_json

        try:
            found = {
                spec: agent_exploitability(spec, result.rules, result.players, seed=args.seed)
                for spec in result.agents
            }
        except ConfigError as exc:  # an agent the solver refuses
            return error(exc)
        paths["exploitability"] = write_json(args.out / EXPLOITABILITY_FILE, found)
        if not args.quiet:
            print("\n".join(exploitability_table(found)))
    if not args.quiet:
        print(format_table(result.summary()))
        names = ", ".join(p.name for p in paths.values())
        print(f"wrote {names} in {args.out} ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
