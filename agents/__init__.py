"""Agents that sit in a seat of any dice-envs game: built-in players, exact solvers, trained models.

Every agent follows :class:`agents.base.Agent` (``act(observation, action_mask) -> int``) and
plugs into every environment as an opponent.
"""

from __future__ import annotations

from .base import Agent, BaseAgent, RandomAgent
from .registry import load

__all__ = ["Agent", "BaseAgent", "RandomAgent", "load"]
