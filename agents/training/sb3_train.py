"""The sb3-contrib path (``trainer: sb3``): MaskablePPO's own ``learn`` on a dice-envs game.

1. build the training vector env (native / subproc / dummy) and the evaluation env;
2. create the model (:func:`_model`), then load the newest checkpoint when resuming (:func:`_resume`);
3. optionally warm-start the policy: behaviour cloning of an expert, or a trained model's weights
   (:func:`_warm_start`);
4. learn with callbacks: periodic masked evaluation, checkpoints, self-play snapshots (:func:`_learn`);
5. save a final checkpoint, then the evaluation table, the model, its card and the curve
   (:func:`agents.training.train.save_products`).

The default trainer is :mod:`agents.training.ppo_train` (``trainer: ppo``), several times faster
on the native vector env; this path stays for users who want SB3's own loop (and its callbacks).
Its checkpoints are SB3 zips, loaded with ``MaskablePPO.load``: resume only runs you made.
"""

from __future__ import annotations

import json
import re
import sys
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from dice_envs.rules import ConfigError

from .artifacts import atomic_write_text, checkpoints
from .config import TrainConfig
from .envs import backend_name, make_eval_env, make_train_env
from .init_model import warm_start
from .train import TrainResult, previous_wall_time, save_products

__all__ = ["quiet_logger", "train_sb3", "trim_monitors"]


def _lr(cfg: TrainConfig) -> Any:
    from .ppo import schedule_value

    if cfg.lr_schedule == "constant":
        return cfg.learning_rate
    lr0, lr1, kind = cfg.learning_rate, cfg.lr_final, cfg.lr_schedule
    return lambda progress_remaining: schedule_value(lr0, lr1, kind, 1.0 - progress_remaining)


def train_sb3(cfg: TrainConfig, out: Path, resume: bool, command: str, device: str) -> TrainResult:
    """Run (or continue) ``cfg`` with sb3-contrib's ``MaskablePPO.learn`` in the folder ``out``."""
    import torch

    from ..model_card import machine_info
    from .threads import choose_threads, thread_governor

    threads = choose_threads(cfg.torch_threads, device)
    torch.set_num_threads(threads)
    governor = thread_governor(cfg.torch_threads, device, threads)
    candidates = checkpoints(out / "checkpoints") if resume else []
    start_steps = int(candidates[-1].name.split("_")[1]) if candidates else 0
    # 1. environments (the newest checkpoint's step count names the monitor file)
    monitor = out / f"train_from_{start_steps}.monitor.csv"
    train_env = make_train_env(cfg, out / "pool", monitor_file=str(monitor))
    eval_env = make_eval_env(cfg)
    t_start = time.perf_counter()
    model = _model(cfg, out, train_env, device)  # 2. the model, then (resume) its checkpoint
    resumed_from = _resume(cfg, model, train_env, candidates, device)
    if resume and resumed_from is None:
        if candidates:  # all failed to load (train() checked that they read as zips)
            raise ConfigError(f"--resume: no checkpoint in {out / 'checkpoints'} loads; nothing was touched")
        print(f"--resume: no checkpoint yet in {out / 'checkpoints'}; starting from scratch", file=sys.stderr)
    if resume:
        trim_monitors(out, model.num_timesteps, current=monitor)
    warm_stats = _warm_start(cfg, out, model, resumed=resumed_from is not None)  # 3. warm start
    steps_before = model.num_timesteps
    t0 = time.perf_counter()
    _learn(cfg, out, model, eval_env, steps_before, resumed_from is None, governor)  # 4. learn
    learn_s = time.perf_counter() - t0
    backend = backend_name(train_env)
    train_env.close()
    eval_env.close()
    # 5. products: a final checkpoint, then the evaluation table, model, card and curve
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    model.save(out / "checkpoints" / f"model_{model.num_timesteps}_steps.zip")
    previous_wall = previous_wall_time(out / f"{cfg.name}.zip") if resumed_from else 0.0
    multi_win = cfg.reward != "score" and cfg.num_players > 1
    products = save_products(
        model,
        cfg,
        out,
        steps=model.num_timesteps,
        wall_time_s=previous_wall + time.perf_counter() - t_start,  # warm start + learning
        warm_stats=warm_stats,
        command=command,
        title=f"{cfg.name}: MaskablePPO on {cfg.game}",
        ylabel="win reward (+1/-1)" if multi_win else "final score",
        references={},
        machine=machine_info(device, governor.threads, governor.updates),
    )
    steps_this_run = model.num_timesteps - steps_before
    return TrainResult(
        **products,
        steps=model.num_timesteps,
        steps_this_run=steps_this_run,
        wall_time_s=learn_s,
        env_steps_per_s=steps_this_run / learn_s if learn_s > 0 else float("nan"),
        backend=backend,
        resumed_from=resumed_from,
    )


