#!/usr/bin/env python
"""The exact score distribution of the optimal solitaire player, checked against played games.

For each rule variant: computes :func:`agents.solver.score_distribution` (timed, with its peak
of traced memory: numpy's arrays included), then plays ``--games`` solitaire games of the
``optimal`` agent on the batched engine (seeded dice, :func:`agents.evaluation.runner.run_games`)
and tests the sampled scores against the exact distribution (Pearson's chi-square,
:func:`agents.solver.distribution.fit_test`). A variant is a game name, optionally with rule
changes: ``yahtzee:joker_rule=verhoeff``.

Examples::

    python scripts/score_distribution.py --games 2000
    flock /tmp/heavy.lock python scripts/score_distribution.py --games 100000 \\
        --variants spiffel dice_poker yahtzee yahtzee:joker_rule=verhoeff \\
        --out docs/benchmarks/2026-12-07-epyc-2core/score-distribution.json

``--out`` writes the figures as JSON (atomically, after each variant; an existing file needs
``--force``); the game pages of the docs render their score-distribution sections from it.
"""

from __future__ import annotations

import argparse
import platform
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.evaluation.regret import check_json_out, write_json
from agents.evaluation.runner import dice_seed, run_games
from agents.registry import load
from agents.solver import scorecard_solution
from agents.solver.distribution import ScoreDistribution, fit_test, solve_distribution
from dice_envs.rules import ConfigError, ScorecardRules, make_rules

#: The percentiles and the thresholds ``x`` of ``P(score >= x)`` recorded for each variant.
PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
AT_LEAST = (150, 200, 250, 300, 350, 400, 500)


def parse_variant(text: str) -> ScorecardRules:
    """``game`` or ``game:key=value,key=value`` as rules (``ConfigError`` for anything else)."""
    game, _, changes = text.partition(":")
    params: dict[str, Any] = {}
    for item in filter(None, changes.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--variants {text!r}: a rule change is key=value, got {item!r}")
        params[key] = {"true": True, "false": False}.get(
            value.lower(), int(value) if value.isdigit() else value
        )
    rules = make_rules(game, **params)
    if not isinstance(rules, ScorecardRules):
        raise ConfigError(f"--variants {text!r}: a scorecard game (spiffel, dice_poker, yahtzee)")
    return rules


def sample_scores(rules: ScorecardRules, games: int, seed: int, agent: str = "optimal") -> np.ndarray:
    """Final scores of ``games`` solitaire games of ``agent`` (a spec), dice seeded by ``seed``."""
    player = load(agent, game=rules, num_players=1)
    seeds = [dice_seed(seed, g) for g in range(games)]
    return run_games(rules, [player], np.zeros((games, 1), dtype=np.int64), seeds).scores[:, 0]


def figures(dist: ScoreDistribution) -> dict[str, Any]:
    """What a page shows of a distribution, and the distribution itself."""
    return {
        "mean": dist.mean,
        "std": dist.std,
        "median": dist.median,
        "percentiles": {str(q): dist.percentile(q) for q in PERCENTILES},
        "at_least": {str(x): dist.at_least(x) for x in AT_LEAST},
        "scores": dist.scores.tolist(),
        "probabilities": dist.probabilities.tolist(),
    }


def measure(text: str, rules: ScorecardRules, games: int, seed: int) -> dict[str, Any]:
    """One variant: the exact distribution (timed) and the sampled games tested against it."""
    solution = scorecard_solution(rules)
    print(f"{text}: computing the exact distribution", file=sys.stderr, flush=True)
    tracemalloc.start()
    wall, cpu = time.perf_counter(), time.process_time()
    dist = solve_distribution(solution, use_cache=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    entry: dict[str, Any] = {
        "game": rules.game,
        "rules": rules.to_dict(),
        "solver_expected_score": solution.expected_score(),
        "compute_wall_s": round(wall, 1),
        "compute_cpu_s": round(cpu, 1),
        "peak_traced_mib": round(peak / 2**20, 1),
        **figures(dist),
    }
    print(
        f"{text}: mean {dist.mean:.6f}, std {dist.std:.4f} ({wall:.0f} s); playing {games} games",
        file=sys.stderr,
    )
    wall = time.perf_counter()
    scores = sample_scores(rules, games, seed)
    test = fit_test(dist, scores)
    entry["sampled"] = {
        "games": games,
        "seed": seed,
        "mean": float(scores.mean()),
        "std": float(scores.std(ddof=1)),
        "chi_square": test.statistic,
        "dof": test.dof,
        "p_value": test.p_value,
        "play_wall_s": round(time.perf_counter() - wall, 1),
    }
    print(f"{text}: sampled mean {scores.mean():.3f}, chi-square p = {test.p_value:.4f}", file=sys.stderr)
    return entry


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--variants", nargs="+", default=["spiffel", "dice_poker", "yahtzee"])
    ap.add_argument("--games", type=int, default=100_000, help="sampled games per variant")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    ap.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    args = ap.parse_args(argv)
    try:
        variants = {text: parse_variant(text) for text in args.variants}
        if args.games < 1:
            raise ConfigError(f"--games must be 1 or more, got {args.games}")
        if args.out is not None:
            check_json_out(args.out, args.force)
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    record: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"cpu": platform.processor() or platform.machine(), "python": platform.python_version()},
        "numpy": np.__version__,
        "revision": subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "command": "python scripts/score_distribution.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "variants": {},
    }
    for text, rules in variants.items():
        entry = record["variants"][text] = measure(text, rules, args.games, args.seed)
        record["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        s = entry["sampled"]
        print(
            f"{text}: exact mean {entry['mean']:.4f} (solver {entry['solver_expected_score']:.4f}), "
            f"std {entry['std']:.4f}, median {entry['median']}; {s['games']} games: mean {s['mean']:.3f}, "
            f"chi-square {s['chi_square']:.1f} on {s['dof']} dof, p = {s['p_value']:.4f}",
            flush=True,
        )
        if args.out is not None:  # after each variant: a long run keeps what it measured
            write_json(args.out, record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
