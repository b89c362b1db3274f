"""Self-play: a pool of frozen learner snapshots and built-in agents, one member per episode.

The learner's policy is saved to ``<pool_dir>/snapshot_<steps>.pt`` every ``snapshot_freq`` steps
(:class:`SnapshotCallback`, atomic writes). Each environment holds :class:`PoolOpponent` objects
as its ``opponents``; on every ``reset(seed)`` a pool opponent re-reads the folder, so snapshots
written by the trainer reach environments in other processes, and picks its member for the
episode: a built-in agent with probability ``builtin_prob``, else the newest snapshot with
probability ``latest_prob``, else a snapshot drawn uniformly from the newest ``pool_size``. In the
native vector env (one process, many games) the env calls :meth:`PoolOpponent.start_episodes`
for the games whose episode begins, so there too every game draws its member per episode.

>>> import tempfile
>>> pool = PoolOpponent(tempfile.mkdtemp(), game="farkle", num_players=2, builtin=["random"], seed=0)
>>> pool.reset(1)          # no snapshot yet: a built-in agent sits in the seat
>>> pool.member
'random'
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from dice_envs.rules import RuleConfig, make_rules

from ..base import BaseAgent

__all__ = [
    "PoolOpponent",
    "SnapshotAgent",
    "SnapshotCallback",
    "list_snapshots",
    "save_snapshot",
]

_SNAPSHOT = re.compile(r"^snapshot_(\d+)\.pt$")


def list_snapshots(pool_dir: str | Path) -> list[Path]:
    """Snapshot files of a pool folder, oldest first (by the step count in the name)."""
    pool_dir = Path(pool_dir)
    if not pool_dir.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in pool_dir.iterdir() if (m := _SNAPSHOT.match(p.name))]
    return [p for _, p in sorted(found)]


def save_snapshot(policy: Any, pool_dir: str | Path, steps: int, keep: int) -> Path:
    """Write ``policy`` (an SB3 policy) as the snapshot of ``steps``; delete all but ``keep`` + 2 newest.

    Two extra files are kept so an environment that listed the folder a moment ago still finds
    the file it is about to load.
    """
    pool_dir = Path(pool_dir)
    pool_dir.mkdir(parents=True, exist_ok=True)
    path = pool_dir / f"snapshot_{int(steps):012d}.pt"
    tmp = pool_dir / f".{path.name}.tmp"
    policy.save(str(tmp))
    os.replace(tmp, path)
    for old in list_snapshots(pool_dir)[: -(keep + 2)]:
        old.unlink(missing_ok=True)
    return path


class SnapshotAgent(BaseAgent):
    """A frozen copy of a policy acting by masked sampling (or masked argmax)."""

    def __init__(
        self, policy: Any, deterministic: bool = False, seed: int | None = None, name: str = "snapshot"
    ) -> None:
        super().__init__(seed)
        self.policy = policy
        self.deterministic = deterministic
        self.spec = name

    @classmethod
    def from_file(
        cls, path: str | Path, deterministic: bool = False, seed: int | None = None
    ) -> SnapshotAgent:
        """Load a snapshot written by :func:`save_snapshot` (on the CPU)."""
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

        policy = MaskableActorCriticPolicy.load(str(path), device="cpu")
        policy.set_training_mode(False)
        return cls(policy, deterministic=deterministic, seed=seed, name=Path(path).stem)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Masked actions for a batch, one forward pass."""
        import torch

        masks = np.asarray(action_masks, dtype=bool)
        with torch.no_grad():
            obs = torch.as_tensor(np.asarray(observations, dtype=np.float32), device=self.policy.device)
            dist = self.policy.get_distribution(obs, action_masks=masks)
            probs = dist.distribution.probs.cpu().numpy().astype(np.float64)
        probs = np.where(masks, probs, 0.0)
        if self.deterministic:
            return np.argmax(np.where(masks, probs, -1.0), axis=1).astype(np.int64)
        # inverse-CDF sampling per row (rows sum to 1 over the legal actions)
        cdf = np.cumsum(probs, axis=1)
        u = self.rng.random(len(probs))[:, None] * cdf[:, -1:]
        actions = (cdf <= u).sum(axis=1)
        # guard against float edges: fall back to the most likely legal action
        bad = ~masks[np.arange(len(actions)), np.minimum(actions, masks.shape[1] - 1)]
        actions = np.minimum(actions, masks.shape[1] - 1)
        actions[bad] = np.argmax(np.where(masks[bad], probs[bad], -1.0), axis=1)
        return actions.astype(np.int64)


