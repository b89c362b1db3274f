"""Throughput of the scalar env, ``SyncVectorEnv`` and the native vector envs, plus training.

For every selected ruleset (solitaire, random legal actions drawn from the action mask):

* ``scalar``      — the Gymnasium env (``gym.make(id).unwrapped``, so no checker wrappers);
* ``sync×M``      — ``gymnasium.vector.SyncVectorEnv`` over ``M`` scalar envs;
* ``native×N``    — the native vector env at each size ``N`` (actions sampled vectorised);
* training loop   — env steps per second of the *whole* training loop (rollout + update) of the
  native PPO trainer (:mod:`agents.training.ppo`) and of sb3-contrib ``MaskablePPO`` on the native
  env (:class:`dice_envs.vector.sb3.SB3VecEnv`), in the same run, with the same network, rollout
  size (``--loop-envs`` x ``--loop-steps``), minibatch and epochs; ``--gym`` adds ``MaskablePPO``
  as sb3-contrib documents it, on a ``DummyVecEnv`` of the scalar Gymnasium envs (same settings
  again), and ``--subproc`` on ``SubprocVecEnv`` over scalar envs. ``--device cuda`` runs them on
  the GPU, each after one untimed update with the same settings (``--warmup``: a GPU's first
  products create cuBLAS handles and load kernels, a second or so that would fall on whichever
  loop ran first).
* matrix products — the bound under every loop above: the same run's matrix products alone (the
  rollout's forwards of both nets, then per epoch and minibatch their forwards, weight gradients and
  input gradients; no activation, loss, optimiser or env), timed with torch on the same device and
  threads. No trainer that does this work with these products runs faster, so ``bound / MaskablePPO``
  is the most any trainer could gain over ``MaskablePPO`` at equal work on this machine.

A *step* is one learner decision in one game. Rates are per wall second and per CPU second of
this process (``process_time``: the fairer figure on a shared machine; the ``SubprocVecEnv`` rate
is wall only); ``env/cpu-s`` counts only the CPU time inside ``step``/``reset`` (without the
random-action sampling, which costs the native env up to a third of its loop). Speed-ups are
per CPU second. Pin to one core for the single-core figures:

    taskset -c 0 python scripts/benchmark.py --threads 1 --no-train --out bench.json
    python scripts/benchmark.py --games spiffel --sizes 1 1024 --seconds 1 --no-train   # quick
    python scripts/benchmark.py --games spiffel --only-train          # the training loops, 2 cores

Targets: native at 1024 games ≥ 50× the scalar env (every ruleset); Spiffel at 4096 games
≥ 1,000,000 masked steps per second; the native trainer ≥ 20,000 steps/s for Spiffel with a
256×256 MLP on 2 cores and ≥ 5× MaskablePPO in the same run.
"""

from __future__ import annotations

import argparse
import json
import math
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
    """The command line (see the module doc); out-of-range numbers and conflicts exit with status 2."""
    p = argparse.ArgumentParser(prog="benchmark", description=__doc__.split("\n\n")[0])
    p.add_argument("--games", nargs="+", default=list(GAMES), choices=list(GAMES), help="rulesets to time")
    p.add_argument("--sizes", nargs="+", type=int, default=[1, 64, 1024, 4096], help="native env sizes")
    p.add_argument("--sync-envs", type=int, default=16, help="sub-envs of the SyncVectorEnv (0: skip)")
    p.add_argument("--seconds", type=float, default=2.0, help="time per env measurement")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--no-train", action="store_true", help="skip the training-loop measurements")
    which.add_argument("--only-train", action="store_true", help="only the training-loop measurements")
    p.add_argument("--loop-envs", type=int, default=1024, help="games per rollout in the training loops")
    p.add_argument("--loop-steps", type=int, default=32, help="rollout length per game in the training loops")
    p.add_argument("--loop-batch", type=int, default=4096, help="minibatch size in the training loops")
    p.add_argument("--loop-epochs", type=int, default=4, help="epochs per rollout in the training loops")
    p.add_argument("--loop-updates", type=int, default=3, help="rollouts (updates) timed per trainer")
    p.add_argument("--net-arch", nargs="+", type=int, default=[256, 256], help="hidden layers of both nets")
    p.add_argument(
        "--activation",
        default="tanh",
        choices=["tanh", "relu"],
        help="hidden activation of both nets in every loop (tanh: sb3's default)",
    )
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="torch device of the trainers")
    p.add_argument(
        "--gym", action="store_true", help="also time MaskablePPO on a DummyVecEnv of the Gymnasium envs"
    )
    p.add_argument("--subproc", action="store_true", help="also time MaskablePPO on SubprocVecEnv")
    p.add_argument(
        "--bf16", action="store_true", help="also time the native trainer with precision: bfloat16"
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=None,
        help="untimed updates each training loop runs before its timed run, with the same settings "
        "(default: 1 with --device cuda, whose first products load kernels and cuBLAS; 0 on a CPU)",
    )
    p.add_argument("--threads", type=int, default=None, help="BLAS/OMP/torch threads (default: all cores)")
    p.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    p.add_argument(
        "--opponents",
        nargs="*",
        default=[],
        help="also time the native env at the largest size with each of these opponents (agent specs)",
    )
    args = p.parse_args(argv)
    lows = {"sizes": 1, "sync_envs": 0, "threads": 1, "net_arch": 1, "loop_envs": 1, "loop_steps": 1}
    lows |= {"loop_batch": 1, "loop_epochs": 1, "loop_updates": 1, "warmup": 0}
    for dest, lo in lows.items():
        value = getattr(args, dest)
        for v in value if isinstance(value, list) else [value]:
            if v is not None and v < lo:
                p.error(f"--{dest.replace('_', '-')} must be an integer >= {lo}, got {v}")
    if not (math.isfinite(args.seconds) and args.seconds > 0):
        p.error(f"--seconds must be a number of seconds > 0, got {args.seconds}")
    if args.warmup is None:
        args.warmup = 1 if args.device == "cuda" else 0
    return args


