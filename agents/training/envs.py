"""Environment construction for training and evaluation.

The native trainer steps the native vector env itself (:func:`make_vector_env`). For the sb3
trainer ``vec_env`` picks the vectorisation: ``native`` (the same engine through its SB3
adapter), ``subproc`` (one process per env), ``dummy`` (all in this process) or ``auto`` (native
when importable, else subproc). Opponents are agent specs, or under self-play
:class:`~agents.training.selfplay.PoolOpponent` seats reading the run's pool folder (built inside
each worker, so nothing heavy is pickled).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecEnvWrapper, VecMonitor

from agents.training.config import TrainConfig
from agents.training.selfplay import SelfPlayPool, pool_opponents
from dice_envs.games import GAME_SPECS, vector_env_class

__all__ = [
    "ScaleReward",
    "backend_name",
    "env_kwargs",
    "make_env_fn",
    "make_eval_env",
    "make_train_env",
    "make_vector_env",
    "opponents_for",
]


def opponents_for(cfg: TrainConfig, pool_dir: str | Path | None, seed: int) -> list[Any]:
    """The ``opponents`` list of one sb3 training env: seats reading the pool folder (self-play)
    or agent specs."""
    if cfg.self_play:
        assert pool_dir is not None, "self-play needs a pool folder"
        pool: SelfPlayPool[Any] = SelfPlayPool(cfg.pool_size, cfg.pool_builtin_prob, cfg.pool_latest_prob)
        return pool_opponents(cfg, pool, seed, folder=pool_dir)
    return cfg.eval_opponents()


def make_vector_env(cfg: TrainConfig, opponents: list[Any], num_envs: int | None = None) -> Any:
    """The native trainer's env: ``cfg``'s game on the native vector env (same-step autoreset,
    illegal actions raise)."""
    return vector_env_class(cfg.game)(
        num_envs=num_envs or cfg.n_envs,
        rules=cfg.rule_config(),
        opponents=opponents,
        seat=cfg.seat,
        reward=cfg.reward,
        illegal_action="raise",
        autoreset_mode="same_step",
    )


def env_kwargs(cfg: TrainConfig, opponents: list[Any], seat: int | None) -> dict[str, Any]:
    """Keyword arguments of ``gym.make`` for the game of ``cfg``."""
    return {**cfg.rules, "opponents": opponents, "seat": seat, "reward": cfg.reward}


def make_env_fn(
    cfg: TrainConfig,
    rank: int,
    pool_dir: str | Path | None = None,
    opponents: list[Any] | None = None,
    seat: int | str | None = "config",
) -> Callable[[], gym.Env]:
    """A picklable thunk building env ``rank`` (opponents are built inside the worker)."""

    def thunk() -> gym.Env:
        opp = opponents if opponents is not None else opponents_for(cfg, pool_dir, cfg.seed + rank)
        env_seat = cfg.seat if seat == "config" else seat
        return gym.make(GAME_SPECS[cfg.game].env_id, **env_kwargs(cfg, opp, env_seat))  # type: ignore[arg-type]

    return thunk


class ScaleReward(VecEnvWrapper):
    """Multiplies rewards by a constant (after monitoring, so logged episode returns stay raw)."""

    def __init__(self, venv: VecEnv, scale: float) -> None:
        super().__init__(venv)
        self.scale = float(scale)

    def reset(self) -> Any:
        return self.venv.reset()

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        return obs, rewards * self.scale, dones, infos


def make_train_env(cfg: TrainConfig, pool_dir: str | Path | None, monitor_file: str | None = None) -> VecEnv:
    """The training vector env: chosen backend → ``VecMonitor`` → reward scaling.

    The native vector env's SB3 adapter acts its opponents batched over all games; under
    self-play each game draws its pool member per episode (the env's ``start_episodes`` hook).
    """
    venv: VecEnv | None = None
    kind = cfg.vec_env
    if kind in ("auto", "native"):
        try:
            from dice_envs.vector.sb3 import SB3VecEnv
        except ImportError:
            if kind == "native":
                raise RuntimeError(
                    "vec_env 'native' was asked for, but dice_envs.vector.sb3 is not importable; "
                    "use vec_env: subproc or dummy"
                ) from None
            kind = "subproc" if cfg.n_envs > 1 else "dummy"
        else:
            opp = opponents_for(cfg, pool_dir, cfg.seed)
            venv = SB3VecEnv(cfg.game, num_envs=cfg.n_envs, **env_kwargs(cfg, opp, cfg.seat))
    if venv is None:
        fns = [make_env_fn(cfg, i, pool_dir) for i in range(cfg.n_envs)]
        venv = SubprocVecEnv(fns) if kind == "subproc" else DummyVecEnv(fns)
    return ScaleReward(VecMonitor(venv, filename=monitor_file), cfg.reward_scale)


def backend_name(venv: VecEnv) -> str:
    """Short name of the vectorisation under any wrappers."""
    inner = venv
    while isinstance(inner, VecEnvWrapper):
        inner = inner.venv
    return {"SubprocVecEnv": "subproc", "DummyVecEnv": "dummy"}.get(type(inner).__name__, "native")


def make_eval_env(cfg: TrainConfig) -> VecEnv:
    """The periodic-evaluation env: one unscaled env, random seat, fixed opponents."""
    fn = make_env_fn(cfg, 10_000, opponents=cfg.eval_opponents(), seat=None)
    venv = DummyVecEnv([fn])
    venv.seed(cfg.seed + 10_000)
    # same wrapper types as the training env (SB3's eval callback checks), scale 1: raw rewards
    return ScaleReward(VecMonitor(venv), 1.0)
