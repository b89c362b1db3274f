#!/usr/bin/env python
"""Throughput of the scalar env, ``SyncVectorEnv`` and the native vector envs, plus training.

For every selected ruleset (solitaire, random legal actions drawn from the action mask):

* ``scalar``      — the Gymnasium env (``gym.make(id).unwrapped``, so no checker wrappers);
* ``sync×M``      — ``gymnasium.vector.SyncVectorEnv`` over ``M`` scalar envs;
* ``native×N``    — the native vector env at each size ``N`` (actions sampled vectorised);
* training        — sb3-contrib ``MaskablePPO`` timesteps per second on the native env
  (:class:`dice_envs.vector.sb3.SB3VecEnv`) against ``DummyVecEnv`` (and ``SubprocVecEnv`` with
  ``--subproc``) over scalar envs, same hyper-parameters, a small budget.

A *step* is one learner decision in one game. Rates are per wall second and per CPU second of
this process (``process_time``: the fairer figure on a shared machine; the ``SubprocVecEnv`` rate
is wall only); ``env/cpu-s`` counts only the CPU time inside ``step``/``reset`` (without the
random-action sampling, which costs the native env up to a third of its loop). Speed-ups are
per CPU second. Pin to one core for the single-core figures:

    taskset -c 0 python scripts/benchmark.py --threads 1 --out bench.json
    python scripts/benchmark.py --games spiffel --sizes 1 1024 --seconds 1 --no-train   # quick

Targets: native at 1024 games ≥ 50× the scalar env (every ruleset); Spiffel at 4096 games
≥ 1,000,000 masked steps per second.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

GAMES = {
    "spiffel": "dice_envs/Spiffel-v0",
    "dice_poker": "dice_envs/DicePoker-v0",
    "yahtzee": "dice_envs/Yahtzee-v0",
    "farkle": "dice_envs/Farkle-v0",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", nargs="+", default=list(GAMES), choices=list(GAMES))
    p.add_argument("--sizes", nargs="+", type=int, default=[1, 64, 1024, 4096], help="native env sizes")
    p.add_argument("--sync-envs", type=int, default=16, help="sub-envs of the SyncVectorEnv (0: skip)")
    p.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    p.add_argument("--train-steps", type=int, default=4096, help="MaskablePPO timesteps per run")
    p.add_argument("--train-envs", type=int, default=16, help="parallel games while training")
    p.add_argument("--no-train", action="store_true", help="skip the training measurements")
    p.add_argument("--subproc", action="store_true", help="also train on SubprocVecEnv")
    p.add_argument("--threads", type=int, default=None, help="BLAS/OMP/torch threads (1: one core)")
    p.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    p.add_argument(
        "--opponents",
        nargs="*",
        default=[],
        help="also time the native env at the largest size with each of these opponents (agent specs)",
    )
    return p.parse_args(argv)


ARGS = parse_args() if __name__ == "__main__" else None
if ARGS is not None and ARGS.threads is not None:  # must precede the numpy import
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium as gym  # noqa: E402

import dice_envs  # noqa: E402, F401 - registers the ids
from dice_envs.vector import DicePokerVectorEnv, FarkleVectorEnv, SpiffelVectorEnv, YahtzeeVectorEnv  # noqa: E402

NATIVE = {
    "spiffel": SpiffelVectorEnv,
    "dice_poker": DicePokerVectorEnv,
    "yahtzee": YahtzeeVectorEnv,
    "farkle": FarkleVectorEnv,
}


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


def _rate(steps: int, wall: float, cpu: float, env_cpu: float | None = None) -> dict[str, float]:
    out = {
        "steps": steps,
        "wall_s": wall,
        "steps_per_s": steps / wall,
        "steps_per_cpu_s": steps / max(cpu, 1e-9),
    }
    if env_cpu is not None:
        out["env_steps_per_cpu_s"] = steps / max(env_cpu, 1e-9)
    return out


class _EnvClock:
    """CPU time spent inside the env's ``step``/``reset`` only (not in action sampling)."""

    def __init__(self) -> None:
        self.cpu = 0.0

    def __call__(self, fn: Any, *args: Any) -> Any:
        t = time.process_time()
        out = fn(*args)
        self.cpu += time.process_time() - t
        return out


def bench_scalar(game: str, seconds: float) -> dict[str, float]:
    env = gym.make(GAMES[game]).unwrapped
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    steps, clock = 0, _EnvClock()
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        for _ in range(50):
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, _, term, trunc, info = clock(env.step, action)
            steps += 1
            if term or trunc:
                _, info = clock(env.reset)
    return _rate(steps, time.perf_counter() - wall, time.process_time() - cpu, clock.cpu)


