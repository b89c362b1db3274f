"""Every knob of a training run in one dataclass (CleanRL style), loaded from YAML.

A config file is a flat mapping of :class:`TrainConfig` fields; anything else is rejected with an
error that names the bad key and the allowed ones. Command-line ``--set key=value`` overrides
go through the same check (values are parsed as YAML, so ``--set net_arch=[64,64]`` works).

>>> cfg = TrainConfig.from_dict({"game": "spiffel", "total_timesteps": 1000})
>>> cfg.total_timesteps, cfg.num_players
(1000, 1)
>>> TrainConfig.from_dict({"learning_rte": 0.1})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dice_envs.rules.config.ConfigError: unknown training config key 'learning_rte'; allowed: ...
>>> cfg.with_overrides(["n_envs=4", "net_arch=[32, 32]"]).net_arch
[32, 32]
"""

# ruff: noqa: RUF009  (_knob returns dataclasses.field(...), which ruff cannot see through)
from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dice_envs.rules import GAMES, ConfigError, RuleConfig, make_rules

__all__ = ["DEFAULT_EXPERT", "GYM_IDS", "TrainConfig", "load_config"]

#: Registered Gymnasium id of each game.
GYM_IDS: dict[str, str] = {
    "spiffel": "dice_envs/Spiffel-v0",
    "dice_poker": "dice_envs/DicePoker-v0",
    "yahtzee": "dice_envs/Yahtzee-v0",
    "farkle": "dice_envs/Farkle-v0",
}
#: Expert imitated by the behaviour-cloning warm start when ``bc_expert`` is empty.
DEFAULT_EXPERT: dict[str, str] = {
    "spiffel": "optimal",
    "dice_poker": "optimal",
    "yahtzee": "optimal",
    "farkle": "max-expected",
}

_CHOICES: dict[str, tuple[Any, ...]] = {
    "reward": ("score", "win"),
    "vec_env": ("auto", "native", "subproc", "dummy"),
    "device": ("auto", "cpu", "cuda"),
    "activation": ("tanh", "relu"),
    "warm_start": ("none", "bc"),
}


def _knob(default: Any, doc: str) -> Any:
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata={"doc": doc})
    return field(default=default, metadata={"doc": doc})


