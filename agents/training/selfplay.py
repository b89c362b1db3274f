"""The self-play pool: one implementation for the native trainer, the sb3 trainer and RLlib.

A :class:`SelfPlayPool` holds the newest ``size`` snapshots of the learner, keyed by when each was
taken (env steps; RLlib: the iteration), and draws the member that plays an episode at an opponent
seat (:meth:`SelfPlayPool.draw`). A snapshot is a frozen policy as a
:class:`~agents.players.model.ModelAgent` (native trainer: in memory and in the checkpoints; sb3
trainer: a file of the run's ``pool/`` folder, :func:`save_snapshot`, read back by each env's
:class:`PoolOpponent`), or an RLlib module id (:mod:`agents.ray.rllib.selfplay`).

>>> pool = SelfPlayPool(size=2, builtin_prob=0.5, latest_prob=0.0)
>>> for steps in (0, 100, 200):
...     _ = pool.add(steps, f"snapshot at {steps}")
>>> pool.ids
[100, 200]
>>> sorted(set(pool.draw(np.random.default_rng(0), 1000, builtins=1).tolist()))  # -1: built-in 0
[-1, 100, 200]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

from agents.base import BaseAgent
from agents.models.activations import activation_class, activation_name
from agents.training.artifacts import load_tensors, numbered_files
from dice_envs.io import atomic_open

__all__ = [
    "PoolOpponent",
    "SelfPlayPool",
    "list_snapshots",
    "load_snapshot",
    "pool_opponents",
    "save_snapshot",
    "snapshot_name",
]

T = TypeVar("T")
_SNAPSHOT = re.compile(r"^snapshot_(\d+)\.pt$")


class SelfPlayPool(Generic[T]):
    """The newest ``size`` snapshots (``snapshots``: key → member) and the rule that draws an
    episode's member: a built-in agent with probability ``builtin_prob`` (always while the pool is
    empty), else the newest snapshot with probability ``latest_prob``, else one drawn uniformly."""

    def __init__(self, size: int, builtin_prob: float, latest_prob: float) -> None:
        self.size = int(size)
        self.builtin_prob = float(builtin_prob)
        self.latest_prob = float(latest_prob)
        self.snapshots: dict[int, T] = {}

    @property
    def ids(self) -> list[int]:
        """The snapshots' keys, oldest first."""
        return sorted(self.snapshots)

    def add(self, key: int, member: T) -> list[T]:
        """Hold ``member`` as the snapshot of ``key``; return the members that left the pool (all
        but the newest ``size``)."""
        self.snapshots[int(key)] = member
        return [self.snapshots.pop(old) for old in self.ids[: max(0, len(self.snapshots) - self.size)]]

    def draw(self, rng: np.random.Generator, n: int, builtins: int) -> np.ndarray:
        """The members of ``n`` new episodes: a snapshot's key (>= 0), or ``-1 - k`` for built-in
        agent ``k`` of the ``builtins`` a seat holds."""
        ids = self.ids
        if not ids and not builtins:
            raise RuntimeError("the self-play pool holds no snapshot and the seat no built-in agent")
        use_builtin = rng.random(n) < self.builtin_prob if ids else np.ones(n, dtype=bool)
        if not builtins:
            use_builtin[:] = False
        codes = np.empty(n, dtype=np.int64)
        n_builtin = int(use_builtin.sum())
        if n_builtin:
            codes[use_builtin] = -1 - rng.integers(builtins, size=n_builtin)
        if n_builtin < n:
            latest = rng.random(n - n_builtin) < self.latest_prob
            drawn = np.asarray(ids, dtype=np.int64)[rng.integers(len(ids), size=n - n_builtin)]
            codes[~use_builtin] = np.where(latest, ids[-1], drawn)
        return codes


# ---------------------------------------------------------------------------- the seat
def snapshot_name(key: int) -> str:
    """The name of the snapshot of ``key`` (its file's stem in a pool folder)."""
    return f"snapshot_{int(key):012d}"


