"""Training of learned agents: PPO on the native vector env (default), sb3-contrib MaskablePPO, or
the search learner of a value network, with optional self-play and a behaviour-cloning warm start.

* :mod:`.config` — :class:`RunConfig`, what every trainer's config shares (strict keys, YAML,
  overrides), and :class:`TrainConfig`, every knob of a PPO run;
* :mod:`.train` — :func:`train`, the one entry point of every trainer: run folder, resume checks,
  device, trainer (:func:`~agents.training.train.load_run_config` reads any recipe);
* :mod:`.ppo` — the native trainer (``trainer: ppo``), read top to bottom: rollout, GAE, the
  clipped PPO update, the run loop; :mod:`.learner` — its state and checkpoints;
* :mod:`.sb3_train` — sb3-contrib ``MaskablePPO.learn`` (``trainer: sb3``);
* :mod:`.policy` — the network both train (sb3-contrib's policy in a ``MaskablePPO``);
* :mod:`.envs` — the training and evaluation envs (native vector env, subproc or dummy);
* :mod:`.selfplay` — the self-play pool of learner snapshots and built-in agents (also RLlib's);
* :mod:`.bc` — behaviour cloning of an expert (the exact solver) before PPO;
* :mod:`.init_model` — the warm start of either kind; :mod:`.ensemble` — averaged models;
* :mod:`.score_table` — batched games of a model against built-in agents (the final table);
* :mod:`.products` — what a PPO run ends with: evaluation table, model, card, curve;
* :mod:`.artifacts` — progress log, the one learning-curve plot, checkpoints;
* :mod:`.recipes` — the shipped recipes (``configs/train``), found from any directory;
* :mod:`.search` — ``trainer: search``: its config, its learner (points or the win) and products.

The command line is ``dice-envs train`` (:mod:`agents.commands.train`). This package needs the
``train`` extra (torch, SB3).
"""

from __future__ import annotations

from typing import Any

from agents.training.config import TrainConfig, load_config

__all__ = ["TrainConfig", "load_config", "train"]


def train(*args: Any, **kwargs: Any) -> Any:
    """Run a training; see :func:`agents.training.train.train` (imported lazily: torch is heavy)."""
    from agents.training.train import train as _train

    return _train(*args, **kwargs)
