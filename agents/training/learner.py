"""What a native PPO run trains and what its checkpoints hold (:class:`Learner`), and how a run
starts: fresh, warm-started, or restored from its newest checkpoint (:func:`start_learner`)."""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from agents.training.artifacts import load_checkpoint
from agents.training.config import TrainConfig
from agents.training.envs import make_vector_env
from agents.training.policy import make_model
from agents.training.selfplay import SelfPlayPool, snapshot_name
from dice_envs.rules import ConfigError

__all__ = ["Learner", "start_learner"]


@dataclass
class Learner:
    """What a run trains and what its checkpoints hold: the model (its policy is the network
    trained), Adam, the self-play pool of frozen copies, the sampler, and the counters."""

    model: Any
    optimizer: torch.optim.Optimizer
    pool: SelfPlayPool[Any]
    generator: torch.Generator
    seed: int = 0
    snapshot_deterministic: bool = False
    steps: int = 0
    updates: int = 0
    episodes: int = 0
    wall_before: float = 0.0  # wall time of the runs before a resume
    warm_stats: dict[str, Any] | None = None
    resumed_from: Path | None = None

    @property
    def policy(self) -> Any:
        """The network being trained (an sb3-contrib ``MaskableActorCriticPolicy``)."""
        return self.model.policy

    def snapshot(self, steps: int, weights: dict[str, Any] | None = None) -> None:
        """Add a frozen copy of the policy (or of it with ``weights``) to the pool as ``steps``."""
        from agents.players.model import ModelAgent

        frozen = copy.deepcopy(self.policy)
        if weights is not None:
            frozen.load_state_dict(weights)
        frozen.set_training_mode(False)
        frozen.requires_grad_(False)
        agent = ModelAgent(frozen, self.snapshot_deterministic, snapshot_name(steps), self.seed + steps)
        self.pool.add(steps, agent)

    def state(self, wall: float) -> dict[str, Any]:
        """The checkpoint of this learner (tensors and plain values only)."""
        ids = self.pool.ids
        return {
            "steps": self.steps,
            "updates": self.updates,
            "episodes": self.episodes,
            "wall_time_s": wall,
            "policy": self.policy.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "pool": {"steps": ids, "weights": [self.pool.snapshots[i].policy.state_dict() for i in ids]},
            "generator": self.generator.get_state(),
            "warm_start": self.warm_stats or {},
        }

    def restore(self, path: Path, state: dict[str, Any], seed: int) -> None:
        """Continue from the checkpoint ``state`` read from ``path``."""
        self.policy.load_state_dict(state["policy"])
        self.optimizer.load_state_dict(state["optimizer"])
        for steps, weights in zip(state["pool"]["steps"], state["pool"]["weights"], strict=True):
            self.snapshot(int(steps), weights)
        self.steps, self.updates = int(state["steps"]), int(state["updates"])
        try:
            self.generator.set_state(state["generator"])
        except RuntimeError as exc:  # from another device kind (device may change on resume)
            self.generator.manual_seed(seed + self.steps)
            print(f"{path.name}: another device's sampler ({exc}); reseeded: seed + steps", file=sys.stderr)
        self.episodes, self.wall_before = int(state["episodes"]), float(state["wall_time_s"])
        self.warm_stats = state.get("warm_start") or None
        self.resumed_from = path


def start_learner(cfg: TrainConfig, out: Path, resume: bool, device: str) -> Learner:
    """A fresh network, optimizer and self-play pool, restored from the newest checkpoint that
    verifies when resuming, else warm-started (:func:`agents.training.init_model.warm_start`)."""
    from agents.training.init_model import warm_start

    probe = make_vector_env(cfg, ["random"] * (cfg.num_players - 1), num_envs=1)
    model = make_model(cfg, probe.single_observation_space, probe.single_action_space, device)
    probe.close()
    learner = Learner(
        model=model,
        optimizer=torch.optim.Adam(model.policy.parameters(), lr=cfg.learning_rate, eps=cfg.adam_eps),
        pool=SelfPlayPool(cfg.pool_size, cfg.pool_builtin_prob, cfg.pool_latest_prob),
        generator=torch.Generator(device=device).manual_seed(cfg.seed),
        seed=cfg.seed,
        snapshot_deterministic=cfg.snapshot_deterministic,
    )
    found = load_checkpoint(out / "checkpoints") if resume else None  # ConfigError when none verifies
    if found is not None:
        learner.restore(*found, cfg.seed)
        if learner.steps >= cfg.total_timesteps:
            raise ConfigError(
                f"--resume: the run in {out} is finished ({learner.steps} steps >= total_timesteps "
                f"{cfg.total_timesteps}); give --total-timesteps above {learner.steps} to train on"
            )
    else:
        learner.warm_stats = warm_start(model, cfg, device)
    if cfg.self_play and not learner.pool.ids:
        learner.snapshot(learner.steps)
    return learner
