"""``dice-envs benchmark training``: env steps per second of whole training loops.

For every selected ruleset, in the same run, with the same network, rollout size
(``--loop-envs`` x ``--loop-steps``), minibatch and epochs:

* ``ppo`` — the native PPO trainer (:mod:`agents.training.ppo`) on the native env;
* ``sb3-native`` — sb3-contrib ``MaskablePPO`` on the native env
  (:class:`dice_envs.vector.sb3.SB3VecEnv`); ``sb3-gym`` (``--gym``) on a ``DummyVecEnv`` of the
  scalar Gymnasium envs, as sb3-contrib documents it; ``sb3-subproc`` (``--subproc``) on a
  ``SubprocVecEnv`` of them;

A *step* is one learner decision in one game, counted over the whole loop (rollout + update).
``--device cuda`` runs the loops on the GPU, each after ``--warmup`` untimed updates with the same
settings (a GPU's first products create cuBLAS handles and load kernels, a second or so that
would fall on whichever loop ran first).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

from agents.commands.benchmark.rates import load_average, machine, rate, set_torch_threads
from agents.models.activations import activation_class
from dice_envs.games import game_spec

__all__ = ["bench_loop", "bench_training", "run"]

_THEIRS = ("sb3-native", "sb3-gym", "sb3-subproc")
_LOOP_NAMES = {
    "ppo": "native PPO",
    "sb3_native": "MaskablePPO (native env)",
    "sb3_gym": "MaskablePPO (DummyVecEnv of Gymnasium envs)",
    "sb3_subproc": "MaskablePPO (SubprocVecEnv)",
}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every training loop of every ruleset, printed per ruleset as it is measured; the results."""
    threads = set_torch_threads(args.threads)
    results: dict[str, Any] = {"machine": machine(threads), "games": {}}
    for game in args.games:
        results["games"][game] = {"train": bench_training(game, args, threads)}
        print_training(game, results["games"][game]["train"])
    results["machine"]["load_average_end"] = load_average()
    return results


def bench_training(game: str, args: argparse.Namespace, threads: int) -> dict[str, Any]:
    """Every training loop the arguments ask for, each timed after ``--warmup`` untimed updates
    of the same loop (same settings: on a GPU, cuBLAS handles and lazily loaded kernels fall
    outside the timing), and the native loop's speed-up over each ``MaskablePPO`` loop."""
    kinds = (
        ["ppo", "sb3-native"] + (["sb3-gym"] if args.gym else []) + (["sb3-subproc"] if args.subproc else [])
    )
    warmup = argparse.Namespace(**{**vars(args), "loop_updates": args.warmup})
    out: dict[str, Any] = {}
    for kind in kinds:
        if args.warmup:
            bench_loop(game, kind, warmup, threads)
        out[kind] = {**bench_loop(game, kind, args, threads), "warmup_updates": args.warmup}
    for theirs in _THEIRS:
        if theirs in out:
            ratio = out["ppo"]["steps_per_s"] / out[theirs]["steps_per_s"]
            out[f"ppo_speedup_vs_{theirs}".replace("-", "_")] = ratio
    return out


def _native_ppo(game: str, args: argparse.Namespace, threads: int) -> dict[str, float]:
    """The native trainer's loop time (without start-up and saving) over ``--loop-updates`` rollouts."""
    import tempfile

    from agents.training.config import TrainConfig
    from agents.training.train import train

    cfg = TrainConfig.from_dict(
        {
            "name": "bench",
            "game": game,
            "n_envs": args.loop_envs,
            "n_steps": args.loop_steps,
            "batch_size": args.loop_batch,
            "n_epochs": args.loop_epochs,
            "net_arch": list(args.net_arch),
            "activation": args.activation,
            "total_timesteps": args.loop_updates * args.loop_envs * args.loop_steps,
            "eval_freq": 0,
            "checkpoint_freq": 0,
            "final_eval_games": 0,
            "tensorboard": False,
            "progress_bar": False,
            "device": args.device,
            "torch_threads": threads,
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        cpu = time.process_time()
        result = train(cfg, out=Path(tmp) / "run", command="benchmark")
        cpu = time.process_time() - cpu
    return rate(result.steps_this_run, result.wall_time_s, cpu)


def bench_loop(game: str, trainer: str, args: argparse.Namespace, threads: int) -> dict[str, float]:
    """Env steps per second of a whole training loop (rollout + update), ``--loop-updates`` rollouts.

    ``ppo``: the native trainer; ``sb3-native`` / ``sb3-gym`` / ``sb3-subproc``:
    ``MaskablePPO.learn`` on the native env / on a ``DummyVecEnv`` / ``SubprocVecEnv`` of scalar
    Gymnasium envs — the same network, rollout size, minibatch and epochs.
    """
    if trainer == "ppo":
        return _native_ppo(game, args, threads)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from agents.training.sb3_train import quiet_logger
    from dice_envs.vector.sb3 import SB3VecEnv

    env_id = game_spec(game).env_id
    scalar_envs = [lambda: gym.make(env_id) for _ in range(args.loop_envs)]
    if trainer == "sb3-native":
        venv: Any = SB3VecEnv(game, num_envs=args.loop_envs)
    elif trainer == "sb3-gym":
        venv = DummyVecEnv(scalar_envs)
    else:
        venv = SubprocVecEnv(scalar_envs, start_method="fork")
    torch.manual_seed(0)
    torch.set_num_threads(threads)
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=args.loop_steps,
        batch_size=args.loop_batch,
        n_epochs=args.loop_epochs,
        policy_kwargs={
            "net_arch": list(args.net_arch),
            "activation_fn": activation_class(args.activation),
        },
        seed=0,
        device=args.device,
        verbose=0,
    )
    quiet_logger(model)
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=args.loop_updates * args.loop_envs * args.loop_steps)
    out = rate(model.num_timesteps, time.perf_counter() - wall, time.process_time() - cpu)
    venv.close()
    return out


def print_training(game: str, train: dict[str, Any]) -> None:
    """The rows of one ruleset: each loop's rates and the speed-ups."""
    print(f"\n{game}")
    print(f"  {'training loop':<20}{'steps/s':>12}{'steps/cpu-s':>13}")
    for k, v in train.items():
        if isinstance(v, dict):
            print(f"  {k:<20}{v['steps_per_s']:>12,.0f}{v['steps_per_cpu_s']:>13,.0f}")
    for key, ratio in train.items():
        if "_speedup_vs_" in key:
            mine, theirs = key.split("_speedup_vs_")
            print(f"  {_LOOP_NAMES[mine]} / {_LOOP_NAMES[theirs]}: {ratio:.1f}x")
    sys.stdout.flush()
