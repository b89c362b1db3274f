#!/usr/bin/env python
"""Measure the shipped bots of ``agents/pretrained/`` over many games and record the figures.

What is measured is the agents guide's: a solitaire bot's points lost per game against the
optimum (:func:`agents.evaluation.regret.scorecard_regret`, over ``--regret-games`` games) and its
mean score beside ``optimal``'s on the same dice; a multi-player bot's win rate and share of wins
against each ``--opponents`` agent, seats balanced, with Wilson 95% intervals. ``--baselines SPEC
...`` measures built-in agents the same way on every scorecard game of the solitaire bots measured
(recorded as ``<game>:<spec>``, e.g. ``spiffel:heuristic``).

    python scripts/measure_bots.py                     # every bot, 5,000 games each, printed
    python scripts/measure_bots.py --record            # ... and recorded (see below)
    python scripts/measure_bots.py --bots spiffel --games 10000 --record --update-cards
    python scripts/measure_bots.py --bots farkle-scratch --opponents max-expected --seeds 1 2 3 4 5
    python scripts/measure_bots.py --render            # rewrite the figure tables of README and docs

``--seeds`` plays ``--games`` games for each seed and pools them (the points lost are measured at
the first seed). ``--record`` writes the figures to ``agents/pretrained/measurements.json`` (or
``--out PATH``), keeping the entries of bots not measured this time, each with the date, the
machine, the code revision and the command; ``--update-cards`` stores them in each card's
``evaluation.measured``; ``--render`` rewrites the blocks ``<!-- figures:NAME -->`` of
:data:`PAGES` from the record (:mod:`agents.evaluation.bot_figures`). Every input is checked
before the first game (``error: ...``, exit status 2); a figures file this script did not write
is refused, never merged into.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.cli import error
from dice_envs.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
PRETRAINED = ROOT / "agents" / "pretrained"
#: The pages whose ``<!-- figures:NAME -->`` blocks ``--render`` rewrites from the record.
PAGES = (
    "README.md",
    "docs/index.md",
    "docs/guide/agents.md",
    "docs/guide/search.md",
    "docs/leaderboard.md",
    "docs/benchmarks/2026-12-06-epyc-2core/search.md",
)


def _pooled_scores(parts: list) -> tuple[float, float, float]:
    """Mean, standard error and standard deviation of the final scores of several equal-size runs."""
    import numpy as np

    means = np.array([p.mean_score for p in parts])
    var = float(np.mean([p.std_score**2 for p in parts]) + np.var(means))
    n = sum(p.games for p in parts)
    return float(means.mean()), (var / n) ** 0.5, var**0.5


def revision() -> str:
    """The git commit of this checkout (``+modified`` when its code differs from it; ``unknown``
    outside a git checkout)."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
        ).stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        code = ["agents", "dice_envs", "scripts", ":(exclude)agents/pretrained"]
        return commit + (
            "+modified" if git("status", "--porcelain", "--untracked-files=no", "--", *code) else ""
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def provenance(argv: list[str]) -> dict:
    """When, where, at which code revision and by which command the figures were measured."""
    import datetime
    import shlex

    from agents.commands.benchmark.rates import available_cores, cpu_name

    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "machine": {"cpu": cpu_name(), "cores": available_cores()},
        "revision": revision(),
        "command": shlex.join(["python", "scripts/measure_bots.py", *argv]),
    }


def solitaire(agent, rules, games: int, seeds: list[int], regret_games: int, references: dict) -> dict:
    """Figures of a solitaire agent: its scores, ``optimal``'s on the same dice and the points lost.

    ``references`` caches ``optimal``'s figures per rules within a run (one game count and seeds)."""
    from agents.evaluation.regret import scorecard_regret
    from agents.registry import load
    from agents.solver.scorecard import solve_scorecard
    from agents.training.score_table import play_games
    from dice_envs.rules import ScorecardRules

    t0 = time.perf_counter()
    parts = [play_games(agent, rules, games, seed=seed, batch=128) for seed in seeds]
    play_seconds = time.perf_counter() - t0
    mean, stderr, std = _pooled_scores(parts)
    out: dict = dict(
        play_seconds=play_seconds,
        mean_score=mean,
        stderr=stderr,
        std=std,
        ci95=[mean - 1.96 * stderr, mean + 1.96 * stderr],
    )
    if len(seeds) > 1:
        out["per_seed_mean_score"] = [p.mean_score for p in parts]
    if not isinstance(rules, ScorecardRules):
        return out
    if repr(rules) not in references:
        best_player = load("optimal", game=rules, num_players=1)
        opt = [play_games(best_player, rules, games, seed=seed, batch=128) for seed in seeds]
        references[repr(rules)] = _pooled_scores(opt)[:2]
    best = float(solve_scorecard(rules).expected_score())
    optimal_mean, optimal_stderr = references[repr(rules)]
    out.update(optimal_mean_score=optimal_mean, optimal_stderr=optimal_stderr)
    out.update(optimum=best, share_of_optimum=mean / best)
    if regret_games:
        t0 = time.perf_counter()
        r = scorecard_regret(agent, rules, games=regret_games, seed=seeds[0])
        out["regret"] = {"games": r.games, "seed": seeds[0], "mean": r.mean, "ci95": list(r.ci95)}
        out["regret"]["seconds"] = time.perf_counter() - t0
    return out


