"""Training of learned agents: MaskablePPO with optional self-play and a behaviour-cloning warm start.

* :mod:`.config` — :class:`TrainConfig`, every knob of a run in one dataclass (YAML, strict keys);
* :mod:`.envs` — the training / evaluation vector envs (native, subproc or dummy);
* :mod:`.selfplay` — the opponent pool of learner snapshots and built-in agents;
* :mod:`.bc` — behaviour cloning of an expert (the exact solver) before PPO;
* :mod:`.train` — the training loop, :func:`train`;
* :mod:`.evaluate` — batched games of a model against built-in agents;
* :mod:`.artifacts` — model card, learning curve, checkpoints.

The command line is ``scripts/train.py``. This package needs the ``train`` extra (torch, SB3).
"""

from __future__ import annotations

from typing import Any

from .config import TrainConfig, load_config

__all__ = ["TrainConfig", "load_config", "train"]


def train(*args: Any, **kwargs: Any) -> Any:
    """Run a training; see :func:`agents.training.train.train` (imported lazily: torch is heavy)."""
    from .train import train as _train

    return _train(*args, **kwargs)
