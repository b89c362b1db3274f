"""``dice-envs benchmark envs``: steps per second of the environments, random legal actions.

For every selected ruleset:

* ``scalar`` — the Gymnasium env (``gym.make(id).unwrapped``: no checker wrappers), solitaire;
  ``scalar_vs_N_random`` (``--scalar-opponents N``) the same env at a table with ``N`` random
  opponents, whose moves run inside ``step``;
* ``sync_M`` — ``gymnasium.vector.SyncVectorEnv`` over ``M`` scalar envs;
* ``native_N`` — the native vector env at each size ``N`` (actions sampled vectorised);
  ``native_N_vs_SPEC`` (``--opponents SPEC``) at the largest size against one such opponent.

A *step* is one learner decision in one game. Rates are per wall second and per CPU second of
this process; ``env/cpu-s`` counts only the CPU time inside ``step`` / ``reset`` (without the
random-action sampling, which costs the native env up to a third of its loop). The speed-ups over
``scalar`` are per CPU second.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np

import dice_envs  # noqa: F401 - registers the ids
from agents.commands.benchmark.rates import EnvClock, load_average, machine, rate, set_torch_threads
from dice_envs.games import game_spec, vector_env_class

__all__ = ["MaskSampler", "bench_native", "bench_scalar", "bench_sync", "run"]


class MaskSampler:
    """Uniform-ish random legal actions for a batch of masks, vectorised.

    Each legal action gets a random byte in 1..255 (odd), illegal ones 0; the arg-max is taken.
    Ties (two legal actions drawing the same byte) go to the lower index, a negligible bias
    for a throughput benchmark. Rows without a legal action (finished games awaiting the
    next-step reset) give action 0, which the env ignores.
    """

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, masks: np.ndarray) -> np.ndarray:
        u = np.frombuffer(self.rng.bytes(masks.size), dtype=np.uint8).reshape(masks.shape) | 1
        u *= masks.view(np.uint8)
        return u.argmax(axis=1)


def bench_scalar(game: str, seconds: float, opponents: int = 0) -> dict[str, float]:
    """The scalar env for about ``seconds``, with ``opponents`` random opponents at the table; its
    rate and the episodes it finished."""
    kwargs = {"opponents": ["random"] * opponents} if opponents else {}
    env = gym.make(game_spec(game).env_id, **kwargs).unwrapped
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    steps, episodes, clock = 0, 0, EnvClock()
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        for _ in range(50):
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, _, term, trunc, info = clock(env.step, action)
            steps += 1
            if term or trunc:
                episodes += 1
                _, info = clock(env.reset)
    out = rate(steps, time.perf_counter() - wall, time.process_time() - cpu, clock.cpu)
    out["episodes"] = episodes
    return out


def _bench_vector(env: Any, num_envs: int, seconds: float) -> dict[str, float]:
    sample = MaskSampler(0)
    _, info = env.reset(seed=0)
    for _ in range(5):  # warm-up
        _, _, _, _, info = env.step(sample(info["action_mask"]))
    steps, clock = 0, EnvClock()
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        for _ in range(10):
            _, _, _, _, info = clock(env.step, sample(info["action_mask"]))
            steps += num_envs
    out = rate(steps, time.perf_counter() - wall, time.process_time() - cpu, clock.cpu)
    env.close()
    return out


def bench_sync(game: str, num_envs: int, seconds: float) -> dict[str, float]:
    """``SyncVectorEnv`` over ``num_envs`` scalar envs."""
    env_id = game_spec(game).env_id
    env = gym.vector.SyncVectorEnv([lambda: gym.make(env_id).unwrapped for _ in range(num_envs)])
    return _bench_vector(env, num_envs, seconds)


def bench_native(game: str, num_envs: int, seconds: float, opponent: str | None = None) -> dict[str, float]:
    """The native env; with ``opponent``, a 2-player game where it plays inside ``step()``
    (batched: one ``act_batch`` per decision round). Steps are the learner's."""
    kwargs = {"opponents": [opponent], "autoreset_mode": "same_step"} if opponent else {}
    return _bench_vector(vector_env_class(game)(num_envs=num_envs, **kwargs), num_envs, seconds)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement the arguments ask for, printed per ruleset as it is made; the results."""
    threads = set_torch_threads(args.threads)
    results: dict[str, Any] = {"machine": machine(threads), "games": {}}
    for game in args.games:
        r: dict[str, Any] = {"scalar": bench_scalar(game, args.seconds)}
        for n in args.scalar_opponents:
            r[f"scalar_vs_{n}_random"] = bench_scalar(game, args.seconds, n)
        if args.sync_envs:
            r[f"sync_{args.sync_envs}"] = bench_sync(game, args.sync_envs, args.seconds)
        for n in args.sizes:
            r[f"native_{n}"] = bench_native(game, n, args.seconds)
        big = max(args.sizes)
        for spec in args.opponents:
            try:
                r[f"native_{big}_vs_{spec}"] = bench_native(game, big, args.seconds, spec)
            except ValueError as exc:  # ConfigError: this spec does not play this game
                print(f"  (skipped opponent {spec!r} for {game}: {exc})")
        base, env_base = r["scalar"]["steps_per_cpu_s"], r["scalar"]["env_steps_per_cpu_s"]
        rates = {k: v for k, v in r.items() if isinstance(v, dict) and "env_steps_per_cpu_s" in v}
        r["speedup_vs_scalar_cpu"] = {k: v["steps_per_cpu_s"] / base for k, v in rates.items()}
        r["env_speedup_vs_scalar_cpu"] = {k: v["env_steps_per_cpu_s"] / env_base for k, v in rates.items()}
        results["games"][game] = r
        print_game(game, r)
    results["machine"]["load_average_end"] = load_average()
    return results


def print_game(game: str, r: dict[str, Any]) -> None:
    """The rows of one ruleset: each env's rates and its speed-ups over the scalar env."""
    print(f"\n{game}")
    base, env_base = r["scalar"]["steps_per_cpu_s"], r["scalar"]["env_steps_per_cpu_s"]
    print(
        f"  {'env':<20}{'steps/s':>12}{'steps/cpu-s':>13}{'env/cpu-s':>13}{'x scalar':>10}{'x (env)':>9}"
        f"{'episodes':>10}"
    )
    for k, v in r.items():
        if isinstance(v, dict) and "env_steps_per_cpu_s" in v:
            cpu, env_cpu = v["steps_per_cpu_s"], v["env_steps_per_cpu_s"]
            episodes = f"{v['episodes']:>10}" if "episodes" in v else ""
            print(
                f"  {k:<20}{v['steps_per_s']:>12,.0f}{cpu:>13,.0f}{env_cpu:>13,.0f}"
                f"{cpu / base:>10.1f}{env_cpu / env_base:>9.1f}{episodes}"
            )
    sys.stdout.flush()
