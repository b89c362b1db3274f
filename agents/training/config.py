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
dice_envs.rules.config.ConfigError: unknown training config key 'learning_rte' (did you mean 'learning_rate...
>>> cfg.with_overrides(["n_envs=128", "net_arch=[32, 32]"]).net_arch
[32, 32]
"""

# ruff: noqa: RUF009  (knob returns dataclasses.field(...), which ruff cannot see through)
from __future__ import annotations

import dataclasses
import math
import numbers
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from agents.models.activations import ACTIVATION_NAMES
from agents.registry import AgentSpec
from dice_envs.options import REWARD_MODES
from dice_envs.rules import GAMES, ConfigError, RuleConfig, make_rules
from dice_envs.rules.config import did_you_mean

__all__ = [
    "AGENT_LIST_KEYS",
    "DEFAULT_EXPERT",
    "REMOVED_KEYS",
    "RunConfig",
    "TrainConfig",
    "knob",
    "load_config",
]

#: Expert imitated by the behaviour-cloning warm start when ``bc_expert`` is empty.
DEFAULT_EXPERT: dict[str, str] = {
    "spiffel": "optimal",
    "dice_poker": "optimal",
    "yahtzee": "optimal",
    "farkle": "max-expected",
}

#: The config keys that hold lists of agent specs (``bc_expert`` and ``init_model`` hold one each).
AGENT_LIST_KEYS = ("opponents", "pool_builtin", "final_eval_opponents")
#: Keys of earlier versions, refused by name: each with the value every run had before the key
#: existed (a resumed run's ``config.json`` may still hold it) and why it went.
REMOVED_KEYS: dict[str, tuple[Any, str]] = {
    "precision": ("float32", "the trainer trains in float32 only"),
}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def knob(
    default: Any, doc: str, within: tuple[int, int] | str | None = None, choices: Sequence[Any] = ()
) -> Any:
    """A config field: its default, what it sets and the values it takes. ``within`` is an integer
    range ``(low, high)``, both ends included, or a real interval written as the error prints it,
    e.g. ``"(0, 1]"`` (null is allowed where the default is null); ``choices`` lists the allowed values.
    A field whose default is true or false must stay a bool."""
    meta = {"doc": doc, "within": within, "choices": tuple(choices)}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    return field(default=default, metadata=meta)


def _is_integer_in(value: Any, low: int, high: int) -> bool:
    """Whether ``value`` is an integer (not a bool) in ``[low, high]``."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and low <= value <= high


def _in_interval(value: Any, interval: str) -> bool:
    """Whether ``value`` is a finite real number in ``interval`` (``"[low, high]"`` or ``"(low, high]"``)."""
    low, high = (float(end) for end in interval[1:-1].split(","))
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
        return False
    return (low <= value if interval[0] == "[" else low < value) and value <= high


@dataclass
class RunConfig:
    """What the config of every trainer shares: the knobs below, strict keys, loading from a YAML
    recipe and ``key=value`` overrides. :class:`TrainConfig` (``ppo``, ``sb3``) and
    :class:`agents.training.search.config.SearchConfig` (``search``) add their own."""

    #: How errors name the config ("unknown training config key ...").
    KIND: ClassVar[str] = "training"
    #: Keys that may differ when a run is resumed (the others must equal the run's config.json).
    RESUMABLE: ClassVar[tuple[str, ...]] = ()

    name: str = knob("run", "run name; the default output folder is runs/<name>")
    game: str = knob("spiffel", "the game played", choices=GAMES)
    rules: dict = knob({}, "rule parameters (RuleConfig fields); empty = RULES.md defaults")
    num_players: int = knob(1, "seats at the table; the learner takes one, opponents the rest", within=(1, 8))
    reward: str = knob(
        "score",
        "score: points (ppo, sb3: gained per step); win: the chance to win (+1/-1/0 at the end)",
        choices=REWARD_MODES,
    )
    trainer: str = knob(
        "ppo",
        "ppo: agents.training.ppo on the native vector env | sb3: sb3-contrib MaskablePPO | search: "
        "the search learner (agents.training.search.learner, SearchConfig's keys)",
        choices=("ppo", "sb3"),
    )
    seed: int = knob(0, "seeds the model, the dice and the opponents", within=(0, 2**63 - 1))
    torch_threads: int = knob(
        1,
        "torch CPU threads (fixed: the same seed on the same machine trains the same model, however "
        "busy the machine is; another count rounds the products differently, another model)",
        within=(1, 4096),
    )
    progress_bar: bool = knob(True, "show a progress bar (tqdm)")

    # ------------------------------------------------------------------ construction
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Every allowed key, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None = None, **overrides: Any) -> Any:
        """A validated config from a mapping; unknown keys raise :class:`ConfigError`."""
        merged = dict(values or {})
        merged.update(overrides)
        allowed = cls.field_names()
        for key in merged:
            if key in REMOVED_KEYS:
                raise ConfigError(
                    f"{cls.KIND} config key {key!r} was removed ({REMOVED_KEYS[key][1]}); "
                    "delete it from the config"
                )
            if key not in allowed:
                raise ConfigError(
                    f"unknown {cls.KIND} config key {key!r}{did_you_mean(key, allowed)}; "
                    f"allowed: {', '.join(allowed)}"
                )
        if merged.get("rules", {}) is None:
            merged["rules"] = {}
        cfg = cls(**merged)
        cfg.validate()
        return cfg

    @classmethod
    def from_yaml(cls, path: str | Path) -> Any:
        """Load a recipe: a file, or a shipped recipe named from any directory
        (:func:`agents.training.recipes.read_recipe`)."""
        from agents.training.recipes import find_config, read_recipe

        data = read_recipe(path)
        path = find_config(path, "train")
        try:
            return cls.from_dict(data)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None

    def with_overrides(self, assignments: Sequence[str] = (), **values: Any) -> Any:
        """A copy with ``key=value`` strings (values parsed as YAML) and keyword values applied."""
        import yaml

        from dice_envs.rules.config import yaml_value

        data = self.to_dict()
        for text in assignments:
            if "=" not in text:
                raise ConfigError(f"override {text!r} must look like key=value")
            key, raw = text.split("=", 1)
            try:
                data[key.strip()] = yaml_value(raw) if raw.strip() else ""
            except yaml.YAMLError:
                raise ConfigError(f"override {text!r}: the value is not valid YAML") from None
        data.update({k: v for k, v in values.items() if v is not None})
        return type(self).from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON/YAML-friendly dict of every field."""
        return dataclasses.asdict(self)

    def rule_config(self) -> RuleConfig:
        """The validated rules of the game."""
        return make_rules(self.game, **self.rules)

    def spec_lists(self) -> dict[str, list[str]]:
        """The agent specs the run plays with, by the key that names them."""
        return {}

    @cached_property
    def agent_specs(self) -> dict[str, AgentSpec]:
        """Every spec of :meth:`spec_lists` resolved once for the run's rules, by spec
        (:func:`agents.registry.resolve_specs`): the trainer builds its agents from these."""
        from agents.registry import resolve_specs

        return resolve_specs(self.spec_lists(), self.rule_config())

    def _check_knobs(self) -> None:
        """The checks every config makes: a plain run name, rule parameters the game takes, and every
        field within the values its :func:`knob` declares."""
        if not isinstance(self.name, str) or not _NAME.match(self.name) or ".." in self.name:
            raise ConfigError(
                f"config 'name' must be a plain run name (letters, digits, '.', '_', '-'; no path "
                f"separators or '..'), got {self.name!r}"
            )
        if not isinstance(self.rules, dict):
            raise ConfigError(f"config 'rules' must be a mapping of rule parameters, got {self.rules!r}")
        self.rule_config()  # validates the rule parameters themselves
        for f in dataclasses.fields(self):
            key, value, within, choices = (
                f.name,
                getattr(self, f.name),
                f.metadata["within"],
                f.metadata["choices"],
            )
            if choices and value not in choices:
                raise ConfigError(
                    f"config {key!r} must be one of {', '.join(map(str, choices))}, got {value!r}"
                )
            if isinstance(f.default, bool) and not isinstance(value, bool):
                raise ConfigError(f"config {key!r} must be true or false, got {value!r}")
            if isinstance(within, tuple) and not _is_integer_in(value, *within):
                raise ConfigError(
                    f"config {key!r} must be an integer in [{within[0]}, {within[1]}], got {value!r}"
                )
            nullable = f.default is None
            if (
                isinstance(within, str)
                and not (value is None and nullable)
                and not _in_interval(value, within)
            ):
                null = " or null" if nullable else ""
                raise ConfigError(f"config {key!r} must be a number in {within}{null}, got {value!r}")

    def _check_layers(self, key: str, widest: int) -> None:
        """``key`` is a non-empty list of hidden-layer widths in [1, ``widest``]."""
        value = getattr(self, key)
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(h, int) and not isinstance(h, bool) and 0 < h <= widest for h in value)
        ):
            raise ConfigError(
                f"config {key!r} must be a non-empty list of layer sizes in [1, {widest}], e.g. [256, 256], "
                f"got {value!r}"
            )

    def _check_spec_lists(self, keys: Sequence[str]) -> None:
        """Each of ``keys`` is a list of agent spec strings."""
        for key in keys:
            value = getattr(self, key)
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise ConfigError(f"config {key!r} must be a list of agent spec strings, got {value!r}")


@dataclass
class TrainConfig(RunConfig):
    """All hyper-parameters of a MaskablePPO run (one flat namespace, every field documented)."""

    RESUMABLE = ("total_timesteps", "progress_bar", "tensorboard", "verbose", "device", "torch_threads")

    # --- what is trained -------------------------------------------------------------------
    reward_scale: float = knob(
        1.0, "training rewards are multiplied by this (evaluation is unscaled)", within="(0, 1e6]"
    )
    reward_shaping: float = knob(
        0.0,
        "ppo, Farkle with reward win: potential-based shaping, c in phi = c x (own banked + turn total - "
        "best other banked) / target, paid as gamma x phi(next) - phi(now) with phi = 0 at the end, so "
        "the best policy is unchanged (Ng, Harada & Russell 1999); 0 = off",
        within="[0, 1000]",
    )
    opponents: list = knob(["random"], "agent specs of the other seats (cycled) when self_play is off")
    seat: int | None = knob(None, "learner's seat; null = random per episode")

    # --- environment -----------------------------------------------------------------------
    n_envs: int = knob(
        1024,
        "games stepped at once (ppo: thousands, one forward pass per step; sb3: envs)",
        within=(1, 1 << 20),
    )
    vec_env: str = knob(
        "auto",
        "sb3 trainer only (auto: native if importable, else subproc)",
        choices=("auto", "native", "subproc", "dummy"),
    )

    # --- run ---------------------------------------------------------------------------------
    total_timesteps: int = knob(
        100_000,
        "environment steps of the learner (over all envs), rounded up to whole rollouts of "
        "n_envs x n_steps (the trainer says so when it rounds)",
        within=(1, 1 << 50),
    )
    device: str = knob("auto", "auto: cuda when available", choices=("auto", "cpu", "cuda"))
    tensorboard: bool = knob(True, "write TensorBoard logs to <out>/tb")
    verbose: int = knob(0, "0: quiet, 1: a line per evaluation (sb3: SB3 verbosity 0, 1, 2)", within=(0, 2))

    # --- PPO (both trainers) ------------------------------------------------------------------
    learning_rate: float = knob(3e-4, "Adam step size at the start", within="(0, 1]")
    lr_schedule: str = knob(
        "constant", "from learning_rate to lr_final", choices=("constant", "linear", "cosine")
    )
    lr_final: float = knob(
        0.0, "learning rate at the end of a linear / cosine schedule (ppo)", within="[0, 1]"
    )
    adam_eps: float = knob(1e-5, "Adam epsilon (ppo)", within="(0, 1]")
    n_steps: int = knob(
        64, "rollout length per env per update (rollout = n_envs x n_steps samples)", within=(1, 1 << 20)
    )
    batch_size: int = knob(4096, "minibatch size (samples per gradient step)", within=(1, 1 << 24))
    n_epochs: int = knob(4, "passes over each rollout", within=(1, 1000))
    gamma: float = knob(1.0, "discount factor", within="[0, 1]")
    gae_lambda: float = knob(0.95, "GAE lambda", within="[0, 1]")
    clip_range: float = knob(0.2, "PPO clipping of the probability ratio", within="(0, 10]")
    clip_range_vf: float | None = knob(
        None, "clipping of the value change per update (null = unclipped)", within="(0, 1e6]"
    )
    normalize_advantage: bool = knob(True, "normalise advantages per minibatch (ppo)")
    ent_coef: float = knob(0.0, "entropy bonus at the start", within="[0, 10]")
    ent_coef_final: float | None = knob(
        None, "entropy bonus at the end, linear in progress (null = constant)", within="[0, 10]"
    )
    vf_coef: float = knob(0.5, "value-loss weight", within="[0, 1000]")
    max_grad_norm: float = knob(0.5, "gradient clipping", within="(0, 1e6]")
    target_kl: float | None = knob(
        None, "early stop of an update's epochs at this KL (null = off)", within="(0, 1000]"
    )
    net_arch: list = knob([256, 256], "hidden layers of the policy and value networks (separate nets)")
    activation: str = knob("tanh", "hidden-layer activation", choices=ACTIVATION_NAMES)
    policy_head: str = knob(
        "flat",
        "flat (one Linear to the logits) | afterstate (Farkle, ppo: one shared network scores each "
        "action by the points it sets aside and the dice thrown next; agents.models.afterstate)",
        choices=("flat", "afterstate"),
    )
    head_width: int = knob(
        64, "hidden units of the afterstate head's shared action scorer", within=(1, 65536)
    )

    # --- evaluation and checkpoints ----------------------------------------------------------
    eval_freq: int = knob(
        20_000,
        "periodic evaluation every this many env steps (0 = none; the final table runs either way)",
        within=(0, 1 << 50),
    )
    eval_episodes: int = knob(50, "episodes per periodic evaluation", within=(1, 1 << 24))
    checkpoint_freq: int = knob(
        50_000,
        "save a checkpoint every this many env steps and at the end (0 = only at the end)",
        within=(0, 1 << 50),
    )
    final_eval_games: int = knob(
        200, "games per opponent in the table printed at the end", within=(0, 1 << 24)
    )
    final_eval_opponents: list = knob(
        ["random", "greedy", "heuristic"], "built-in agents of the final table (and solitaire figures)"
    )

    # --- self-play ---------------------------------------------------------------------------
    self_play: bool = knob(False, "opponents drawn per episode from a pool of snapshots + built-ins")
    snapshot_freq: int = knob(
        20_000, "add a frozen copy of the learner to the pool every N steps", within=(0, 1 << 50)
    )
    pool_size: int = knob(5, "newest snapshots kept in the pool", within=(1, 10_000))
    pool_builtin: list = knob(["heuristic"], "built-in agent specs in the pool")
    pool_builtin_prob: float = knob(
        0.5, "chance that an episode's opponent is a built-in agent", within="[0, 1]"
    )
    pool_latest_prob: float = knob(
        0.5, "chance that a snapshot opponent is the newest snapshot", within="[0, 1]"
    )
    snapshot_deterministic: bool = knob(False, "snapshots act by masked argmax (else they sample)")

    # --- warm start: behaviour cloning of an expert -------------------------------------------
    warm_start: str = knob(
        "none",
        "none | bc (behaviour cloning of bc_expert before PPO) | model (start from init_model's weights)",
        choices=("none", "bc", "model"),
    )
    init_model: str = knob(
        "",
        "warm_start: model: the model whose weights start the run (a .zip with its card, or "
        "pretrained:<name>); same game, rules, seats and network as this config",
    )
    bc_expert: str = knob("", "expert agent spec; empty = optimal (scorecard) / max-expected (farkle)")
    bc_samples: int = knob(50_000, "expert decisions collected for behaviour cloning", within=(1, 1 << 30))
    bc_epochs: int = knob(10, "passes over the behaviour-cloning data", within=(1, 10_000))
    bc_batch_size: int = knob(256, "behaviour-cloning minibatch", within=(1, 1 << 24))
    bc_learning_rate: float = knob(1e-3, "behaviour-cloning Adam step size", within="(0, 1]")
    bc_value_coef: float = knob(
        0.5, "weight of the value regression on the expert's returns", within="[0, 1000]"
    )
    bc_dagger_rounds: int = knob(
        0, "DAgger rounds after BC: the policy plays, the expert labels, refit", within=(0, 1000)
    )
    bc_dagger_samples: int = knob(
        20_000, "decisions played by the policy per DAgger round", within=(0, 1 << 30)
    )

    # ------------------------------------------------------------------ validation
    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first bad value and what is allowed."""
        if self.torch_threads == 0 and not isinstance(self.torch_threads, bool):
            raise ConfigError(
                "config 'torch_threads' must be an integer in [1, 4096], got 0: a count measured for "
                "the machine (0) was removed, as a busy machine trained another model; give a fixed count"
            )
        self._check_knobs()
        if self.lr_schedule != "constant" and self.lr_final > self.learning_rate:
            raise ConfigError(
                f"config 'lr_final' ({self.lr_final}) must not exceed 'learning_rate' ({self.learning_rate})"
            )
        self._check_layers("net_arch", 65536)
        self._check_spec_lists(AGENT_LIST_KEYS)
        if not isinstance(self.bc_expert, str):
            raise ConfigError(f"config 'bc_expert' must be an agent spec string, got {self.bc_expert!r}")
        if self.seat is not None and not _is_integer_in(self.seat, 0, self.num_players - 1):
            raise ConfigError(
                f"config 'seat' must be null or an integer in [0, {self.num_players - 1}], got {self.seat!r}"
            )
        if self.trainer == "ppo" and self.batch_size > self.n_envs * self.n_steps:
            raise ConfigError(
                f"config 'batch_size' ({self.batch_size}) must not exceed the rollout size n_envs x n_steps "
                f"({self.n_envs} x {self.n_steps} = {self.n_envs * self.n_steps})"
            )
        if self.policy_head == "afterstate" and (self.game != "farkle" or self.trainer != "ppo"):
            raise ConfigError(
                "config 'policy_head' afterstate needs game: farkle and trainer: ppo (it reads Farkle "
                f"throws); got game {self.game!r}, trainer {self.trainer!r}"
            )
        if not isinstance(self.init_model, str):
            raise ConfigError(
                f"config 'init_model' must be a model path or pretrained:<name>, got {self.init_model!r}"
            )
        if (self.warm_start == "model") != bool(self.init_model.strip()):
            raise ConfigError(
                "config 'init_model' and 'warm_start: model' go together: "
                + (
                    "warm_start: model needs init_model (a model .zip or pretrained:<name>)"
                    if self.warm_start == "model"
                    else f"init_model is set but warm_start is {self.warm_start!r}; set warm_start: model"
                )
            )
        if self.num_players > 1 and not self.self_play and not self.opponents:
            raise ConfigError("config 'opponents' must name at least one agent spec when num_players > 1")
        if self.reward == "win" and self.num_players < 2:
            raise ConfigError("config 'reward' win needs num_players >= 2; use reward: score in solitaire")
        if self.reward_shaping and (self.game != "farkle" or self.reward != "win" or self.trainer != "ppo"):
            raise ConfigError(
                "config 'reward_shaping' needs game: farkle, reward: win and trainer: ppo (its potential is "
                f"the Farkle lead); got game {self.game!r}, reward {self.reward!r}, trainer {self.trainer!r}"
            )
        if self.self_play and self.num_players < 2:
            raise ConfigError("config 'self_play' needs num_players >= 2")
        if self.self_play and not self.pool_builtin and self.pool_builtin_prob > 0:
            raise ConfigError("config 'pool_builtin' is empty but 'pool_builtin_prob' > 0")

    # ------------------------------------------------------------------ derived values
    def planned_timesteps(self, done: int = 0) -> int:
        """The steps a run that has ``done`` steps trains up to: ``total_timesteps`` rounded up to
        whole rollouts of ``n_envs x n_steps`` (a PPO update learns from a whole rollout).

        >>> TrainConfig.from_dict({"total_timesteps": 8192, "n_envs": 512, "n_steps": 32}).planned_timesteps()
        16384
        """
        rollout = self.n_envs * self.n_steps
        return done + max(0, -(-(self.total_timesteps - done) // rollout)) * rollout

    @property
    def expert_spec(self) -> str:
        """The agent spec imitated by the BC warm start."""
        return self.bc_expert or DEFAULT_EXPERT[self.game]

    def eval_opponents(self) -> list[str]:
        """The agent specs of the other seats, cycled: ``opponents``, or under self-play (which trains
        against the pool) the pool's built-ins."""
        specs = (self.pool_builtin or ["heuristic"]) if self.self_play else self.opponents
        return [specs[i % len(specs)] for i in range(self.num_players - 1)]

    def spec_lists(self) -> dict[str, list[str]]:
        """The agent lists (:data:`AGENT_LIST_KEYS`), the BC expert and the evaluation opponents."""
        lists = {key: getattr(self, key) for key in AGENT_LIST_KEYS}
        return {**lists, "bc_expert": [self.expert_spec], "eval_opponents": self.eval_opponents()}


def load_config(path: str | Path | None = None, overrides: Sequence[str] = (), **values: Any) -> TrainConfig:
    """Config from a YAML file (or the defaults), then ``key=value`` overrides and keyword values."""
    base = TrainConfig.from_yaml(path) if path is not None else TrainConfig.from_dict({})
    return base.with_overrides(overrides, **values)
