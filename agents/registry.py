"""``agents.load(spec, game=...)``: build an agent from a spec string.

=====================  ===================================================================
spec                   agent
=====================  ===================================================================
``random``             uniform over the legal actions (every game)
``greedy``             best immediate score (every game)
``heuristic``          the strongest hand-written strategy of the game
``optimal``            exact solitaire optimum (scorecard games; solver value table)
``max-expected``       exact max-expected points per turn (Farkle)
``threshold:N``        bank as soon as the turn total is at least N (Farkle)
``win-optimal``        exact two-player win-probability optimum (Farkle; ``seat=`` optional)
``pretrained:<name>``  a trained model from ``agents/pretrained/<name>.zip`` (+ its card)
``path/to/model.zip``  a trained model file (+ its card ``path/to/model.json``)
``human``              a person at the terminal
=====================  ===================================================================

>>> agent = load("heuristic", game="farkle", num_players=2, seed=0)
>>> type(agent).__name__
'HeuristicFarkleAgent'
>>> load("optimal", game="farkle")
Traceback (most recent call last):
...
dice_envs.rules.config.ConfigError: agent spec 'optimal' is not available for farkle; known: random, ...
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from dice_envs.rules import ConfigError, FarkleRules, RuleConfig, ScorecardRules, make_rules
from dice_envs.rules.config import check_int

from .base import Agent, RandomAgent

__all__ = ["known_specs", "load"]

_COMMON = ["random", "greedy", "heuristic"]
_TAIL = ["human", "pretrained:<name>", "a path to a .zip model"]


def known_specs(game: str | RuleConfig = "spiffel") -> list[str]:
    """The spec strings :func:`load` accepts for ``game``."""
    rules = make_rules(game)
    special = (
        ["max-expected", "threshold:N", "win-optimal"] if isinstance(rules, FarkleRules) else ["optimal"]
    )
    return _COMMON + special + _TAIL


def load(
    spec: str | Agent,
    game: str | RuleConfig = "spiffel",
    num_players: int = 1,
    seed: int | None = None,
    **kwargs: Any,
) -> Agent:
    """Build the agent named by ``spec`` for ``game`` (a name or a rule configuration).

    ``kwargs`` go to the agent's constructor (e.g. ``device`` for a trained model, ``input`` /
    ``output`` streams for ``human``). An object that already has ``act`` is returned as is.
    Unknown specs raise :class:`~dice_envs.rules.ConfigError` listing the known ones.
    """
    if not isinstance(spec, str):
        if hasattr(spec, "act"):
            return spec
        raise ConfigError(f"an agent spec must be a string or an object with act(), got {spec!r}")
    rules = make_rules(game)
    check_int("num_players", num_players, 1, 8)
    name = spec.strip()
    key = name.lower()
    known = known_specs(rules)
    if key == "random":
        return _build(spec, RandomAgent, seed=seed, **kwargs)
    if key == "human":
        from .human import HumanAgent

        return _build(spec, HumanAgent, rules, num_players=num_players, seed=seed, **kwargs)
    if key.startswith("pretrained:") or key.endswith(".zip") or (name and Path(name).is_file()):
        from .learned import LearnedAgent

        return _build(spec, LearnedAgent, name, rules, num_players=num_players, seed=seed, **kwargs)
    if isinstance(rules, ScorecardRules):
        from . import scorecard_agents as sa

        classes = {"greedy": sa.GreedyAgent, "heuristic": sa.HeuristicAgent, "optimal": sa.OptimalAgent}
        if key in classes:
            return _build(spec, classes[key], rules, num_players=num_players, seed=seed, **kwargs)
    elif isinstance(rules, FarkleRules):
        from . import farkle_agents as fa

        fclasses = {
            "greedy": fa.GreedyFarkleAgent,
            "heuristic": fa.HeuristicFarkleAgent,
            "max-expected": fa.MaxExpectedAgent,
            "max_expected": fa.MaxExpectedAgent,
        }
        if key in fclasses:
            return _build(spec, fclasses[key], rules, num_players=num_players, seed=seed, **kwargs)
        if key in ("win-optimal", "win_optimal"):
            from .win_optimal import WinOptimalAgent

            return _build(spec, WinOptimalAgent, rules, num_players=num_players, seed=seed, **kwargs)
        if key.startswith("threshold:"):
            value = key.split(":", 1)[1]
            try:
                threshold = int(value)
            except ValueError:
                raise ConfigError(
                    f"threshold spec needs an integer, e.g. threshold:1000; got {spec!r}"
                ) from None
            if threshold < 0:
                raise ConfigError(f"threshold must be >= 0, got {threshold}")
            return _build(
                spec, fa.ThresholdAgent, rules, threshold, num_players=num_players, seed=seed, **kwargs
            )
    all_specs = {"optimal", "max-expected", "max_expected", "win-optimal", "win_optimal"}
    if key in all_specs or key.startswith("threshold:"):
        raise ConfigError(f"agent spec {spec!r} is not available for {rules.game}; known: {', '.join(known)}")
    raise ConfigError(f"unknown agent spec {spec!r} for {rules.game}; known: {', '.join(known)}")


def _build(spec: str, cls: type, *args: Any, **kwargs: Any) -> Agent:
    """``cls(*args, **kwargs)``, with options the agent does not take refused by name."""
    params = inspect.signature(cls).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        allowed = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY or p.default is not p.empty]
        allowed = [n for n in allowed if n not in ("num_players", "seed")]
        for key in kwargs:
            if key not in params:
                rule_hint = ""
                if key not in ("device", "deterministic"):
                    rule_hint = "; rule parameters go in game=make_rules(game, ...)"
                raise ConfigError(
                    f"agent {spec!r} takes no option {key!r}; its options: {', '.join(allowed) or 'none'}"
                    f"{rule_hint}"
                )
    return cls(*args, **kwargs)