import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

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


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement the arguments ask for, printed as it is made; the results as a dict."""
    threads = args.threads or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:  # pragma: no cover - torch is optional here
        pass
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "affinity": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "load_average_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
            "threads": threads,
        },
        "games": {},
    }
    for game in args.games:
        r: dict[str, Any] = {}
        if not args.no_train:
            from .bench_training import bench_training

            r["train"] = bench_training(game, args, threads)
        if args.only_train:
            results["games"][game] = r
            print_game(game, r)
            continue
        r["scalar"] = bench_scalar(game, args.seconds)
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
    results["machine"]["load_average_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    return results


_LOOP_NAMES = {
    "ppo": "native PPO",
    "ppo_bf16": "native PPO bfloat16",
    "sb3_native": "MaskablePPO (native env)",
    "sb3_gym": "MaskablePPO (DummyVecEnv of Gymnasium envs)",
    "sb3_subproc": "MaskablePPO (SubprocVecEnv)",
}


def print_game(game: str, r: dict[str, Any]) -> None:
    """The rows of one ruleset."""
    print(f"\n{game}")
    if "scalar" in r:
        base, env_base = r["scalar"]["steps_per_cpu_s"], r["scalar"]["env_steps_per_cpu_s"]
        print(
            f"  {'env':<14}{'steps/s':>12}{'steps/cpu-s':>13}{'env/cpu-s':>13}{'x scalar':>10}{'x (env)':>9}"
        )
        for k, v in r.items():
            if isinstance(v, dict) and "env_steps_per_cpu_s" in v:
                cpu, env_cpu = v["steps_per_cpu_s"], v["env_steps_per_cpu_s"]
                print(
                    f"  {k:<14}{v['steps_per_s']:>12,.0f}{cpu:>13,.0f}{env_cpu:>13,.0f}"
                    f"{cpu / base:>10.1f}{env_cpu / env_base:>9.1f}"
                )
    train = r.get("train", {})
    if train:
        print(f"  {'training loop':<20}{'steps/s':>12}{'steps/cpu-s':>13}")
        for k, v in train.items():
            if isinstance(v, dict):
                print(f"  {k:<20}{v['steps_per_s']:>12,.0f}{v['steps_per_cpu_s']:>13,.0f}")
        for key, ratio in train.items():
            if "_speedup_vs_" in key:
                mine, theirs = key.split("_speedup_vs_")
                print(f"  {_LOOP_NAMES[mine]} / {_LOOP_NAMES[theirs]}: {ratio:.1f}x")
        bound = train.get("matmul-bound")
        if bound:
            print(
                f"  matrix products alone: {bound['gflops_per_s']:.0f} GFLOP/s, "
                f"{bound['flops_per_step'] / 1e6:.2f} MFLOP per step; native PPO runs at "
                f"{train['ppo_share_of_matmul_bound']:.0%} of their rate"
            )
            for key, ratio in train.items():
                if key.startswith("matmul_bound_vs_"):
                    theirs = key.removeprefix("matmul_bound_vs_")
                    print(f"  the most any trainer could gain over {_LOOP_NAMES[theirs]} here: {ratio:.1f}x")
    sys.stdout.flush()


def check_out_file(out: Path) -> None:
    """Refuse ``--out`` before anything is measured (``OSError`` naming it): an existing file or
    folder (results are never overwritten), or a path no file can be written at (under a file, in
    a folder that is not writable; :func:`dice_envs.io.check_out_dir` of its folder)."""
    from dice_envs.io import check_out_dir

    if out.exists():
        raise FileExistsError(f"{out} exists; choose another --out (results are never overwritten)")
    try:
        check_out_dir(out.parent, force=True)
    except OSError as exc:
        raise type(exc)(f"--out {out}: {exc}") from None


def check_opponents(specs: list[str], games: list[str]) -> None:
    """Refuse (``ConfigError`` naming it and the known specs) an ``--opponents`` spec that plays
    none of ``games`` (:func:`agents.registry.check_fit`: for a model, its file and card) or needs a
    person at the keyboard; one that fits some of them is timed there and skipped elsewhere."""
    from agents.registry import check_fit
    from dice_envs.rules import ConfigError, make_rules

    for spec in specs:
        if spec.strip().lower() == "human":
            raise ConfigError(
                f"--opponents: {spec!r} is a person at the terminal; a benchmark times agents that play "
                "by themselves"
            )
        errors = []
        for game in games:
            try:
                check_fit(spec, make_rules(game), num_players=2)
            except ConfigError as exc:
                errors.append(exc)
        if len(errors) == len(games):
            raise ConfigError(f"--opponents: {errors[0]}")


def main(argv: list[str] | None = None) -> int:
    """``dice-envs benchmark`` / ``scripts/benchmark.py``."""
    from dice_envs.rules import ConfigError

    args = parse_args(argv)
    try:  # refused before any measurement: a bad --out or opponent would only be found at the end
        if args.out is not None:
            check_out_file(args.out)
        check_opponents(args.opponents, args.games)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    res = run(args)
    if args.out is not None:
        from agents.training.artifacts import atomic_write_text

        atomic_write_text(args.out, json.dumps(res, indent=2) + "\n")
        print(f"\nwrote {args.out}")
    return 0
