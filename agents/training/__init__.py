"""Training of learned agents: PPO on the native vector env (default), sb3-contrib MaskablePPO, or
the search learner of a value network, with optional self-play and a behaviour-cloning warm start.

:func:`train` (:mod:`.train`) runs every trainer from a config (:mod:`.config`); docs/architecture.md
says what each module holds. The command line is ``dice-envs train``; this package needs the
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
