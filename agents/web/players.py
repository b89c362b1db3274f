"""Who may sit at a seat of the game pad, and the bots' turns: agent specs, resolved in this one place.

A seat is a person or an agent spec (:func:`available_specs`). A path in a request is never
opened: a model is named by a shipped name or one the server was started with, any other spec is
refused by name (:func:`check_spec`). A ``win-optimal`` seat is refused when its table is too
large to solve (:mod:`agents.web.limits`); an unsolved one is solved when its room starts.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agents.players.model import PRETRAINED_DIR, pretrained_names
from agents.players.planner import PlannerAgent
from agents.players.win_optimal import WinOptimalAgent
from agents.registry import load
from agents.solver.farkle_win import is_solved
from agents.web.limits import check_win_solve
from dice_envs.encoding import encode
from dice_envs.engine import FarkleGame, ScorecardGame
from dice_envs.rules import ConfigError, FarkleRules, RuleConfig

__all__ = [
    "COMPUTE_LOCK",
    "SPEC_PATTERN",
    "TABLE_LOCK",
    "available_specs",
    "bot_action",
    "check_spec",
    "make_agent",
    "parse_models",
    "solve_tables",
    "unsolved",
]

#: The shape of every spec a request may name (no slashes, dots or backslashes: never a path).
SPEC_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,39}(:[A-Za-z0-9_-]{1,64})?$")
_PLANNER = "planner:"
_BUILTIN_SCORECARD = ("optimal", "heuristic", "greedy", "random")
_BUILTIN_FARKLE = ("max-expected", "heuristic", "greedy", "random", "threshold:N")
_MODEL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: A thread lock around agent decisions and hints: the solvers' plan caches are not thread-safe.
COMPUTE_LOCK = threading.Lock()
#: A thread lock around building a planner's table when its room opens. The new table is no
#: seated agent's until it is built, so building does not hold up the bots (COMPUTE_LOCK).
TABLE_LOCK = threading.Lock()


def parse_models(items: list[str] | None) -> dict[str, Path]:
    """``NAME=PATH`` items of ``--model`` as a mapping; ``ConfigError`` names a bad item.

    Each model is loaded once here, as a room would load it (its card, checksums and weights), so
    a file that is not a usable model stops the server at start-up instead of being offered.

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
        if name in out:
            raise ConfigError(f"--model {name} given twice")
        out[name] = _checked_model(name, Path(path).expanduser().resolve())
    return out


def _checked_model(name: str, path: Path) -> Path:
    """``path`` if it loads as a model (``agents.load``); else ``ConfigError`` naming ``--model name``."""
    from agents.models.files import check_model_path

    try:
        load(str(check_model_path(path)))
    except ConfigError as exc:
        raise ConfigError(f"--model {name}: {exc}") from None
    return path


def _cards(models: Mapping[str, Path]) -> dict[str, dict[str, Any]]:
    """The readable cards of the shipped models (``pretrained:<name>``) and the server's models (name)."""
    from agents.models.card import read_card

    paths = {f"pretrained:{n}": PRETRAINED_DIR / f"{n}.zip" for n in pretrained_names()}
    out = {}
    for spec, path in {**paths, **models}.items():
        with contextlib.suppress(OSError, ValueError):  # an unreadable card is not offered
            out[spec] = read_card(path)
    return out


def available_specs(rules: RuleConfig, models: Mapping[str, Path]) -> list[str]:
    """The agent specs offered for ``rules`` (what the page lists; ``threshold:N`` takes any N).

    Shipped models are offered for their own game; the server's models for every game (a room
    for another game refuses them by name). ``planner:<model>`` is offered for each two-player
    Farkle model, shipped or the server's.
    """
    cards = _cards(models)
    shipped = [s for s, c in cards.items() if s.startswith("pretrained:") and c.get("game") == rules.game]
    if not isinstance(rules, FarkleRules):
        return [*_BUILTIN_SCORECARD, *shipped, *sorted(models)]
    two_player = [s for s, c in cards.items() if c.get("game") == "farkle" and c.get("num_players") == 2]
    planners = [f"{_PLANNER}{s}" for s in two_player]
    return ["win-optimal", *_BUILTIN_FARKLE, *shipped, *sorted(models), *planners]


def check_spec(spec: Any, models: Mapping[str, Path]) -> str:
    """``spec`` if it has the shape of an allowed spec; ``ConfigError`` naming what is allowed."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"an agent spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    inner = spec[len(_PLANNER) :] if spec.lower().startswith(_PLANNER) else None
    if spec in models or inner in models:
        return spec
    if inner is not None and inner.lower().startswith("pretrained:") and SPEC_PATTERN.match(inner):
        return spec
    if inner is not None or spec.lower() == "human" or not SPEC_PATTERN.match(spec):
        raise ConfigError(
            f"agent spec {spec!r} is not allowed: use a built-in agent (optimal, heuristic, greedy, "
            "random, max-expected, threshold:N, win-optimal), pretrained:<name>, a model name the "
            f"server was started with ({', '.join(sorted(models)) or 'none'}), or planner: before a "
            "two-player Farkle model of those two kinds; paths are never accepted"
        )
    return spec


def make_agent(
    spec: str, rules: RuleConfig, num_players: int, seed: int | None, models: Mapping[str, Path]
) -> Any:
    """The agent of ``spec`` for a seat (``ConfigError`` with the reason when it cannot be built)."""
    spec = check_spec(spec, models)
    target: str = str(models[spec]) if spec in models else spec
    planner = spec.lower().startswith(_PLANNER)
    if planner and spec[len(_PLANNER) :] in models:
        target = _PLANNER + str(models[spec[len(_PLANNER) :]])
    try:
        agent = load(target, game=rules, num_players=num_players, seed=seed)
        if isinstance(agent, WinOptimalAgent) and not isinstance(agent, PlannerAgent):
            check_win_solve(agent.rules)  # solved on its first move: refused when too large
        if planner:  # its table now, not in the middle of the game; one build at a time
            with TABLE_LOCK:
                agent.solution  # noqa: B018 - builds or loads the table
        return agent
    except ConfigError:
        raise
    except (ValueError, TypeError, OSError, ImportError) as exc:
        raise ConfigError(
            f"agent {spec!r} cannot play {rules.game} with {num_players} players: {exc}"
        ) from exc


def bot_action(agent: Any, game: ScorecardGame | FarkleGame) -> int:
    """The move ``agent`` makes for the player to move in ``game`` (under :data:`COMPUTE_LOCK`)."""
    with COMPUTE_LOCK:
        return int(agent.act(encode(game, game.current_player), game.action_mask()))


def unsolved(agents: Iterable[Any]) -> list[WinOptimalAgent]:
    """The ``win-optimal`` agents among ``agents`` whose table is neither in memory nor in the disk
    cache (so their first move would solve it); reads the cache's records."""
    win_optimal = [a for a in agents if isinstance(a, WinOptimalAgent) and not isinstance(a, PlannerAgent)]
    return [a for a in win_optimal if not is_solved(a.rules)]


def solve_tables(agents: Iterable[WinOptimalAgent]) -> None:
    """Solve the tables of ``agents`` (:func:`unsolved`) now, before their first move."""
    for agent in agents:
        agent.solution  # noqa: B018 - solves (or loads) the table and keeps it
