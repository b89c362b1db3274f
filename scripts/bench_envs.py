#!/usr/bin/env python
"""Benchmark the Gymnasium envs: learner steps per second on one core.

A *step* is one ``env.step(action)`` of the learner (opponents' moves inside it are included),
with a uniformly random legal action from ``info["action_mask"]``; ``reset`` is included when an
episode ends. ``steps/cpu-s`` (per second of this process's CPU time) is the better figure on a
shared machine.

Usage::

    python scripts/bench_envs.py                       # 2 s per env, solitaire and 1 random opponent
    python scripts/bench_envs.py --seconds 5 --opponents 0 3
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
from dice_envs.envs import ENV_IDS


def bench(env_id: str, n_opponents: int, seconds: float) -> tuple[float, float, int]:
    env = gym.make(env_id, opponents=["random"] * n_opponents).unwrapped
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    steps = episodes = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
        if terminated or truncated:
            episodes += 1
            _, info = env.reset()
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu), episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--opponents", type=int, nargs="+", default=[0, 1])
    args = parser.parse_args()
    print(f"{'env':<26}{'opponents':>10}{'steps/s':>10}{'steps/cpu-s':>13}{'episodes':>10}")
    for env_id in ENV_IDS:
        for n in args.opponents:
            sps, cps, eps = bench(env_id, n, args.seconds)
            print(f"{env_id:<26}{n:>10}{sps:>10.0f}{cps:>13.0f}{eps:>10}")


if __name__ == "__main__":
    main()
