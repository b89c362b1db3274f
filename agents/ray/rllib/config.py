"""An RLlib ``PPOConfig`` for one dice game: masked module, self-play seats, snapshots.

Example (needs a running or startable Ray)::

    cfg = ppo_config("farkle", num_players=2, opponents=["heuristic"], snapshots=1,
                     env_config={"target": 1000}, num_env_runners=2)
    algo = cfg.build_algo()
    result = algo.train()
    export_policy(algo, "runs/farkle_rllib.zip", "farkle", 2)  # agents.ray.rllib.export
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from agents.ray.rllib.env import DiceMultiAgentEnv
from agents.ray.rllib.module import MaskedPPOModule
from agents.ray.rllib.selfplay import LEARNER, AgentModule, SelfPlayMapping, SnapshotCallback, agent_module_id
from agents.training.config import TrainConfig
from agents.training.selfplay import SelfPlayPool
from dice_envs.rules import ConfigError

__all__ = [
    "ENV_SETTINGS",
    "RUN_FIELDS",
    "SELF_PLAY_FIELDS",
    "ppo_config",
    "run_settings",
    "snapshot_ids",
    "train_config",
]

#: ``env_config`` keys that are env settings, not rule parameters.
ENV_SETTINGS = ("reward", "illegal_action", "illegal_reward")
#: The :class:`~agents.training.config.TrainConfig` fields an RLlib run sets (:func:`train_config`);
#: the other fields have no counterpart in the run, and a model card leaves them out.
RUN_FIELDS = (
    "name",
    "game",
    "rules",
    "num_players",
    "reward",
    "opponents",
    "seat",
    "n_envs",
    "total_timesteps",
    "seed",
    "learning_rate",
    "n_steps",
    "batch_size",
    "n_epochs",
    "gamma",
    "gae_lambda",
    "ent_coef",
    "net_arch",
    "activation",
    "self_play",
)
#: More fields set when the run has frozen snapshots (``self_play``).
SELF_PLAY_FIELDS = ("snapshot_freq", "pool_size", "pool_builtin", "pool_builtin_prob", "pool_latest_prob")


def snapshot_ids(n: int) -> list[str]:
    """Module ids of ``n`` frozen snapshots of the learner."""
    return [f"snapshot_{i}" for i in range(n)]


def run_settings(cfg: TrainConfig) -> dict[str, Any]:
    """The fields of ``cfg`` (a :func:`train_config`) that describe an RLlib run, as plain values."""
    keys = RUN_FIELDS + (SELF_PLAY_FIELDS if cfg.self_play else ())
    data = cfg.to_dict()
    return {k: data[k] for k in keys}


def train_config(
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
    *,
    name: str = "rllib",
    iterations: int = 1,
) -> TrainConfig:
    """The :func:`ppo_config` run (same arguments, plus the run's ``name`` and ``iterations``) as a
    validated :class:`~agents.training.config.TrainConfig`; builds nothing of Ray.

    Every value goes through ``TrainConfig``'s checks under its field's name (``lr`` →
    ``learning_rate``, ``iterations x train_batch_size`` → ``total_timesteps``, ...), the env's,
    and :func:`agents.training.train.check_agent_specs` (a model opponent is loaded once here, so
    one of another game or seats is refused): a bad value raises :class:`ConfigError` before any
    worker starts. Only :data:`RUN_FIELDS` (and :data:`SELF_PLAY_FIELDS` with snapshots) describe
    the run.
    """
    from agents.registry import check_fit
    from agents.training.train import check_agent_specs

    env_cfg = {**dict(env_config or {}), "game": game, "num_players": num_players}
    probe = DiceMultiAgentEnv(env_cfg)  # validates the game, the seats, the reward and the rule parameters
    for key, value in (
        ("snapshots", snapshots),
        ("snapshot_every", snapshot_every),
        ("num_env_runners", num_env_runners),
        ("train_batch_size", train_batch_size),
        ("iterations", iterations),
    ):
        low = 1 if key in ("snapshot_every", "train_batch_size", "iterations") else 0
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ConfigError(f"{key} must be an integer >= {low}, got {value!r}")
    if isinstance(minibatch_size, numbers.Integral) and minibatch_size > train_batch_size:
        raise ConfigError(
            f"minibatch_size ({minibatch_size}) must not exceed train_batch_size ({train_batch_size})"
        )
    players = probe.num_players
    if snapshots and players < 2:
        raise ConfigError(
            f"snapshots need num_players >= 2 (a solitaire game has no opponents), got {players}"
        )
    specs = list(dict.fromkeys(str(s) for s in opponents)) if players > 1 else []
    overrides = {k: v for k, v in env_cfg.items() if k not in (*ENV_SETTINGS, "game", "num_players")}
    n_envs = max(1, num_env_runners)  # one env per runner; 0 runners: one in the driver
    values: dict[str, Any] = {
        "name": name,
        "game": game,
        "rules": probe.rules.to_dict() if "rules" in env_cfg else overrides,
        "num_players": players,
        "reward": probe.aec.reward_mode,
        "opponents": specs,
        "seat": learner_seat,
        "n_envs": n_envs,
        "total_timesteps": iterations * train_batch_size,
        "seed": seed,
        "learning_rate": lr,
        "n_steps": math.ceil(train_batch_size / n_envs),
        "batch_size": minibatch_size,
        "n_epochs": num_epochs,
        "gamma": gamma,
        "gae_lambda": lambda_,
        "ent_coef": entropy_coeff,
        "net_arch": list(net_arch),
        "activation": activation,
        "self_play": bool(snapshots),
    }
    if snapshots:  # the opponent of a seat is drawn uniformly from the built-ins and the snapshots
        values.update(
            snapshot_freq=snapshot_every * train_batch_size,
            pool_size=snapshots,
            pool_builtin=specs,
            pool_builtin_prob=len(specs) / (len(specs) + snapshots),
            pool_latest_prob=0.0,  # no extra weight on the newest: uniform over the snapshots
        )
    cfg = TrainConfig.from_dict(values)
    check_agent_specs(cfg)  # the native trainer's check: an unknown spec is refused naming the known ones
    for spec in specs:
        if spec.strip().lower() == "human":
            raise ConfigError("agent spec 'human' cannot play on Ray workers (no terminal); choose another")
        check_fit(spec, probe.rules, players)  # a model of another game or seats: refused here
    return cfg


def ppo_config(
    game: str, num_players: int = 2, env_config: Mapping[str, Any] | None = None, **settings: Any
) -> Any:
    """A PPO ``AlgorithmConfig`` (RLlib new API stack) training :data:`LEARNER` on ``game``.

    ``settings`` are :func:`train_config`'s (its defaults apply): ``env_config``, more
    :class:`~agents.ray.rllib.env.DiceMultiAgentEnv` settings (rule parameters, ``reward``,
    ``illegal_action``); ``opponents``, built-in agent specs (:func:`agents.load`) for the other
    seats, plus ``snapshots`` frozen copies of the learner refreshed every ``snapshot_every``
    iterations (a solitaire game, ``num_players=1``, needs none); ``num_env_runners``, 0 samples
    in the driver, ``n`` starts ``n`` Ray actors (any machine of the cluster). Every argument is
    checked first by :func:`train_config` (:class:`ConfigError` naming the bad value), so no
    worker starts on a bad one.
    """
    run = train_config(game, num_players, env_config, **settings)
    bound = inspect.signature(train_config).bind(game, num_players, env_config, **settings)
    bound.apply_defaults()
    a = bound.arguments  # every setting, given or default; the checked ones from ``run``
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    env_cfg = {**dict(env_config or {}), "game": game, "num_players": run.num_players}
    probe = DiceMultiAgentEnv(env_cfg)
    module_spec = functools.partial(
        RLModuleSpec,
        observation_space=probe.observation_spaces["player_0"],
        action_space=probe.action_spaces["player_0"],
    )
    model = {"net_arch": run.net_arch, "activation": run.activation}
    specs: dict[str, Any] = {LEARNER: module_spec(module_class=MaskedPPOModule, model_config=model)}
    shared = {"game": game, "rules": probe.rules.to_dict(), "num_players": run.num_players}
    for i, spec in enumerate(run.opponents):  # none in a solitaire game
        agent = {**shared, "spec": spec, "seed": run.seed + 1 + i}
        specs[agent_module_id(spec, i)] = module_spec(module_class=AgentModule, model_config=agent)
    builtin_ids = list(specs)[1:]
    snapshots = snapshot_ids(run.pool_size if run.self_play else 0)
    for sid in snapshots:
        specs[sid] = module_spec(module_class=MaskedPPOModule, model_config=model)
    pool = None
    if snapshots:  # the trainers' pool; its members: the snapshot modules' ids
        pool = SelfPlayPool[str](run.pool_size, run.pool_builtin_prob, run.pool_latest_prob)
    cfg = (
        PPOConfig()
        # RLlib's env checker steps a random action: with illegal_action="raise" that must raise.
        .environment(
            DiceMultiAgentEnv,
            env_config=env_cfg,
            disable_env_checking=env_cfg.get("illegal_action") == "raise",
        )
        .env_runners(num_env_runners=int(a["num_env_runners"]), num_envs_per_env_runner=1)
        .multi_agent(
            policies=set(specs),
            policy_mapping_fn=SelfPlayMapping(run.num_players, builtin_ids, pool, run.seat),
            policies_to_train=[LEARNER],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            train_batch_size_per_learner=int(a["train_batch_size"]),
            minibatch_size=run.batch_size,
            num_epochs=run.n_epochs,
            lr=run.learning_rate,
            gamma=run.gamma,
            lambda_=run.gae_lambda,
            entropy_coeff=run.ent_coef,
        )
        .debugging(seed=run.seed)
    )
    if snapshots:
        cfg = cfg.callbacks(
            functools.partial(SnapshotCallback, snapshot_ids=snapshots, snapshot_every=a["snapshot_every"])
        )
    return cfg
