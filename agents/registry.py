"""``agents.load(spec, game=...)``: build an agent from a spec string.

(Skeleton: only ``"random"`` so far; the full set of specs is being added.)
"""

from __future__ import annotations

from typing import Any

from dice_envs.rules import ConfigError, RuleConfig, make_rules

from .base import Agent, RandomAgent

__all__ = ["load"]


def load(
    spec: str | Agent,
    game: str | RuleConfig = "spiffel",
    num_players: int = 1,
    seed: int | None = None,
    **kwargs: Any,
) -> Agent:
    """Build the agent named by ``spec`` for ``game`` (a name or a rule configuration)."""
    if not isinstance(spec, str):
        if hasattr(spec, "act"):
            return spec
        raise ConfigError(f"an agent spec must be a string or an object with act(), got {spec!r}")
    rules = make_rules(game)
    del rules, kwargs, num_players
    if spec == "random":
        return RandomAgent(seed=seed)
    raise ConfigError(f"unknown agent spec {spec!r}; known: random")
