#!/usr/bin/env python
"""Games per second of the shipped search bots, batched and one game at a time, and a SHA-256 of
every action each bot takes (two runs with the same digest played the same moves).

Each bot plays ``--games`` games through the game runner (:func:`agents.evaluation.runner.run_games`,
the dice of game ``g`` from ``dice_seed(--seed, g)``; two-player bots play themselves), batched
(``--width`` games side by side) and then ``--single-games`` of them one game at a time (width 1).
The times are the best of ``--repeat`` runs (the machine may be shared); the digest is over the
actions of the batched run in the order the bot chose them.

    python scripts/measure_search_speed.py --games 1000 --single-games 100 --repeat 3
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

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


class Recorder:
    """An agent that plays as ``agent`` and hashes every action it returns."""

    def __init__(self, agent: Any) -> None:
        self.agent, self.digest = agent, hashlib.sha256()

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions = np.asarray(self.agent.act_batch(observations, masks), dtype=np.int64)
        self.digest.update(actions.tobytes())
        return actions


def timed(spec: str, seeds: np.ndarray, width: int) -> tuple[float, str]:
    """Seconds for a freshly loaded ``spec`` to play one game per dice seed, and the digest of
    its actions."""
    import agents
    from agents.evaluation.runner import run_games
    from dice_envs.rules import make_rules

    game, seats = BOTS[spec]
    rules = make_rules(game)
    rec = Recorder(agents.load(spec, game=rules, num_players=seats))
    start = time.perf_counter()
    out = run_games(rules, [rec], np.zeros((len(seeds), seats), dtype=np.int64), seeds, width=width)
    seconds = time.perf_counter() - start
    rec.digest.update(out.scores.tobytes())
    return seconds, rec.digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", nargs="+", default=list(BOTS), choices=list(BOTS), metavar="SPEC")
    parser.add_argument("--games", type=int, default=1000, help="batched games per bot")
    parser.add_argument("--single-games", type=int, default=100, help="games one at a time per bot")
    parser.add_argument("--width", type=int, default=1000, help="games side by side when batched")
    parser.add_argument("--repeat", type=int, default=3, help="runs timed; the best counts")
    parser.add_argument("--seed", type=int, default=20261207, help="dice seed of the games")
    args = parser.parse_args(argv)

    from agents.evaluation.runner import dice_seed
    from agents.solver.cache import single_thread_blas

    seeds = np.array([dice_seed(args.seed, g) for g in range(args.games)], dtype=np.int64)
    print("| bot | batched games/s | one at a time games/s | SHA-256 of the actions |")
    print("|---|---:|---:|---|")
    with single_thread_blas():
        for spec in args.bots:
            timed(spec, seeds[:2], 2)  # warm-up: the process's tables and compiled kernels
            batched, single, digests = [], [], set()
            for _ in range(args.repeat):
                seconds, digest = timed(spec, seeds, args.width)
                batched.append(seconds)
                digests.add(digest)
                single.append(timed(spec, seeds[: args.single_games], 1)[0])
            if len(digests) != 1:
                raise RuntimeError(f"{spec}: the repeated runs played differently")
            print(
                f"| `{spec}` | {args.games / min(batched):.1f} | {args.single_games / min(single):.2f} "
                f"| `{digests.pop()[:16]}` |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
