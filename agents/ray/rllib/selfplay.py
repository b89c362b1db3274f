"""Self-play on RLlib: built-in agents as RLModules (:class:`AgentModule`), frozen snapshots of
the learner in the trainers' self-play pool (:class:`SnapshotCallback`;
:class:`agents.training.selfplay.SelfPlayPool`, whose members here are module ids) and the
policy mapping that seats them (:class:`SelfPlayMapping`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from agents.training.selfplay import SelfPlayPool
from dice_envs.opponents import batch_actions
from dice_envs.rules import ConfigError, make_rules

__all__ = ["LEARNER", "AgentModule", "SelfPlayMapping", "SnapshotCallback", "agent_module_id"]

#: Module id of the trained policy.
LEARNER = "learner"


def agent_module_id(spec: str, index: int = 0) -> str:
    """The RLModule id of the ``index``-th opponent spec (``heuristic`` → ``agent0-heuristic``).

    RLlib module ids must be valid file names, so anything but letters, digits, ``.``, ``_``
    and ``-`` becomes ``_`` (``threshold:1000`` → ``agent1-threshold_1000``).
    """
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", Path(spec).stem if spec.endswith(".zip") else spec)
    return f"agent{index}-{safe}"


class AgentModule(RLModule):
    """Any agent of :func:`agents.load` as a non-trainable RLModule that returns the agent's actions
    (``Columns.ACTIONS``), so RLlib never samples for it (``model_config``: ``spec``, ``game``,
    ``rules``, ``num_players``, ``seed``)."""

    def setup(self) -> None:
        from agents.registry import load

        cfg = dict(self.model_config or {})
        if "spec" not in cfg or "game" not in cfg:
            raise ConfigError(f"AgentModule needs model_config with 'spec' and 'game', got {sorted(cfg)}")
        rules = make_rules(cfg["game"], **dict(cfg.get("rules") or {}))
        self.agent = load(
            cfg["spec"], game=rules, num_players=int(cfg.get("num_players", 2)), seed=cfg.get("seed")
        )

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        x = np.asarray(obs["observations"], dtype=np.float32)
        mask = (np.asarray(obs["action_mask"]) > 0).astype(np.int8)
        return {Columns.ACTIONS: batch_actions(self.agent, x, mask)}

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._forward_inference(batch, **kwargs)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{self.agent!r} is a built-in agent: leave it out of policies_to_train")


def _seed(episode_id: str, salt: str) -> int:
    """A seed that only the episode id and ``salt`` decide (the same in every env runner)."""
    return int.from_bytes(hashlib.blake2b(f"{episode_id}/{salt}".encode(), digest_size=8).digest(), "little")


class SelfPlayMapping:
    """``policy_mapping_fn``: the learner at one seat per episode, opponents at the others.

    Each other seat plays the member that ``pool`` draws for it (the pool's snapshots: frozen
    module ids) or one of the ``builtins`` (built-in agents' module ids). ``learner_seat``: a fixed
    seat, or ``None`` (drawn per episode). Deterministic in the episode id, so an episode's seats
    never change mid-game. :class:`SnapshotCallback` keeps the pool up to date in every env runner.
    """

    def __init__(
        self,
        num_players: int,
        builtins: Sequence[str],
        pool: SelfPlayPool[str] | None = None,
        learner_seat: int | None = None,
    ) -> None:
        if num_players > 1 and not builtins and not (pool and pool.size):
            raise ConfigError("self-play with 2 or more players needs at least one opponent module")
        if learner_seat is not None and not 0 <= learner_seat < num_players:
            raise ConfigError(f"learner_seat must be in [0, {num_players - 1}] or None, got {learner_seat!r}")
        self.num_players = int(num_players)
        self.builtins = list(builtins)
        self.pool: SelfPlayPool[str] = pool if pool is not None else SelfPlayPool(0, 1.0, 0.0)
        self.learner_seat = learner_seat

    def __call__(self, agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        seat = int(str(agent_id).rsplit("_", 1)[-1])
        eid = str(getattr(episode, "id_", "")) if episode is not None else ""
        learner = self.learner_seat
        if learner is None:
            learner = _seed(eid, "seat") % self.num_players
        if seat == learner:
            return LEARNER
        rng = np.random.default_rng(_seed(eid, f"opp{seat}"))
        code = int(self.pool.draw(rng, 1, len(self.builtins))[0])
        return self.builtins[-1 - code] if code < 0 else self.pool.snapshots[code]


class SnapshotCallback(RLlibCallback):
    """Copies the learner's weights into a frozen snapshot module when the algorithm starts and
    every ``snapshot_every`` iterations, and adds it to the self-play pool of the driver and of
    every env runner's :class:`SelfPlayMapping` (keyed by the iteration; once every module of
    ``snapshot_ids`` holds one, the oldest snapshot's module is refreshed).

    Made by :func:`agents.ray.rllib.config.ppo_config` (via ``functools.partial``).
    """

    def __init__(self, snapshot_ids: Sequence[str] = (), snapshot_every: int = 1) -> None:
        super().__init__()
        self.snapshot_ids = list(snapshot_ids)
        self.snapshot_every = max(1, int(snapshot_every))
        self.pool: SelfPlayPool[str] = SelfPlayPool(len(self.snapshot_ids), 0.0, 0.0)

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        if self.snapshot_ids:
            self._snapshot(algorithm, 0)

    def on_train_result(self, *, algorithm: Any, result: dict, **kwargs: Any) -> None:
        it = int(algorithm.iteration)
        if not self.snapshot_ids or it % self.snapshot_every:
            return
        result.setdefault("snapshots", {})[self._snapshot(algorithm, it)] = it

    def _snapshot(self, algorithm: Any, iteration: int) -> str:
        """The learner's weights into a free module (else the oldest snapshot's); its id."""
        held = set(self.pool.snapshots.values())
        free = [m for m in self.snapshot_ids if m not in held]
        slot = free[0] if free else self.pool.snapshots[self.pool.ids[0]]
        self.pool.add(iteration, slot)
        weights = algorithm.learner_group.get_weights(module_ids=[LEARNER])[LEARNER]

        def put(runner: Any) -> None:
            runner.module[slot].set_state(weights)
            mapping = getattr(runner.config, "policy_mapping_fn", None)
            if isinstance(mapping, SelfPlayMapping):
                mapping.pool.add(iteration, slot)

        algorithm.env_runner_group.foreach_env_runner(put, local_env_runner=True)
        return slot
