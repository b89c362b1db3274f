"""The sb3-contrib path (``trainer: sb3``): ``MaskablePPO.learn`` on a dice-envs game, for users
who want SB3's own loop and callbacks.

A run leaves what the native trainer's does, made by the same helpers (self-play pool, warm start,
``progress.csv``, products, resume checks), besides SB3's own: its checkpoints
(``checkpoints/model_<steps>_steps.zip``, read weights-only on resume), its periodic evaluation
(``evaluations.npz``), the monitor files and its TensorBoard logs.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from agents.training.artifacts import PROGRESS_FIELDS, RunReporter, checkpoints, resume_point
from agents.training.config import TrainConfig
from agents.training.envs import backend_name, make_eval_env, make_train_env
from agents.training.init_model import warm_start
from agents.training.policy import maskable_ppo_kwargs
from agents.training.ppo import schedule_value
from agents.training.products import TrainResult, previous_wall_time, save_products
from agents.training.selfplay import list_snapshots, save_snapshot
from dice_envs.io import atomic_write_text

__all__ = ["quiet_logger", "train_sb3", "trim_monitors"]


def train_sb3(cfg: TrainConfig, out: Path, resume: bool, command: str, device: str) -> TrainResult:
    """Run (or continue) ``cfg`` with sb3-contrib's ``MaskablePPO.learn`` in the folder ``out``."""
    import torch

    from agents.models.card import machine_info

    torch.set_num_threads(cfg.torch_threads)
    ckpt_dir = out / "checkpoints"
    found = resume_point(ckpt_dir, checkpoints(ckpt_dir), lambda p: _read(p, device)) if resume else None
    start_steps = _steps(found[0]) if found else 0
    # 1. environments (the checkpoint's step count names the monitor file)
    monitor = out / f"train_from_{start_steps}.monitor.csv"
    train_env = make_train_env(cfg, out / "pool", monitor_file=str(monitor))
    eval_env = make_eval_env(cfg)
    t_start = time.perf_counter()
    model = _model(cfg, out, train_env, device)  # 2. the model, then (resume) its checkpoint
    resumed_from = _resume(cfg, model, train_env, *found) if found else None
    if resume:
        trim_monitors(out, model.num_timesteps, current=monitor)
    warm_stats = _warm_start(cfg, out, model, resumed=resumed_from is not None)  # 3. warm start
    steps_before = model.num_timesteps
    previous_wall = previous_wall_time(out / f"{cfg.name}.zip") if resumed_from else 0.0
    t0 = time.perf_counter()
    _learn(cfg, out, model, eval_env, resumed_from is not None, previous_wall - t_start)  # 4. learn
    learn_s = time.perf_counter() - t0
    backend = backend_name(train_env)
    train_env.close()
    eval_env.close()
    # 5. a final checkpoint, then the evaluation table, model, card and curve
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    model.save(out / "checkpoints" / f"model_{model.num_timesteps}_steps.zip")
    multi_win = cfg.reward != "score" and cfg.num_players > 1
    return save_products(
        model,
        cfg,
        out,
        steps=model.num_timesteps,
        steps_this_run=model.num_timesteps - steps_before,
        learn_s=learn_s,
        wall_time_s=previous_wall + time.perf_counter() - t_start,  # warm start + learning
        warm_stats=warm_stats,
        command=command,
        title=f"{cfg.name}: MaskablePPO on {cfg.game}",
        ylabel="win reward (+1/-1)" if multi_win else "final score",
        references={},
        backend=backend,
        resumed_from=resumed_from,
        machine=machine_info(device, cfg.torch_threads),
    )


def _model(cfg: TrainConfig, out: Path, train_env: Any, device: str) -> Any:
    """A fresh ``MaskablePPO`` of ``cfg`` on ``train_env`` (the learning rate follows
    ``lr_schedule`` as the native trainer's does)."""
    from sb3_contrib import MaskablePPO

    lr: Any = cfg.learning_rate
    if cfg.lr_schedule != "constant":
        lr0, lr1, kind = cfg.learning_rate, cfg.lr_final, cfg.lr_schedule
        lr = lambda progress_remaining: schedule_value(lr0, lr1, kind, 1.0 - progress_remaining)  # noqa: E731
    model = MaskablePPO(
        "MlpPolicy",
        train_env,
        learning_rate=lr,
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
    """Give an SB3 model a logger that writes nowhere (without one, a quiet ``learn`` still makes
    an empty ``SB3-<date>`` folder in the temp dir on every call)."""
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))


