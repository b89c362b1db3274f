"""The native PPO trainer (``trainer: ppo``), one file read top to bottom, as CleanRL's ``ppo.py``.

The network is sb3-contrib's ``MaskableActorCriticPolicy`` in a ``MaskablePPO`` that never trains
itself (:mod:`agents.training.policy`), so the saved model is a normal sb3-contrib zip.
:func:`train_ppo` sets up (:func:`~agents.training.learner.start_learner`, :class:`Rollout`), then
makes one update per rollout of ``n_envs x n_steps`` samples (schedules, :meth:`Rollout.collect`,
:func:`gae`, :func:`update`; then the log row, evaluation, snapshot and checkpoint when due), and
ends with the products (:func:`agents.training.products.save_products`).

>>> adv, ret = gae(torch.tensor([[0.0], [1.0]]), torch.tensor([[0.5], [0.5]]),
...                torch.tensor([[0.0], [1.0]]), torch.tensor([0.9]), gamma=1.0, lam=1.0)
>>> adv.flatten().tolist(), ret.flatten().tolist()
([0.5, 0.5], [1.0, 1.0])
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.training.artifacts import LOSS_FIELDS, PROGRESS_FIELDS, RunReporter, save_checkpoint
from agents.training.config import TrainConfig
from agents.training.envs import make_vector_env
from agents.training.learner import start_learner
from agents.training.policy import masked_logits, policy_forward, sample_actions
from agents.training.products import TrainResult, save_products
from agents.training.selfplay import pool_opponents

__all__ = [
    "LeadPotential",
    "Rollout",
    "gae",
    "schedule_value",
    "train_ppo",
    "update",
]


# ---------------------------------------------------------------------------- the algorithm
def gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    dones: torch.Tensor,
    last_values: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimates and returns of a rollout (all ``(T, N)``).

    ``dones[t]`` is 1 where step ``t`` ended its game's episode (no value is carried over from
    step ``t + 1``, which belongs to the next episode); ``last_values`` ``(N,)``: the values of
    the observations after the last step.
    """
    advantages = torch.zeros_like(rewards)
    carry = torch.zeros_like(last_values)
    next_values = last_values
    for t in range(rewards.shape[0] - 1, -1, -1):
        live = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_values * live - values[t]
        carry = delta + gamma * lam * live * carry
        advantages[t] = carry
        next_values = values[t]
    return advantages, advantages + values


def schedule_value(start: float, end: float | None, kind: str, progress: float) -> float:
    """A scheduled value at ``progress`` in [0, 1] of the run.

    ``constant``: ``start``; ``linear``: from ``start`` to ``end`` (0 when ``end`` is None);
    ``cosine``: the same ends on a half cosine.

    >>> schedule_value(1.0, 0.0, "linear", 0.25), schedule_value(1.0, None, "constant", 0.9)
    (0.75, 1.0)
    """
    p = min(max(float(progress), 0.0), 1.0)
    if kind == "constant":
        return float(start)
    stop = 0.0 if end is None else float(end)
    if kind == "linear":
        return float(start + (stop - start) * p)
    if kind == "cosine":
        return float(stop + (start - stop) * 0.5 * (1.0 + math.cos(math.pi * p)))
    raise ValueError(f"unknown schedule {kind!r}; allowed: constant, linear, cosine")