def _bench_vector(env: Any, num_envs: int, seconds: float) -> dict[str, float]:
    sample = MaskSampler(0)
    _, info = env.reset(seed=0)
    for _ in range(5):  # warm-up
        _, _, _, _, info = env.step(sample(info["action_mask"]))
    steps, clock = 0, _EnvClock()
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        for _ in range(10):
            _, _, _, _, info = clock(env.step, sample(info["action_mask"]))
            steps += num_envs
    out = _rate(steps, time.perf_counter() - wall, time.process_time() - cpu, clock.cpu)
    env.close()
    return out


def bench_sync(game: str, num_envs: int, seconds: float) -> dict[str, float]:
    env = gym.vector.SyncVectorEnv([lambda: gym.make(GAMES[game]).unwrapped for _ in range(num_envs)])
    return _bench_vector(env, num_envs, seconds)


def bench_native(game: str, num_envs: int, seconds: float, opponent: str | None = None) -> dict[str, float]:
    """The native env; with ``opponent``, a 2-player game where it plays inside ``step()``
    (batched: one ``act_batch`` per decision round). Steps are the learner's."""
    kwargs = {"opponents": [opponent], "autoreset_mode": "same_step"} if opponent else {}
    return _bench_vector(NATIVE[game](num_envs=num_envs, **kwargs), num_envs, seconds)


def bench_train(game: str, kind: str, num_envs: int, timesteps: int) -> dict[str, float]:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from dice_envs.vector.sb3 import SB3VecEnv

    if kind == "native":
        venv: Any = SB3VecEnv(game, num_envs=num_envs)
    else:
        fns = [lambda: gym.make(GAMES[game]) for _ in range(num_envs)]
        venv = DummyVecEnv(fns) if kind == "dummy" else SubprocVecEnv(fns, start_method="fork")
    torch.manual_seed(0)
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=max(8, 2048 // num_envs),
        batch_size=256,
        n_epochs=2,
        seed=0,
        device="cpu",
        verbose=0,
    )
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=timesteps)
    out = _rate(model.num_timesteps, time.perf_counter() - wall, time.process_time() - cpu)
    venv.close()
    return out


def main(args: argparse.Namespace) -> dict[str, Any]:
    if args.threads is not None:
        try:
            import torch

            torch.set_num_threads(args.threads)
        except ImportError:  # pragma: no cover - torch is optional here
            pass
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "affinity": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "load_average_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
            "threads": args.threads,
        },
        "games": {},
    }
    for game in args.games:
        r: dict[str, Any] = {"scalar": bench_scalar(game, args.seconds)}
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
        if not args.no_train:
            kinds = ["native", "dummy"] + (["subproc"] if args.subproc else [])
            r["train"] = {k: bench_train(game, k, args.train_envs, args.train_steps) for k in kinds}
        base, env_base = r["scalar"]["steps_per_cpu_s"], r["scalar"]["env_steps_per_cpu_s"]
        rates = {k: v for k, v in r.items() if isinstance(v, dict) and "env_steps_per_cpu_s" in v}
        r["speedup_vs_scalar_cpu"] = {k: v["steps_per_cpu_s"] / base for k, v in rates.items()}
        r["env_speedup_vs_scalar_cpu"] = {k: v["env_steps_per_cpu_s"] / env_base for k, v in rates.items()}
        results["games"][game] = r
        print_game(game, r)
    results["machine"]["load_average_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    return results


def print_game(game: str, r: dict[str, Any]) -> None:
    base, env_base = r["scalar"]["steps_per_cpu_s"], r["scalar"]["env_steps_per_cpu_s"]
    print(f"\n{game}")
    print(f"  {'env':<14}{'steps/s':>12}{'steps/cpu-s':>13}{'env/cpu-s':>13}{'x scalar':>10}{'x (env)':>9}")
    for k, v in r.items():
        if isinstance(v, dict) and "steps_per_s" in v:
            cpu, env_cpu = v["steps_per_cpu_s"], v["env_steps_per_cpu_s"]
            print(
                f"  {k:<14}{v['steps_per_s']:>12,.0f}{cpu:>13,.0f}{env_cpu:>13,.0f}"
                f"{cpu / base:>10.1f}{env_cpu / env_base:>9.1f}"
            )
    for k, v in r.get("train", {}).items():
        print(f"  {'ppo/' + k:<14}{v['steps_per_s']:>12,.0f}{v['steps_per_cpu_s']:>13,.0f}")
    sys.stdout.flush()


if __name__ == "__main__":
    assert ARGS is not None
    res = main(ARGS)
    if ARGS.out is not None:
        ARGS.out.write_text(json.dumps(res, indent=2))
        print(f"\nwrote {ARGS.out}")
