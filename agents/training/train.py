"""The training loop: MaskablePPO on a dice-envs game, read top to bottom.

1. resolve the output folder, the device and the rules;
2. build the training vector env (native / subproc / dummy) and the evaluation env;
3. create the model, or load the newest checkpoint when resuming;
4. optionally warm-start the policy by behaviour cloning of an expert;
5. learn with callbacks: periodic masked evaluation, checkpoints, self-play snapshots;
6. save the model, a final checkpoint, the evaluation table, the model card and the curve.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dice_envs.rules import ConfigError

from .artifacts import latest_checkpoint, make_card, plot_learning_curve, save_card
from .config import TrainConfig
from .envs import backend_name, eval_opponents, make_eval_env, make_train_env

__all__ = ["TrainResult", "final_evaluation", "resolve_device", "train"]


@dataclass
class TrainResult:
    """Where a run's products are and what it measured."""

    model_path: Path
    card_path: Path
    curve_path: Path | None
    steps: int
    steps_this_run: int
    wall_time_s: float
    env_steps_per_s: float
    backend: str
    resumed_from: Path | None
    evaluation: dict[str, Any] = field(default_factory=dict)
    table: str = ""


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when available, else ``cpu``."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' was asked for but torch sees no CUDA device; use cpu or auto")
    return device


def _lr(cfg: TrainConfig) -> Any:
    if cfg.lr_schedule == "linear":
        lr0 = cfg.learning_rate
        return lambda progress_remaining: lr0 * progress_remaining
    return cfg.learning_rate


def _holds_run(folder: Path) -> bool:
    return folder.is_dir() and (any(folder.glob("*.zip")) or (folder / "checkpoints").is_dir())


def output_folder(cfg: TrainConfig, out: str | Path | None, resume: bool) -> Path:
    """The run's folder. Default ``runs/<name>``, or ``runs/<name>-2``, ``-3``, ... when an earlier
    run is there (unless resuming it); a given ``out`` holding a run needs ``resume``.
    """
    if out is not None:
        out = Path(out)
        if _holds_run(out) and not resume:
            raise ConfigError(
                f"{out} already holds a training run; pass --resume to continue it, or choose another --out"
            )
        return out
    base = Path("runs") / cfg.name
    if resume or not _holds_run(base):
        return base
    n = 2
    while _holds_run(base.with_name(f"{cfg.name}-{n}")):
        n += 1
    return base.with_name(f"{cfg.name}-{n}")