def update(
    policy: Any,
    optimizer: torch.optim.Optimizer,
    batch: dict[str, torch.Tensor],
    cfg: TrainConfig,
    ent_coef: float,
    generator: torch.Generator,
) -> dict[str, float]:
    """PPO's update: ``n_epochs`` passes over the rollout ``batch`` (one row per sample) in shuffled
    minibatches of ``batch_size``, one Adam step each; the epochs stop early past ``target_kl``.
    Returns the minibatches' mean :data:`LOSS_FIELDS`."""
    size = len(batch["obs"])
    stats: dict[str, list[float]] = {name: [] for name in LOSS_FIELDS}
    for _epoch in range(cfg.n_epochs):
        order = torch.randperm(size, generator=generator, device=generator.device)
        epoch_kl = []
        for start in range(0, size - cfg.batch_size + 1, cfg.batch_size):
            mb = order[start : start + cfg.batch_size]
            logits, values = policy_forward(policy, batch["obs"][mb])
            logp_all = torch.log_softmax(masked_logits(logits, batch["masks"][mb]), dim=-1)
            logp = logp_all.gather(1, batch["actions"][mb, None]).squeeze(1)
            entropy = -(logp_all.exp() * logp_all).sum(dim=-1).mean()  # of the masked distribution
            advantages = batch["advantages"][mb]
            if cfg.normalize_advantage and len(mb) > 1:
                advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
            # policy loss: the clipped surrogate, with r = pi(a|s) / pi_old(a|s)
            log_ratio = logp - batch["logprobs"][mb]
            ratio = log_ratio.exp()
            clipped_ratio = ratio.clamp(1.0 - cfg.clip_range, 1.0 + cfg.clip_range)
            policy_loss = -torch.min(ratio * advantages, clipped_ratio * advantages).mean()
            # value loss: squared error, or with clip_range_vf the larger of it and the clipped one's
            returns, old_values = batch["returns"][mb], batch["values"][mb]
            value_loss = (values - returns).pow(2)
            if cfg.clip_range_vf is not None:
                change = (values - old_values).clamp(-cfg.clip_range_vf, cfg.clip_range_vf)
                value_loss = torch.max(value_loss, (old_values + change - returns).pow(2))
            value_loss = 0.5 * value_loss.mean()
            loss = policy_loss + cfg.vf_coef * value_loss - ent_coef * entropy

            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
            optimizer.step()

            with torch.no_grad():
                approx_kl = ((ratio - 1.0) - log_ratio).mean()  # the low-variance estimator (Schulman)
                clip_fraction = ((ratio - 1.0).abs() > cfg.clip_range).float().mean()
            for name, value in zip(
                LOSS_FIELDS, (loss, policy_loss, value_loss, entropy, approx_kl, clip_fraction), strict=True
            ):
                stats[name].append(value.item())
            epoch_kl.append(approx_kl.item())
        if cfg.target_kl is not None and np.mean(epoch_kl) > cfg.target_kl:
            break
    return {name: float(np.mean(values)) for name, values in stats.items()}


# ---------------------------------------------------------------------------- the rollout
class LeadPotential:
    """The shaping potential of Farkle observations (``reward_shaping``): ``coef`` times the
    learner's lead counting the points in hand, ``(own banked + turn total - best other banked) /
    target``.

    The rollout adds ``gamma * phi(s') - phi(s)`` to each reward, ``phi = 0`` once the game is
    over: potential-based shaping leaves the best policy unchanged (Ng, Harada & Russell, 1999).

    >>> from dice_envs.rules import make_rules
    >>> from dice_envs.layouts import layout
    >>> lay = layout(make_rules("farkle"), 2)
    >>> obs = np.zeros((1, lay.size), dtype=np.float32)
    >>> obs[0, lay.index("turn_total")] = 500 / lay.scale("turn_total")
    >>> obs[0, lay.index("lead")] = 1000 / lay.scale("lead")  # the other seat leads by 1000
    >>> LeadPotential(make_rules("farkle"), 2, coef=2.0)(obs).tolist()
    [-0.1]
    """

    def __init__(self, rules: Any, num_players: int, coef: float) -> None:
        from dice_envs.layouts import layout

        self.layout, self.coef, self.target = layout(rules, num_players), float(coef), float(rules.target)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """``phi`` of each row of ``obs`` (float64 ``(B,)``)."""
        points = self.layout.read(obs, "turn_total") - self.layout.read(obs, "lead")
        return self.coef * points / self.target


