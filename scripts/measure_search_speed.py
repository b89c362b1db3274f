#!/usr/bin/env python
"""Games per second of the shipped search bots, batched and one game at a time, with a SHA-256
of every action each bot takes (the same digest: the same moves).

Each bot (loaded afresh for every run; two-player bots play themselves) plays ``--games`` games
through the game runner, all side by side, then the first ``--single-games`` one at a time; game
``g`` throws the dice of ``dice_seed(--seed, g)``. Times: the best of ``--repeat`` runs.

    python scripts/measure_search_speed.py --games 1000 --single-games 20 --repeat 3
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: The shipped search bots: spec -> (game, seats).
BOTS = {
    "search:pretrained:spiffel-search": ("spiffel", 1),
    "search:pretrained:spiffel-search-quick": ("spiffel", 1),
    "search:pretrained:yahtzee-search": ("yahtzee", 1),
    "search:pretrained:dice_poker-search": ("dice_poker", 1),
    "search:pretrained:spiffel-search-win": ("spiffel", 2),
    "planner:pretrained:farkle-scratch-ppo": ("farkle", 2),
}


def timed(spec: str, seeds: np.ndarray, width: int) -> tuple[float, str]:
    """Seconds for a fresh ``spec`` to play one game per dice seed; the digest of its actions."""
    import agents
    from agents.evaluation.runner import run_games
    from dice_envs.rules import make_rules

    game, seats = BOTS[spec]
    bot, digest = agents.load(spec, game=game, num_players=seats), hashlib.sha256()

    class Recorder:  # plays as the bot, hashing its actions
        def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            actions = np.asarray(bot.act_batch(observations, masks), dtype=np.int64)
            digest.update(actions.tobytes())
            return actions

    start = time.perf_counter()
    out = run_games(make_rules(game), [Recorder()], np.zeros((len(seeds), seats), int), seeds, width=width)
    seconds = time.perf_counter() - start
    digest.update(out.scores.tobytes())
    return seconds, digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", nargs="+", default=list(BOTS), choices=list(BOTS), metavar="SPEC")
    parser.add_argument("--games", type=int, default=1000, help="games per bot, batched")
    parser.add_argument("--single-games", type=int, default=20, help="games per bot, one at a time")
    parser.add_argument("--repeat", type=int, default=3, help="runs timed; the best counts")
    parser.add_argument("--seed", type=int, default=20261207, help="dice seed of the games")
    args = parser.parse_args(argv)

    from agents.evaluation.runner import dice_seed
    from agents.solver.cache import single_thread_blas

    seeds = np.array([dice_seed(args.seed, g) for g in range(args.games)], dtype=np.int64)
    print("| bot | batched games/s | one at a time games/s | SHA-256 of the actions (first 16) |")
    print("|---|---:|---:|---|")
    with single_thread_blas():
        for spec in args.bots:
            timed(spec, seeds[:2], 2)  # warm-up: the process's tables and compiled kernels
            runs = [timed(spec, seeds, len(seeds)) for _ in range(args.repeat)]
            single = [timed(spec, seeds[: args.single_games], 1)[0] for _ in range(args.repeat)]
            if len({d for _, d in runs}) != 1:
                raise RuntimeError(f"{spec}: the repeated runs played differently")
            batched, one = args.games / min(s for s, _ in runs), args.single_games / min(single)
            print(f"| `{spec}` | {batched:.1f} | {one:.2f} | `{runs[0][1][:16]}` |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
