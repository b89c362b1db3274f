"""Validated, frozen rule configurations.

Every rule parameter named in ``RULES.md`` is a field of a frozen dataclass with its default.
Configurations are validated where they enter: an unknown key or a bad value raises
:class:`ConfigError` naming the key and what is allowed.

>>> from dice_envs.rules.spiffel import SpiffelRules
>>> SpiffelRules().upper_bonus_threshold
63
>>> SpiffelRules.from_dict({"upper_bonus_treshold": 60})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dice_envs.rules.config.ConfigError: unknown rule parameter 'upper_bonus_treshold' for spiffel (did you ...
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

__all__ = [
    "ConfigError",
    "RuleConfig",
    "check_bool",
    "check_int",
    "check_optional_int",
    "did_you_mean",
    "is_int",
]

T = TypeVar("T", bound="RuleConfig")


class ConfigError(ValueError):
    """A rule configuration, agent spec or file that does not fit what is allowed."""


def did_you_mean(key: Any, allowed: Any) -> str:
    """`` (did you mean 'x'?)`` naming the allowed name closest to a mistyped ``key``, or ``""``.

    >>> did_you_mean("n_env", ["n_envs", "n_steps"]), did_you_mean("zzz", ["n_envs"])
    (" (did you mean 'n_envs'?)", '')
    """
    import difflib

    close = difflib.get_close_matches(str(key), [str(a) for a in allowed], n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def is_int(value: Any) -> bool:
    """Whether ``value`` is exactly an integer: a Python int or a numpy integer, not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(name: str, value: Any, lo: int, hi: int, what: str = "rule parameter") -> None:
    """Raise :class:`ConfigError` unless ``lo <= value <= hi`` and ``value`` is an int.

    The message calls ``name`` a ``what`` (``what=""``: the bare name, for a size such as
    ``num_envs`` that is not a rule parameter).
    """
    if not is_int(value) or not lo <= int(value) <= hi:
        label = f"{what} {name!r}" if what else name
        raise ConfigError(f"{label} must be an integer in [{lo}, {hi}], got {value!r}")


def check_optional_int(name: str, value: Any, lo: int, hi: int) -> None:
    """Like :func:`check_int`, but ``None`` (meaning *unlimited*) is allowed too."""
    if value is not None and (not is_int(value) or not lo <= int(value) <= hi):
        raise ConfigError(
            f"rule parameter {name!r} must be None (unlimited) or an integer in [{lo}, {hi}], got {value!r}"
        )


def check_bool(name: str, value: Any, what: str = "rule parameter") -> bool:
    """``value`` as a ``bool``; :class:`ConfigError` unless it is one (a numpy bool counts).

    The message calls ``name`` a ``what`` (``what=""``: the bare name, for a function's argument
    such as ``joker``): a truthy ``"no"`` or ``1`` is refused, not read as true.
    """
    if not isinstance(value, (bool, np.bool_)):
        label = f"{what} {name!r}" if what else name
        raise ConfigError(f"{label} must be true or false, got {value!r}")
    return bool(value)


@dataclasses.dataclass(frozen=True)
class RuleConfig:
    """Base class of the per-game rule configurations (frozen, validated, hashable)."""

    game: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # numpy scalars count as the plain values they hold
            value = getattr(self, f.name)
            if isinstance(value, np.bool_):
                object.__setattr__(self, f.name, bool(value))
            elif isinstance(value, np.integer):
                object.__setattr__(self, f.name, int(value))
        self.validate()

    def validate(self) -> None:  # pragma: no cover - overridden by every game
        """Check every field; raise :class:`ConfigError` on a bad value."""

    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        """The names of the rule parameters, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls: type[T], values: Mapping[str, Any] | None = None, **overrides: Any) -> T:
        """Build a configuration from a mapping (plus keyword overrides), rejecting unknown keys."""
        if values is not None and not isinstance(values, Mapping):
            raise ConfigError(
                f"rule parameters of {cls.game} must be a mapping of names to values, got {values!r:.80}"
            )
        merged = dict(values or {})
        merged.update(overrides)
        allowed = cls.parameter_names()
        for key in merged:
            if key not in allowed:
                seats = (
                    "; the number of players is not a rule: it is chosen where a table is set (the env's "
                    "num_players, a training config's num_players, the scripts' --players or --opponents)"
                    if str(key).lower() in ("num_players", "players", "n_players", "seats")
                    else ""
                )
                raise ConfigError(
                    f"unknown rule parameter {key!r} for {cls.game}{did_you_mean(key, allowed)}; "
                    f"allowed: {', '.join(allowed)}{seats}"
                )
        return cls(**merged)

    @classmethod
    def from_yaml(cls: type[T], path: str | Path) -> T:
        """Load a configuration from a YAML file (a mapping of parameter names to values)."""
        import yaml

        path = Path(path)
        if not path.is_file():
            what = "is a folder, not a file" if path.is_dir() else "not found"
            raise ConfigError(f"rule config file {what}: {path}")
        try:
            raw = path.read_bytes()
        except OSError as err:
            raise ConfigError(f"cannot read rule config file {path}: {err}") from err
        if len(raw) > _MAX_YAML_BYTES:
            raise ConfigError(
                f"{path}: {len(raw)} bytes is too large for a rule config (at most {_MAX_YAML_BYTES})"
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ConfigError(
                f"{path}: not UTF-8 text (byte {raw[err.start]:#04x} at offset {err.start}); "
                "rule configs are UTF-8 YAML"
            ) from None
        try:
            data = yaml.load(text, Loader=_unique_key_loader()) or {}  # a SafeLoader
        except yaml.YAMLError as err:
            raise ConfigError(f"{path}: not valid YAML: {err}") from None
        except RecursionError:
            raise ConfigError(f"{path}: not valid YAML: nested too deeply") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of rule parameters, got {type(data).__name__}")
        data.pop("game", None) if data.get("game") in (None, cls.game) else _wrong_game(path, data, cls)
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """The parameters as a plain dict (JSON/YAML friendly)."""
        return dataclasses.asdict(self)

    def replace(self: T, **changes: Any) -> T:
        """A copy with some parameters changed (validated)."""
        return type(self).from_dict(self.to_dict(), **changes)


_MAX_YAML_BYTES = 1 << 20


def yaml_value(text: str) -> Any:
    """``text`` read as one YAML value, the way config files are read (:func:`_unique_key_loader`):
    ``key=value`` overrides on the command line. Raises ``yaml.YAMLError`` on invalid YAML.

    >>> yaml_value("1e-3"), yaml_value("3"), yaml_value("[256, 256]"), yaml_value("false")
    (0.001, 3, [256, 256], False)
    """
    import yaml

    return yaml.load(text, Loader=_unique_key_loader())


@functools.cache
def _unique_key_loader() -> type:
    """A ``yaml.SafeLoader`` that refuses a key given twice (YAML would keep the last silently) and
    reads ``1e-3`` as a number, as YAML 1.2 and Python do (PyYAML's YAML 1.1 floats need a dot, so
    it would read the string ``'1e-3'``)."""
    import re

    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"unhashable key {key!r:.60}", key_node.start_mark
                    ) from None
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} is given twice", key_node.start_mark
                    )
            return super().construct_mapping(node, deep=deep)

    exponent = re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")
    UniqueKeyLoader.add_implicit_resolver("tag:yaml.org,2002:float", exponent, list("-+0123456789"))
    return UniqueKeyLoader


def _wrong_game(path: Path, data: dict[str, Any], cls: type[RuleConfig]) -> None:
    raise ConfigError(f"{path} holds rules for game {data.get('game')!r}, expected {cls.game!r}")