def versus(agent, rules, players: int, spec: str, games: int, seeds: list[int]) -> dict:
    """Figures of a multi-player agent against ``players - 1`` copies of ``spec``, seats balanced."""
    from agents.evaluation import wilson_interval
    from agents.training.score_table import play_games

    opponents = [spec] * (players - 1)
    parts = [play_games(agent, rules, games, opponents=opponents, seed=seed, batch=128) for seed in seeds]
    wins, draws = sum(p.wins for p in parts), sum(p.draws for p in parts)
    total = sum(p.games for p in parts)
    row = {
        "games": total,
        "wins": wins,
        "draws": draws,
        "losses": sum(p.losses for p in parts),
        "win_rate": wins / total,
        "win_rate_ci95": wilson_interval(wins, total),
        "win_share": (wins + draws / 2) / total,
        "win_share_ci95": wilson_interval(wins + draws / 2, total),
        "mean_score": sum(p.mean_score for p in parts) / len(parts),
        "seats": "balanced (seat cycles over every game; each deal in every seat)",
    }
    if len(seeds) > 1:
        row["per_seed_win_rate"] = [p.win_rate for p in parts]
    return row


def rule_changes(rules) -> dict:
    """The rules' values that differ from their game's defaults (``{}`` for the default game)."""
    from dice_envs.rules import make_rules

    default = make_rules(rules.game).to_dict()
    return {k: v for k, v in rules.to_dict().items() if v != default.get(k)}


def figures_of(agent, name: str, rules, players: int, args: argparse.Namespace, references: dict) -> dict:
    """The figures of ``agent`` recorded under ``name``: ``--games`` games per opponent (solitaire:
    per agent) for each seed of ``args.seeds``, pooled; ``rules``: the rules that differ from the
    game's defaults (absent when none do)."""
    games, seeds = args.games, args.seeds
    t0 = time.perf_counter()
    result: dict = {
        "bot": name,
        "game": rules.game,
        "num_players": players,
        "games": games * len(seeds),
        "seed": seeds[0] if len(seeds) == 1 else list(seeds),
    }
    if changed := rule_changes(rules):
        result["rules"] = changed
    if players == 1:
        result.update(solitaire(agent, rules, games, seeds, args.regret_games, references))
    else:
        result["vs"] = {spec: versus(agent, rules, players, spec, games, seeds) for spec in args.opponents}
    result["seconds"] = time.perf_counter() - t0
    return result


def measure(path: Path, args: argparse.Namespace, references: dict) -> dict:
    """Figures of the bot of ``path``, loaded weights-only and checked against its card (a value
    model ``.npz``: search over it), seen through the card's view (seats, older encodings)."""
    from agents.players.model import ModelAgent
    from agents.players.search.agent import SearchAgent
    from dice_envs.rules import make_rules

    card = json.loads(path.with_suffix(".json").read_text())
    rules = make_rules(card["game"], **card["rules"])
    players = int(card["num_players"])
    if path.suffix == ".npz":
        agent = SearchAgent.from_file(str(path), path, rules, players)
    else:
        agent = ModelAgent.from_file(path, rules, players, deterministic=True)
    return figures_of(agent, path.stem, rules, players, args, references)


def measure_baseline(spec: str, game: str, args: argparse.Namespace, references: dict) -> dict:
    """Figures of the built-in agent ``spec`` on solitaire ``game`` (default rules), as for a bot."""
    from agents.registry import load
    from dice_envs.rules import make_rules

    rules = make_rules(game)
    agent = load(spec, game=rules, num_players=1, seed=args.seeds[0])
    return {"agent": spec, **figures_of(agent, f"{game}:{spec}", rules, 1, args, references)}


