"""Leaderboard: every built-in agent (and shipped bot) on every game, as a markdown page.

For each game a solitaire table (mean ± 95% CI, median, upper-bonus and five-of-a-kind rates, gap
to the exact optimum; Farkle: rate of reaching the target and turns to it), and a 2-player Farkle
round robin (win rates with 95% CIs per pairing, Bradley-Terry ratings fitted to all games). Each run's
``results.json``, ``games.csv`` and plots go to ``--runs DIR/<game>-<mode>/``.

    dice-envs leaderboard --out leaderboard.md                 # default budget, ~minutes
    dice-envs leaderboard --games 2000 --tournament-games 500  # tighter intervals

Agents that a game does not support (``agents.load`` raises ``ConfigError``) are left out of
that game's table, and ``pretrained:<game>`` is included when ``agents/pretrained/`` ships it.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.evaluation import OUTPUT_FILES, evaluate, write_outputs
from agents.players.model import PRETRAINED_DIR
from agents.registry import check_seed_arg, known_specs, load
from dice_envs.io import atomic_write_text, check_out_dir
from dice_envs.rules import GAMES, ConfigError, make_rules

#: What a ``threshold:N`` entry of ``known_specs`` is expanded to.
THRESHOLDS: tuple[int, ...] = (400, 1000)


def candidate_specs(game: str) -> list[str]:
    """Built-in specs of ``game`` (from ``agents.registry.known_specs``) plus shipped bots.

    ``threshold:N`` becomes one entry per :data:`THRESHOLDS`; interactive (``human``) and
    placeholder entries are left out; ``pretrained:<stem>`` is added for every
    ``agents/pretrained/<game>*.zip``.
    """
    specs: list[str] = []
    for spec in known_specs(game):
        if spec == "threshold:N":
            specs += [f"threshold:{n}" for n in THRESHOLDS]
        elif spec != "human" and "<" not in spec and " " not in spec:
            specs.append(spec)
    if PRETRAINED_DIR.is_dir():
        specs += [f"pretrained:{p.stem}" for p in sorted(PRETRAINED_DIR.glob(f"{game}*.zip"))]
    return specs


def available_specs(game: str, players: int) -> list[str]:
    """The candidate specs that :func:`agents.load` builds for ``game`` with ``players`` seats."""
    rules = make_rules(game)
    ok = []
    for spec in candidate_specs(game):
        try:
            load(spec, game=rules, num_players=players, seed=0)
        except (ConfigError, FileNotFoundError, ImportError) as exc:
            print(f"leaderboard: skipping {spec!r} for {game} ({players}p): {exc}", file=sys.stderr)
            continue
        ok.append(spec)
    return ok


def _f(x: float | None, nd: int = 1) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def solitaire_table(summary: dict[str, Any]) -> list[str]:
    """Markdown rows of a solitaire results.json dict, best mean first."""
    if summary["game"] == "farkle":  # fewer turns is better; a truncated game counts max_turns
        rows = sorted(summary["agents"].items(), key=lambda kv: kv[1]["mean_turns"])
        lines = [
            "| agent | mean turns (all games) | reached target | turns to target | final score ± 95% CI |",
            "|---|---:|---:|---:|---:|",
        ]
        for spec, s in rows:
            half = s["mean_score"] - s["ci95"][0]
            lines.append(
                f"| `{spec}` | {s['mean_turns']:.1f} | {s['target_rate']:.1%} | "
                f"{_f(s['mean_turns_to_target'])} | {s['mean_score']:.0f} ± {half:.0f} |"
            )
        return lines
    rows = sorted(summary["agents"].items(), key=lambda kv: -kv[1]["mean_score"])
    lines = [
        "| agent | mean ± 95% CI | median | sd | upper bonus | five of a kind | gap to optimum |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for spec, s in rows:
        half = s["mean_score"] - s["ci95"][0]
        lines.append(
            f"| `{spec}` | {s['mean_score']:.1f} ± {half:.1f} | {s['median']:.0f} | {s['std']:.1f} | "
            f"{s['upper_bonus_rate']:.1%} | {s['five_kind_rate']:.1%} | {_f(s['gap_to_optimum'], 2)} |"
        )
    return lines


def tournament_tables(summary: dict[str, Any]) -> list[str]:
    """Markdown: ratings per agent, then one row per pairing."""
    rows = sorted(summary["agents"].items(), key=lambda kv: -kv[1]["rating"])
    lines = [
        "| agent | rating (Bradley-Terry, Elo scale) [95% CI] | win rate ± 95% CI | mean score |",
        "|---|---:|---:|---:|",
    ]
    for spec, s in rows:
        lo, hi = s["win_rate_ci95"]
        rlo, rhi = s["rating_ci95"]
        lines.append(
            f"| `{spec}` | {s['rating']:.0f} [{rlo:.0f}, {rhi:.0f}] | {s['win_rate']:.1%} "
            f"[{lo:.1%}, {hi:.1%}] | {s['mean_score']:.0f} |"
        )
    lines += ["", "| pairing | games | win rate of first [95% CI] | shared wins |", "|---|---:|---:|---:|"]
    for p in summary["pairings"]:
        a, b = p["agents"]
        lo, hi = p["ci95"][0]
        rate = f"{p['win_rate'][0]:.1%} [{lo:.1%}, {hi:.1%}]"
        lines.append(f"| `{a}` vs `{b}` | {p['games']} | {rate} | {p['shared_wins']} |")
    return lines


def run_folders(runs: Path, games: Sequence[str]) -> list[Path]:
    """The per-run output folders of a leaderboard over ``games``."""
    folders = [runs / f"{game}-solitaire" for game in games]
    return folders + ([runs / "farkle-2p"] if "farkle" in games else [])


def check_outputs(out: Path, runs: Path, games: Sequence[str], force: bool) -> None:
    """Refuse (``OSError`` naming the path) outputs that exist, unless ``force``, or cannot be written."""
    if out.is_dir():
        raise IsADirectoryError(f"--out {out} is a folder; give the markdown file to write")
    if out.exists() and not force:
        raise FileExistsError(f"--out {out} already exists; pass --force to overwrite it")
    check_out_dir(out.parent if str(out.parent) else Path("."), force=True)
    for folder in run_folders(runs, games):
        check_out_dir(folder, force, files=OUTPUT_FILES, flag="--runs")


def check_numbers(args: argparse.Namespace) -> None:
    """Refuse (``ConfigError`` naming the flag) a count below 1 or a negative seed, before any game."""
    counts = {
        "--games": args.games,
        "--tournament-games": args.tournament_games,
        "--farkle-solitaire-games": args.farkle_solitaire_games,
        "--workers": args.workers,
    }
    for flag, value in counts.items():
        if value is not None and value < 1:
            raise ConfigError(f"{flag} must be a positive integer, got {value}")
    check_seed_arg(args.seed, "--seed", none=False)


def main(argv: list[str] | None = None) -> int:
    """Run every evaluation and write the markdown leaderboard."""
    ap = argparse.ArgumentParser(
        prog="dice-envs leaderboard",
        description=__doc__.split("\n\n")[0],
        epilog="examples:\n" + __doc__.split("\n\n")[2],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--out", type=Path, default=Path("leaderboard.md"), help="the markdown file to write")
    ap.add_argument("--runs", type=Path, default=Path("runs/leaderboard"), help="per-run outputs")
    ap.add_argument("--games", type=int, default=300, help="solitaire games per agent and game (default 300)")
    ap.add_argument(
        "--tournament-games", type=int, default=150, help="Farkle deals per pairing, ×2 seats (default 150)"
    )
    ap.add_argument("--farkle-solitaire-games", type=int, default=None, help="default: --games / 3")
    ap.add_argument("--seed", type=int, default=0, help="seed of every evaluation (default 0)")
    ap.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    ap.add_argument(
        "--only", nargs="+", choices=list(GAMES), default=list(GAMES), help="games to include (at least one)"
    )
    ap.add_argument("--quiet", action="store_true", help="no progress bars, do not print the page")
    ap.add_argument("--force", action="store_true", help="overwrite --out and the files of earlier runs")
    ap.add_argument(
        "--no-exact", action="store_true", help="no regret / win-optimal columns (and no win-optimal)"
    )
    args = ap.parse_args(argv)
    args.only = list(dict.fromkeys(args.only))  # a game named twice is played once
    try:  # every number and output checked before any game is played
        check_numbers(args)
        check_outputs(args.out, args.runs, args.only, args.force)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        md = build_page(args)
    except ConfigError as exc:  # a bad value the checks above did not foresee: no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    atomic_write_text(args.out, "\n".join(md) + "\n", overwrite=args.force)
    if not args.quiet:
        print("\n".join(md))
    return 0


def page_command(args: argparse.Namespace) -> str:
    """The command that plays the same page: every option that changes what it holds (not where
    it goes, how many processes play it or how much it prints).

    >>> page_command(argparse.Namespace(games=300, tournament_games=150, farkle_solitaire_games=None,
    ...     seed=0, only=["farkle"], no_exact=True))
    'scripts/leaderboard.py --games 300 --tournament-games 150 --seed 0 --only farkle --no-exact'
    """
    words = [f"scripts/leaderboard.py --games {args.games} --tournament-games {args.tournament_games}"]
    if args.farkle_solitaire_games is not None:
        words.append(f"--farkle-solitaire-games {args.farkle_solitaire_games}")
    words.append(f"--seed {args.seed}")
    if list(args.only) != list(GAMES):
        words.append("--only " + " ".join(args.only))
    if args.no_exact:
        words.append("--no-exact")
    return " ".join(words)


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else what :mod:`platform` knows)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def run_line(workers: int | None) -> str:
    """When and where the page was played: the UTC date, the CPU, the usable cores, the workers."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    used = f", {workers} worker processes" if workers else ""
    return f"Played {date} on {cores} cores of {cpu_name()}{used}."


