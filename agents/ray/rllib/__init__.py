"""Ray / RLlib for users past one machine (needs the ``[ray]`` extra).

* :mod:`.env` — every game as an RLlib ``MultiAgentEnv`` (mask in a Dict observation);
* :mod:`.module` — a masking PPO RLModule laid out like sb3-contrib's policy;
* :mod:`.selfplay` — built-in agents as RLModules, frozen snapshots, the self-play mapping;
* :mod:`.config` — :func:`ppo_config`, a ready PPO config for a game;
* :mod:`.export` — :func:`export_policy`, an RLlib policy as an sb3-contrib zip + model card.

``dice_envs`` never imports Ray; ``agents.evaluation.pool`` runs tournaments on Ray without RLlib.
"""

from __future__ import annotations

from agents.ray.rllib.config import ppo_config
from agents.ray.rllib.env import DiceMultiAgentEnv
from agents.ray.rllib.export import export_policy
from agents.ray.rllib.module import MaskedPPOModule
from agents.ray.rllib.selfplay import LEARNER, AgentModule, SelfPlayMapping

__all__ = [
    "LEARNER",
    "AgentModule",
    "DiceMultiAgentEnv",
    "MaskedPPOModule",
    "SelfPlayMapping",
    "export_policy",
    "ppo_config",
]
