"""``dice-envs benchmark engine``: steps per second of the one-game rules engines.

A *step* is one ``legal_actions()`` + ``apply(action)`` pair in random legal play (a uniformly
random legal action from a seeded numpy generator); ``new_game`` is timed too whenever a game
ends. Every ruleset gets the same wall-clock budget, after one untimed game that fills the
scoring caches (as any long run has them filled).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from agents.commands.benchmark.rates import load_average, machine
from dice_envs.engine import new_game
from dice_envs.rules import make_rules

__all__ = ["bench", "run"]


def _play(g: Any, rng: np.random.Generator) -> int:
    """Play ``g`` to its end by uniformly random legal actions; the steps it took."""
    steps = 0
    while not g.done:
        legal = g.legal_actions()
        g.apply(legal[int(rng.integers(len(legal)))])
        steps += 1
    return steps


def bench(game: str, seconds: float, players: int, seed: int) -> dict[str, float | int | str]:
    """Random legal play of ``game`` for about ``seconds``; the figures."""
    rules = make_rules(game)
    rng = np.random.default_rng(seed)
    steps = games = 0
    _play(new_game(rules, players, seed=seed), rng)  # untimed warm-up game
    start = time.perf_counter()
    cpu_start = time.process_time()
    now = start
    while now < start + seconds:
        games += 1
        steps += _play(new_game(rules, players, seed=seed + games), rng)
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


def _profiled(game: str, args: argparse.Namespace) -> dict[str, Any]:
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    res = bench(game, args.seconds, args.players, args.seed)
    prof.disable()
    print(f"--- profile: {game}")
    pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    return res


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every ruleset of ``args.games``, printed as one table; the results as a dict."""
    results: dict[str, Any] = {"machine": machine(), "games": {}}
    for game in args.games:
        res = _profiled(game, args) if args.profile else bench(game, args.seconds, args.players, args.seed)
        results["games"][game] = res
    header = (
        f"{'ruleset':<12} {'players':>7} {'steps/s':>10} {'steps/cpu-s':>11} {'games/s':>9} "
        f"{'steps/game':>10} {'steps':>9}"
    )
    print(header)
    print("-" * len(header))
    for r in results["games"].values():
        print(
            f"{r['game']:<12} {r['players']:>7} {r['steps_per_s']:>10,.0f} {r['steps_per_cpu_s']:>11,.0f} "
            f"{r['games_per_s']:>9,.1f} {r['steps_per_game']:>10} {r['steps']:>9}"
        )
    results["machine"]["load_average_end"] = load_average()
    return results
