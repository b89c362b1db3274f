"""Leaderboard: every built-in agent and shipped bot on every game, as a markdown page.

Each table is ranked by the least noisy measure its game has; every ``±`` and ``[..]`` is a 95%
confidence interval. Each run's ``results.json``, ``games.csv``, plots and ``regret.json`` go to
``--runs DIR/<game>-<mode>/``; the opt-in N-seat Farkle section (``--field-target``,
:mod:`agents.commands.leaderboard_field`) writes to ``DIR/farkle-<N>p/``.

    dice-envs leaderboard --out leaderboard.md           # default budget, under 10 minutes on 2 cores
    dice-envs leaderboard --games 1000 --regret-games 1000 --tournament-games 300  # tighter intervals

The tables are those of :mod:`agents.commands.leaderboard_tables` (the evaluation guide explains
each). Agents that a game does not support (``agents.load`` raises ``ConfigError``) are left out
of that game's tables; shipped bots are found by their model cards (:func:`shipped_bots`). The
measured time of each part of the default budget is in the dated record
``docs/benchmarks/2026-12-06-epyc-2core/README.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import sys
import time
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from agents.commands import leaderboard_field as field
from agents.commands import leaderboard_tables as tables
from agents.commands.benchmark.rates import available_cores, cpu_name
from agents.commands.cli import error
from agents.evaluation import OUTPUT_FILES, evaluate, write_outputs
from agents.players import model as _model
from agents.registry import check_seed_arg, known_specs, load
from dice_envs.io import atomic_write_text, check_out_dir
from dice_envs.rules import GAMES, ConfigError, FarkleRules, RuleConfig, make_rules

#: What a ``threshold:N`` entry of ``known_specs`` is expanded to.
THRESHOLDS: tuple[int, ...] = (400, 1000)
#: What a run folder holds besides :data:`agents.evaluation.OUTPUT_FILES`.
REGRET_FILE = "regret.json"
#: Files in ``agents/pretrained/`` that are not model cards.
NOT_CARDS = frozenset({"measurements.json"})


def shipped_bots(game: str, folder: Path | None = None) -> list[str]:
    """``pretrained:<stem>`` for every model card ``<stem>.json`` in ``folder`` (default
    :data:`agents.players.model.PRETRAINED_DIR`) whose ``game`` is ``game``, by name.

    A card names its game whatever the model file beside it is; :data:`NOT_CARDS` and JSON
    files that are not model cards (:func:`agents.models.card.read_card` refuses them) are skipped.
    """
    from agents.models.card import read_card

    folder = _model.PRETRAINED_DIR if folder is None else folder
    if not folder.is_dir():
        return []
    specs = []
    for path in sorted(folder.glob("*.json")):
        if path.name in NOT_CARDS:
            continue
        try:
            card = read_card(path)
        except (ConfigError, KeyError, TypeError, ValueError):
            continue
        if card.get("game") == game:
            specs.append(f"pretrained:{path.stem}")
    return specs


def candidate_specs(game: str) -> list[str]:
    """Built-in specs of ``game`` (from ``agents.registry.known_specs``) plus its shipped bots.

    ``threshold:N`` becomes one entry per :data:`THRESHOLDS`; interactive (``human``) and
    placeholder entries are left out; :func:`shipped_bots` adds ``pretrained:<stem>``.
    """
    specs: list[str] = []
    for spec in known_specs(game):
        if spec == "threshold:N":
            specs += [f"threshold:{n}" for n in THRESHOLDS]
        elif spec != "human" and "<" not in spec and " " not in spec:
            specs.append(spec)
    return specs + [s for s in shipped_bots(game) if s not in specs]


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


def _one_thread() -> None:
    """A pool worker's set-up: one torch thread (the workers already share the cores)."""
    torch = sys.modules.get("torch")
    if torch is not None:  # pragma: no cover - only with torch-based agents
        torch.set_num_threads(1)


def _one_regret(spec: str, rules: RuleConfig, games: int, seed: int) -> Any:
    from agents.evaluation.regret import farkle_regret, scorecard_regret

    if isinstance(rules, FarkleRules):
        return farkle_regret(spec, tables.REFERENCE, rules, games=games, seed=seed)
    return scorecard_regret(spec, rules, games=games, seed=seed)


def _pool_map(run: Any, jobs: list[str], workers: int | None, desc: str | None) -> dict[str, Any]:
    """``run(job)`` per job, one job per process of a pool of ``workers`` (default: all cores; 1
    runs here); a progress bar named ``desc`` unless it is None."""
    n = min((os.cpu_count() or 1) if workers is None else workers, len(jobs))
    with contextlib.ExitStack() as stack:
        results: Iterable[Any] = map(run, jobs)
        if n > 1:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
            pool = stack.enter_context(ProcessPoolExecutor(n, mp_context=ctx, initializer=_one_thread))
            results = pool.map(run, jobs)
        if desc is not None:
            from tqdm.auto import tqdm

            results = tqdm(results, total=len(jobs), desc=desc, unit="agent", dynamic_ncols=True)
        return dict(zip(jobs, results, strict=True))