def _is_figures(key: str, entry: object) -> bool:
    """Whether ``entry`` is one bot's figures as :func:`measure` writes them (under its bot name)."""
    return (
        isinstance(entry, dict)
        and entry.get("bot") == key
        and isinstance(entry.get("game"), str)
        and isinstance(entry.get("num_players"), int)
        and isinstance(entry.get("games"), int)
        and ("mean_score" in entry or "vs" in entry)
    )


def read_figures(out: Path, flag: str = "--out") -> dict:
    """The figures already recorded in ``out`` (``{}`` for a new file), checked before any game.

    ``out`` must be a ``.json`` file path in an existing folder; an existing file must be a JSON
    object of figures this script wrote (bot name -> figures), else ``ConfigError`` says why.
    """
    from dice_envs.rules import ConfigError

    if out.is_dir():
        raise ConfigError(f"{flag} {out} is a folder; give the .json file to write the figures to")
    if out.suffix.lower() != ".json":
        raise ConfigError(f"{flag} {out} must be a .json file path")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise ConfigError(f"{flag} {out}: the folder {parent} does not exist")
    if not out.exists():
        return {}
    mine = f"{flag} {out} exists and is not a figures file of measure_bots.py"
    try:
        figures = json.loads(out.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{mine} ({type(exc).__name__}: {exc}); choose another path") from None
    if not isinstance(figures, dict):
        raise ConfigError(f"{mine} (it holds a JSON {type(figures).__name__}); choose another path")
    strange = [k for k, v in figures.items() if not _is_figures(k, v)]
    if strange:
        raise ConfigError(f"{mine} (entries {', '.join(map(repr, strange[:5]))}); choose another path")
    return figures


def bot_names(folder: Path) -> list[str]:
    """The bots of ``folder``: model files (policies, value models) with a card beside, by name."""
    from agents.players.model import MODEL_SUFFIXES

    return sorted(
        p.stem for p in folder.iterdir() if p.suffix in MODEL_SUFFIXES and p.with_suffix(".json").is_file()
    )


def bot_path(folder: Path, name: str) -> Path | None:
    """The model file of bot ``name`` in ``folder`` (``None`` if it has none)."""
    from agents.players.model import MODEL_SUFFIXES

    return next((p for s in MODEL_SUFFIXES if (p := folder / f"{name}{s}").is_file()), None)


def check_args(args: argparse.Namespace, names: list[str], out: Path | None) -> dict:
    """Every input checked before any game (``ConfigError`` naming it): the counts and seeds,
    the bots and their cards, the opponents against each multi-player bot's game, and the
    figures file (see :func:`read_figures`). Returns the figures already in it."""
    from agents.models.card import card_rules, read_card
    from agents.registry import check_seed_arg, check_spec
    from dice_envs.rules import ConfigError, make_rules

    if args.games < 1:
        raise ConfigError(f"--games must be a positive integer, got {args.games}")
    if args.regret_games < 0:
        raise ConfigError(f"--regret-games must be 0 (not measured) or more, got {args.regret_games}")
    for spec in args.baselines:
        try:
            check_spec(spec, make_rules("spiffel"))
        except ConfigError as exc:
            raise ConfigError(f"--baselines {spec!r}: {exc}") from None
    for seed in args.seeds or []:
        check_seed_arg(seed, "--seeds", none=False)
    check_seed_arg(args.seed, "--seed", none=False)
    for name in names:
        path = bot_path(args.dir, name)
        if path is None:
            raise ConfigError(f"no bot {name} in {args.dir}; bots: {', '.join(bot_names(args.dir))}")
        card = read_card(path)
        rules = card_rules(card, str(path))
        if int(card.get("num_players", 1)) > 1:
            if not args.opponents:
                raise ConfigError(f"{name} is a multi-player bot: give --opponents (e.g. heuristic)")
            for spec in args.opponents:
                try:
                    check_spec(spec, rules)
                except ConfigError as exc:
                    raise ConfigError(f"--opponents {spec!r} for {name}: {exc}") from None
    return read_figures(out, "--out" if args.out is not None else "--record file") if out else {}


def _per_seed(values: list[float], digits: int) -> str:
    return " (per seed: " + ", ".join(f"{x:.{digits}f}" for x in values) + ")"


def _line(name: str, res: dict) -> str:
    """The printed line of one bot's figures."""
    if res["num_players"] > 1:
        return f"{name:<11} " + "; ".join(
            f"vs {k}: win rate {v['win_rate']:.3f} "
            f"[{v['win_rate_ci95'][0]:.3f}, {v['win_rate_ci95'][1]:.3f}], "
            f"share of wins {v['win_share']:.4f} over {v['games']} games"
            + (_per_seed(v["per_seed_win_rate"], 3) if "per_seed_win_rate" in v else "")
            for k, v in res["vs"].items()
        )
    lo, hi = res["ci95"]
    line = f"{name:<11} {res['games']} games: mean {res['mean_score']:.2f} ± {res['stderr']:.2f} s.e."
    line += f", 95% CI [{lo:.2f}, {hi:.2f}]"
    if "per_seed_mean_score" in res:
        line += _per_seed(res["per_seed_mean_score"], 2)
    if "optimum" in res:
        line += f" (optimal on the same dice {res['optimal_mean_score']:.2f}; optimum {res['optimum']:.2f})"
    if "regret" in res:
        r = res["regret"]
        line += f"; points lost per game {r['mean']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]"
        line += f" over {r['games']} games"
    return line


def render(pages: tuple[str, ...] = PAGES, record: Path = PRETRAINED / "measurements.json") -> list[str]:
    """Rewrite the figure blocks of ``pages`` (paths in the checkout) from ``record``; the pages changed."""
    from agents.evaluation.bot_figures import render_blocks

    records = read_figures(record, "--record file")
    changed = []
    for page in pages:
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        new = render_blocks(text, records)
        if new != text:
            atomic_write_text(path, new, overwrite=True)  # the same page, its figure blocks re-rendered
            changed.append(page)
    return changed


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bots", nargs="*", help="bot names (default: every bot in agents/pretrained)")
    parser.add_argument("--games", type=int, default=5000, help="games per bot and opponent")
    parser.add_argument(
        "--opponents", nargs="*", default=["heuristic"], help="opponents of multi-player bots"
    )
    parser.add_argument("--seed", type=int, default=12345, help="seed of the deals")
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        metavar="SEED",
        help="play --games games for each of these seeds and pool them (instead of --seed)",
    )
    parser.add_argument(
        "--regret-games", type=int, default=1000, help="games of the points lost per game (0: not measured)"
    )
    parser.add_argument(
        "--baselines",
        nargs="*",
        default=[],
        metavar="SPEC",
        help="built-in agents measured on each solitaire game",
    )
    parser.add_argument("--dir", type=Path, default=PRETRAINED, help="folder of the bots")
    parser.add_argument("--record", action="store_true", help="write the figures to <dir>/measurements.json")
    parser.add_argument("--out", type=Path, help="write the figures to this JSON file (implies --record)")
    parser.add_argument("--update-cards", action="store_true", help="store the figures in the model cards")
    parser.add_argument(
        "--render",
        action="store_true",
        help="only rewrite the figure tables of README and docs from the record",
    )
    args = parser.parse_args(argv)

    from dice_envs.rules import ConfigError

    out = args.out or (args.dir / "measurements.json" if args.record else None)
    try:  # every input checked before any game is played
        if args.render:
            changed = render()
            print("rendered: " + (", ".join(changed) if changed else "every page was up to date"))
            return 0
        names = args.bots or (bot_names(args.dir) if args.dir.is_dir() else [])
        if not names:
            raise ConfigError(f"no bots in {args.dir}")
        figures = check_args(args, names, out)
    except ConfigError as exc:
        return error(exc)
    args.seeds = args.seeds or [args.seed]
    about, references = provenance(argv), {}
    measured = [(name, bot_path(args.dir, name)) for name in names]
    results = [measure(path, args, references) for _, path in measured]
    games = sorted({res["game"] for res in results if res["num_players"] == 1 and "optimum" in res})
    for game in games:
        for spec in args.baselines:
            measured.append((f"{game}:{spec}", None))
            results.append(measure_baseline(spec, game, args, references))
    for (name, path), res in zip(measured, results, strict=True):
        res.update(about)
        figures[name] = res
        print(f"{_line(name, res)}  ({res['seconds']:.0f}s)", flush=True)
        if args.update_cards and path is not None:
            card_path = path.with_suffix(".json")
            card = json.loads(card_path.read_text())
            card.setdefault("evaluation", {})["measured"] = res
            atomic_write_text(card_path, json.dumps(card, indent=2) + "\n", overwrite=True)  # --update-cards
    if out is not None:
        # merged into the file as it is now, so a run measuring other bots meanwhile keeps its figures
        try:
            current = read_figures(out)
        except ConfigError as exc:  # replaced meanwhile by something else: keep it, save ours beside
            out = out.with_name(f"{out.stem}.{time.strftime('%Y%m%d-%H%M%S')}.json")
            print(f"warning: {exc}; writing the figures to {out} instead", file=sys.stderr)
            current = {}
        current.update({name: figures[name] for name, _ in measured})
        atomic_write_text(out, json.dumps(current, indent=2) + "\n", overwrite=True)  # merged above
        print(f"figures: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