def _steps(path: Path) -> int:
    """The step count of a checkpoint ``model_<steps>_steps.zip``."""
    return int(path.name.split("_")[1])


def _read(path: Path, device: str) -> dict[str, Any]:
    """The weights and optimizer state of a checkpoint (only the zip's tensors are read:
    nothing in a run folder is unpickled); one of the checkpoint errors when it does not read."""
    from stable_baselines3.common.save_util import load_from_zip_file

    _, params, _ = load_from_zip_file(path, device=device, load_data=False)
    if "policy" not in params:
        raise ValueError("it holds no policy weights")
    return params


def _resume(cfg: TrainConfig, model: Any, train_env: Any, path: Path, params: dict[str, Any]) -> Path:
    """Continue from the checkpoint ``path``, whose weights and optimizer state are ``params``."""
    model.set_parameters(params, exact_match=True, device=model.device)
    model.num_timesteps = _steps(path)
    model.set_random_seed(cfg.seed + model.num_timesteps)
    train_env.seed(cfg.seed + model.num_timesteps)
    return path


def _warm_start(cfg: TrainConfig, out: Path, model: Any, resumed: bool) -> dict[str, Any] | None:
    """Warm-start a fresh run (:func:`agents.training.init_model.warm_start`), what was done kept in
    ``warm_start.json``; a resumed run reads it back."""
    warm = out / "warm_start.json"
    if resumed:
        return json.loads(warm.read_text()) if warm.is_file() else None
    record = warm_start(model, cfg, str(model.device))
    if record is not None:
        atomic_write_text(warm, json.dumps(record, indent=2) + "\n", overwrite=True)
    return record


