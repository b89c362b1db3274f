"""Training of learned agents: PPO on the native vector env (default) or sb3-contrib MaskablePPO,
with optional self-play and a behaviour-cloning warm start.

* :mod:`.config` — :class:`TrainConfig`, every knob of a run in one dataclass (YAML, strict keys);
* :mod:`.train` — :func:`train`, the one entry point: run folder, resume checks, device, trainer;
* :mod:`.ppo` — the native trainer's algorithm: masked sampling, GAE, the clipped PPO loss;
* :mod:`.ppo_train` — the native trainer's run loop (``trainer: ppo``);
* :mod:`.sb3_train` — sb3-contrib ``MaskablePPO.learn`` (``trainer: sb3``);
* :mod:`.envs` — the sb3 trainer's vector envs (native, subproc or dummy);
* :mod:`.selfplay` — opponent pools of learner snapshots and built-in agents;
* :mod:`.bc` — behaviour cloning of an expert (the exact solver) before PPO;
* :mod:`.evaluate` — batched games of a model against built-in agents;
* :mod:`.artifacts` — learning curve, checkpoints, atomic writes (the model card is
  :mod:`agents.model_card`'s).

The command line is ``dice-envs train`` (``scripts/train.py``). This package needs the ``train``
extra (torch, SB3).
"""

from __future__ import annotations

from typing import Any

from .config import TrainConfig, load_config

__all__ = ["TrainConfig", "load_config", "train"]


def train(*args: Any, **kwargs: Any) -> Any:
    """Run a training; see :func:`agents.training.train.train` (imported lazily: torch is heavy)."""
    from .train import train as _train

    return _train(*args, **kwargs)
