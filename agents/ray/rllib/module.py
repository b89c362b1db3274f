"""A masking PPO RLModule for RLlib's new API stack, laid out like sb3-contrib's policy.

:class:`MaskedPPOModule` reads the Dict observation of :class:`~agents.ray.rllib.env.DiceMultiAgentEnv`
(``{"observations", "action_mask"}``), runs two separate MLPs (policy and value, as sb3's
``MlpExtractor`` does for a list ``net_arch``) and sets the logit of every illegal action to
:data:`agents.training.policy.MASKED_LOGIT` (the value sb3-contrib's ``MaskableCategorical`` uses):
``exp`` of it is exactly 0 in float32, so sampling, argmax and log-probabilities never see an
illegal action. Its parameters carry sb3's names (``mlp_extractor.policy_net.0.weight``, ...,
``action_net``, ``value_net``), so :func:`agents.ray.rllib.export.export_policy` copies them 1:1
into a ``MaskableActorCriticPolicy`` built by :func:`agents.training.policy.make_model`.

``model_config``: ``net_arch`` (hidden sizes, default ``[64, 64]``) and ``activation``
(``"tanh"`` or ``"relu"``), the same knobs as :class:`~agents.training.config.TrainConfig`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn

from agents.models.activations import activation_class
from agents.training.policy import masked_logits
from dice_envs.rules import ConfigError

__all__ = ["MaskedPPOModule", "apply_mask", "split_obs"]


def split_obs(obs: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """``(features, mask)`` of a batch of Dict observations; a clear error for anything else."""
    if not isinstance(obs, dict) or "observations" not in obs or "action_mask" not in obs:
        keys = sorted(obs) if isinstance(obs, dict) else type(obs).__name__
        raise ValueError(
            f"MaskedPPOModule needs Dict observations {{'observations', 'action_mask'}}, got {keys}"
        )
    return obs["observations"].float(), obs["action_mask"]


def apply_mask(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every action whose mask entry is 0 set to ``MASKED_LOGIT``
    (:func:`agents.training.policy.masked_logits` on ``mask > 0``)."""
    return masked_logits(logits, mask > 0)


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """Masked-logit actor-critic for PPO (see the module docstring)."""

    def setup(self) -> None:
        space = self.observation_space
        try:
            n_in = int(np.prod(space["observations"].shape))
        except (KeyError, TypeError):
            raise ConfigError(
                "MaskedPPOModule needs a Dict observation space with 'observations' and "
                f"'action_mask', got {space}"
            ) from None
        cfg = dict(self.model_config or {})
        arch = [int(w) for w in cfg.get("net_arch", [64, 64])]
        if not arch or any(w < 1 for w in arch):
            raise ConfigError(
                f"net_arch must be a non-empty list of positive widths, got {cfg.get('net_arch')!r}"
            )
        self.net_arch, self.activation = arch, cfg.get("activation", "tanh")
        act = activation_class(self.activation)  # ConfigError naming the allowed ones
        self.mlp_extractor = MlpExtractor(n_in, net_arch=arch, activation_fn=act)
        self.action_net = nn.Linear(arch[-1], int(self.action_space.n))
        self.value_net = nn.Linear(arch[-1], 1)
        # sb3's orthogonal initialisation (gains sqrt(2) hidden, 0.01 policy head, 1 value head).
        for module, gain in (
            (self.mlp_extractor, np.sqrt(2)),
            (self.action_net, 0.01),
            (self.value_net, 1.0),
        ):
            module.apply(functools.partial(BasePolicy.init_weights, gain=gain))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        x, mask = split_obs(batch[Columns.OBS])
        logits = self.action_net(self.mlp_extractor.forward_actor(x))
        return {Columns.ACTION_DIST_INPUTS: apply_mask(logits, mask)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        out = self._forward(batch)
        out[Columns.EMBEDDINGS] = split_obs(batch[Columns.OBS])[0]  # the value head's input (compute_values)
        return out

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        x = embeddings if embeddings is not None else split_obs(batch[Columns.OBS])[0]
        return self.value_net(self.mlp_extractor.forward_critic(x)).squeeze(-1)

    def policy_state(self) -> dict[str, torch.Tensor]:
        """The parameters, under sb3 ``MaskableActorCriticPolicy`` names, on the CPU."""
        return {k: v.detach().cpu().clone() for k, v in self.state_dict().items()}
