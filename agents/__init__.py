"""Agents that sit in a seat of any dice-envs game: built-in players, exact solvers, trained models.

Every agent follows :class:`agents.base.Agent` (``act(observation, action_mask) -> int``) and
plugs into every environment as an opponent. :func:`load` builds one from a spec string:

>>> import agents
>>> agents.known_specs("spiffel")[:4]
['random', 'greedy', 'heuristic', 'optimal']

The :doc:`architecture page </architecture>` names the modules behind them.
"""

from __future__ import annotations

from agents.base import Agent, BaseAgent, RandomAgent
from agents.registry import known_specs, load
from dice_envs import __version__

__all__ = ["Agent", "BaseAgent", "RandomAgent", "__version__", "known_specs", "load"]
