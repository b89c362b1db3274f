"""The opponent registry: how an opponent spec string becomes an agent, without importing ``agents``.

Every place that takes opponents calls :func:`resolve_opponents`: agent objects (anything with
``act``) are used as they are, strings (and paths) go to a *factory* found in this registry:

* a name maps to a ``"module:factory"`` string (imported on first use) or a callable;
* the spec ``"name"`` or ``"name:argument"`` uses the factory registered under ``name``, any
  other spec the factory registered as ``"default"``;
* installed packages add factories through the entry-point group ``dice_envs.agents``; this
  distribution's ``agents`` package registers ``default = "agents.registry:make_opponent"`` (every
  spec of :func:`agents.load`: ``random``, ``heuristic``, ``pretrained:spiffel``, a model path, ...).

A factory is called as ``factory(spec, rules=rules, num_players=n, seed=seed)`` and returns an
agent with ``act(observation, action_mask) -> int``.

>>> sorted(registered())[:1]
['default']
>>> [type(a).__name__ for a in resolve_opponents(["random"], "farkle", 2, seed=0)]
['RandomAgent']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import numpy as np

from .rules import ConfigError, RuleConfig, make_rules

__all__ = [
    "ENTRY_POINT_GROUP",
    "as_opponent_list",
    "batch_actions",
    "check_opponent",
    "make_opponent",
    "register",
    "registered",
    "resolve_opponents",
]

#: Entry-point group through which packages register opponent factories.
ENTRY_POINT_GROUP = "dice_envs.agents"

_registry: dict[str, str | Callable[..., Any]] = {}
_loaded_entry_points = False


def register(name: str, factory: str | Callable[..., Any]) -> None:
    """Register ``factory`` (``"module:function"`` or a callable) for specs ``name`` / ``name:...``."""
    if not isinstance(name, str) or not name:
        raise ConfigError(f"an opponent factory name must be a non-empty string, got {name!r}")
    if isinstance(factory, str) and factory.count(":") != 1:
        raise ConfigError(f"an opponent factory must be 'module:function', got {factory!r}")
    _registry[name.lower()] = factory


def _load_entry_points() -> None:
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        _registry.setdefault(ep.name.lower(), ep.value)


def registered() -> dict[str, str | Callable[..., Any]]:
    """Every registered factory name and its target (entry points included)."""
    _load_entry_points()
    return dict(_registry)


def _factory(spec: str) -> Callable[..., Any]:
    _load_entry_points()
    head = spec.split(":", 1)[0].strip().lower()
    target = _registry.get(head) if head in _registry and head != "default" else _registry.get("default")
    if target is None:
        raise ConfigError(
            f"cannot build opponent {spec!r}: no opponent factory is registered (entry-point group "
            f"{ENTRY_POINT_GROUP!r}); install the full distribution (pip install dice-envs) or pass agent "
            "objects with act(observation, action_mask)"
        )
    if callable(target):
        return target
    module, func = target.split(":")
    try:
        return getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"opponent factory {target!r} for {spec!r} cannot be loaded: {exc}") from exc


def as_opponent_list(opponents: Any) -> Any:
    """``opponents`` as given, or a list of one where it is a single spec (a string or path) or agent."""
    one = isinstance(opponents, (str, Path)) or callable(getattr(opponents, "act", None))
    return [opponents] if one else opponents


def check_opponent(i: int, spec: Any) -> None:
    """Refuse opponent ``i`` unless it is an agent spec (a string or path) or has ``act``."""
    if not isinstance(spec, (str, Path)) and not callable(getattr(spec, "act", None)):
        raise ConfigError(
            f"opponent {i} must be an agent spec string or an object with act(observation, "
            f"action_mask), got {spec!r}"
        )


def make_opponent(
    spec: str | Path, rules: str | RuleConfig, num_players: int, seed: int | None = None
) -> Any:
    """The agent named by ``spec`` for a seat of a ``num_players`` game of ``rules``."""
    text = str(spec)
    return _factory(text)(text, rules=make_rules(rules), num_players=num_players, seed=seed)


def resolve_opponents(
    opponents: Sequence[Any], rules: str | RuleConfig, num_players: int, seed: int | None = None
) -> list[Any]:
    """Agent objects for ``opponents``: objects with ``act`` are kept, specs go to the registry.

    Opponent ``i`` gets ``seed + i`` when ``seed`` is given.
    """
    resolved = []
    for i, spec in enumerate(opponents):
        if callable(getattr(spec, "act", None)):
            resolved.append(spec)
            continue
        check_opponent(i, spec)
        resolved.append(make_opponent(spec, rules, num_players, None if seed is None else seed + i))
    return resolved


def batch_actions(agent: Any, observations: np.ndarray, masks: np.ndarray, games: Any = None) -> np.ndarray:
    """An agent's actions for a batch: ``act_batch`` when it has one (``games=`` ids for agents
    that track games, i.e. define ``start_episodes``), else ``act`` row by row."""
    if callable(getattr(agent, "start_episodes", None)) and games is not None:
        return np.asarray(agent.act_batch(observations, masks, games=games), dtype=np.int64).reshape(-1)
    if callable(getattr(agent, "act_batch", None)):
        return np.asarray(agent.act_batch(observations, masks), dtype=np.int64).reshape(-1)
    return np.array([agent.act(o, m) for o, m in zip(observations, masks, strict=True)], dtype=np.int64)
