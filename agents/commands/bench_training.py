"""The training-loop half of ``scripts/benchmark.py`` (:mod:`agents.commands.benchmark`'s module doc).

Env steps per second of whole training loops (rollout + update): the native PPO trainer and
sb3-contrib ``MaskablePPO`` with the same network, rollout size, minibatch and epochs, and the bound
under all of them, the same work's matrix products alone.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

from .benchmark import GAMES, _rate

_THEIRS = ("sb3-native", "sb3-gym", "sb3-subproc")


def bench_training(game: str, args: argparse.Namespace, threads: int) -> dict[str, Any]:
    """Every training loop the arguments ask for, their speed-ups over each ``MaskablePPO`` loop,
    and the matrix-product bound with what it allows over each."""
    kinds = ["ppo"] + (["ppo-bf16"] if args.bf16 else []) + ["sb3-native"]
    kinds += (["sb3-gym"] if args.gym else []) + (["sb3-subproc"] if args.subproc else [])
    out: dict[str, Any] = {k: bench_timed_loop(game, k, args, threads) for k in kinds}
    for mine in ("ppo", "ppo-bf16"):
        for theirs in _THEIRS:
            if mine in out and theirs in out:
                ratio = out[mine]["steps_per_s"] / out[theirs]["steps_per_s"]
                out[f"{mine}_speedup_vs_{theirs}".replace("-", "_")] = ratio
    bound = out["matmul-bound"] = bench_matmul_bound(game, args, threads)
    out["ppo_share_of_matmul_bound"] = out["ppo"]["steps_per_s"] / bound["steps_per_s"]
    for theirs in _THEIRS:
        if theirs in out:
            ratio = bound["steps_per_s"] / out[theirs]["steps_per_s"]
            out[f"matmul_bound_vs_{theirs}".replace("-", "_")] = ratio
    return out


def bench_loop(game: str, trainer: str, args: argparse.Namespace, threads: int) -> dict[str, float]:
    """Env steps per second of a whole training loop (rollout + update), ``--loop-updates`` rollouts.

    ``ppo``: the native trainer (its loop time, without start-up and saving); ``ppo-bf16``: the
    same with ``precision: bfloat16``; ``sb3-native`` /
    ``sb3-gym`` / ``sb3-subproc``: ``MaskablePPO.learn`` on the native env / on a ``DummyVecEnv`` /
    ``SubprocVecEnv`` of scalar Gymnasium envs — the same network, rollout size, minibatch and epochs.
    """
    import tempfile

    import torch

    total = args.loop_updates * args.loop_envs * args.loop_steps
    if trainer in ("ppo", "ppo-bf16"):
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
                "total_timesteps": total,
                "eval_freq": 0,
                "checkpoint_freq": 0,
                "final_eval_games": 0,
                "tensorboard": False,
                "progress_bar": False,
                "device": args.device,
                "torch_threads": threads,
                "precision": "bfloat16" if trainer == "ppo-bf16" else "float32",
            }
        )
        with tempfile.TemporaryDirectory() as tmp:
            cpu = time.process_time()
            result = train(cfg, out=Path(tmp) / "run", command="benchmark")
            cpu = time.process_time() - cpu
        return _rate(result.steps_this_run, result.wall_time_s, cpu)
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from agents.training.sb3_train import quiet_logger
    from dice_envs.vector.sb3 import SB3VecEnv

    scalar_envs = [lambda: gym.make(GAMES[game]) for _ in range(args.loop_envs)]
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
            "activation_fn": {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[args.activation],
        },
        seed=0,
        device=args.device,
        verbose=0,
    )
    quiet_logger(model)
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=total)
    out = _rate(model.num_timesteps, time.perf_counter() - wall, time.process_time() - cpu)
    venv.close()
    return out


def bench_timed_loop(game: str, trainer: str, args: argparse.Namespace, threads: int) -> dict[str, float]:
    """:func:`bench_loop` after ``--warmup`` untimed updates of the same loop (same settings), so
    that one-off costs (on a GPU: cuBLAS handles, lazily loaded kernels) fall outside the timing."""
    if args.warmup:
        bench_loop(game, trainer, argparse.Namespace(**{**vars(args), "loop_updates": args.warmup}), threads)
    out = bench_loop(game, trainer, args, threads)
    out["warmup_updates"] = args.warmup
    return out


def _layer_dims(game: str, net_arch: list[int]) -> tuple[list[int], list[int]]:
    """Widths of the policy and value MLPs (input, hidden..., output) the loops train for ``game``."""
    from gymnasium.spaces.utils import flatdim

    env = gym.make(GAMES[game])
    n_in, n_act = flatdim(env.observation_space), int(env.action_space.n)
    env.close()
    return [n_in, *net_arch, n_act], [n_in, *net_arch, 1]


def matmul_flops_per_step(pi: list[int], vf: list[int], n_epochs: int) -> int:
    """Floating-point operations of the matrix products per env step of a PPO loop over two MLPs.

    One forward of both nets in the rollout, then per epoch a forward, the weight gradients and the
    input gradients of every layer but the first (the observations need no gradient):

    >>> matmul_flops_per_step([2, 3, 1], [2, 3, 1], n_epochs=1)  # 9 MACs per forward and net
    120
    """

    def macs(d: list[int]) -> int:
        return sum(a * b for a, b in itertools.pairwise(d))

    fwd = 2 * (macs(pi) + macs(vf))
    bwd = fwd + 2 * (macs(pi[1:]) + macs(vf[1:]))
    return fwd + n_epochs * (fwd + bwd)


def bench_matmul_bound(game: str, args: argparse.Namespace, threads: int) -> dict[str, float]:
    """Env steps per second of the loops' matrix products alone (module doc), ``--loop-updates`` rollouts."""
    import torch

    torch.set_num_threads(threads)
    dev = torch.device(args.device)
    gen = torch.Generator().manual_seed(0)
    pi, vf = _layer_dims(game, list(args.net_arch))

    def weights(dims: list[int]) -> list[torch.Tensor]:
        return [(torch.randn(b, a, generator=gen) / a**0.5).to(dev) for a, b in itertools.pairwise(dims)]

    nets = [weights(pi), weights(vf)]
    rollout = args.loop_envs * args.loop_steps
    sizes = [args.loop_batch] * (rollout // args.loop_batch)  # full minibatches: the least any loop does
    obs = {n: torch.randn(n, pi[0], generator=gen).to(dev) for n in {args.loop_envs, *sizes}}

    def one_update() -> None:
        for _ in range(args.loop_steps):
            for ws in nets:
                x = obs[args.loop_envs]
                for w in ws:
                    x = x @ w.t()
        for _ in range(args.loop_epochs):
            for n in sizes:
                for ws in nets:
                    acts = [obs[n]]
                    for w in ws:
                        acts.append(acts[-1] @ w.t())
                    grad = acts[-1]
                    for i in range(len(ws) - 1, -1, -1):
                        grad.t() @ acts[i]  # weight gradient
                        if i:
                            grad = grad @ ws[i]  # input gradient

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize()

    with torch.no_grad():
        one_update()  # warm-up: allocator, kernels
        sync()
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(args.loop_updates):
            one_update()
        sync()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    out = _rate(args.loop_updates * rollout, wall, cpu)
    flops = matmul_flops_per_step(pi, vf, args.loop_epochs)
    out["flops_per_step"] = float(flops)
    out["gflops_per_s"] = flops * out["steps_per_s"] / 1e9
    return out