class PoolOpponent(BaseAgent):
    """An opponent seat that becomes a different pool member every episode (see module doc)."""

    def __init__(
        self,
        pool_dir: str | Path,
        game: str | RuleConfig,
        num_players: int,
        builtin: Sequence[str] = ("heuristic",),
        builtin_prob: float = 0.5,
        latest_prob: float = 0.5,
        pool_size: int = 5,
        deterministic: bool = False,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed)
        self.pool_dir = Path(pool_dir)
        self.rules = make_rules(game)
        self.num_players = num_players
        self.builtin_specs = list(builtin)
        self.builtin_prob = builtin_prob
        self.latest_prob = latest_prob
        self.pool_size = pool_size
        self.deterministic = deterministic
        self._builtins: dict[str, Any] = {}
        self._snapshots: dict[str, SnapshotAgent] = {}
        self.current: Any = None
        self.member = ""
        self._game_members: dict[int, tuple[str, Any]] = {}  # native vector env: game -> member
        self.spec = f"pool:{self.pool_dir}"

    def _builtin(self, spec: str) -> Any:
        if spec not in self._builtins:
            from ..registry import load

            self._builtins[spec] = load(
                spec, game=self.rules, num_players=self.num_players, seed=int(self.rng.integers(2**31))
            )
        return self._builtins[spec]

    def _snapshot(self, path: Path) -> SnapshotAgent | None:
        key = path.name
        if key not in self._snapshots:
            try:
                self._snapshots[key] = SnapshotAgent.from_file(path, self.deterministic)
            except (OSError, EOFError, RuntimeError, ValueError):  # pruned or half-seen file
                return None
            # forget snapshots that left the pool, so memory stays bounded
            for old in [k for k in self._snapshots if not (self.pool_dir / k).exists()]:
                del self._snapshots[old]
        return self._snapshots[key]

    def pick(self) -> tuple[str, Any]:
        """Draw the member of the next episode: ``(name, agent)``."""
        snaps = list_snapshots(self.pool_dir)[-self.pool_size :]
        if self.builtin_specs and (not snaps or self.rng.random() < self.builtin_prob):
            spec = self.builtin_specs[int(self.rng.integers(len(self.builtin_specs)))]
            return spec, self._builtin(spec)
        if not snaps:
            raise RuntimeError(f"self-play pool {self.pool_dir} has neither snapshots nor built-in agents")
        order = [snaps[-1]] if self.rng.random() < self.latest_prob else []
        order += [snaps[i] for i in self.rng.permutation(len(snaps))]
        for path in order:
            agent = self._snapshot(path)
            if agent is not None:
                return path.stem, agent
        spec = self.builtin_specs[0] if self.builtin_specs else "random"
        return spec, self._builtin(spec)

    def start_episodes(self, games: np.ndarray) -> None:
        """Native vector env hook: each of these games draws its own member for its new episode."""
        for g in np.asarray(games, dtype=np.int64).tolist():
            self._game_members[g] = self.pick()
        self.member, self.current = self._game_members[int(games[-1])] if len(games) else self.pick()

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._game_members.clear()
        self.member, self.current = self.pick()
        if hasattr(self.current, "reset"):
            self.current.reset(None if seed is None else int(self.rng.integers(2**31)))

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if self.current is None:
            self.reset()
        return int(self.current.act(observation, action_mask))

    def act_batch(
        self, observations: np.ndarray, action_masks: np.ndarray, games: np.ndarray | None = None
    ) -> np.ndarray:
        """Actions for a batch: of the current member, or (``games`` given, native vector env) of
        each game's own member, one batched call per member."""
        if self.current is None:
            self.reset()
        if games is None:
            return _batch(self.current, observations, action_masks)
        out = np.empty(len(observations), dtype=np.int64)
        members = [self._game_members.get(int(g)) or (self.member, self.current) for g in games]
        for name in sorted({m[0] for m in members}):
            rows = np.array([i for i, m in enumerate(members) if m[0] == name])
            agent = next(m[1] for m in members if m[0] == name)
            out[rows] = _batch(agent, observations[rows], action_masks[rows])
        return out


def _batch(agent: Any, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    if hasattr(agent, "act_batch"):
        return np.asarray(agent.act_batch(observations, action_masks), dtype=np.int64)
    return np.array(
        [agent.act(o, m) for o, m in zip(observations, action_masks, strict=True)], dtype=np.int64
    )


class SnapshotCallback(BaseCallback):
    """Adds a frozen copy of the learner to the pool at the start and every ``freq`` env steps."""

    def __init__(self, pool_dir: str | Path, freq: int, keep: int, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.pool_dir = Path(pool_dir)
        self.freq = freq
        self.keep = keep
        self._last = -1

    def _save(self) -> None:
        path = save_snapshot(self.model.policy, self.pool_dir, self.num_timesteps, self.keep)
        self._last = self.num_timesteps
        self.logger.record("self_play/snapshots", len(list_snapshots(self.pool_dir)))
        if self.verbose:
            print(f"self-play snapshot {path.name}")

    def _on_training_start(self) -> None:
        if not list_snapshots(self.pool_dir):
            self._save()
        else:
            self._last = self.num_timesteps

    def _on_step(self) -> bool:
        if self.freq > 0 and self.num_timesteps - self._last >= self.freq:
            self._save()
        return True
