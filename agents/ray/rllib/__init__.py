"""Ray / RLlib for users past one machine (needs the ``[ray]`` extra; the pieces:
docs/guide/ray.md). ``dice_envs`` never imports Ray."""

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
