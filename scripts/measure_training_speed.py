#!/usr/bin/env python
"""Environment steps per second of the training vector envs: native vs subproc vs dummy.

Two figures per backend, from the same config (default ``configs/train/quickstart.yaml``):

* ``rollout``: the vector env alone, stepped with uniformly random legal actions;
* ``training``: the whole MaskablePPO loop (rollouts + updates) for ``--train-steps`` steps.

    python scripts/measure_training_speed.py --config configs/train/quickstart.yaml
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.training.config import TrainConfig, load_config


def rollout_speed(cfg: TrainConfig, steps: int) -> float:
    """Env steps/s of the training vector env under random legal actions."""
    from agents.training.envs import make_train_env

    with tempfile.TemporaryDirectory() as tmp:
        venv = make_train_env(cfg, Path(tmp) / "pool")
        rng = np.random.default_rng(0)
        venv.seed(0)
        venv.reset()
        t0 = time.perf_counter()
        for _ in range(steps // cfg.n_envs):
            masks = np.asarray(venv.env_method("action_masks"), dtype=bool)
            actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
            venv.step(actions)
        elapsed = time.perf_counter() - t0
        venv.close()
    return (steps // cfg.n_envs) * cfg.n_envs / elapsed


def training_speed(cfg: TrainConfig, steps: int) -> float:
    """Env steps/s of the whole training loop (no evaluation, no checkpoints)."""
    from agents.training.train import train

    cfg = cfg.with_overrides(
        total_timesteps=steps,
        eval_freq=0,
        checkpoint_freq=0,
        final_eval_games=0,
        progress_bar=False,
        tensorboard=False,
        warm_start="none",
    )
    with tempfile.TemporaryDirectory() as tmp:
        return train(cfg, out=tmp, command="speed").env_steps_per_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", type=Path, default=Path("configs/train/quickstart.yaml"))
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--backends", nargs="*", default=["native", "subproc", "dummy"])
    parser.add_argument("--rollout-steps", type=int, default=40_000)
    parser.add_argument("--train-steps", type=int, default=32_768)
    args = parser.parse_args(argv)
    base = load_config(args.config, args.overrides)
    results = {}
    for backend in args.backends:
        cfg = base.with_overrides([f"vec_env={backend}"])
        r = rollout_speed(cfg, args.rollout_steps)
        t = training_speed(cfg, args.train_steps)
        results[backend] = {"rollout_steps_per_s": r, "training_steps_per_s": t}
        print(
            f"{backend:<8} {cfg.game} n_envs={cfg.n_envs}: "
            f"rollout {r:8.0f} steps/s, training {t:6.0f} steps/s",
            flush=True,
        )
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