def regrets(
    rules: RuleConfig, specs: Sequence[str], games: int, seed: int, workers: int | None, progress: bool
) -> dict[str, Any]:
    """Per spec: :func:`~agents.evaluation.regret.scorecard_regret` (scorecard rules) or
    :func:`~agents.evaluation.regret.farkle_regret` against ``win-optimal`` (Farkle rules, two
    players; ``win-optimal`` itself is the reference, 0 by definition and not played), one agent
    per process of a pool of ``workers`` (default: all cores; 1 plays here)."""
    farkle = isinstance(rules, FarkleRules)
    jobs = [s for s in specs if not (farkle and s == tables.REFERENCE)]
    jobs.sort(key=lambda s: not s.startswith("pretrained:"))  # the slowest first
    run = partial(_one_regret, rules=rules, games=games, seed=seed)
    done = _pool_map(run, jobs, workers, f"{rules.game} regret" if progress else None)
    out = {s: done[s] for s in specs if s in done}
    if farkle and tables.REFERENCE in specs:
        out[tables.REFERENCE] = tables.reference_result()
    return out


def run_folders(runs: Path, games: Sequence[str], field_folder: Path | None = None) -> list[Path]:
    """The per-run output folders of a leaderboard over ``games`` (and of its N-seat section)."""
    folders = [runs / f"{game}-solitaire" for game in games]
    folders += [runs / "farkle-2p"] if "farkle" in games else []
    return folders + ([field_folder] if field_folder is not None and field_folder not in folders else [])


def check_outputs(
    out: Path, runs: Path, games: Sequence[str], force: bool, field_folder: Path | None = None
) -> None:
    """Refuse (``OSError`` naming the path) outputs that exist, unless ``force``, or cannot be written."""
    if out.is_dir():
        raise IsADirectoryError(f"--out {out} is a folder; give the markdown file to write")
    if out.exists() and not force:
        raise FileExistsError(f"--out {out} already exists; pass --force to overwrite it")
    try:
        check_out_dir(out.parent if str(out.parent) else Path("."), force=True)
    except OSError as exc:
        raise type(exc)(f"--out {out}: {exc}") from None
    files = (*OUTPUT_FILES, REGRET_FILE, *field.FIELD_FILES)
    for folder in run_folders(runs, games, field_folder):
        check_out_dir(folder, force, files=files, flag="--runs")


def check_numbers(args: argparse.Namespace) -> None:
    """Refuse (``ConfigError`` naming the flag) a count below 1 or a negative seed, before any game."""
    counts = {
        "--games": args.games,
        "--regret-games": args.regret_games,
        "--tournament-games": args.tournament_games,
        "--farkle-solitaire-games": args.farkle_solitaire_games,
        "--workers": args.workers,
    }
    for flag, value in counts.items():
        if value is not None and value < 1:
            raise ConfigError(f"{flag} must be a positive integer, got {value}")
    check_seed_arg(args.seed, "--seed", none=False)
    field.check_options(args)


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
    ap.add_argument(
        "--games", type=int, default=300, help="solitaire games per agent of a scorecard game (default 300)"
    )
    ap.add_argument(
        "--regret-games",
        type=int,
        default=300,
        help="games per agent of each regret measure: scorecard solitaire, 2-player Farkle against "
        "win-optimal and N-seat Farkle (--field-target) (default 300)",
    )
    ap.add_argument(
        "--tournament-games", type=int, default=100, help="Farkle deals per pairing, ×2 seats (default 100)"
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
        "--no-exact",
        action="store_true",
        help="no regret tables (scorecard tables ranked by mean score) and no win-optimal",
    )
    field.add_options(ap)
    args = ap.parse_args(argv)
    args.only = list(dict.fromkeys(args.only))  # a game named twice is played once
    try:  # every number and output checked before any game is played
        check_numbers(args)
        check_outputs(args.out, args.runs, args.only, args.force, field.field_folder(args))
    except (ConfigError, OSError) as exc:
        return error(exc)
    try:
        md = build_page(args)
    except ConfigError as exc:  # a bad value the checks above did not foresee: no traceback
        return error(exc)
    page = "\n".join(md) + "\n"
    try:
        atomic_write_text(args.out, page, overwrite=args.force)
    except OSError as exc:  # the folder went away or filled up while the games ran: keep the page
        return error(f"could not write {args.out} ({exc}); the page:\n{page}", 1)
    if not args.quiet:
        print(page, end="")
    return 0


