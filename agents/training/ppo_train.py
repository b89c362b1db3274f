"""The native trainer's run (``trainer: ppo``), read top to bottom.

1. the machine (:func:`_machine`): torch threads, seeds;
2. the model (:func:`_learner`): network, optimizer and self-play store, fresh, warm-started by
   behaviour cloning, or restored from the newest checkpoint that verifies (resume loses at
   most one ``checkpoint_freq``);
3. the environment (:class:`_Rollout`): ``n_envs`` games of the native vector env, the learner
   against fixed opponents or (self-play) one :class:`~agents.training.selfplay.PoolSeat` per
   other seat, drawing its members from the store of step 2;
4. the loop, one update per rollout of ``n_envs x n_steps`` samples (:func:`_update`):
   schedules → rollout (4a) → advantages (4b) → epochs of minibatch updates (4c) → the log row
   (4d: ``progress.csv``, TensorBoard, progress bar) → periodic evaluation, self-play
   snapshots, checkpoints (4e); with ``torch_threads: 0`` each update's time goes to a
   :class:`~agents.training.threads.ThreadGovernor`, which measures the thread count again
   when other work slows the updates down;
5. the products (:func:`_products`): the final checkpoint, ``<name>.zip`` (an sb3-contrib file)
   and its model card, the evaluation table and ``learning_curve.png``.

The algorithm's pieces (loss, GAE, masking, sampling) are in :mod:`agents.training.ppo`.
"""

from __future__ import annotations

import copy
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from dice_envs.rules import ConfigError

from ..model_card import machine_info
from .artifacts import RunReporter, checkpoint_files, load_checkpoint, save_checkpoint
from .config import TrainConfig
from .envs import eval_opponents
from .init_model import warm_start
from .ppo import (
    LeadPotential,
    RolloutBuffer,
    forward,
    gae,
    make_model,
    make_optimizer,
    masked_logits,
    ppo_loss,
    sample_actions,
    schedule_value,
)
from .selfplay import SnapshotStore, pool_seats
from .threads import ThreadGovernor, choose_threads, govern_threads, thread_governor
from .train import TrainResult, save_products

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


def _opponents(cfg: TrainConfig, store: SnapshotStore) -> list[Any]:
    """One opponent per other seat: pool seats under self-play, else the configured specs."""
    n = cfg.num_players - 1
    if cfg.self_play:
        return pool_seats(cfg, store)
    return [cfg.opponents[i % len(cfg.opponents)] for i in range(n)]


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
        batch=n,  # every game side by side
    )
    if not opponents:
        return stats.mean_score, stats.stderr
    rate = (stats.wins + 0.5 * stats.draws) / max(stats.games, 1)
    return rate, float(np.sqrt(rate * (1 - rate) / max(stats.games, 1)))


def train_ppo(cfg: TrainConfig, out: Path, resume: bool, command: str, device: str) -> TrainResult:
    """Run (or continue) ``cfg`` with the native PPO trainer in the folder ``out``."""
    t_start = time.perf_counter()
    threads = _machine(cfg, device)  # 1. the machine
    learner = _learner(cfg, out, resume, device)  # 2. the model: fresh, resumed or warm-started
    rollout = _Rollout(cfg, learner, device)  # 3. the environment
    reporter = RunReporter(
        out,
        PROGRESS_FIELDS,
        steps=learner.steps,
        resumed=learner.resumed_from is not None,
        total_timesteps=cfg.total_timesteps,
        tensorboard=cfg.tensorboard,
        progress_bar=cfg.progress_bar,
    )
    steps_at_start, t_loop = learner.steps, time.perf_counter()
    governor = thread_governor(cfg.torch_threads, device, threads)
    while learner.steps < cfg.total_timesteps:  # 4. the loop, one update per rollout
        t_update = time.perf_counter()
        row = _update(cfg, learner, rollout, wall_start=t_start)
        govern_threads(governor, time.perf_counter() - t_update, learner.steps)
        _evaluate_and_snapshot_when_due(cfg, learner, row)
        reporter.report(row, cfg.n_envs * cfg.n_steps)
        _checkpoint_when_due(cfg, learner, out, wall_start=t_start)
    learn_s = time.perf_counter() - t_loop
    reporter.close()
    rollout.env.close()
    products = _products(cfg, out, learner, command, device, governor, wall_start=t_start)  # 5.
    done_now = learner.steps - steps_at_start
    return TrainResult(
        **products,
        steps=learner.steps,
        steps_this_run=done_now,
        wall_time_s=learn_s,
        env_steps_per_s=done_now / learn_s if learn_s > 0 else float("nan"),
        backend=f"native ppo, {cfg.n_envs} games, {device}",
        resumed_from=learner.resumed_from,
    )


