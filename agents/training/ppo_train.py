"""The native trainer's run (``trainer: ppo``), read top to bottom.

1. the machine: device, torch threads, seeds;
2. the environment: ``n_envs`` games of the native vector env, the learner against fixed
   opponents or (self-play) one :class:`~agents.training.selfplay.PoolSeat` per other seat;
3. the model: fresh, warm-started by behaviour cloning, or restored from the newest checkpoint
   that verifies (resume loses at most one ``checkpoint_freq``);
4. the loop, one update per rollout of ``n_envs x n_steps`` samples: schedules → rollout →
   advantages → epochs of minibatch updates → log (progress bar, ``progress.csv``,
   TensorBoard) → periodic evaluation, self-play snapshots, checkpoints;
5. the products: ``<name>.zip`` (an sb3-contrib file) and its model card, the final checkpoint,
   the evaluation table and ``learning_curve.png``.

The algorithm's pieces (loss, GAE, masking, sampling) are in :mod:`agents.training.ppo`.
"""

from __future__ import annotations

import copy
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from dice_envs.rules import ConfigError

from .artifacts import (
    ProgressLog,
    load_checkpoint,
    machine_info,
    make_card,
    plot_learning_curve,
    save_checkpoint,
)
from .config import TrainConfig
from .envs import eval_opponents
from .ppo import (
    RolloutBuffer,
    choose_threads,
    forward,
    gae,
    make_model,
    masked_logits,
    ppo_loss,
    sample_actions,
    schedule_value,
)
from .train import TrainResult, evaluation_record, final_evaluation, reference_lines

__all__ = ["PROGRESS_FIELDS", "make_vector_env", "train_ppo"]

#: Columns of ``progress.csv``.
PROGRESS_FIELDS = [
    "steps",
    "wall_s",
    "steps_per_s",
    "episodes",
    "train_return",
    "train_win_rate",
    "eval",
    "eval_se",
    "learning_rate",
    "ent_coef",
    "loss",
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "clip_fraction",
    "explained_variance",
]


def make_vector_env(cfg: TrainConfig, opponents: list[Any], num_envs: int | None = None) -> Any:
    """The native vector env of ``cfg``'s game (same-step autoreset, illegal actions raise)."""
    from dice_envs.vector import env as vector

    classes = {
        "spiffel": vector.SpiffelVectorEnv,
        "dice_poker": vector.DicePokerVectorEnv,
        "yahtzee": vector.YahtzeeVectorEnv,
        "farkle": vector.FarkleVectorEnv,
    }
    return classes[cfg.game](
        num_envs=num_envs or cfg.n_envs,
        rules=cfg.rule_config(),
        opponents=opponents,
        seat=cfg.seat,
        reward=cfg.reward,
        illegal_action="raise",
        autoreset_mode="same_step",
    )


def _opponents(cfg: TrainConfig, store: Any) -> list[Any]:
    """One opponent per other seat: pool seats under self-play, else the configured specs."""
    n = cfg.num_players - 1
    if not cfg.self_play:
        return [cfg.opponents[i % len(cfg.opponents)] for i in range(n)]
    from ..registry import load
    from .selfplay import PoolSeat

    rules = cfg.rule_config()
    seats = []
    for i in range(n):
        builtins = [
            load(spec, game=rules, num_players=cfg.num_players, seed=cfg.seed + 7919 * (i + 1) + k)
            for k, spec in enumerate(cfg.pool_builtin)
        ]
        seats.append(
            PoolSeat(
                store,
                builtins,
                cfg.pool_builtin_prob,
                cfg.pool_latest_prob,
                deterministic=cfg.snapshot_deterministic,
                seed=cfg.seed + 104_729 * (i + 1),
            )
        )
    return seats


