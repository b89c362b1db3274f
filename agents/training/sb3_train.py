"""The sb3-contrib path (``trainer: sb3``): MaskablePPO's own ``learn`` on a dice-envs game.

1. build the training vector env (native / subproc / dummy) and the evaluation env;
2. create the model, or load the newest checkpoint when resuming;
3. optionally warm-start the policy by behaviour cloning of an expert;
4. learn with callbacks: periodic masked evaluation, checkpoints, self-play snapshots;
5. save the model, a final checkpoint, the evaluation table, the model card and the curve.

The default trainer is :mod:`agents.training.ppo_train` (``trainer: ppo``), several times faster
on the native vector env; this path stays for users who want SB3's own loop (and its callbacks).
Its checkpoints are SB3 zips, loaded with ``MaskablePPO.load``: resume only runs you made.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .artifacts import atomic_write_text, checkpoints, make_card, plot_learning_curve, save_card
from .config import TrainConfig
from .envs import backend_name, make_eval_env, make_train_env
from .train import TrainResult, evaluation_record, final_evaluation, previous_wall_time, reference_lines

__all__ = ["train_sb3"]


def _lr(cfg: TrainConfig) -> Any:
    from .ppo import schedule_value

    if cfg.lr_schedule == "constant":
        return cfg.learning_rate
    lr0, lr1, kind = cfg.learning_rate, cfg.lr_final, cfg.lr_schedule
    return lambda progress_remaining: schedule_value(lr0, lr1, kind, 1.0 - progress_remaining)


def train_sb3(cfg: TrainConfig, out: Path, resume: bool, command: str, device: str) -> TrainResult:
    """Run (or continue) ``cfg`` with sb3-contrib's ``MaskablePPO.learn`` in the folder ``out``."""
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    from .ppo import choose_threads, maskable_ppo_kwargs

    ckpt_dir, pool_dir = out / "checkpoints", out / "pool"
    torch.set_num_threads(choose_threads(cfg.torch_threads, device))
    rules = cfg.rule_config()

    # 1. environments (the newest checkpoint's step count names the monitor file)
    candidates = checkpoints(ckpt_dir) if resume else []
    start_steps = int(candidates[-1].name.split("_")[1]) if candidates else 0
    train_env = make_train_env(cfg, pool_dir, monitor_file=str(out / f"train_from_{start_steps}"))
    eval_env = make_eval_env(cfg)

    # 2. the model: fresh, then (resume) the weights and optimizer state of the newest checkpoint
    # that loads. Only the zip's tensors are read (weights_only): nothing in a run folder is unpickled.
    t_start = time.perf_counter()
    bc_stats = None
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
    resumed_from = None
    for path in reversed(candidates):
        try:
            model.set_parameters(str(path), exact_match=True, device=device)
        except (OSError, ValueError, RuntimeError, KeyError, zipfile.BadZipFile) as exc:
            warnings.warn(f"skipping checkpoint {path}: {exc}", stacklevel=2)
            continue
        resumed_from = path
        model.num_timesteps = int(path.name.split("_")[1])
        model.set_random_seed(cfg.seed + model.num_timesteps)
        train_env.seed(cfg.seed + model.num_timesteps)
        warm = out / "warm_start.json"
        bc_stats = json.loads(warm.read_text()) if warm.is_file() else None
        break
    if resume and resumed_from is None:
        print(f"--resume: no checkpoint that loads in {ckpt_dir}; starting from scratch", file=sys.stderr)
    # 3. warm start (a fresh run only)
    if resumed_from is None and cfg.warm_start == "bc":
        from .bc import behaviour_clone

        bc = behaviour_clone(model, cfg)
        bc_stats = bc.to_dict()
        atomic_write_text(out / "warm_start.json", json.dumps(bc_stats, indent=2) + "\n")
        print(
            f"warm start: {bc.samples} decisions of {bc.expert!r} "
            f"(expert's mean return {bc.expert_mean_return:.2f}), "
            f"accuracy {bc.accuracy:.3f}, {bc.collect_s + bc.fit_s:.0f}s"
        )

    # 4. learn
    per_env = max(1, cfg.n_envs)
    callbacks: list[Any] = []
    if cfg.checkpoint_freq:
        callbacks.append(CheckpointCallback(max(1, cfg.checkpoint_freq // per_env), str(ckpt_dir), "model"))
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

        callbacks.append(SnapshotCallback(pool_dir, cfg.snapshot_freq, cfg.pool_size))
    steps_before = model.num_timesteps
    remaining = cfg.total_timesteps - steps_before
    t0 = time.perf_counter()
    if remaining > 0:
        model.learn(
            total_timesteps=remaining,
            callback=CallbackList(callbacks),
            reset_num_timesteps=resumed_from is None,
            progress_bar=cfg.progress_bar,
            tb_log_name="ppo",
        )
    else:
        print(
            f"already trained {steps_before} steps >= total_timesteps {cfg.total_timesteps}; nothing to learn"
        )
    learn_s = time.perf_counter() - t0
    backend = backend_name(train_env)
    train_env.close()
    eval_env.close()

    # 5. products
    steps_this_run = model.num_timesteps - steps_before
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    model.save(ckpt_dir / f"model_{model.num_timesteps}_steps.zip")
    model_path = out / f"{cfg.name}.zip"
    model.save(model_path)
    train_s = time.perf_counter() - t_start  # warm start + learning + saving
    rows = final_evaluation(model, cfg) if cfg.final_eval_games else []
    from .evaluate import format_table

    table = format_table(rows) if rows else ""
    previous_wall = previous_wall_time(model_path.with_suffix(".json")) if resumed_from else 0.0
    evaluation = evaluation_record(cfg, rows, bc_stats)
    card = make_card(
        rules,
        cfg.num_players,
        cfg.to_dict(),
        steps=model.num_timesteps,
        wall_time_s=previous_wall + train_s,
        evaluation=evaluation,
        command=command,
        seed=cfg.seed,
    )
    card_path = save_card(model_path, card)
    ylabel = "final score" if cfg.reward == "score" or cfg.num_players == 1 else "win reward (+1/-1)"
    curve = plot_learning_curve(
        out,
        out / "learning_curve.png",
        f"{cfg.name}: MaskablePPO on {cfg.game}",
        ylabel,
        references=reference_lines(cfg, rows),
    )
    return TrainResult(
        model_path=model_path,
        card_path=card_path,
        curve_path=curve,
        steps=model.num_timesteps,
        steps_this_run=steps_this_run,
        wall_time_s=learn_s,
        env_steps_per_s=steps_this_run / learn_s if learn_s > 0 else float("nan"),
        backend=backend,
        resumed_from=resumed_from,
        evaluation=evaluation,
        table=table,
    )


def _restore_evaluations(callback: Any, npz: Path, upto: int) -> None:
    """Keep the evaluations of the run being resumed (up to its checkpoint) in ``evaluations.npz``."""
    if upto <= 0 or not npz.is_file():
        return
    data = np.load(npz)
    keep = [i for i, t in enumerate(data["timesteps"]) if t <= upto]
    callback.evaluations_timesteps = [int(data["timesteps"][i]) for i in keep]
    callback.evaluations_results = [list(data["results"][i]) for i in keep]
    callback.evaluations_length = [list(data["ep_lengths"][i]) for i in keep]