class Rollout:
    """The ``n_envs`` training games, their current observations and masks, and the
    ``(n_steps, n_envs, ...)`` tensors (``data``) that one rollout fills."""

    def __init__(self, cfg: TrainConfig, env: Any, device: str, seed: int) -> None:
        self.cfg, self.env, self.device = cfg, env, device
        self.obs, info = env.reset(seed=seed)
        self.mask = info["action_mask"].astype(bool)
        shape = (cfg.n_steps, cfg.n_envs)
        zeros = {"dtype": torch.float32, "device": device}
        self.data = {
            "obs": torch.zeros((*shape, self.obs.shape[1]), **zeros),
            "masks": torch.zeros((*shape, env.n_actions), dtype=torch.bool, device=device),
            "actions": torch.zeros(shape, dtype=torch.long, device=device),
            "logprobs": torch.zeros(shape, **zeros),
            "values": torch.zeros(shape, **zeros),
            "rewards": torch.zeros(shape, **zeros),
            "dones": torch.zeros(shape, **zeros),
        }
        self.ep_return = np.zeros(cfg.n_envs)
        shaping = cfg.reward_shaping
        self.potential = LeadPotential(cfg.rule_config(), cfg.num_players, shaping) if shaping else None
        self.phi = self.potential(self.obs) if self.potential else None

    def collect(self, policy: Any, generator: torch.Generator) -> tuple[list[float], float, torch.Tensor]:
        """Play ``n_steps`` steps of every game: the returns of the episodes that ended, the
        learner's wins among them (a shared win counts 1/k), and the values of the observations
        after the last step."""
        cfg, data, device = self.cfg, self.data, self.device
        finished: list[float] = []
        wins = 0.0
        with torch.inference_mode():
            for t in range(cfg.n_steps):
                obs = torch.as_tensor(self.obs, device=device)
                mask = torch.as_tensor(self.mask, device=device)
                logits, values = policy_forward(policy, obs)
                logits = masked_logits(logits, mask)
                actions = sample_actions(logits, generator)
                data["obs"][t], data["masks"][t], data["actions"][t] = obs, mask, actions
                data["values"][t] = values
                data["logprobs"][t] = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)

                self.obs, reward, terminated, truncated, info = self.env.step(actions.cpu().numpy())
                self.mask = info["action_mask"].astype(bool)
                done = terminated | truncated  # max_turns ends the game: its win reward is paid
                trained = reward
                if self.potential is not None:  # phi = 0 after the end; self.obs starts the next game
                    phi_next = self.potential(self.obs)
                    trained = reward + cfg.gamma * np.where(done, 0.0, phi_next) - self.phi
                    self.phi = phi_next
                data["rewards"][t] = torch.as_tensor(trained * cfg.reward_scale, dtype=torch.float32)
                data["dones"][t] = torch.as_tensor(done, dtype=torch.float32)

                self.ep_return += reward
                if done.any():
                    ended = np.flatnonzero(done)
                    finished.extend(self.ep_return[ended].tolist())
                    self.ep_return[ended] = 0.0
                    if cfg.num_players > 1:
                        winners = info["final_info"]["winners"][ended]
                        mine = winners[np.arange(ended.size), info["final_info"]["seat"][ended]]
                        wins += float((mine / winners.sum(axis=1)).sum())
            last_values = policy_forward(policy, torch.as_tensor(self.obs, device=device))[1]
        return finished, wins, last_values


