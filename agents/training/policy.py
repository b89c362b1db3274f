"""The network both trainers train: sb3-contrib's ``MaskableActorCriticPolicy`` in a ``MaskablePPO``
(:func:`make_model`), and how the native trainer runs it: :func:`policy_forward`,
:func:`masked_logits`, :func:`sample_actions`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import torch

from agents.models.activations import activation_class
from agents.training.config import TrainConfig

__all__ = [
    "MASKED_LOGIT",
    "SpacesOnlyEnv",
    "make_model",
    "maskable_ppo_kwargs",
    "masked_logits",
    "policy_forward",
    "sample_actions",
]

#: Logit given to illegal actions: exp() of it underflows to exactly 0 in float32.
MASKED_LOGIT = -1e8


class SpacesOnlyEnv(gym.Env):
    """A game's observation and action spaces, for building a ``MaskablePPO`` without stepping."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, observation_space: gym.Space, action_space: gym.spaces.Discrete) -> None:
        self.observation_space = observation_space
        self.action_space = action_space

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
        raise RuntimeError("this env only carries spaces; the native trainer steps the vector env")

    def step(self, action: Any) -> Any:
        raise RuntimeError("this env only carries spaces; the native trainer steps the vector env")

    def action_masks(self) -> np.ndarray:
        return np.ones(int(self.action_space.n), dtype=bool)


def maskable_ppo_kwargs(cfg: TrainConfig) -> dict[str, Any]:
    """The ``MaskablePPO`` arguments both trainers take from ``cfg`` as they are: rollout length,
    epochs, discount, GAE, clipping, loss weights, network, seed."""
    return {
        "n_steps": cfg.n_steps,
        "n_epochs": cfg.n_epochs,
        "gamma": cfg.gamma,
        "gae_lambda": cfg.gae_lambda,
        "clip_range": cfg.clip_range,
        "ent_coef": cfg.ent_coef,
        "vf_coef": cfg.vf_coef,
        "max_grad_norm": cfg.max_grad_norm,
        "policy_kwargs": {"net_arch": list(cfg.net_arch), "activation_fn": activation_class(cfg.activation)},
        "seed": cfg.seed,
    }


def make_model(cfg: TrainConfig, observation_space: Any, action_space: Any, device: str = "cpu") -> Any:
    """A ``MaskablePPO`` holding a fresh policy for ``cfg``'s network. The native trainer never
    calls its ``learn`` (it gives ``model.policy`` SB3's file format); its hyper-parameters are
    ``cfg``'s, so that ``MaskablePPO.load(path, env=...).learn(...)`` continues with them."""
    from sb3_contrib import MaskablePPO

    kwargs = maskable_ppo_kwargs(cfg)
    policy: Any = "MlpPolicy"
    if cfg.policy_head == "afterstate":
        from agents.models.afterstate import FarkleAfterstatePolicy

        policy = FarkleAfterstatePolicy
        kwargs["policy_kwargs"].update(head_width=cfg.head_width, num_players=cfg.num_players)
    return MaskablePPO(
        policy,
        SpacesOnlyEnv(observation_space, action_space),
        learning_rate=cfg.learning_rate,
        batch_size=min(cfg.batch_size, cfg.n_steps),
        clip_range_vf=cfg.clip_range_vf,
        device=device,
        verbose=0,
        **kwargs,
    )


def policy_forward(policy: Any, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Raw action logits ``(B, A)`` and values ``(B,)`` of an SB3 actor-critic policy."""
    latent_pi, latent_vf = policy.mlp_extractor(policy.extract_features(obs))
    return policy.action_net(latent_pi), policy.value_net(latent_vf).squeeze(-1)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every illegal action (``mask`` False) set to :data:`MASKED_LOGIT`.

    >>> masked_logits(torch.zeros(1, 3), torch.tensor([[True, False, True]])).tolist()
    [[0.0, -100000000.0, 0.0]]
    """
    return torch.where(mask, logits, MASKED_LOGIT)


def sample_actions(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row drawn from ``softmax(logits)`` by Gumbel-max, from ``generator``.

    With masked logits an illegal action is never drawn: the Gumbel noise of float32 uniforms is
    below 20, far above :data:`MASKED_LOGIT`.
    """
    u = torch.rand(logits.shape, generator=generator, device=logits.device).clamp_(min=1e-20)
    return torch.argmax(logits - torch.log(-torch.log(u)), dim=-1)
