"""Who may sit at a seat of the game pad: agent specs, resolved in this one place.

A seat is a person or an agent spec. The specs a room accepts are the built-in ones that
:func:`agents.load` knows for the game (``random``, ``greedy``, ``heuristic``, ``optimal``,
``max-expected``, ``threshold:N``, ``win-optimal`` where installed), the shipped models
(``pretrained:<name>``) and the model names the server was started with (``--model NAME=PATH``).
A path in a request is never opened: a spec that is not one of those is refused by name, so
nothing on the server's disk is reachable through a request.

:func:`agents.load` is imported lazily (the web pad needs the ``agents`` package only when a bot
sits down or a hint is asked for). Issue 14 will replace this module's spec handling with the
opponent registry; until then it is the single place that turns a seat spec into an agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..rules import ConfigError, FarkleRules, RuleConfig

__all__ = ["SPEC_PATTERN", "available_specs", "check_spec", "make_agent", "parse_models"]

#: The shape of every spec a request may name (no slashes, dots or backslashes: never a path).
SPEC_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,39}(:[A-Za-z0-9_-]{1,64})?$")
_BUILTIN_SCORECARD = ("optimal", "heuristic", "greedy", "random")
_BUILTIN_FARKLE = ("max-expected", "heuristic", "greedy", "random", "threshold:N")
_MODEL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def parse_models(items: list[str] | None) -> dict[str, Path]:
    """``NAME=PATH`` items of ``--model`` as a mapping; ``ConfigError`` names a bad item.

    >>> parse_models([])
    {}
    >>> parse_models(["bad"])
    Traceback (most recent call last):
    ...
    dice_envs.rules.config.ConfigError: --model needs NAME=PATH (NAME: letters, digits, _ or -), got 'bad'
    """
    out: dict[str, Path] = {}
    for item in items or []:
        name, sep, path = str(item).partition("=")
        if not sep or not _MODEL_NAME.match(name) or not path:
            raise ConfigError(f"--model needs NAME=PATH (NAME: letters, digits, _ or -), got {item!r}")
        p = Path(path).expanduser().resolve()
        if not p.is_file():
            raise ConfigError(f"--model {name}: no such model file {str(p)!r}")
        if name in out:
            raise ConfigError(f"--model {name} given twice")
        out[name] = p
    return out


def _win_optimal_available() -> bool:
    try:
        import importlib.util

        return importlib.util.find_spec("agents.win_optimal") is not None
    except (ImportError, ValueError):  # pragma: no cover - agents not importable
        return False


def _pretrained_for(game: str) -> list[str]:
    try:
        from agents.learned import PRETRAINED_DIR, pretrained_names
    except ImportError:  # pragma: no cover - agents not installed
        return []
    names = []
    for name in pretrained_names():
        try:
            card = json.loads((PRETRAINED_DIR / f"{name}.json").read_text())
        except (OSError, ValueError):
            continue
        if isinstance(card, dict) and card.get("game") == game:
            names.append(f"pretrained:{name}")
    return names


def available_specs(rules: RuleConfig, models: Mapping[str, Path]) -> list[str]:
    """The agent specs offered for ``rules`` (what the page lists; ``threshold:N`` takes any N)."""
    if isinstance(rules, FarkleRules):
        specs = list(_BUILTIN_FARKLE)
        if _win_optimal_available():
            specs.insert(0, "win-optimal")
    else:
        specs = list(_BUILTIN_SCORECARD)
    return specs + _pretrained_for(rules.game) + sorted(models)


def check_spec(spec: Any, models: Mapping[str, Path]) -> str:
    """``spec`` if it has the shape of an allowed spec; ``ConfigError`` naming what is allowed."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"an agent spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    if spec in models:
        return spec
    if spec.lower() == "human" or not SPEC_PATTERN.match(spec):
        raise ConfigError(
            f"agent spec {spec!r} is not allowed: use a built-in agent (optimal, heuristic, greedy, "
            "random, max-expected, threshold:N, win-optimal), pretrained:<name>, or a model name the "
            f"server was started with ({', '.join(sorted(models)) or 'none'}); paths are never accepted"
        )
    return spec


def make_agent(
    spec: str, rules: RuleConfig, num_players: int, seed: int | None, models: Mapping[str, Path]
) -> Any:
    """The agent of ``spec`` for a seat (``ConfigError`` with the reason when it cannot be built)."""
    spec = check_spec(spec, models)
    from agents import load  # lazy: the web pad needs agents only for bots and hints

    target: str = str(models[spec]) if spec in models else spec
    try:
        return load(target, game=rules, num_players=num_players, seed=seed)
    except ConfigError:
        raise
    except (ValueError, TypeError, OSError, ImportError) as exc:
        raise ConfigError(
            f"agent {spec!r} cannot play {rules.game} with {num_players} players: {exc}"
        ) from exc