# ---------------------------------------------------------------------------- the run
def train_ppo(cfg: TrainConfig, out: Path, resume: bool, command: str, device: str) -> TrainResult:
    """Run (or continue) ``cfg`` with the native PPO trainer in the folder ``out``."""
    from agents.models.card import machine_info
    from agents.training.score_table import evaluate_policy

    # 1. setup
    t_start = time.perf_counter()
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    learner = start_learner(cfg, out, resume, device)
    opponents = pool_opponents(cfg, learner.pool, cfg.seed) if cfg.self_play else cfg.eval_opponents()
    rollout = Rollout(cfg, make_vector_env(cfg, opponents), device, seed=cfg.seed + learner.steps)
    planned = cfg.planned_timesteps(learner.steps)
    if planned != cfg.total_timesteps:
        print(
            f"total_timesteps {cfg.total_timesteps:,} rounded up to {planned:,}: whole rollouts of "
            f"n_envs x n_steps = {cfg.n_envs} x {cfg.n_steps} = {cfg.n_envs * cfg.n_steps:,} steps",
            file=sys.stderr,
        )
    reporter = RunReporter(
        out,
        PROGRESS_FIELDS,
        steps=learner.steps,
        resumed=learner.resumed_from is not None,
        total_timesteps=planned,
        tensorboard=cfg.tensorboard,
        progress_bar=cfg.progress_bar,
    )
    size = cfg.n_envs * cfg.n_steps
    last = dict.fromkeys(("eval", "snapshot", "checkpoint"), learner.steps)
    steps_at_start, t_loop = learner.steps, time.perf_counter()

    def wall() -> float:  # the whole training's, runs before a resume included
        return learner.wall_before + time.perf_counter() - t_start

    # 2. the loop
    while learner.steps < cfg.total_timesteps:
        t_update = time.perf_counter()
        # a. schedules
        progress = learner.steps / cfg.total_timesteps
        lr = schedule_value(cfg.learning_rate, cfg.lr_final, cfg.lr_schedule, progress)
        ent_kind = "constant" if cfg.ent_coef_final is None else "linear"
        ent_coef = schedule_value(cfg.ent_coef, cfg.ent_coef_final, ent_kind, progress)
        for group in learner.optimizer.param_groups:
            group["lr"] = lr
        # b. rollout
        finished, wins, last_values = rollout.collect(learner.policy, learner.generator)
        # c. advantages
        data = rollout.data
        advantages, returns = gae(
            data["rewards"], data["values"], data["dones"], last_values, cfg.gamma, cfg.gae_lambda
        )
        batch = {key: tensor.flatten(0, 1) for key, tensor in data.items()}
        batch["advantages"], batch["returns"] = advantages.flatten(), returns.flatten()
        # d. update
        stats = update(learner.policy, learner.optimizer, batch, cfg, ent_coef, learner.generator)
        learner.steps += size
        learner.updates += 1
        learner.episodes += len(finished)
        # e. log, evaluate, snapshot, checkpoint
        row: dict[str, Any] = {
            "steps": learner.steps,
            "wall_s": wall(),
            "steps_per_s": size / (time.perf_counter() - t_update),
            "episodes": learner.episodes,
            "learning_rate": lr,
            "ent_coef": ent_coef,
            "explained_variance": _explained_variance(batch["values"], batch["returns"]),
            **stats,
        }
        if finished:
            row["train_return"] = float(np.mean(finished))
            if cfg.num_players > 1:
                row["train_win_rate"] = wins / len(finished)
        steps = learner.steps
        if cfg.eval_freq and (steps - last["eval"] >= cfg.eval_freq or steps >= cfg.total_timesteps):
            row["eval"], row["eval_se"] = evaluate_policy(learner.policy, cfg, seed=cfg.seed + 10_000)
            last["eval"] = steps
            if cfg.verbose:
                print(f"{steps} steps: evaluation {row['eval']:.4g} ± {row['eval_se']:.2g}", file=sys.stderr)
        if cfg.self_play and cfg.snapshot_freq and steps - last["snapshot"] >= cfg.snapshot_freq:
            learner.snapshot(steps)
            last["snapshot"] = steps
        reporter.report(row, size)
        if cfg.checkpoint_freq and steps - last["checkpoint"] >= cfg.checkpoint_freq:
            save_checkpoint(out / "checkpoints", steps, learner.state(wall()))
            last["checkpoint"] = steps
    learn_s = time.perf_counter() - t_loop
    reporter.close()
    rollout.env.close()

    # 3. products
    wall_s = wall()
    save_checkpoint(out / "checkpoints", learner.steps, learner.state(wall_s))
    learner.model.num_timesteps = learner.steps
    solitaire = cfg.num_players == 1
    return save_products(
        learner.model,
        cfg,
        out,
        steps=learner.steps,
        steps_this_run=learner.steps - steps_at_start,
        learn_s=learn_s,
        wall_time_s=wall_s,
        warm_stats=learner.warm_stats,
        command=command,
        title=f"{cfg.name}: PPO on {cfg.game}",
        ylabel="final score" if solitaire else f"win rate vs {', '.join(cfg.eval_opponents())}",
        references={} if solitaire else {"even (50%)": 0.5},
        backend=f"native ppo, {cfg.n_envs} games, {device}",
        resumed_from=learner.resumed_from,
        trainer="dice-envs native PPO (agents.training.ppo)",
        machine=machine_info(device, cfg.torch_threads),
    )


def _explained_variance(values: torch.Tensor, returns: torch.Tensor) -> float:
    var = float(returns.var())
    return float("nan") if var == 0 else 1.0 - float((returns - values).var()) / var