def _evaluate(policy: Any, cfg: TrainConfig, seed: int) -> tuple[float, float]:
    """Mean (and s.e.) of the deterministic policy over ``eval_episodes`` games: the final score in
    solitaire, the win rate (draws half) against the evaluation opponents otherwise."""
    from ..learned import ModelAgent
    from .evaluate import play_games

    opponents = eval_opponents(cfg)
    n = cfg.eval_episodes
    stats = play_games(
        ModelAgent(policy, deterministic=True, name="learner"),
        cfg.rule_config(),
        n,
        opponents=opponents,
        seed=seed,
        batch=max(1, n // cfg.num_players),
    )
    if not opponents:
        return stats.mean_score, stats.stderr
    rate = (stats.wins + 0.5 * stats.draws) / max(stats.games, 1)
    return rate, float(np.sqrt(rate * (1 - rate) / max(stats.games, 1)))


def train_ppo(cfg: TrainConfig, out: Path, resume: bool, command: str, device: str) -> TrainResult:
    """Run (or continue) ``cfg`` with the native PPO trainer in the folder ``out``."""
    t_start = time.perf_counter()
    # 1. the machine -----------------------------------------------------------------------
    threads = choose_threads(cfg.torch_threads, device)
    torch.set_num_threads(threads)
    torch.manual_seed(cfg.seed)
    ckpt_dir = out / "checkpoints"
    rules = cfg.rule_config()

    # 2/3. the model and its self-play store, then the environment --------------------------
    from .selfplay import SnapshotStore

    probe = make_vector_env(cfg, ["random"] * (cfg.num_players - 1), num_envs=1)
    model = make_model(cfg, probe.single_observation_space, probe.single_action_space, device)
    probe.close()
    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=cfg.learning_rate, eps=cfg.adam_eps)
    store = SnapshotStore(lambda: copy.deepcopy(policy), keep=cfg.pool_size, device=device)
    generator = torch.Generator(device=device)
    generator.manual_seed(cfg.seed)
    steps = updates = episodes = 0
    wall_before = 0.0
    bc_stats = None
    found = load_checkpoint(ckpt_dir) if resume else None
    if found is not None:
        path, state = found
        policy.load_state_dict(state["policy"])
        optimizer.load_state_dict(state["optimizer"])
        store.load_state(state["pool"])
        generator.set_state(state["generator"])
        steps, updates, episodes = int(state["steps"]), int(state["updates"]), int(state["episodes"])
        wall_before = float(state["wall_time_s"])
        bc_stats = state.get("warm_start") or None
        print(f"resuming {out} from {path.name} ({steps} steps)", file=sys.stderr)
    elif resume:
        print(f"--resume: no checkpoint that verifies in {ckpt_dir}; starting from scratch", file=sys.stderr)
    if steps >= cfg.total_timesteps and found is not None:
        raise ConfigError(
            f"--resume: the run in {out} is finished ({steps} steps >= total_timesteps "
            f"{cfg.total_timesteps}); give --total-timesteps above {steps} to train on"
        )
    if found is None and cfg.warm_start == "bc":
        from .bc import behaviour_clone

        bc = behaviour_clone(model, cfg)
        bc_stats = {
            k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in bc.to_dict().items()
        }
        print(f"warm start: {bc.samples} decisions of {bc.expert!r}, accuracy {bc.accuracy:.3f}")
    if cfg.self_play and not store.ids:
        store.add(policy, steps)
    env = make_vector_env(cfg, _opponents(cfg, store))
    obs_np, info = env.reset(seed=cfg.seed + steps)
    mask_np = info["action_mask"].astype(bool)
    n_envs, n_steps = cfg.n_envs, cfg.n_steps
    buf = RolloutBuffer(n_steps, n_envs, obs_np.shape[1], env.n_actions, device)
    ep_return = np.zeros(n_envs)
    log = ProgressLog(out / "progress.csv", PROGRESS_FIELDS, resume_steps=steps if found else None)
    writer = _tensorboard(cfg, out, steps)
    bar = _progress_bar(cfg, steps)
    last = {"eval": steps, "snapshot": steps, "checkpoint": steps}
    solitaire = cfg.num_players == 1
    t_loop = time.perf_counter()
    steps_at_start = steps

    # 4. the loop ----------------------------------------------------------------------------
    while steps < cfg.total_timesteps:
        t_update = time.perf_counter()
        progress = steps / cfg.total_timesteps
        lr = schedule_value(cfg.learning_rate, cfg.lr_final, cfg.lr_schedule, progress)
        ent_coef = schedule_value(
            cfg.ent_coef, cfg.ent_coef_final, "constant" if cfg.ent_coef_final is None else "linear", progress
        )
        for group in optimizer.param_groups:
            group["lr"] = lr

        # 4a. rollout: one forward pass per step over all games
        finished: list[float] = []
        wins = 0.0
        with torch.inference_mode():
            for t in range(n_steps):
                obs = torch.as_tensor(obs_np, device=device)
                mask = torch.as_tensor(mask_np, device=device)
                logits, values = forward(policy, obs, cfg.precision)
                logits = masked_logits(logits, mask)
                actions = sample_actions(logits, generator)
                buf.obs[t], buf.masks[t], buf.actions[t], buf.values[t] = obs, mask, actions, values
                buf.logprobs[t] = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
                obs_np, reward, terminated, truncated, info = env.step(actions.cpu().numpy())
                mask_np = info["action_mask"].astype(bool)
                done = terminated | truncated  # max_turns ends the game: its win reward is paid
                buf.rewards[t] = torch.as_tensor(
                    reward * cfg.reward_scale, dtype=torch.float32, device=device
                )
                buf.dones[t] = torch.as_tensor(done, dtype=torch.float32, device=device)
                ep_return += reward
                if done.any():
                    ended = np.flatnonzero(done)
                    finished.extend(ep_return[ended].tolist())
                    ep_return[ended] = 0.0
                    if not solitaire:  # a shared win counts 1/k
                        winners = info["final_info"]["winners"][ended]
                        mine = winners[np.arange(ended.size), info["final_info"]["seat"][ended]]
                        wins += float((mine / winners.sum(axis=1)).sum())
            last_values = forward(policy, torch.as_tensor(obs_np, device=device), cfg.precision)[1]

        # 4b. advantages
        advantages, returns = gae(buf.rewards, buf.values, buf.dones, last_values, cfg.gamma, cfg.gae_lambda)
        batch = buf.flat(advantages, returns)

        # 4c. epochs of minibatch updates over the whole rollout
        size = n_envs * n_steps
        stats: list[Any] = []
        for _epoch in range(cfg.n_epochs):
            order = torch.randperm(size, generator=generator, device=device)
            epoch_kl = []
            for start in range(0, size - cfg.batch_size + 1, cfg.batch_size):
                idx = order[start : start + cfg.batch_size]
                logits, values = forward(policy, batch["obs"][idx], cfg.precision)
                loss, s = ppo_loss(
                    masked_logits(logits, batch["masks"][idx]),
                    values,
                    batch["actions"][idx],
                    batch["logprobs"][idx],
                    batch["values"][idx],
                    batch["advantages"][idx],
                    batch["returns"][idx],
                    clip_range=cfg.clip_range,
                    clip_range_vf=cfg.clip_range_vf,
                    ent_coef=ent_coef,
                    vf_coef=cfg.vf_coef,
                    normalize_advantage=cfg.normalize_advantage,
                )
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
                optimizer.step()
                stats.append(s)
                epoch_kl.append(s.approx_kl)
            if cfg.target_kl is not None and np.mean(epoch_kl) > cfg.target_kl:
                break
        steps += size
        updates += 1
        episodes += len(finished)

        # 4d. log
        row: dict[str, Any] = {
            "steps": steps,
            "wall_s": wall_before + time.perf_counter() - t_start,
            "steps_per_s": size / (time.perf_counter() - t_update),
            "episodes": episodes,
            "learning_rate": lr,
            "ent_coef": ent_coef,
            "explained_variance": _explained_variance(batch["values"], batch["returns"]),
        }
        if finished:
            row["train_return"] = float(np.mean(finished))
            if not solitaire:
                row["train_win_rate"] = wins / len(finished)
        for key in ("loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction"):
            row[key] = float(np.mean([getattr(s, key) for s in stats]))

        # 4e. evaluation, self-play snapshot, checkpoint
        if cfg.eval_freq and (steps - last["eval"] >= cfg.eval_freq or steps >= cfg.total_timesteps):
            row["eval"], row["eval_se"] = _evaluate(policy, cfg, seed=cfg.seed + 10_000)
            last["eval"] = steps
            if cfg.verbose:
                print(f"{steps} steps: evaluation {row['eval']:.4g} ± {row['eval_se']:.2g}", file=sys.stderr)
        if cfg.self_play and cfg.snapshot_freq and steps - last["snapshot"] >= cfg.snapshot_freq:
            store.add(policy, steps)
            last["snapshot"] = steps
        log.append(row)
        if writer is not None:
            for key, value in row.items():
                if key != "steps" and value is not None:
                    writer.add_scalar(f"train/{key}", value, steps)
        if bar is not None:
            bar.update(size)
            shown = {k: f"{row[k]:.4g}" for k in ("train_return", "eval") if k in row}
            bar.set_postfix(shown, refresh=False)
        if cfg.checkpoint_freq and steps - last["checkpoint"] >= cfg.checkpoint_freq:
            _checkpoint(
                ckpt_dir,
                policy,
                optimizer,
                store,
                generator,
                steps,
                updates,
                episodes,
                wall_before + time.perf_counter() - t_start,
                bc_stats,
            )
            last["checkpoint"] = steps
    learn_s = time.perf_counter() - t_loop
    if bar is not None:
        bar.close()
    if writer is not None:
        writer.close()
    env.close()

    # 5. the products ---------------------------------------------------------------------------
    wall = wall_before + time.perf_counter() - t_start
    _checkpoint(ckpt_dir, policy, optimizer, store, generator, steps, updates, episodes, wall, bc_stats)
    model.num_timesteps = steps
    model_path = out / f"{cfg.name}.zip"
    rows = final_evaluation(model, cfg) if cfg.final_eval_games else []
    from .evaluate import format_table

    evaluation = evaluation_record(cfg, rows, bc_stats)
    card = make_card(
        rules,
        cfg.num_players,
        cfg.to_dict(),
        steps=steps,
        wall_time_s=wall,  # includes the time of the runs before a resume (from the checkpoint)
        evaluation=evaluation,
        command=command,
        seed=cfg.seed,
        algorithm="MaskablePPO",
        trainer="dice-envs native PPO (agents.training.ppo)",
        machine=machine_info(device, threads),
    )
    from ..learned import card_path as card_of
    from ..model_io import save_model

    save_model(model, model_path, card, overwrite=True)  # zip and card, atomically, with checksums
    card_path = card_of(model_path)
    ylabel = "final score" if solitaire else f"win rate vs {', '.join(map(str, eval_opponents(cfg)))}"
    references = reference_lines(cfg, rows)
    if not solitaire:
        references = {**references, "even (50%)": 0.5}
    curve = plot_learning_curve(
        out, out / "learning_curve.png", f"{cfg.name}: PPO on {cfg.game}", ylabel, references
    )
    done_now = steps - steps_at_start
    return TrainResult(
        model_path=model_path,
        card_path=card_path,
        curve_path=curve,
        steps=steps,
        steps_this_run=done_now,
        wall_time_s=learn_s,
        env_steps_per_s=done_now / learn_s if learn_s > 0 else float("nan"),
        backend=f"native ppo, {cfg.n_envs} games, {device}",
        resumed_from=found[0] if found else None,
        evaluation=evaluation,
        table=format_table(rows) if rows else "",
    )


