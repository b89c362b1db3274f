"""An RLlib ``PPOConfig`` for one dice game: masked module, self-play seats, snapshots.

Example (needs a running or startable Ray)::

    cfg = ppo_config("farkle", num_players=2, opponents=["heuristic"], snapshots=1,
                     env_config={"target": 1000}, num_env_runners=2)
    algo = cfg.build_algo()
    result = algo.train()
    export_policy(algo, "runs/farkle_rllib.zip", "farkle", 2)  # agents.rllib.export
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from dice_envs.rules import ConfigError

from .env import DiceMultiAgentEnv
from .module import MaskedPPOModule
from .selfplay import LEARNER, AgentModule, SelfPlayMapping, SnapshotCallback, agent_module_id

__all__ = ["ppo_config", "snapshot_ids"]


def snapshot_ids(n: int) -> list[str]:
    """Module ids of ``n`` frozen snapshots of the learner."""
    return [f"snapshot_{i}" for i in range(n)]


def ppo_config(
    game: str,
    num_players: int = 2,
    env_config: Mapping[str, Any] | None = None,
    opponents: Sequence[str] = ("random",),
    snapshots: int = 0,
    snapshot_every: int = 1,
    learner_seat: int | None = None,
    net_arch: Sequence[int] = (64, 64),
    activation: str = "tanh",
    num_env_runners: int = 0,
    train_batch_size: int = 4000,
    minibatch_size: int = 128,
    num_epochs: int = 4,
    lr: float = 3e-4,
    gamma: float = 1.0,
    lambda_: float = 0.95,
    entropy_coeff: float = 0.0,
    seed: int = 0,
) -> Any:
    """A PPO ``AlgorithmConfig`` (RLlib new API stack) training :data:`LEARNER` on ``game``.

    ``env_config``: more :class:`~agents.rllib.env.DiceMultiAgentEnv` settings (rule
    parameters, ``reward``, ``illegal_action``). ``opponents``: built-in agent specs
    (:func:`agents.load`) for the other seats, plus ``snapshots`` frozen copies of the learner
    refreshed every ``snapshot_every`` iterations; a solitaire game (``num_players=1``) needs
    none. ``num_env_runners``: 0 samples in the driver, ``n`` starts ``n`` Ray actors (any
    machine of the cluster).
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    env_cfg = {**dict(env_config or {}), "game": game, "num_players": int(num_players)}
    probe = DiceMultiAgentEnv(env_cfg)  # validates the game, the seats and the rule parameters
    obs_space = probe.observation_spaces["player_0"]
    act_space = probe.action_spaces["player_0"]
    rules = probe.rules.to_dict()
    if snapshots < 0:
        raise ConfigError(f"snapshots must be >= 0, got {snapshots!r}")
    model = {"net_arch": [int(w) for w in net_arch], "activation": activation}
    specs: dict[str, Any] = {
        LEARNER: RLModuleSpec(
            module_class=MaskedPPOModule,
            observation_space=obs_space,
            action_space=act_space,
            model_config=model,
        )
    }
    opponent_ids: list[str] = []
    if num_players > 1:
        for i, spec in enumerate(dict.fromkeys(str(s) for s in opponents)):
            mid = agent_module_id(spec, i)
            specs[mid] = RLModuleSpec(
                module_class=AgentModule,
                observation_space=obs_space,
                action_space=act_space,
                model_config={
                    "spec": spec,
                    "game": game,
                    "rules": rules,
                    "num_players": num_players,
                    "seed": seed + 1 + i,
                },
            )
            opponent_ids.append(mid)
        for sid in snapshot_ids(snapshots):
            specs[sid] = RLModuleSpec(
                module_class=MaskedPPOModule,
                observation_space=obs_space,
                action_space=act_space,
                model_config=model,
            )
            opponent_ids.append(sid)
    mapping = SelfPlayMapping(num_players, opponent_ids, learner_seat)
    cfg = (
        PPOConfig()
        # RLlib's env checker steps a random action: with illegal_action="raise" that must raise.
        .environment(
            DiceMultiAgentEnv,
            env_config=env_cfg,
            disable_env_checking=env_cfg.get("illegal_action") == "raise",
        )
        .env_runners(num_env_runners=int(num_env_runners), num_envs_per_env_runner=1)
        .multi_agent(policies=set(specs), policy_mapping_fn=mapping, policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            train_batch_size_per_learner=int(train_batch_size),
            minibatch_size=int(minibatch_size),
            num_epochs=int(num_epochs),
            lr=float(lr),
            gamma=float(gamma),
            lambda_=float(lambda_),
            entropy_coeff=float(entropy_coeff),
        )
        .debugging(seed=int(seed))
    )
    if snapshots:
        cfg = cfg.callbacks(
            functools.partial(
                SnapshotCallback, snapshot_ids=snapshot_ids(snapshots), snapshot_every=snapshot_every
            )
        )
    return cfg