def train(
    cfg: TrainConfig,
    out: str | Path | None = None,
    resume: bool = False,
    command: str | None = None,
) -> TrainResult:
    """Run (or continue) the training described by ``cfg``; see the module doc for the steps."""
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    # 1. where, on what, which game (an earlier run's results are never overwritten)
    out = output_folder(cfg, out, resume)
    out.mkdir(parents=True, exist_ok=True)
    ckpt_dir, pool_dir = out / "checkpoints", out / "pool"
    device = resolve_device(cfg.device)
    if cfg.torch_threads:
        torch.set_num_threads(cfg.torch_threads)
    rules = cfg.rule_config()
    command = command or " ".join(shlex.quote(a) for a in sys.argv)
    (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2) + "\n")

    # 3a. the checkpoint to continue from (its step count names the monitor file)
    resumed_from = latest_checkpoint(ckpt_dir) if resume else None
    if resume and resumed_from is None:
        print(f"--resume: no checkpoint in {ckpt_dir}; starting from scratch", file=sys.stderr)
    start_steps = int(resumed_from.name.split("_")[1]) if resumed_from else 0

    # 2. environments
    train_env = make_train_env(cfg, pool_dir, monitor_file=str(out / f"train_from_{start_steps}"))
    eval_env = make_eval_env(cfg)

    # 3b. the model
    t_start = time.perf_counter()
    bc_stats = None
    if resumed_from is not None:
        model = MaskablePPO.load(resumed_from, env=train_env, device=device)
        model.set_random_seed(cfg.seed + model.num_timesteps)
        train_env.seed(cfg.seed + model.num_timesteps)
        previous = (
            json.loads((out / "warm_start.json").read_text()) if (out / "warm_start.json").is_file() else None
        )
        bc_stats = previous
    else:
        activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[cfg.activation]
        model = MaskablePPO(
            "MlpPolicy",
            train_env,
            learning_rate=_lr(cfg),
            n_steps=cfg.n_steps,
            batch_size=cfg.batch_size,
            n_epochs=cfg.n_epochs,
            gamma=cfg.gamma,
            gae_lambda=cfg.gae_lambda,
            clip_range=cfg.clip_range,
            ent_coef=cfg.ent_coef,
            vf_coef=cfg.vf_coef,
            max_grad_norm=cfg.max_grad_norm,
            target_kl=cfg.target_kl,
            policy_kwargs={"net_arch": list(cfg.net_arch), "activation_fn": activation},
            tensorboard_log=str(out / "tb") if cfg.tensorboard else None,
            seed=cfg.seed,
            device=device,
            verbose=cfg.verbose,
        )
        # 4. warm start
        if cfg.warm_start == "bc":
            from .bc import behaviour_clone

            bc = behaviour_clone(model, cfg)
            bc_stats = bc.to_dict()
            (out / "warm_start.json").write_text(json.dumps(bc_stats, indent=2) + "\n")
            print(
                f"warm start: {bc.samples} decisions of {bc.expert!r} "
                f"(expert's mean return {bc.expert_mean_return:.2f}), "
                f"accuracy {bc.accuracy:.3f}, {bc.collect_s + bc.fit_s:.0f}s"
            )

    # 5. learn
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

    # 6. products
    steps_this_run = model.num_timesteps - steps_before
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    model.save(ckpt_dir / f"model_{model.num_timesteps}_steps.zip")
    model_path = out / f"{cfg.name}.zip"
    model.save(model_path)
    train_s = time.perf_counter() - t_start  # warm start + learning + saving
    rows = final_evaluation(model, cfg) if cfg.final_eval_games else []
    from .evaluate import format_table

    table = format_table(rows) if rows else ""
    previous_wall = _previous_wall_time(model_path.with_suffix(".json")) if resumed_from else 0.0
    evaluation: dict[str, Any] = {"games_per_row": cfg.final_eval_games, "rows": [r.to_dict() for r in rows]}
    if bc_stats:
        evaluation["warm_start"] = bc_stats
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
        out, out / "learning_curve.png", f"{cfg.name}: MaskablePPO on {cfg.game}", ylabel
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


def final_evaluation(model: Any, cfg: TrainConfig) -> list[Any]:
    """Table rows: the trained agent (and, solitaire, each built-in agent) over ``final_eval_games``."""
    from ..registry import load
    from .evaluate import ModelAgent, play_games

    rules = cfg.rule_config()
    games, seed = cfg.final_eval_games, cfg.seed + 50_000
    trained = ModelAgent(model, deterministic=True, name="trained")
    rows = []
    if cfg.num_players == 1:
        rows.append(play_games(trained, rules, games, seed=seed))
        for spec in cfg.final_eval_opponents:
            agent = _try_load(load, spec, rules, 1, seed)
            if agent is not None:
                rows.append(play_games(agent, rules, games, seed=seed, agent_name=spec))
        return rows
    specs = list(dict.fromkeys([*cfg.final_eval_opponents, *eval_opponents(cfg)]))
    for spec in specs:
        if _try_load(load, spec, rules, cfg.num_players, seed) is None:
            continue
        opponents = [spec] * (cfg.num_players - 1)
        rows.append(play_games(trained, rules, games, opponents=opponents, seed=seed))
    return rows


def _try_load(load: Any, spec: str, rules: Any, num_players: int, seed: int) -> Any:
    from dice_envs.rules import ConfigError

    try:
        return load(spec, game=rules, num_players=num_players, seed=seed)
    except (ConfigError, NotImplementedError) as exc:
        print(f"(skipping {spec!r} in the evaluation table: {exc})", file=sys.stderr)
        return None


def _restore_evaluations(callback: Any, npz: Path, upto: int) -> None:
    """Keep the evaluations of the run being resumed (up to its checkpoint) in ``evaluations.npz``."""
    if upto <= 0 or not npz.is_file():
        return
    data = np.load(npz)
    keep = [i for i, t in enumerate(data["timesteps"]) if t <= upto]
    callback.evaluations_timesteps = [int(data["timesteps"][i]) for i in keep]
    callback.evaluations_results = [list(data["results"][i]) for i in keep]
    callback.evaluations_length = [list(data["ep_lengths"][i]) for i in keep]


def _previous_wall_time(card_path: Path) -> float:
    try:
        return float(json.loads(card_path.read_text()).get("wall_time_s", 0.0))
    except (OSError, ValueError):
        return 0.0
