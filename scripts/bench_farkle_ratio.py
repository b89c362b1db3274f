#!/usr/bin/env python
"""Native vector env vs scalar env with a plain loop of masked random actions (issue 14's check).

* scalar: ``gym.make(id)`` (wrappers included), each step ``np.random.Generator.choice`` over
  ``np.flatnonzero(info["action_mask"])``;
* native: ``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")``, each step one
  vectorised uniform choice over all masks (a random rank below each row's count of legal
  actions, located with a cumulative sum); rows without a legal action (finished games
  awaiting the next-step reset) get action 0, which the env ignores.

``--repeat R`` alternates the two measurements ``R`` times and reports the median ratio (the
machine's load changes between measurements).

Rates are learner steps per second of this process's CPU time (the fair figure on a shared
machine); pin to one core::

    taskset -c 0 python scripts/bench_farkle_ratio.py --seconds 2 --num-envs 1024
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium as gym

import dice_envs  # noqa: F401 - registers the ids


def vector_choice(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` (0 where a row has none): the legal
    actions of all rows in one ``flatnonzero``, each row's run found by ``searchsorted``."""
    n, k = masks.shape
    flat = np.flatnonzero(masks)
    ends = np.searchsorted(flat, np.arange(1, n + 1) * k)
    starts = np.concatenate(([0], ends[:-1]))
    pick = starts + (rng.random(n) * (ends - starts)).astype(np.int64)
    return np.where(ends > starts, flat[np.minimum(pick, max(flat.size - 1, 0))] % k, 0)


def bench_scalar(env_id: str, seconds: float) -> float:
    """Scalar steps per CPU second."""
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    steps, wall, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, term, trunc, info = env.step(action)
        steps += 1
        if term or trunc:
            _, info = env.reset()
    return steps / (time.process_time() - cpu)


def bench_native(env_id: str, num_envs: int, seconds: float) -> float:
    """Native vector env steps (one per game) per CPU second."""
    env = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point")
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    steps, wall, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        _, _, _, _, info = env.step(vector_choice(rng, info["action_mask"]))
        steps += num_envs
    rate = steps / (time.process_time() - cpu)
    env.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env", default="dice_envs/Farkle-v0")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    ratios = []
    for _ in range(args.repeat):
        scalar = bench_scalar(args.env, args.seconds)
        native = bench_native(args.env, args.num_envs, args.seconds)
        ratios.append(native / scalar)
        print(f"{args.env}: scalar {scalar:,.0f}, native x{args.num_envs} {native:,.0f} steps/cpu-s")
    print(f"ratio {float(np.median(ratios)):.1f}x (median of {len(ratios)})")


if __name__ == "__main__":
    main()