class PoolOpponent(BaseAgent):
    """An opponent seat that plays members of ``pool`` (agents) and its own ``builtins``.

    ``members`` holds each game's member (:meth:`SelfPlayPool.draw`'s codes): the native vector
    env calls :meth:`start_episodes` for the games whose episode begins, a Gymnasium env calls
    :meth:`reset` (game 0's member). With ``folder``, the seat reads the snapshots another process
    wrote there (:meth:`sync`; ``deterministic``: they play by masked argmax, else sample).
    """

    spec = "pool"

    def __init__(
        self,
        pool: SelfPlayPool[Any],
        builtins: Sequence[Any],
        *,
        folder: str | Path | None = None,
        deterministic: bool = False,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed)
        self.pool = pool
        self.builtins = list(builtins)
        self.folder = None if folder is None else Path(folder)
        self.deterministic = deterministic
        self.members = np.zeros(0, dtype=np.int64)

    @property
    def member(self) -> str:
        """The name of game 0's member (a Gymnasium env's current opponent)."""
        return self.member_name(int(self.members[0])) if self.members.size else ""

    def member_name(self, code: int) -> str:
        """A member's name: the built-in agent's spec, or the snapshot's name."""
        if code < 0:
            return str(getattr(self.builtins[-1 - code], "spec", "") or f"builtin{-1 - code}")
        return snapshot_name(code)

    def sync(self) -> None:
        """Hold the newest ``pool.size`` snapshots of ``folder`` (nothing without a folder)."""
        if self.folder is None:
            return
        files = {_steps_of(p): p for p in list_snapshots(self.folder)[-self.pool.size :]}
        for key in self.pool.ids:
            if key not in files:  # pruned by the writer
                del self.pool.snapshots[key]
        for key, path in files.items():
            if key in self.pool.snapshots:
                continue
            try:
                policy = load_snapshot(path)
            except (OSError, EOFError, RuntimeError, ValueError, KeyError):  # pruned since listed, or damaged
                continue
            from agents.players.model import ModelAgent

            seed = int(self.rng.integers(2**31))
            self.pool.add(key, ModelAgent(policy, self.deterministic, snapshot_name(key), seed))

    def reset(self, seed: int | None = None) -> None:
        """Reseed (given ``seed``) the seat and its built-in agents; draw game 0's member."""
        super().reset(seed)
        for agent in self.builtins:
            if callable(getattr(agent, "reset", None)):
                agent.reset(int(self.rng.integers(2**31)) if seed is not None else None)
        self.sync()
        self.members = self.pool.draw(self.rng, 1, len(self.builtins))

    def start_episodes(self, games: np.ndarray) -> None:
        """Draw the member of each of ``games`` for its new episode."""
        games = np.asarray(games, dtype=np.int64)
        if not games.size:
            return
        self.sync()
        if games.max() >= self.members.size:
            grown = np.full(int(games.max()) + 1, -1, dtype=np.int64)
            grown[: self.members.size] = self.members
            self.members = grown
        self.members[games] = self.pool.draw(self.rng, games.size, len(self.builtins))

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(
        self, observations: np.ndarray, action_masks: np.ndarray, games: np.ndarray | None = None
    ) -> np.ndarray:
        """Actions of a batch, each game's rows answered by that game's member (every row by
        game 0's without ``games``)."""
        if not self.members.size:
            self.reset()
        obs, masks = np.asarray(observations, dtype=np.float32), np.asarray(action_masks)
        if games is None:
            members = np.full(len(obs), self.members[0], dtype=np.int64)
        else:
            games = np.asarray(games, dtype=np.int64)
            if games.size and games.max() >= self.members.size:
                self.start_episodes(games[games >= self.members.size])
            members = self.members[games]
        out = np.empty(len(obs), dtype=np.int64)
        for code in np.unique(members):
            rows = np.flatnonzero(members == code)
            agent = self._agent(int(code))
            out[rows] = np.asarray(agent.act_batch(obs[rows], masks[rows]), dtype=np.int64)
        return out

    def _agent(self, code: int) -> Any:
        """The member of ``code``; a snapshot that left the pool meanwhile: the newest one."""
        if code < 0:
            return self.builtins[-1 - code]
        snapshots = self.pool.snapshots
        return snapshots[code] if code in snapshots else snapshots[self.pool.ids[-1]]


def pool_opponents(
    cfg: Any, pool: SelfPlayPool[Any], seed: int, folder: str | Path | None = None
) -> list[PoolOpponent]:
    """One :class:`PoolOpponent` per other seat of ``cfg`` (a
    :class:`~agents.training.config.TrainConfig`), each with its own ``pool_builtin`` agents."""
    seats = []
    for i in range(cfg.num_players - 1):
        builtins = [
            cfg.agent_specs[spec].build(cfg.num_players, seed + 7919 * (i + 1) + k)
            for k, spec in enumerate(cfg.pool_builtin)
        ]
        seats.append(
            PoolOpponent(
                pool,
                builtins,
                folder=folder,
                deterministic=cfg.snapshot_deterministic,
                seed=seed + 104_729 * (i + 1),
            )
        )
    return seats


# ---------------------------------------------------------------------------- pool folders
def list_snapshots(pool_dir: str | Path) -> list[Path]:
    """Snapshot files of a pool folder, oldest first (by the step count in the name)."""
    return numbered_files(pool_dir, _SNAPSHOT)


def _steps_of(path: Path) -> int:
    return int(path.stem.split("_")[1])


def save_snapshot(policy: Any, pool_dir: str | Path, steps: int, keep: int) -> Path:
    """Write ``policy`` (an SB3 policy) as the snapshot of ``steps`` (its weights and what rebuilds
    the network: tensors and plain values only); delete all but the ``keep`` + 2 newest (the two
    extra for a seat that listed the folder a moment ago)."""
    import torch

    pool_dir = Path(pool_dir)
    pool_dir.mkdir(parents=True, exist_ok=True)
    path = pool_dir / f"{snapshot_name(steps)}.pt"
    net_arch = policy.net_arch
    if isinstance(net_arch, dict):
        net_arch = list(net_arch.get("pi", []))
    snapshot = {
        "state_dict": policy.state_dict(),
        "obs_size": int(np.prod(policy.observation_space.shape)),
        "n_actions": int(policy.action_space.n),
        "net_arch": [int(h) for h in net_arch],
        "activation": activation_name(policy.activation_fn),
    }
    with atomic_open(path, "wb", overwrite=True) as fh:
        torch.save(snapshot, fh)
    for old in list_snapshots(pool_dir)[: -(keep + 2)]:
        old.unlink(missing_ok=True)
    return path


def load_snapshot(path: str | Path) -> Any:
    """The policy saved by :func:`save_snapshot`, on the CPU (nothing is unpickled: a file holding
    pickled objects raises ``ValueError``, as does one that is not a snapshot)."""
    import gymnasium as gym
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    data = load_tensors(str(path))
    if not isinstance(data, dict) or "state_dict" not in data:
        raise ValueError(f"{path} is not a self-play snapshot")
    activation = activation_class(data["activation"])
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
    return policy