def _checkpoint(
    folder: Path,
    policy: Any,
    optimizer: Any,
    store: Any,
    generator: torch.Generator,
    steps: int,
    updates: int,
    episodes: int,
    wall: float,
    bc_stats: dict[str, Any] | None,
) -> None:
    save_checkpoint(
        folder,
        steps,
        {
            "steps": steps,
            "updates": updates,
            "episodes": episodes,
            "wall_time_s": wall,
            "policy": policy.state_dict(),
            "optimizer": optimizer.state_dict(),
            "pool": store.state(),
            "generator": generator.get_state(),
            "warm_start": bc_stats or {},
        },
    )


def _explained_variance(values: torch.Tensor, returns: torch.Tensor) -> float:
    var = float(returns.var())
    return float("nan") if var == 0 else 1.0 - float((returns - values).var()) / var


def _tensorboard(cfg: TrainConfig, out: Path, steps: int) -> Any:
    if not cfg.tensorboard:
        return None
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # pragma: no cover - tensorboard is in the train extra
        print("(tensorboard is not installed: no TensorBoard logs)", file=sys.stderr)
        return None
    return SummaryWriter(str(out / "tb"), purge_step=steps or None)


def _progress_bar(cfg: TrainConfig, steps: int) -> Any:
    if not cfg.progress_bar:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=cfg.total_timesteps, initial=steps, unit="step", unit_scale=True, dynamic_ncols=True)