def _model(cfg: TrainConfig, out: Path, train_env: Any, device: str) -> Any:
    """A fresh ``MaskablePPO`` of ``cfg`` on ``train_env``."""
    from sb3_contrib import MaskablePPO

    from .ppo import maskable_ppo_kwargs

    model = MaskablePPO(
        "MlpPolicy",
        train_env,
        learning_rate=_lr(cfg),
        batch_size=cfg.batch_size,
        target_kl=cfg.target_kl,
        tensorboard_log=str(out / "tb") if cfg.tensorboard else None,
        device=device,
        verbose=cfg.verbose,
        **maskable_ppo_kwargs(cfg),
    )
    if not cfg.tensorboard and cfg.verbose == 0:
        quiet_logger(model)
    return model


def quiet_logger(model: Any) -> None:
    """Give an SB3 model a logger that writes nowhere.

    Without one, ``learn`` with neither TensorBoard nor console output still creates an empty
    ``SB3-<date>`` folder in the system temp dir on every call.
    """
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))


def _resume(cfg: TrainConfig, model: Any, train_env: Any, candidates: list[Path], device: str) -> Path | None:
    """Load the weights and optimizer state of the newest checkpoint that loads; its path or ``None``.

    Only the zip's tensors are read (``set_parameters``): nothing in a run folder is unpickled.
    """
    for path in reversed(candidates):
        try:
            model.set_parameters(str(path), exact_match=True, device=device)
        except (OSError, ValueError, RuntimeError, KeyError, zipfile.BadZipFile) as exc:
            warnings.warn(f"skipping checkpoint {path}: {exc}", stacklevel=2)
            continue
        model.num_timesteps = int(path.name.split("_")[1])
        model.set_random_seed(cfg.seed + model.num_timesteps)
        train_env.seed(cfg.seed + model.num_timesteps)
        return path
    return None


def _warm_start(cfg: TrainConfig, out: Path, model: Any, resumed: bool) -> dict[str, Any] | None:
    """Behaviour cloning of a fresh run (``warm_start: bc``) or a trained model's weights
    (``warm_start: model``), what was done kept in ``warm_start.json``; a resumed run reads it back."""
    warm = out / "warm_start.json"
    if resumed:
        return json.loads(warm.read_text()) if warm.is_file() else None
    record = warm_start(model, cfg, str(model.device))
    if record is not None:
        atomic_write_text(warm, json.dumps(record, indent=2) + "\n")
    return record


