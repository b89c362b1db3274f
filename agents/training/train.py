"""``train(cfg)``: one entry point for every trainer (:func:`load_run_config` reads any recipe).

It picks the run folder (:func:`output_folder`; a resumed run's config checked by
:func:`check_resume` before anything is written), the device, and the trainer: ``ppo``
(:func:`agents.training.ppo.train_ppo`), ``sb3`` (:func:`agents.training.sb3_train.train_sb3`) or
``search`` (:func:`agents.training.search.learner.run`, on the CPU).
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.training.artifacts import check_resume
from agents.training.config import RunConfig, TrainConfig, load_config
from agents.training.products import TrainResult
from agents.training.search.config import SearchConfig
from dice_envs.io import atomic_write_text, fresh_folder, occupied
from dice_envs.rules import ConfigError

__all__ = [
    "check_agent_specs",
    "check_resume",
    "load_run_config",
    "output_folder",
    "resolve_device",
    "train",
]


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when available, else ``cpu``."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            "device 'cuda' was asked for but torch sees no CUDA device; use --device cpu or auto"
        )
    return device


def _holds_run(folder: Path) -> bool:
    """Whether ``folder`` holds a training run: a model or checkpoints."""
    return folder.is_dir() and (any(folder.glob("*.zip")) or (folder / "checkpoints").is_dir())


def load_run_config(path: str | Path | None, overrides: Sequence[str] = (), **values: Any) -> RunConfig:
    """The config of a run of any trainer: the recipe ``path`` (or the defaults), then ``key=value``
    overrides and keyword values (``None``: not given). The trainer, from ``values``, the last
    ``trainer=`` override or the recipe, picks the config: a :class:`SearchConfig` for ``search``,
    which counts iterations and runs on the CPU, else a :class:`TrainConfig`."""
    from agents.training.recipes import read_recipe

    said = [
        text.partition("=")[2].strip() for text in overrides if text.partition("=")[0].strip() == "trainer"
    ]
    trainer = values.get("trainer") or (said[-1] if said else None)
    if trainer is None and path is not None:
        trainer = read_recipe(path).get("trainer")
    if trainer != "search":
        return load_config(path, overrides, **values)
    if values.pop("total_timesteps", None) is not None:
        raise ConfigError("the search learner counts iterations, not steps: use --set iterations=N")
    if values.pop("device", None) == "cuda":
        raise ConfigError(
            "the search learner runs on the CPU (numpy search, a small torch fit): use --device cpu"
        )
    base = SearchConfig.from_yaml(path) if path is not None else SearchConfig.from_dict({})
    return base.with_overrides(overrides, **values)


def output_folder(cfg: RunConfig, out: str | Path | None, resume: bool) -> Path:
    """The run's folder: ``out``, which must be a new or empty folder or (``resume``) the run to
    continue; by default ``runs/<name>`` (``runs/<name>-2``, ... when something is there)."""
    if out is not None:
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {out} is a file, not a folder; give a new folder for the run")
        if resume:
            return out
        if _holds_run(out):
            raise ConfigError(
                f"{out} already holds a training run; pass --resume to continue it, or choose another --out"
            )
        if occupied(out):
            found = sorted(p.name for p in out.iterdir())
            shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
            raise ConfigError(
                f"--out {out} is not empty ({shown}) and holds no training run: a fresh run writes only "
                "into a new or empty folder, so nothing was touched; choose another --out"
            )
        return out
    base = Path("runs") / cfg.name
    return base if resume else fresh_folder(base)


def train(
    cfg: RunConfig,
    out: str | Path | None = None,
    resume: bool = False,
    command: str | None = None,
) -> TrainResult:
    """Run (or continue, ``resume``) the training described by ``cfg``; see the module doc."""
    folder = output_folder(cfg, out, resume)
    if resume and not folder.is_dir():
        raise ConfigError(f"--resume: no run folder {folder}")
    command = command or " ".join(shlex.quote(a) for a in sys.argv)
    if isinstance(cfg, SearchConfig):
        from agents.training.search.learner import run

        return run(cfg, folder, resume, command)
    assert isinstance(cfg, TrainConfig)
    if resume:
        check_resume(cfg, folder)  # its checkpoint: artifacts.resume_point, before the trainer writes
    check_agent_specs(cfg)  # resolved once, kept on cfg for the trainer (cfg.agent_specs)
    device = resolve_device(cfg.device)  # before any file is written
    fresh = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    saved = (folder / "config.json").read_text(encoding="utf-8") if resume else None
    atomic_write_text(folder / "config.json", json.dumps(cfg.to_dict(), indent=2) + "\n", overwrite=True)
    try:
        if cfg.trainer == "sb3":
            from agents.training.sb3_train import train_sb3

            return train_sb3(cfg, folder, resume, command, device)
        from agents.training.ppo import train_ppo

        return train_ppo(cfg, folder, resume, command, device)
    except ConfigError:
        if saved is not None:  # a refused resume leaves the run's config as it was
            atomic_write_text(folder / "config.json", saved, overwrite=True)
        else:
            _undo_refused_start(folder, fresh)
        raise


def check_agent_specs(cfg: TrainConfig) -> None:
    """Resolve every agent spec of ``cfg`` (:attr:`TrainConfig.agent_specs`) before training, used
    by this run or not: a typo is refused naming its key."""
    cfg.agent_specs  # noqa: B018  (a cached property: resolving is the point)


def _undo_refused_start(folder: Path, created: bool) -> None:
    """A start refused before its first step (a warm-start model that does not fit, say) leaves
    the folder as it found it: its ``config.json`` goes, and so does the folder if this run made
    it and nothing else was written there."""
    if _holds_run(folder):
        return  # it trained: keep everything
    (folder / "config.json").unlink(missing_ok=True)
    if created:
        for sub in sorted(folder.rglob("*"), reverse=True):
            if sub.is_dir() and not any(sub.iterdir()):
                sub.rmdir()
        if not any(folder.iterdir()):
            folder.rmdir()
