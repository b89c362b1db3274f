"""``dice-envs benchmark recipe``: env steps per second of a training recipe, per vector env.

Two figures per ``vec_env`` backend (``native``, ``subproc``, ``dummy``), from the same recipe
(``--config``, a file or a shipped recipe's name, default ``quickstart-ppo``; ``--set`` overrides):

* ``rollout``: the recipe's training vector env alone (:func:`agents.training.envs.make_train_env`),
  stepped with uniformly random legal actions;
* ``training``: the recipe's whole training loop (rollouts + updates; no evaluation, no
  checkpoints) for ``--train-steps`` steps, as :func:`agents.training.train.train` reports it.

``vec_env`` is a knob of the ``sb3`` trainer: under ``trainer: ppo`` (the native trainer, which
always steps the native env) only the rollout figure changes with the backend. A ``trainer:
search`` recipe is refused by name: it steps no vector env.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.commands.benchmark.rates import load_average, machine
from dice_envs.rules import ConfigError

__all__ = ["rollout_speed", "run", "training_speed"]


def rollout_speed(cfg: Any, steps: int) -> float:
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


def training_speed(cfg: Any, steps: int) -> float:
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
        return train(cfg, out=tmp, command="benchmark").env_steps_per_s


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Both figures for every backend of ``--backends``, each printed; the results."""
    from agents.training.config import load_config
    from agents.training.recipes import available_configs, find_config, read_recipe

    path = find_config(args.config)
    if read_recipe(path).get("trainer") == "search":
        timed = [n for n in available_configs("train") if read_recipe(n).get("trainer") != "search"]
        raise ConfigError(
            f"{path}: a trainer: search recipe has no vector env or training loop for "
            f"dice-envs benchmark recipe to time; it times the recipes of the ppo and sb3 trainers "
            f"(shipped: {', '.join(timed)})"
        )
    base = load_config(path, args.overrides)
    results: dict[str, Any] = {"machine": machine(), "backends": {}}
    for backend in args.backends:
        cfg = base.with_overrides([f"vec_env={backend}"])
        r = rollout_speed(cfg, args.rollout_steps)
        t = training_speed(cfg, args.train_steps)
        results["backends"][backend] = {
            "game": cfg.game,
            "n_envs": cfg.n_envs,
            "rollout_steps_per_s": r,
            "training_steps_per_s": t,
        }
        print(
            f"{backend:<8} {cfg.game} n_envs={cfg.n_envs}: "
            f"rollout {r:8.0f} steps/s, training {t:6.0f} steps/s",
            flush=True,
        )
    results["machine"]["load_average_end"] = load_average()
    return results