def page_command(args: argparse.Namespace) -> str:
    """The command that plays the same page: every option that changes what it holds (not where
    it goes, how many processes play it or how much it prints).

    >>> page_command(argparse.Namespace(games=300, regret_games=300, tournament_games=100,
    ...     farkle_solitaire_games=None, seed=0, only=["farkle"], no_exact=True,
    ...     field_target=None, field_seats=3, exploitability=False))
    'dice-envs leaderboard --games 300 --tournament-games 100 --seed 0 --only farkle --no-exact'
    """
    words = [f"dice-envs leaderboard --games {args.games}"]
    if not args.no_exact:
        words.append(f"--regret-games {args.regret_games}")
    words.append(f"--tournament-games {args.tournament_games}")
    if args.farkle_solitaire_games is not None:
        words.append(f"--farkle-solitaire-games {args.farkle_solitaire_games}")
    words.append(f"--seed {args.seed}")
    if list(args.only) != list(GAMES):
        words.append("--only " + " ".join(args.only))
    if args.no_exact:
        words.append("--no-exact")
    if args.field_target is not None:
        words.append(f"--field-target {args.field_target} --field-seats {args.field_seats}")
        words += ["--exploitability"] if args.exploitability else []
    return " ".join(words)


def run_line(workers: int | None) -> str:
    """When and where the page was played: the UTC date, the CPU, the usable cores, the workers."""
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    used = f", {workers} worker processes" if workers else ""
    return f"Played {date} on {available_cores()} cores of {cpu_name()}{used}."


def build_page(args: argparse.Namespace) -> list[str]:
    """Play every evaluation the arguments ask for; the lines of the markdown page."""
    t_start = time.perf_counter()
    md = [
        "# Leaderboard",
        "",
        f"Generated by `{page_command(args)}` (default rules of every game). Every ± and [..] is a "
        "95% confidence interval; solitaire games of all agents use the same dice seeds. Rank 1 is "
        "the best agent of a table. The plots a table names are the command's: it writes them under "
        "`runs/leaderboard/`, beside each table's `results.json` and `games.csv`. This page is one "
        "run at this budget; the shipped bots' reference figures are those of their record, "
        "`agents/pretrained/measurements.json` (the agents guide).",
        "",
        run_line(args.workers),
        "",
    ]
    for game in args.only:
        md += _solitaire(game, args)
        if game == "farkle":
            md += _two_player_farkle(args)
            if args.field_target is not None:
                md += field.section(args, candidate_specs("farkle"), _pool_map)
    md.append(f"Total time {time.perf_counter() - t_start:.0f} s.")
    return md


def _solitaire(game: str, args: argparse.Namespace) -> list[str]:
    """The solitaire section of ``game``: the series, its regrets (scorecard games), the table."""
    t0 = time.perf_counter()
    folder = args.runs / f"{game}-solitaire"
    solo_games = args.games
    if game == "farkle":
        solo_games = args.farkle_solitaire_games or max(1, args.games // 3)
    specs = [s for s in available_specs(game, 1) if s != tables.REFERENCE]  # a 2-player policy
    progress = not args.quiet
    res = evaluate(
        game, specs, games=solo_games, players=1, seed=args.seed, workers=args.workers, progress=progress
    )
    write_outputs(res, folder, overwrite=args.force)
    summary = res.summary()
    if game == "farkle":
        md = tables.farkle_solitaire_section(summary)
    else:
        found = None
        if not args.no_exact:
            found = regrets(res.rules, specs, args.regret_games, args.seed, args.workers, progress)
            _write_regrets(folder / REGRET_FILE, found, args.force)
        md = tables.scorecard_section(summary, found)
    return [*md, f"_{time.perf_counter() - t0:.0f} s; plots: `{folder}/scores.png`_", ""]


def _two_player_farkle(args: argparse.Namespace) -> list[str]:
    """The 2-player Farkle sections: the exact table (unless ``--no-exact``), the round robin."""
    specs = available_specs("farkle", 2)
    if args.no_exact:
        specs = [s for s in specs if s != tables.REFERENCE]
    if len(specs) < 2:
        return []
    folder = args.runs / "farkle-2p"
    md: list[str] = []
    rules = make_rules("farkle")
    if not args.no_exact:
        t0 = time.perf_counter()
        found = regrets(rules, specs, args.regret_games, args.seed, args.workers, not args.quiet)
        _write_regrets(folder / REGRET_FILE, found, args.force)
        md += [*tables.farkle_regret_section(found), f"_{time.perf_counter() - t0:.0f} s_", ""]
    t0 = time.perf_counter()
    res = evaluate(
        rules,
        specs,
        games=args.tournament_games,
        players=2,
        seed=args.seed,
        workers=args.workers,
        progress=not args.quiet,
    )
    write_outputs(res, folder, overwrite=args.force)
    md += tables.tournament_section(res.summary(), exact_above=not args.no_exact)
    md += [f"_{time.perf_counter() - t0:.0f} s; win-rate matrix: `{folder}/win_matrix.png`_", ""]
    return md


def _write_regrets(path: Path, found: dict[str, Any], force: bool) -> None:
    from agents.evaluation.regret import write_json

    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, {spec: r.to_dict() for spec, r in found.items()}, overwrite=force)


if __name__ == "__main__":
    sys.exit(main())