def _learn(
    cfg: TrainConfig, out: Path, model: Any, eval_env: Any, start_steps: int, fresh: bool, governor: Any
) -> None:
    """``model.learn`` up to ``total_timesteps``, with checkpoint, evaluation and self-play
    callbacks, and ``governor`` keeping ``torch_threads: 0`` right (:func:`governed_callbacks`)."""
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.callbacks import CheckpointCallback

    per_env = max(1, cfg.n_envs)
    callbacks: list[Any] = []
    if cfg.checkpoint_freq:
        freq = max(1, cfg.checkpoint_freq // per_env)
        callbacks.append(CheckpointCallback(freq, str(out / "checkpoints"), "model"))
    if cfg.eval_freq:
        eval_cb = MaskableEvalCallback(
            eval_env,
            n_eval_episodes=cfg.eval_episodes,
            eval_freq=max(1, cfg.eval_freq // per_env),
            log_path=str(out),
            best_model_save_path=None,
            deterministic=True,
            verbose=0,
        )
        _restore_evaluations(eval_cb, out / "evaluations.npz", upto=start_steps)
        callbacks.append(eval_cb)
    if cfg.self_play:
        from .selfplay import SnapshotCallback

        callbacks.append(SnapshotCallback(out / "pool", cfg.snapshot_freq, cfg.pool_size))
    if not fresh and cfg.tensorboard:
        model.set_logger(_resumed_logger(model, "ppo", start_steps))
    remaining = cfg.total_timesteps - model.num_timesteps
    if remaining <= 0:
        print(
            f"already trained {model.num_timesteps} steps >= total_timesteps {cfg.total_timesteps}; "
            "nothing to learn"
        )
        return
    model.learn(
        total_timesteps=remaining,
        callback=governed_callbacks(callbacks, governor),
        reset_num_timesteps=fresh,
        progress_bar=cfg.progress_bar,
        tb_log_name="ppo",
    )


def governed_callbacks(callbacks: list[Any], governor: Any) -> Any:
    """``callbacks`` as one SB3 ``CallbackList`` that also hands each update's wall time to
    ``governor`` (:class:`~agents.training.threads.ThreadGovernor`): the time from one rollout's
    start to the next (rollout and gradient steps), less what the callbacks themselves took
    (evaluations, checkpoints, snapshots), so an evaluation is not taken for a slowed machine."""
    from stable_baselines3.common.callbacks import CallbackList

    from .threads import govern_threads

    class _Governed(CallbackList):
        def __init__(self) -> None:
            super().__init__(callbacks)
            self.started: float | None = None
            self.inside = 0.0  # seconds in the callbacks since the rollout started

        def _on_rollout_start(self) -> None:
            now = time.perf_counter()
            if self.started is not None:
                govern_threads(governor, now - self.started - self.inside, self.num_timesteps)
            self.started, self.inside = now, 0.0
            super()._on_rollout_start()

        def _on_step(self) -> bool:
            t = time.perf_counter()
            go_on = super()._on_step()
            self.inside += time.perf_counter() - t
            return go_on

    return _Governed()


def _resumed_logger(model: Any, tb_log_name: str, steps: int) -> Any:
    """The logger ``learn`` would make for a resumed run, its TensorBoard writer purging the steps
    after the checkpoint's (``steps``).

    SB3 appends to the run's ``<tb_log_name>_<id>`` folder; the killed run's events past its last
    checkpoint stayed there and would show twice, the curve running back in time. Like the native
    trainer's, this writer starts with a purge mark at ``steps + 1``: TensorBoard drops the earlier
    events from there on and keeps the row logged at the checkpoint's own step.
    """
    from stable_baselines3.common.logger import TensorBoardOutputFormat, configure
    from stable_baselines3.common.utils import get_latest_run_id

    class PurgingTensorBoard(TensorBoardOutputFormat):
        def __init__(self, folder: str) -> None:  # not super().__init__: one writer, with the mark
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(log_dir=folder, purge_step=steps + 1)
            self._is_closed = False

    run_id = max(1, get_latest_run_id(model.tensorboard_log, tb_log_name))  # SB3's folder for it
    folder = str(Path(model.tensorboard_log) / f"{tb_log_name}_{run_id}")
    logger = configure(folder, ["stdout"] if model.verbose >= 1 else [])
    logger.output_formats.append(PurgingTensorBoard(folder))
    logger.log(f"Logging to {folder}")
    return logger


_MONITOR = re.compile(r"^train_from_(\d+)\.monitor\.csv$")


def trim_monitors(out: Path, steps: int, current: Path) -> None:
    """Cut the killed runs' monitor files (``train_from_<start>.monitor.csv``) at the checkpoint a
    run resumes from (``steps``), as ``evaluations.npz``, TensorBoard and ``progress.csv`` are cut.

    The learning curve places an episode at ``start`` plus the lengths of the file's episodes so
    far; the episodes placed past ``steps`` were played again by the resumed run and would show
    twice. A file that starts at or past ``steps`` goes; the others keep their two header lines and
    the episodes up to ``steps`` (rewritten atomically; a torn last row goes too). ``current`` is
    the resumed run's own file, left as it is.
    """
    for path in sorted(out.glob("train_from_*.monitor.csv")):
        match = _MONITOR.match(path.name)
        if match is None or path == current:
            continue
        start = int(match.group(1))
        if start >= steps:
            path.unlink()
            continue
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        total, keep = start, min(2, len(lines))
        for line in lines[keep:]:
            try:
                total += int(float(line.split(",")[1]))
            except (IndexError, ValueError):
                break
            if total > steps or not line.endswith("\n"):
                break
            keep += 1
        if keep < len(lines):
            atomic_write_text(path, "".join(lines[:keep]))


def _restore_evaluations(callback: Any, npz: Path, upto: int) -> None:
    """Keep the evaluations of the run being resumed (up to its checkpoint) in ``evaluations.npz``."""
    if upto <= 0 or not npz.is_file():
        return
    data = np.load(npz)
    keep = [i for i, t in enumerate(data["timesteps"]) if t <= upto]
    callback.evaluations_timesteps = [int(data["timesteps"][i]) for i in keep]
    callback.evaluations_results = [list(data["results"][i]) for i in keep]
    callback.evaluations_length = [list(data["ep_lengths"][i]) for i in keep]