@dataclass
class TrainConfig:
    """All hyper-parameters of a MaskablePPO run (one flat namespace, every field documented)."""

    # --- what is trained -------------------------------------------------------------------
    name: str = _knob("run", "run name; the default output folder is runs/<name>")
    game: str = _knob("spiffel", "spiffel | dice_poker | yahtzee | farkle")
    rules: dict = _knob({}, "rule parameters (RuleConfig fields); empty = RULES.md defaults")
    num_players: int = _knob(1, "seats at the table; the learner takes one, opponents the rest")
    reward: str = _knob("score", "score: points gained per step; win: +1/-1/0 at the end")
    reward_scale: float = _knob(1.0, "training rewards are multiplied by this (evaluation is unscaled)")
    opponents: list = _knob(["random"], "agent specs of the other seats (cycled) when self_play is off")
    seat: int | None = _knob(None, "learner's seat; null = random per episode")

    # --- environment -----------------------------------------------------------------------
    n_envs: int = _knob(4, "parallel environments")
    vec_env: str = _knob("auto", "auto (native if importable, else subproc) | native | subproc | dummy")

    # --- run ---------------------------------------------------------------------------------
    total_timesteps: int = _knob(100_000, "environment steps of the learner (over all envs)")
    seed: int = _knob(0, "seeds the model, the envs and the opponents")
    device: str = _knob("auto", "auto | cpu | cuda")
    torch_threads: int = _knob(1, "torch CPU threads (0 = torch default)")
    progress_bar: bool = _knob(True, "show a progress bar (tqdm + rich)")
    tensorboard: bool = _knob(True, "write TensorBoard logs to <out>/tb")
    verbose: int = _knob(0, "SB3 verbosity (0, 1, 2)")

    # --- MaskablePPO -------------------------------------------------------------------------
    learning_rate: float = _knob(3e-4, "Adam step size")
    lr_schedule: str = _knob("constant", "constant | linear (decays to 0 at total_timesteps)")
    n_steps: int = _knob(512, "rollout length per env per update")
    batch_size: int = _knob(256, "minibatch size")
    n_epochs: int = _knob(10, "passes over each rollout")
    gamma: float = _knob(1.0, "discount factor")
    gae_lambda: float = _knob(0.95, "GAE lambda")
    clip_range: float = _knob(0.2, "PPO clipping")
    ent_coef: float = _knob(0.0, "entropy bonus")
    vf_coef: float = _knob(0.5, "value-loss weight")
    max_grad_norm: float = _knob(0.5, "gradient clipping")
    target_kl: float | None = _knob(None, "early stop of an update's epochs at this KL (null = off)")
    net_arch: list = _knob([256, 256], "hidden layers of the policy and value networks")
    activation: str = _knob("tanh", "tanh | relu")

    # --- evaluation and checkpoints ----------------------------------------------------------
    eval_freq: int = _knob(20_000, "evaluate every this many env steps (0 = never)")
    eval_episodes: int = _knob(50, "episodes per periodic evaluation")
    checkpoint_freq: int = _knob(50_000, "save a checkpoint every this many env steps (0 = only at the end)")
    final_eval_games: int = _knob(200, "games per opponent in the table printed at the end")
    final_eval_opponents: list = _knob(
        ["random", "greedy", "heuristic"], "built-in agents of the final table (and solitaire figures)"
    )

    # --- self-play ---------------------------------------------------------------------------
    self_play: bool = _knob(False, "opponents drawn per episode from a pool of snapshots + built-ins")
    snapshot_freq: int = _knob(20_000, "add a frozen copy of the learner to the pool every N steps")
    pool_size: int = _knob(5, "newest snapshots kept in the pool")
    pool_builtin: list = _knob(["heuristic"], "built-in agent specs in the pool")
    pool_builtin_prob: float = _knob(0.5, "chance that an episode's opponent is a built-in agent")
    pool_latest_prob: float = _knob(0.5, "chance that a snapshot opponent is the newest snapshot")
    snapshot_deterministic: bool = _knob(False, "snapshots act by masked argmax (else they sample)")

    # --- warm start: behaviour cloning of an expert -------------------------------------------
    warm_start: str = _knob("none", "none | bc (behaviour cloning of bc_expert before PPO)")
    bc_expert: str = _knob("", "expert agent spec; empty = optimal (scorecard) / max-expected (farkle)")
    bc_samples: int = _knob(50_000, "expert decisions collected for behaviour cloning")
    bc_epochs: int = _knob(10, "passes over the behaviour-cloning data")
    bc_batch_size: int = _knob(256, "behaviour-cloning minibatch")
    bc_learning_rate: float = _knob(1e-3, "behaviour-cloning Adam step size")
    bc_value_coef: float = _knob(0.5, "weight of the value regression on the expert's returns")
    bc_dagger_rounds: int = _knob(0, "DAgger rounds after BC: the policy plays, the expert labels, refit")
    bc_dagger_samples: int = _knob(20_000, "decisions played by the policy per DAgger round")

    # ------------------------------------------------------------------ construction
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Every allowed key, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None = None, **overrides: Any) -> TrainConfig:
        """A validated config from a mapping; unknown keys raise :class:`ConfigError`."""
        merged = dict(values or {})
        merged.update(overrides)
        allowed = cls.field_names()
        for key in merged:
            if key not in allowed:
                raise ConfigError(f"unknown training config key {key!r}; allowed: {', '.join(allowed)}")
        cfg = cls(**merged)
        cfg.validate()
        return cfg

    @classmethod
    def from_yaml(cls, path: str | Path) -> TrainConfig:
        """Load a config file (a flat YAML mapping of fields)."""
        import yaml

        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"training config file not found: {path}")
        data = yaml.safe_load(path.read_text()) or {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of config keys, got {type(data).__name__}")
        try:
            return cls.from_dict(data)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None

    def with_overrides(self, assignments: Sequence[str] = (), **values: Any) -> TrainConfig:
        """A copy with ``key=value`` strings (values parsed as YAML) and keyword values applied."""
        import yaml

        data = self.to_dict()
        for text in assignments:
            if "=" not in text:
                raise ConfigError(f"override {text!r} must look like key=value")
            key, raw = text.split("=", 1)
            data[key.strip()] = yaml.safe_load(raw) if raw.strip() else ""
        data.update({k: v for k, v in values.items() if v is not None})
        return type(self).from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON/YAML-friendly dict of every field."""
        return dataclasses.asdict(self)

    # ------------------------------------------------------------------ validation
    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first bad value."""
        if self.game not in GAMES:
            raise ConfigError(f"config 'game' must be one of {', '.join(GAMES)}, got {self.game!r}")
        for key, allowed in _CHOICES.items():
            if getattr(self, key) not in allowed:
                names = ", ".join(map(str, allowed))
                raise ConfigError(f"config {key!r} must be one of {names}, got {getattr(self, key)!r}")
        if self.lr_schedule not in ("constant", "linear"):
            raise ConfigError(f"config 'lr_schedule' must be constant or linear, got {self.lr_schedule!r}")
        if not isinstance(self.rules, dict):
            raise ConfigError(f"config 'rules' must be a mapping of rule parameters, got {self.rules!r}")
        self.rule_config()  # validates the rule parameters themselves
        positive = (
            "num_players",
            "n_envs",
            "total_timesteps",
            "n_steps",
            "batch_size",
            "n_epochs",
            "eval_episodes",
            "pool_size",
            "bc_samples",
            "bc_epochs",
            "bc_batch_size",
        )
        for key in positive:
            value = getattr(self, key)
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"config {key!r} must be a positive integer, got {value!r}")
        for key in (
            "eval_freq",
            "checkpoint_freq",
            "final_eval_games",
            "snapshot_freq",
            "seed",
            "torch_threads",
            "verbose",
            "bc_dagger_rounds",
            "bc_dagger_samples",
        ):
            value = getattr(self, key)
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"config {key!r} must be a non-negative integer, got {value!r}")
        for key in ("pool_builtin_prob", "pool_latest_prob", "gamma", "gae_lambda"):
            value = getattr(self, key)
            if not isinstance(value, numbers.Real) or not 0.0 <= float(value) <= 1.0:
                raise ConfigError(f"config {key!r} must be a number in [0, 1], got {value!r}")
        if not self.net_arch or not all(isinstance(h, int) and h > 0 for h in self.net_arch):
            raise ConfigError(
                f"config 'net_arch' must be a list of positive layer sizes, got {self.net_arch!r}"
            )
        if self.seat is not None and not 0 <= self.seat < self.num_players:
            raise ConfigError(
                f"config 'seat' must be null or in [0, {self.num_players - 1}], got {self.seat!r}"
            )
        if self.num_players > 1 and not self.self_play and not self.opponents:
            raise ConfigError("config 'opponents' must name at least one agent spec when num_players > 1")
        if self.reward == "win" and self.num_players < 2:
            raise ConfigError("config 'reward' win needs num_players >= 2; use reward: score in solitaire")
        if self.self_play and self.num_players < 2:
            raise ConfigError("config 'self_play' needs num_players >= 2")
        if self.self_play and not self.pool_builtin and self.pool_builtin_prob > 0:
            raise ConfigError("config 'pool_builtin' is empty but 'pool_builtin_prob' > 0")

    # ------------------------------------------------------------------ derived values
    def rule_config(self) -> RuleConfig:
        """The validated rules of the game."""
        return make_rules(self.game, **self.rules)

    @property
    def gym_id(self) -> str:
        """Registered Gymnasium id of the game."""
        return GYM_IDS[self.game]

    @property
    def expert_spec(self) -> str:
        """The agent spec imitated by the BC warm start."""
        return self.bc_expert or DEFAULT_EXPERT[self.game]


def load_config(path: str | Path | None = None, overrides: Sequence[str] = (), **values: Any) -> TrainConfig:
    """Config from a YAML file (or the defaults), then ``key=value`` overrides and keyword values."""
    base = TrainConfig.from_yaml(path) if path is not None else TrainConfig.from_dict({})
    return base.with_overrides(overrides, **values)
