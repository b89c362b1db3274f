"""Training of learned agents: PPO on the native vector env (default) or sb3-contrib MaskablePPO,
with optional self-play and a behaviour-cloning warm start.

* :mod:`.config` — :class:`TrainConfig`, every knob of a run in one dataclass (YAML, strict keys);
* :mod:`.train` — :func:`train`, the one entry point: run folder, resume checks, device, trainer;
* :mod:`.ppo` — the native trainer (``trainer: ppo``), read top to bottom: rollout, GAE, the
  clipped PPO update, the run loop;
* :mod:`.sb3_train` — sb3-contrib ``MaskablePPO.learn`` (``trainer: sb3``);
* :mod:`.policy` — the network both train (sb3-contrib's policy in a ``MaskablePPO``);
* :mod:`.envs` — the training and evaluation envs (native vector env, subproc or dummy);
* :mod:`.selfplay` — the self-play pool of learner snapshots and built-in agents (also RLlib's);
* :mod:`.bc` — behaviour cloning of an expert (the exact solver) before PPO;
* :mod:`.init_model` — the warm start of either kind;
* :mod:`.evaluate` — batched games of a model against built-in agents;
* :mod:`.products` — what a run ends with: evaluation table, model, card, curve;
* :mod:`.artifacts` — progress log, learning curve, checkpoints.

The command line is ``dice-envs train`` (``scripts/train.py``). This package needs the ``train``
extra (torch, SB3).
"""

from __future__ import annotations

from typing import Any

from agents.training.config import TrainConfig, load_config

__all__ = ["TrainConfig", "load_config", "train"]


def train(*args: Any, **kwargs: Any) -> Any:
    """Run a training; see :func:`agents.training.train.train` (imported lazily: torch is heavy)."""
    from agents.training.train import train as _train

    return _train(*args, **kwargs)
