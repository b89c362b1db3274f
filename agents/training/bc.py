"""Warm start by behaviour cloning: imitate an expert agent before PPO takes over.

The expert (by default the exact solver ``"optimal"`` for scorecard games, ``"max-expected"`` for
Farkle) plays whole games in the training env; every decision it makes is kept with the
observation, the mask and the return that followed. The policy network is then fitted by
cross-entropy on the *masked* logits, and the value network by regression on the (scaled,
discounted) returns, so PPO starts from a policy and a critic that agree with each other.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from agents.training.config import TrainConfig
from agents.training.envs import env_kwargs, make_env_fn

__all__ = ["BCStats", "ExpertData", "behaviour_clone", "collect_expert_data", "fit_policy", "policy_accuracy"]

#: One decision of a collected game: observation, mask, the expert's label, the scaled reward.
_Step = tuple[np.ndarray, np.ndarray, int, float]


@dataclass
class ExpertData:
    """Decisions of an expert: observations, masks, actions, returns-to-go (scaled), and the
    unscaled return of every episode (the final score, or +1/-1/0 under the win reward)."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    episode_returns: list[float]


@dataclass
class BCStats:
    """Summary of a warm start (recorded in the model card)."""

    expert: str
    samples: int
    episodes: int
    expert_mean_return: float
    collect_s: float
    fit_s: float
    final_loss: float
    accuracy: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly summary."""
        return asdict(self)


def _collection_env(cfg: TrainConfig, width: int) -> Any:
    """An SB3 VecEnv for collecting decisions: native when importable, else in-process gym envs."""
    opponents = cfg.eval_opponents()
    try:
        from dice_envs.vector.sb3 import SB3VecEnv
    except ImportError:
        from stable_baselines3.common.vec_env import DummyVecEnv

        return DummyVecEnv([make_env_fn(cfg, 0, opponents=opponents)] * width)
    return SB3VecEnv(cfg.game, num_envs=width, **env_kwargs(cfg, opponents, cfg.seat))


def collect_expert_data(
    cfg: TrainConfig, samples: int, seed: int, actor: Any = None, width: int = 64
) -> ExpertData:
    """Record the expert's decision in every state met until ``samples`` are kept (whole games
    only); with ``actor``, an agent, it plays the moves and the expert only labels them (DAgger)."""
    from agents.evaluation.runner import batch_actions as _act

    expert = cfg.agent_specs[cfg.expert_spec].build(cfg.num_players, seed)
    venv = _collection_env(cfg, width)
    venv.seed(seed)
    obs = venv.reset()
    playing: list[list[_Step]] = [[] for _ in range(width)]
    episodes: list[list[_Step]] = []
    kept = 0
    while kept < samples:
        masks = np.asarray(venv.env_method("action_masks"), dtype=bool)
        labels = _act(expert, obs, masks)
        actions = labels if actor is None else _act(actor, obs, masks)
        next_obs, rewards, dones, _ = venv.step(actions)
        for i in range(width):
            playing[i].append((obs[i], masks[i], int(labels[i]), float(rewards[i]) * cfg.reward_scale))
            if dones[i]:
                episodes.append(playing[i])
                kept += len(playing[i])
                playing[i] = []
        obs = next_obs
    venv.close()
    to_go: list[float] = []  # the discounted return that followed each decision
    for episode in episodes:
        acc, rtg = 0.0, []
        for *_, r in reversed(episode):
            acc = r + cfg.gamma * acc
            rtg.append(acc)
        to_go += rtg[::-1]
    steps = [step for episode in episodes for step in episode]
    return ExpertData(
        obs=np.stack([s[0] for s in steps]).astype(np.float32),
        masks=np.stack([s[1] for s in steps]),
        actions=np.array([s[2] for s in steps], dtype=np.int64),
        returns=np.array(to_go, dtype=np.float32),
        episode_returns=[sum(s[3] for s in episode) / cfg.reward_scale for episode in episodes],
    )


def fit_policy(policy: Any, data: ExpertData, cfg: TrainConfig, seed: int) -> tuple[float, float]:
    """Supervised fit of ``policy`` (a MaskableActorCriticPolicy) to ``data``; returns (loss, accuracy)."""
    import torch

    device = policy.device
    obs = torch.as_tensor(data.obs, device=device)
    acts = torch.as_tensor(data.actions, device=device)
    rets = torch.as_tensor(data.returns, device=device)
    masks = data.masks
    n = len(acts)
    opt = torch.optim.Adam(policy.parameters(), lr=cfg.bc_learning_rate)
    rng = np.random.default_rng(seed)
    policy.set_training_mode(True)
    loss_v = float("nan")
    for _ in range(cfg.bc_epochs):
        perm = rng.permutation(n)
        for start in range(0, n, cfg.bc_batch_size):
            idx = perm[start : start + cfg.bc_batch_size]
            dist = policy.get_distribution(obs[idx], action_masks=masks[idx])
            ce = -dist.log_prob(acts[idx]).mean()
            values = policy.predict_values(obs[idx]).flatten()
            loss = ce + cfg.bc_value_coef * torch.nn.functional.mse_loss(values, rets[idx])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm * 10)
            opt.step()
            loss_v = float(loss.item())
    policy.set_training_mode(False)
    return loss_v, policy_accuracy(policy, data)


def policy_accuracy(policy: Any, data: ExpertData) -> float:
    """Share of the recorded states where the policy's masked argmax is the expert's action."""
    import torch

    obs = torch.as_tensor(data.obs, device=policy.device)
    acts = torch.as_tensor(data.actions, device=policy.device)
    hits = 0
    with torch.no_grad():
        for start in range(0, len(acts), 4096):
            sl = slice(start, start + 4096)
            dist = policy.get_distribution(obs[sl], action_masks=data.masks[sl])
            hits += int((dist.distribution.probs.argmax(dim=1) == acts[sl]).sum().item())
    return hits / max(1, len(acts))


def _concat(a: ExpertData, b: ExpertData) -> ExpertData:
    return ExpertData(
        obs=np.concatenate([a.obs, b.obs]),
        masks=np.concatenate([a.masks, b.masks]),
        actions=np.concatenate([a.actions, b.actions]),
        returns=np.concatenate([a.returns, b.returns]),
        episode_returns=a.episode_returns + b.episode_returns,
    )


def behaviour_clone(model: Any, cfg: TrainConfig) -> BCStats:
    """Collect ``cfg.bc_samples`` expert decisions and fit ``model.policy`` to them; then, each
    DAgger round, the policy plays, the expert labels the states it met, and it is fitted again
    on all data so far (so it learns to recover from its own mistakes)."""
    from agents.players.model import ModelAgent

    t0 = time.perf_counter()
    collect_s = 0.0
    data = collect_expert_data(cfg, cfg.bc_samples, seed=cfg.seed + 20_000)
    expert_returns = list(data.episode_returns)
    collect_s += time.perf_counter() - t0
    loss, accuracy = fit_policy(model.policy, data, cfg, seed=cfg.seed)
    for r in range(cfg.bc_dagger_rounds):
        t1 = time.perf_counter()
        actor = ModelAgent(model.policy, deterministic=True, seed=cfg.seed + r)
        new = collect_expert_data(cfg, cfg.bc_dagger_samples, seed=cfg.seed + 30_000 + 1000 * r, actor=actor)
        collect_s += time.perf_counter() - t1
        print(
            f"DAgger round {r + 1}: policy's own games return {np.mean(new.episode_returns):.2f} "
            f"(expert {np.mean(expert_returns):.2f}), {len(new.actions)} states labelled",
            flush=True,
        )
        data = _concat(data, new)
        loss, accuracy = fit_policy(model.policy, data, cfg, seed=cfg.seed + r + 1)
    total = time.perf_counter() - t0
    return BCStats(
        expert=cfg.expert_spec,
        samples=len(data.actions),
        episodes=len(data.episode_returns),
        expert_mean_return=float(np.mean(expert_returns)),
        collect_s=collect_s,
        fit_s=total - collect_s,
        final_loss=loss,
        accuracy=accuracy,
    )
