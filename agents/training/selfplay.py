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
from ..learned import ModelAgent

__all__ = [
    "PoolOpponent",
    "PoolSeat",
    "SnapshotCallback",
    "SnapshotStore",
    "list_snapshots",
    "load_snapshot",
    "pool_seats",
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

    A snapshot holds the weights and the few numbers that rebuild the network (observation size,
    actions, layers, activation) — tensors and plain values only, read back with
    ``torch.load(weights_only=True)``. Two extra files are kept so an environment that listed the
    folder a moment ago still finds the file it is about to load.
    """
    import torch

    pool_dir = Path(pool_dir)
    pool_dir.mkdir(parents=True, exist_ok=True)
    path = pool_dir / f"snapshot_{int(steps):012d}.pt"
    tmp = pool_dir / f".{path.name}.tmp"
    net_arch = policy.net_arch
    if isinstance(net_arch, dict):
        net_arch = list(net_arch.get("pi", []))
    torch.save(
        {
            "state_dict": policy.state_dict(),
            "obs_size": int(np.prod(policy.observation_space.shape)),
            "n_actions": int(policy.action_space.n),
            "net_arch": [int(h) for h in net_arch],
            "activation": "relu" if policy.activation_fn is torch.nn.ReLU else "tanh",
        },
        tmp,
    )
    os.replace(tmp, path)
    for old in list_snapshots(pool_dir)[: -(keep + 2)]:
        old.unlink(missing_ok=True)
    return path


def load_snapshot(path: str | Path, deterministic: bool = False, seed: int | None = None) -> ModelAgent:
    """The snapshot written by :func:`save_snapshot` as an agent (on the CPU; nothing is unpickled)."""
    import gymnasium as gym
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    data = torch.load(str(path), map_location="cpu", weights_only=True)
    if not isinstance(data, dict) or "state_dict" not in data:
        raise ValueError(f"{path} is not a self-play snapshot")
    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[data["activation"]]
    obs_space = gym.spaces.Box(-np.inf, np.inf, (int(data["obs_size"]),), np.float32)
    policy = MaskableActorCriticPolicy(
        obs_space,
        gym.spaces.Discrete(int(data["n_actions"])),
        lambda _: 0.0,
        net_arch=list(data["net_arch"]),
        activation_fn=activation,
    )
    policy.load_state_dict(data["state_dict"])
    policy.set_training_mode(False)
    return ModelAgent(policy, deterministic=deterministic, seed=seed, name=Path(path).stem)


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
        self._snapshots: dict[str, ModelAgent] = {}
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

    def _snapshot(self, path: Path) -> ModelAgent | None:
        key = path.name
        if key not in self._snapshots:
            try:
                self._snapshots[key] = load_snapshot(path, self.deterministic)
            except (OSError, EOFError, RuntimeError, ValueError, KeyError):  # pruned or half-seen file
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


# ---------------------------------------------------------------------------- native trainer's pool
class SnapshotStore:
    """Frozen in-memory copies of the learner (``agents.training.ppo_train``'s self-play pool).

    Snapshots are keyed by the step count at which they were taken; the newest ``keep`` stay.
    :meth:`state` / :meth:`load_state` turn the store into plain tensors for a checkpoint
    (loaded with ``torch.load(weights_only=True)``: nothing is unpickled).
    """

    def __init__(self, policy_factory: Any, keep: int, device: str = "cpu") -> None:
        self.policy_factory = policy_factory  # () -> a fresh policy module of the learner's shape
        self.keep = int(keep)
        self.device = device
        self.snapshots: dict[int, Any] = {}

    def add(self, policy: Any, steps: int) -> None:
        """Freeze a copy of ``policy`` as the snapshot of ``steps``; forget all but the newest ``keep``."""
        import copy

        frozen = copy.deepcopy(policy).to(self.device)
        frozen.set_training_mode(False)
        for p in frozen.parameters():
            p.requires_grad_(False)
        self.snapshots[int(steps)] = frozen
        for old in sorted(self.snapshots)[: -self.keep]:
            del self.snapshots[old]

    @property
    def ids(self) -> list[int]:
        """Step counts of the snapshots, oldest first."""
        return sorted(self.snapshots)

    def state(self) -> dict[str, Any]:
        """``{"steps": [...], "weights": [state_dict, ...]}`` (tensors only)."""
        ids = self.ids
        return {"steps": ids, "weights": [self.snapshots[i].state_dict() for i in ids]}

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore the snapshots of :meth:`state`."""
        self.snapshots.clear()
        for steps, weights in zip(state["steps"], state["weights"], strict=True):
            policy = self.policy_factory()
            policy.load_state_dict(weights)
            self.add(policy, int(steps))


def pool_seats(cfg: Any, store: SnapshotStore) -> list[PoolSeat]:
    """The native trainer's opponents under self-play: one :class:`PoolSeat` per other seat of
    ``cfg`` (a :class:`~agents.training.config.TrainConfig`), each with its own built-in agents."""
    from ..registry import load

    rules = cfg.rule_config()
    seats = []
    for i in range(cfg.num_players - 1):
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


class PoolSeat(BaseAgent):
    """One opponent seat of the native trainer: every game draws its member per episode.

    A member is a built-in agent (with probability ``builtin_prob``), else the newest snapshot
    (``latest_prob``), else a snapshot drawn uniformly from the store. The native vector env
    calls :meth:`start_episodes` for the games whose episode begins and
    :meth:`act_batch` with ``games=``; each member answers its games in one batched call.
    """

    def __init__(
        self,
        store: SnapshotStore,
        builtins: Sequence[Any],
        builtin_prob: float,
        latest_prob: float,
        deterministic: bool = False,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed)
        self.store = store
        self.builtins = list(builtins)
        self.builtin_prob = float(builtin_prob)
        self.latest_prob = float(latest_prob)
        self.deterministic = deterministic
        self.members = np.zeros(0, dtype=np.int64)  # per game: snapshot steps (>= 0) or -1 - builtin
        self.spec = "pool"
        import torch

        self._generator = torch.Generator(device=store.device)
        self._generator.manual_seed(int(self.rng.integers(2**62)))

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._generator.manual_seed(int(self.rng.integers(2**62)))
        for agent in self.builtins:
            if callable(getattr(agent, "reset", None)):
                agent.reset(int(self.rng.integers(2**31)))

    def start_episodes(self, games: np.ndarray) -> None:
        """Draw the member of each of ``games`` for its new episode."""
        games = np.asarray(games, dtype=np.int64)
        if not games.size:
            return
        if games.max() >= self.members.size:
            grown = np.full(int(games.max()) + 1, -1, dtype=np.int64)
            grown[: self.members.size] = self.members
            self.members = grown
        ids = self.store.ids
        n = games.size
        use_builtin = (self.rng.random(n) < self.builtin_prob) if ids else np.ones(n, dtype=bool)
        if not self.builtins:
            use_builtin[:] = False
        picks = np.full(n, -1, dtype=np.int64)
        if self.builtins:
            picks[use_builtin] = -1 - self.rng.integers(len(self.builtins), size=int(use_builtin.sum()))
        rest = ~use_builtin
        if rest.any():
            latest = self.rng.random(int(rest.sum())) < self.latest_prob
            drawn = np.asarray(ids, dtype=np.int64)[self.rng.integers(len(ids), size=int(rest.sum()))]
            picks[rest] = np.where(latest, ids[-1], drawn)
        self.members[games] = picks

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(
        self, observations: np.ndarray, action_masks: np.ndarray, games: np.ndarray | None = None
    ) -> np.ndarray:
        """Actions of a batch, each game's rows answered by that game's member."""
        obs = np.asarray(observations, dtype=np.float32)
        masks = np.asarray(action_masks) > 0
        if games is None:
            members = np.full(len(obs), self.store.ids[-1] if self.store.ids else -1, dtype=np.int64)
        else:
            games = np.asarray(games, dtype=np.int64)
            if games.size and games.max() >= self.members.size:
                self.start_episodes(games[games >= self.members.size])
            members = self.members[games]
        out = np.empty(len(obs), dtype=np.int64)
        for member in np.unique(members):
            rows = np.flatnonzero(members == member)
            out[rows] = self._member_act(int(member), obs[rows], masks[rows])
        return out

    def _member_act(self, member: int, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if member < 0 or member not in self.store.snapshots:
            if member >= 0 or not self.builtins:  # a snapshot that left the store: the newest
                member = self.store.ids[-1] if self.store.ids else -1
                if member >= 0:
                    return self._member_act(member, obs, masks)
            agent = self.builtins[(-1 - member) % len(self.builtins)]
            return _batch(agent, obs, masks)
        import torch

        from .ppo import forward, masked_logits, sample_actions

        policy = self.store.snapshots[member]
        with torch.inference_mode():
            o = torch.as_tensor(obs, device=self.store.device)
            m = torch.as_tensor(masks, device=self.store.device)
            logits = masked_logits(forward(policy, o)[0], m)
            acts = logits.argmax(-1) if self.deterministic else sample_actions(logits, self._generator)
        return acts.cpu().numpy().astype(np.int64)