def build_page(args: argparse.Namespace) -> list[str]:
    """Play every evaluation the arguments ask for; the lines of the markdown page."""
    t_start = time.perf_counter()
    md = [
        "# Leaderboard",
        "",
        f"Generated by `{page_command(args)}` (default rules of every game). Intervals are 95%; "
        "solitaire games of all agents use the same dice seeds.",
        "",
        run_line(args.workers),
        "",
    ]
    for game in args.only:
        solo_games = args.games
        if game == "farkle":
            solo_games = args.farkle_solitaire_games or max(1, args.games // 3)
        specs = [s for s in available_specs(game, 1) if s != "win-optimal"]  # a 2-player policy
        t0 = time.perf_counter()
        res = evaluate(
            game,
            specs,
            games=solo_games,
            players=1,
            seed=args.seed,
            workers=args.workers,
            progress=not args.quiet,
        )
        write_outputs(res, args.runs / f"{game}-solitaire", overwrite=args.force)
        summary = res.summary()
        title = f"## {game} — solitaire, {solo_games} games per agent"
        if summary["optimum"] is not None:
            title += f" (exact optimum {summary['optimum']:.2f})"
        md += [title, "", *solitaire_table(summary), ""]
        if not args.no_exact and game != "farkle":
            from agents.evaluation.regret import exact_references, exact_table

            refs = exact_references(res.rules, specs, 1, solo_games, args.seed)
            md += ["Regret against the exact optimum (same games' dice seeds):", "", *exact_table(refs), ""]
        md.append(
            f"_{time.perf_counter() - t0:.0f} s; plots: `{args.runs / (game + '-solitaire')}/scores.png`_"
        )
        md.append("")
        specs2 = available_specs(game, 2) if game == "farkle" else []
        if args.no_exact:
            specs2 = [s for s in specs2 if s != "win-optimal"]
        if len(specs2) >= 2:
            t0 = time.perf_counter()
            res2 = evaluate(
                game,
                specs2,
                games=args.tournament_games,
                players=2,
                seed=args.seed,
                workers=args.workers,
                progress=not args.quiet,
            )
            write_outputs(res2, args.runs / "farkle-2p", overwrite=args.force)
            n = args.tournament_games
            md += [
                f"## farkle — 2-player round robin, {n} deals per pairing, each in both seat orders",
                "",
                *tournament_tables(res2.summary()),
                "",
                f"_{time.perf_counter() - t0:.0f} s; win-rate matrix: "
                f"`{args.runs / 'farkle-2p'}/win_matrix.png`_",
                "",
            ]
            if not args.no_exact:
                from agents.evaluation.regret import exact_references, exact_table

                refs = exact_references(res2.rules, specs2, 2, args.tournament_games, args.seed)
                md += [f"Against `win-optimal`, {args.tournament_games} games in each seat:", ""]
                md += [*exact_table(refs), ""]
    md.append(f"Total time {time.perf_counter() - t_start:.0f} s.")
    return md


if __name__ == "__main__":
    sys.exit(main())
