"""``dice-envs benchmark ratio``: the native vector env over the scalar env, in plain loops.

* scalar: ``gym.make(id)`` (wrappers included), each step ``np.random.Generator.choice`` over
  ``np.flatnonzero(info["action_mask"])``;
* native: ``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")``, each step one
  vectorised uniform choice over all masks (:func:`vector_choice`).

The ratio depends on how costly that choice is, as it runs inside the native loop. ``--repeat R``
alternates the two measurements ``R`` times and reports the median ratio (a shared machine's load
changes between measurements). Rates are learner steps per second of this process's CPU time.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import gymnasium as gym
import numpy as np

import dice_envs  # noqa: F401 - registers the ids
from agents.commands.benchmark.rates import load_average, machine
from dice_envs.games import game_spec

__all__ = ["bench_native", "bench_scalar", "run", "vector_choice"]


def vector_choice(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` (0 where a row has none): the legal
    actions of all rows in one ``flatnonzero``, each row's run found by ``searchsorted``.

    >>> vector_choice(np.random.default_rng(0), np.array([[0, 1, 0], [0, 0, 0]], dtype=bool)).tolist()
    [1, 0]
    """
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


def run(args: argparse.Namespace) -> dict[str, Any]:
    """``--repeat`` alternating measurements per ruleset, each printed; the results."""
    results: dict[str, Any] = {"machine": machine(), "games": {}}
    for game in args.games:
        env_id = game_spec(game).env_id
        runs = []
        for _ in range(args.repeat):
            scalar = bench_scalar(env_id, args.seconds)
            native = bench_native(env_id, args.num_envs, args.seconds)
            runs.append({"scalar_steps_per_cpu_s": scalar, "native_steps_per_cpu_s": native})
            print(f"{env_id}: scalar {scalar:,.0f}, native x{args.num_envs} {native:,.0f} steps/cpu-s")
        ratios = [r["native_steps_per_cpu_s"] / r["scalar_steps_per_cpu_s"] for r in runs]
        median = float(np.median(ratios))
        results["games"][game] = {"num_envs": args.num_envs, "runs": runs, "ratios": ratios, "ratio": median}
        print(f"ratio {median:.1f}x (median of {len(ratios)})")
    results["machine"]["load_average_end"] = load_average()
    return results