# ------------------------------------------------------------------------- 1. the machine
def _machine(cfg: TrainConfig, device: str) -> int:
    """Torch threads and seed; the number of threads."""
    threads = choose_threads(cfg.torch_threads, device)
    torch.set_num_threads(threads)
    torch.manual_seed(cfg.seed)
    return threads


# ------------------------------------------------------------------------- 2. the model
@dataclass
class _Learner:
    """What a run trains and what its checkpoints hold: network, optimizer, pool, counters."""

    model: Any
    optimizer: torch.optim.Optimizer
    store: SnapshotStore
    generator: torch.Generator
    steps: int = 0
    updates: int = 0
    episodes: int = 0
    wall_before: float = 0.0  # wall time of the runs before a resume
    warm_stats: dict[str, Any] | None = None
    resumed_from: Path | None = None
    last: dict[str, int] = field(default_factory=dict)  # steps of the last eval/snapshot/checkpoint

    @property
    def policy(self) -> Any:
        """The network being trained (an sb3-contrib ``MaskableActorCriticPolicy``)."""
        return self.model.policy

    def wall(self, wall_start: float) -> float:
        """Wall time of the whole training, runs before a resume included."""
        return self.wall_before + time.perf_counter() - wall_start

    def state(self, wall: float) -> dict[str, Any]:
        """The checkpoint of this learner (tensors and plain values only)."""
        return {
            "steps": self.steps,
            "updates": self.updates,
            "episodes": self.episodes,
            "wall_time_s": wall,
            "policy": self.policy.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "pool": self.store.state(),
            "generator": self.generator.get_state(),
            "warm_start": self.warm_stats or {},
        }

    def restore(self, path: Path, state: dict[str, Any], seed: int) -> None:
        """Continue from the checkpoint ``state`` read from ``path`` (``seed``: see the sampler below)."""
        self.policy.load_state_dict(state["policy"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.store.load_state(state["pool"])
        self.steps, self.updates = int(state["steps"]), int(state["updates"])
        try:
            self.generator.set_state(state["generator"])
        except RuntimeError as exc:  # from another device kind (device may change on resume)
            self.generator.manual_seed(seed + self.steps)
            print(f"{path.name}: another device's sampler ({exc}); reseeded: seed + steps", file=sys.stderr)
        self.episodes, self.wall_before = int(state["episodes"]), float(state["wall_time_s"])
        self.warm_stats = state.get("warm_start") or None
        self.resumed_from = path


def _learner(cfg: TrainConfig, out: Path, resume: bool, device: str) -> _Learner:
    """A fresh network, optimizer and self-play store; restored from the newest checkpoint that
    verifies when resuming, else warm-started by behaviour cloning (``warm_start: bc``) or from a
    trained model's weights (``warm_start: model``)."""
    probe = make_vector_env(cfg, ["random"] * (cfg.num_players - 1), num_envs=1)
    model = make_model(cfg, probe.single_observation_space, probe.single_action_space, device)
    probe.close()
    policy = model.policy
    learner = _Learner(
        model=model,
        optimizer=make_optimizer(policy.parameters(), cfg.learning_rate, cfg.adam_eps),
        store=SnapshotStore(lambda: copy.deepcopy(policy), keep=cfg.pool_size, device=device),
        generator=torch.Generator(device=device),
    )
    learner.generator.manual_seed(cfg.seed)
    ckpt_dir = out / "checkpoints"
    found = load_checkpoint(ckpt_dir) if resume else None
    if found is not None:
        learner.restore(*found, cfg.seed)
        print(f"resuming {out} from {found[0].name} ({learner.steps} steps)", file=sys.stderr)
        if learner.steps >= cfg.total_timesteps:
            raise ConfigError(
                f"--resume: the run in {out} is finished ({learner.steps} steps >= total_timesteps "
                f"{cfg.total_timesteps}); give --total-timesteps above {learner.steps} to train on"
            )
    elif resume:
        if checkpoint_files(ckpt_dir):  # all failed to load (train() checked their digests)
            raise ConfigError(f"--resume: no checkpoint in {ckpt_dir} loads; nothing was touched")
        print(f"--resume: no checkpoint yet in {ckpt_dir}; starting from scratch", file=sys.stderr)
    if found is None:
        learner.warm_stats = warm_start(model, cfg, device)
    if cfg.self_play and not learner.store.ids:
        learner.store.add(policy, learner.steps)
    learner.last = dict.fromkeys(("eval", "snapshot", "checkpoint"), learner.steps)
    return learner


# ------------------------------------------------------------------------- 3. the environment
class _Rollout:
    """The training games (``n_envs`` of the native vector env), their current observations and
    masks, and the buffer one rollout of ``n_steps`` fills."""

    def __init__(self, cfg: TrainConfig, learner: _Learner, device: str) -> None:
        self.cfg, self.device = cfg, device
        self.env = make_vector_env(cfg, _opponents(cfg, learner.store))
        self.obs, info = self.env.reset(seed=cfg.seed + learner.steps)
        self.mask = info["action_mask"].astype(bool)
        self.buf = RolloutBuffer(cfg.n_steps, cfg.n_envs, self.obs.shape[1], self.env.n_actions, device)
        self.ep_return = np.zeros(cfg.n_envs)
        self.potential = (
            LeadPotential(cfg.rule_config(), cfg.num_players, cfg.reward_shaping)
            if cfg.reward_shaping
            else None
        )
        self.phi = self.potential(self.obs) if self.potential else None

    def collect(self, policy: Any, generator: torch.Generator) -> tuple[list[float], float, torch.Tensor]:
        """Play ``n_steps`` steps of every game, one forward pass per step (4a): the returns of the
        episodes that ended, the learner's wins among them (a shared win counts 1/k), and the
        values of the last observations."""
        cfg, buf, device = self.cfg, self.buf, self.device
        finished: list[float] = []
        wins = 0.0
        with torch.inference_mode():
            for t in range(cfg.n_steps):
                obs = torch.as_tensor(self.obs, device=device)
                mask = torch.as_tensor(self.mask, device=device)
                logits, values = forward(policy, obs, cfg.precision)
                logits = masked_logits(logits, mask)
                actions = sample_actions(logits, generator)
                buf.obs[t], buf.masks[t], buf.actions[t], buf.values[t] = obs, mask, actions, values
                buf.logprobs[t] = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
                self.obs, reward, terminated, truncated, info = self.env.step(actions.cpu().numpy())
                self.mask = info["action_mask"].astype(bool)
                done = terminated | truncated  # max_turns ends the game: its win reward is paid
                trained = reward
                if self.potential is not None:  # phi = 0 after the end; self.obs starts the next game
                    phi_next = self.potential(self.obs)
                    trained = reward + cfg.gamma * np.where(done, 0.0, phi_next) - self.phi
                    self.phi = phi_next
                buf.rewards[t] = torch.as_tensor(
                    trained * cfg.reward_scale, dtype=torch.float32, device=device
                )
                buf.dones[t] = torch.as_tensor(done, dtype=torch.float32, device=device)
                self.ep_return += reward
                if done.any():
                    ended = np.flatnonzero(done)
                    finished.extend(self.ep_return[ended].tolist())
                    self.ep_return[ended] = 0.0
                    if cfg.num_players > 1:
                        winners = info["final_info"]["winners"][ended]
                        mine = winners[np.arange(ended.size), info["final_info"]["seat"][ended]]
                        wins += float((mine / winners.sum(axis=1)).sum())
            last_values = forward(policy, torch.as_tensor(self.obs, device=device), cfg.precision)[1]
        return finished, wins, last_values


# ------------------------------------------------------------------------- 4. the loop
def _update(cfg: TrainConfig, learner: _Learner, rollout: _Rollout, wall_start: float) -> dict[str, Any]:
    """One update: schedules, rollout (4a), advantages (4b), epochs of minibatch updates (4c);
    the row it adds to the log (4d)."""
    t_update = time.perf_counter()
    progress = learner.steps / cfg.total_timesteps
    lr = schedule_value(cfg.learning_rate, cfg.lr_final, cfg.lr_schedule, progress)
    ent_kind = "constant" if cfg.ent_coef_final is None else "linear"
    ent_coef = schedule_value(cfg.ent_coef, cfg.ent_coef_final, ent_kind, progress)
    for group in learner.optimizer.param_groups:
        group["lr"] = lr
    finished, wins, last_values = rollout.collect(learner.policy, learner.generator)
    buf = rollout.buf
    advantages, returns = gae(buf.rewards, buf.values, buf.dones, last_values, cfg.gamma, cfg.gae_lambda)
    batch = buf.flat(advantages, returns)
    stats = _epochs(cfg, learner, batch, ent_coef)
    size = cfg.n_envs * cfg.n_steps
    learner.steps += size
    learner.updates += 1
    learner.episodes += len(finished)
    row: dict[str, Any] = {
        "steps": learner.steps,
        "wall_s": learner.wall(wall_start),
        "steps_per_s": size / (time.perf_counter() - t_update),
        "episodes": learner.episodes,
        "learning_rate": lr,
        "ent_coef": ent_coef,
        "explained_variance": _explained_variance(batch["values"], batch["returns"]),
    }
    if finished:
        row["train_return"] = float(np.mean(finished))
        if cfg.num_players > 1:
            row["train_win_rate"] = wins / len(finished)
    for key in ("loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction"):
        row[key] = float(np.mean([getattr(s, key) for s in stats]))
    return row


def _epochs(
    cfg: TrainConfig, learner: _Learner, batch: dict[str, torch.Tensor], ent_coef: float
) -> list[Any]:
    """``n_epochs`` passes of shuffled minibatch updates over the rollout (stopped early past
    ``target_kl``); the loss statistics of every minibatch."""
    size = cfg.n_envs * cfg.n_steps
    policy, optimizer = learner.policy, learner.optimizer
    stats: list[Any] = []
    for _epoch in range(cfg.n_epochs):
        order = torch.randperm(size, generator=learner.generator, device=learner.generator.device)
        # One gather per epoch, so minibatches are slices; index_select gathers rows about five
        # times faster than advanced indexing (tensor[order]) on a CPU.
        shuffled = {key: tensor.index_select(0, order) for key, tensor in batch.items()}
        epoch_kl = []
        for start in range(0, size - cfg.batch_size + 1, cfg.batch_size):
            mb = {key: tensor[start : start + cfg.batch_size] for key, tensor in shuffled.items()}
            logits, values = forward(policy, mb["obs"], cfg.precision)
            loss, s = ppo_loss(
                masked_logits(logits, mb["masks"]),
                values,
                mb["actions"],
                mb["logprobs"],
                mb["values"],
                mb["advantages"],
                mb["returns"],
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
    return stats


def _evaluate_and_snapshot_when_due(cfg: TrainConfig, learner: _Learner, row: dict[str, Any]) -> None:
    """4e: the periodic evaluation (into ``row``) and self-play snapshot, when due."""
    steps, last = learner.steps, learner.last
    if cfg.eval_freq and (steps - last["eval"] >= cfg.eval_freq or steps >= cfg.total_timesteps):
        row["eval"], row["eval_se"] = _evaluate(learner.policy, cfg, seed=cfg.seed + 10_000)
        last["eval"] = steps
        if cfg.verbose:
            print(f"{steps} steps: evaluation {row['eval']:.4g} ± {row['eval_se']:.2g}", file=sys.stderr)
    if cfg.self_play and cfg.snapshot_freq and steps - last["snapshot"] >= cfg.snapshot_freq:
        learner.store.add(learner.policy, steps)
        last["snapshot"] = steps


def _checkpoint_when_due(cfg: TrainConfig, learner: _Learner, out: Path, wall_start: float) -> None:
    """4e: a checkpoint every ``checkpoint_freq`` steps."""
    if cfg.checkpoint_freq and learner.steps - learner.last["checkpoint"] >= cfg.checkpoint_freq:
        save_checkpoint(out / "checkpoints", learner.steps, learner.state(learner.wall(wall_start)))
        learner.last["checkpoint"] = learner.steps


# ------------------------------------------------------------------------- 5. the products
def _products(
    cfg: TrainConfig,
    out: Path,
    learner: _Learner,
    command: str,
    device: str,
    governor: ThreadGovernor,
    wall_start: float,
) -> dict[str, Any]:
    """The final checkpoint, then the model, its card, the evaluation table and the curve."""
    wall = learner.wall(wall_start)  # includes the runs before a resume (from the checkpoint)
    save_checkpoint(out / "checkpoints", learner.steps, learner.state(wall))
    learner.model.num_timesteps = learner.steps
    solitaire = cfg.num_players == 1
    ylabel = "final score" if solitaire else f"win rate vs {', '.join(map(str, eval_opponents(cfg)))}"
    return save_products(
        learner.model,
        cfg,
        out,
        steps=learner.steps,
        wall_time_s=wall,
        warm_stats=learner.warm_stats,
        command=command,
        title=f"{cfg.name}: PPO on {cfg.game}",
        ylabel=ylabel,
        references={} if solitaire else {"even (50%)": 0.5},
        trainer="dice-envs native PPO (agents.training.ppo)",
        machine=machine_info(device, governor.threads, governor.updates),
    )


def _explained_variance(values: torch.Tensor, returns: torch.Tensor) -> float:
    var = float(returns.var())
    return float("nan") if var == 0 else 1.0 - float((returns - values).var()) / var
