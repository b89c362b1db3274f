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
dice_envs.rules.config.ConfigError: unknown rule parameter 'upper_bonus_treshold' for spiffel; allowed: ...
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

__all__ = ["ConfigError", "RuleConfig", "check_bool", "check_int", "check_optional_int"]

T = TypeVar("T", bound="RuleConfig")


class ConfigError(ValueError):
    """A rule configuration, agent spec or file that does not fit what is allowed."""


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(name: str, value: Any, lo: int, hi: int) -> None:
    """Raise :class:`ConfigError` unless ``lo <= value <= hi`` and ``value`` is an int."""
    if not _is_int(value) or not lo <= int(value) <= hi:
        raise ConfigError(f"rule parameter {name!r} must be an integer in [{lo}, {hi}], got {value!r}")


def check_optional_int(name: str, value: Any, lo: int, hi: int) -> None:
    """Like :func:`check_int`, but ``None`` (meaning *unlimited*) is allowed too."""
    if value is not None and (not _is_int(value) or not lo <= int(value) <= hi):
        raise ConfigError(
            f"rule parameter {name!r} must be None (unlimited) or an integer in [{lo}, {hi}], got {value!r}"
        )


def check_bool(name: str, value: Any) -> None:
    """Raise :class:`ConfigError` unless ``value`` is a bool."""
    if not isinstance(value, bool):
        raise ConfigError(f"rule parameter {name!r} must be true or false, got {value!r}")


@dataclasses.dataclass(frozen=True)
class RuleConfig:
    """Base class of the per-game rule configurations (frozen, validated, hashable)."""

    game: ClassVar[str] = ""

    def __post_init__(self) -> None:
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
        merged = dict(values or {})
        merged.update(overrides)
        allowed = cls.parameter_names()
        for key in merged:
            if key not in allowed:
                raise ConfigError(
                    f"unknown rule parameter {key!r} for {cls.game}; allowed: {', '.join(allowed)}"
                )
        return cls(**merged)

    @classmethod
    def from_yaml(cls: type[T], path: str | Path) -> T:
        """Load a configuration from a YAML file (a mapping of parameter names to values)."""
        import yaml

        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"rule config file not found: {path}")
        try:
            with path.open() as fh:
                data = yaml.safe_load(fh) or {}
        except yaml.YAMLError as err:
            raise ConfigError(f"{path}: not valid YAML: {err}") from err
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


def _wrong_game(path: Path, data: dict[str, Any], cls: type[RuleConfig]) -> None:
    raise ConfigError(f"{path} holds rules for game {data.get('game')!r}, expected {cls.game!r}")
