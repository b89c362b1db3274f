"""Agents that sit in a seat of any dice-envs game: built-in players, exact solvers, trained models.

Every agent follows :class:`agents.base.Agent` (``act(observation, action_mask) -> int``) and
plugs into every environment as an opponent. :func:`load` builds one from a spec string:

>>> import agents
>>> agents.known_specs("spiffel")[:4]
['random', 'greedy', 'heuristic', 'optimal']

Modules: :mod:`agents.scorecard_agents` and :mod:`agents.farkle_agents` (built-in players),
:mod:`agents.solver` (exact solvers and their disk cache), :mod:`agents.learned` (trained models
as agents), :mod:`agents.model_card` (the card beside every model), :mod:`agents.model_io` (model
files, weights only), :mod:`agents.human` (a person at the terminal).
"""

from __future__ import annotations

from .base import Agent, BaseAgent, RandomAgent
from .registry import known_specs, load

__all__ = ["Agent", "BaseAgent", "RandomAgent", "known_specs", "load"]