def _learn(cfg: TrainConfig, out: Path, model: Any, eval_env: Any, resumed: bool, wall_offset: float) -> None:
    """``model.learn`` up to ``total_timesteps`` with checkpoint, evaluation, self-play and
    progress callbacks (``wall_offset`` + ``perf_counter()``: the training's wall time so far)."""
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.callbacks import CheckpointCallback

    start_steps = model.num_timesteps
    remaining = cfg.total_timesteps - start_steps
    if remaining <= 0:
        print(
            f"already trained {start_steps} steps >= total_timesteps {cfg.total_timesteps}; nothing to learn"
        )
        return
    per_env = max(1, cfg.n_envs)
    callbacks: list[Any] = []
    if cfg.checkpoint_freq:
        freq = max(1, cfg.checkpoint_freq // per_env)
        callbacks.append(CheckpointCallback(freq, str(out / "checkpoints"), "model"))
    eval_cb = None
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
        _restore_evaluations(eval_cb, out / "evaluations.npz", upto=start_steps if resumed else 0)
        callbacks.append(eval_cb)
    if cfg.self_play:
        callbacks.append(_PoolSnapshots(out / "pool", cfg.snapshot_freq, cfg.pool_size))
    reporter = RunReporter(
        out,
        PROGRESS_FIELDS,
        steps=start_steps,
        resumed=resumed,
        total_timesteps=cfg.total_timesteps,
        tensorboard=False,  # SB3 writes its own
        progress_bar=False,  # and shows its own
    )
    callbacks.append(_ProgressRows(reporter, eval_cb, cfg.ent_coef, wall_offset))
    if resumed and cfg.tensorboard:
        model.set_logger(_resumed_logger(model, "ppo", start_steps))
    try:
        model.learn(
            total_timesteps=remaining,
            callback=callbacks,
            reset_num_timesteps=not resumed,
            progress_bar=cfg.progress_bar,
            tb_log_name="ppo",
        )
    finally:
        reporter.close()


class _PoolSnapshots(BaseCallback):
    """Writes the learner to the self-play pool folder (:func:`save_snapshot`) at the start of a
    fresh run and every ``freq`` env steps; the envs' seats read it from there."""

    def __init__(self, pool_dir: Path, freq: int, keep: int) -> None:
        super().__init__()
        self.pool_dir, self.freq, self.keep, self.last = pool_dir, freq, keep, 0

    def _save(self) -> None:
        save_snapshot(self.model.policy, self.pool_dir, self.num_timesteps, self.keep)
        self.last = self.num_timesteps

    def _on_training_start(self) -> None:
        self.last = self.num_timesteps
        if not list_snapshots(self.pool_dir):
            self._save()

    def _on_step(self) -> bool:
        if self.freq > 0 and self.num_timesteps - self.last >= self.freq:
            self._save()
        return True


class _ProgressRows(BaseCallback):
    """One ``progress.csv`` row per update, in the native trainer's columns: written when the
    next rollout starts (or training ends), once SB3 has recorded the update's losses."""

    #: progress.csv column ← SB3 logger key (``entropy`` is minus SB3's ``train/entropy_loss``).
    LOSSES: ClassVar[dict[str, str]] = {
        "learning_rate": "train/learning_rate",
        "loss": "train/loss",
        "policy_loss": "train/policy_gradient_loss",
        "value_loss": "train/value_loss",
        "approx_kl": "train/approx_kl",
        "clip_fraction": "train/clip_fraction",
        "explained_variance": "train/explained_variance",
    }

    def __init__(self, reporter: RunReporter, eval_cb: Any, ent_coef: float, wall_offset: float) -> None:
        super().__init__()
        self.reporter, self.eval_cb = reporter, eval_cb
        self.ent_coef, self.wall_offset = ent_coef, wall_offset
        self.finished: list[float] = []
        self.episodes = 0
        self.pending = False
        self.last_steps, self.last_time = 0, 0.0

    def _on_training_start(self) -> None:
        self.last_steps, self.last_time = self.num_timesteps, time.perf_counter()

    def _on_step(self) -> bool:
        self.finished += [float(i["episode"]["r"]) for i in self.locals.get("infos", []) if "episode" in i]
        return True

    def _on_rollout_start(self) -> None:
        if self.pending:
            self._row()

    def _on_rollout_end(self) -> None:
        self.pending = True  # the update follows

    def _on_training_end(self) -> None:
        if self.pending:
            self._row()

    def _row(self) -> None:
        now, steps = time.perf_counter(), self.num_timesteps
        values = self.model.logger.name_to_value
        self.episodes += len(self.finished)
        row: dict[str, Any] = {
            "steps": steps,
            "wall_s": self.wall_offset + now,
            "steps_per_s": (steps - self.last_steps) / max(now - self.last_time, 1e-9),
            "episodes": self.episodes,
            "ent_coef": self.ent_coef,
            **{column: float(values[key]) for column, key in self.LOSSES.items() if key in values},
        }
        if "train/entropy_loss" in values:
            row["entropy"] = -float(values["train/entropy_loss"])
        if self.finished:
            row["train_return"] = float(np.mean(self.finished))
        done = self.eval_cb.evaluations_timesteps if self.eval_cb is not None else []
        if done and done[-1] > self.last_steps:
            results = np.asarray(self.eval_cb.evaluations_results[-1], dtype=np.float64)
            row["eval"] = float(results.mean())
            row["eval_se"] = float(results.std(ddof=1) / np.sqrt(results.size)) if results.size > 1 else 0.0
        self.reporter.report(row, steps - self.last_steps)
        self.finished, self.pending = [], False
        self.last_steps, self.last_time = steps, now


def _resumed_logger(model: Any, tb_log_name: str, steps: int) -> Any:
    """The logger ``learn`` would make for a resumed run, its TensorBoard writer purging the events
    after the checkpoint's ``steps`` that the killed run left in SB3's ``<tb_log_name>_<id>`` folder
    (they would show twice, the curve running back in time)."""
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
    """Cut the killed runs' monitor files (``train_from_<start>.monitor.csv``, but ``current``) at
    the checkpoint a run resumes from (``steps``): an episode ends at ``start`` plus the lengths so
    far, and those past ``steps`` were played again. A file starting at or past ``steps`` goes; the
    others keep their header and the episodes up to ``steps`` (rewritten atomically)."""
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
            atomic_write_text(path, "".join(lines[:keep]), overwrite=True)


def _restore_evaluations(callback: Any, npz: Path, upto: int) -> None:
    """Keep the evaluations of the run being resumed (up to its checkpoint) in ``evaluations.npz``."""
    if upto <= 0 or not npz.is_file():
        return
    data = np.load(npz)
    keep = [i for i, t in enumerate(data["timesteps"]) if t <= upto]
    callback.evaluations_timesteps = [int(data["timesteps"][i]) for i in keep]
    callback.evaluations_results = [list(data["results"][i]) for i in keep]
    callback.evaluations_length = [list(data["ep_lengths"][i]) for i in keep]
