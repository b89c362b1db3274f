#!/usr/bin/env python
"""Benchmark the scalar rules engines: engine steps per second on one core.

A *step* is one ``legal_actions()`` + ``apply(action)`` call pair in random legal play (a
uniformly random legal action, chosen by a seeded numpy generator); ``new_game`` is included
in the timing whenever a game ends. Each ruleset gets the same wall-clock budget. ``steps/s``
is per wall-clock second, ``steps/cpu-s`` per second of this process's CPU time (the better
figure on a shared machine).

Usage::

    python scripts/bench_engine.py                     # 3 s per ruleset, 1 player
    python scripts/bench_engine.py --seconds 10 --players 2 --json bench.json
    python scripts/bench_engine.py --games spiffel farkle --profile   # cProfile top entries

Pin to one core with ``taskset -c 0`` for comparable figures.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dice_envs.checks import check_seed_arg
from dice_envs.engine import new_game
from dice_envs.rules import GAMES, ConfigError, make_rules

DEFAULT_GAMES = ("spiffel", "dice_poker", "yahtzee", "farkle")


def bench(game: str, seconds: float, players: int, seed: int) -> dict[str, float | int | str]:
    """Random legal play of ``game`` for about ``seconds``; return the figures."""
    rules = make_rules(game)
    rng = np.random.default_rng(seed)
    steps = games = 0
    game_seed = seed
    # warm-up (fills the scoring caches, as in any long run)
    g = new_game(rules, players, seed=game_seed)
    while not g.done:
        legal = g.legal_actions()
        g.apply(legal[int(rng.integers(len(legal)))])
    start = time.perf_counter()
    cpu_start = time.process_time()
    deadline = start + seconds
    now = start
    while now < deadline:
        game_seed += 1
        g = new_game(rules, players, seed=game_seed)
        while not g.done:
            legal = g.legal_actions()
            g.apply(legal[int(rng.integers(len(legal)))])
            steps += 1
        games += 1
        now = time.perf_counter()
    elapsed = now - start
    cpu = time.process_time() - cpu_start
    return {
        "game": game,
        "players": players,
        "steps": steps,
        "games": games,
        "seconds": round(elapsed, 3),
        "cpu_seconds": round(cpu, 3),
        "steps_per_s": round(steps / elapsed, 1),
        "steps_per_cpu_s": round(steps / cpu, 1),
        "games_per_s": round(games / elapsed, 2),
        "steps_per_game": round(steps / games, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time budget per ruleset (default 3)")
    parser.add_argument("--players", type=int, default=1, help="players per game (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--games", nargs="+", default=list(DEFAULT_GAMES), choices=sorted(GAMES))
    parser.add_argument("--json", type=Path, default=None, help="also write the results to this file")
    parser.add_argument("--profile", action="store_true", help="print cProfile top entries per ruleset")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error(f"--seconds must be positive, got {args.seconds}")
    if not 1 <= args.players <= 8:
        parser.error(f"--players must be 1-8, got {args.players}")
    try:
        check_seed_arg(args.seed, "--seed", none=False)
    except ConfigError as exc:
        parser.error(str(exc))

    results = []
    for game in args.games:
        if args.profile:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            prof.enable()
            res = bench(game, args.seconds, args.players, args.seed)
            prof.disable()
            print(f"--- profile: {game}")
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)
        else:
            res = bench(game, args.seconds, args.players, args.seed)
        results.append(res)

    header = (
        f"{'ruleset':<12} {'players':>7} {'steps/s':>10} {'steps/cpu-s':>11} {'games/s':>9} "
        f"{'steps/game':>10} {'steps':>9}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r['game']:<12} {r['players']:>7} {r['steps_per_s']:>10,.0f} {r['steps_per_cpu_s']:>11,.0f} "
            f"{r['games_per_s']:>9,.1f} "
            f"{r['steps_per_game']:>10} {r['steps']:>9}"
        )
    if args.json is not None:
        payload = {
            "benchmark": "scalar engine, random legal play (legal_actions + apply per step)",
            "python": platform.python_version(),
            "machine": platform.machine(),
            "processor": platform.processor(),
            "seconds_per_ruleset": args.seconds,
            "results": results,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
