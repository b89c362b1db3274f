#!/usr/bin/env python
"""Win rates of two-player scorecard agents against an opponent, seats balanced, with 95% intervals.

Each agent plays ``--games`` games against ``--opponent``: ``--games / 2`` deals, each played twice
with the seats swapped and the same dice (the game runner,
:func:`agents.training.search.learner.match`). A tie counts 1/2. The interval is the normal one over
deals (each deal's share is the mean of its two games): rate ± 1.96 standard errors.

    python scripts/measure_search_win.py search:agents/pretrained/spiffel-search-win.npz \\
        search:pretrained:spiffel-search --opponent optimal --games 20000 --seed 2026

Every agent meets the same deals (the same ``--seed``). Prints one line per agent; ``--out`` also
writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agents", nargs="+", help="agent specs (e.g. search:<model>.npz)")
    parser.add_argument("--opponent", default="optimal", help="the opponent's spec (default optimal)")
    parser.add_argument("--game", default="spiffel")
    parser.add_argument("--games", type=int, default=20_000, help="games per agent (even)")
    parser.add_argument("--seed", type=int, default=2026, help="dice seed of the deals")
    parser.add_argument("--out", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.games < 2 or args.games % 2:
        parser.error("--games must be an even number >= 2 (each deal is played from both seats)")

    import agents
    from agents.solver.cache import single_thread_blas
    from agents.training.search.learner import match
    from dice_envs.rules import make_rules

    rules = make_rules(args.game)
    figures = []
    with single_thread_blas():
        opponent = agents.load(args.opponent, game=rules, num_players=2)
        for spec in args.agents:
            bot = agents.load(spec, game=rules, num_players=2)
            start = time.perf_counter()
            rate, se = match(bot, opponent, rules, args.games, args.seed)
            wall = time.perf_counter() - start
            lo, hi = rate - 1.96 * se, rate + 1.96 * se
            print(
                f"{spec} vs {args.opponent}: win rate {rate:.4f} (95% CI [{lo:.4f}, {hi:.4f}]) over "
                f"{args.games} games, seats balanced, seed {args.seed} ({wall:.0f} s)",
                flush=True,
            )
            figures.append(
                {
                    "agent": spec,
                    "opponent": args.opponent,
                    "games": args.games,
                    "seed": args.seed,
                    "win_rate": rate,
                    "stderr": se,
                    "ci95": [lo, hi],
                    "wall_s": wall,
                }
            )
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
