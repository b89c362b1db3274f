"""PPO written for the native vector env, read top to bottom (CleanRL style).

One policy forward per batch step over ``n_envs`` games (thousands), no Python loop over games:

1. **rollout** — ``n_steps`` steps of every game of a :class:`~dice_envs.vector.env.DiceVectorEnv`
   (same-step autoreset); the masked policy samples each action (illegal logits are set to
   :data:`MASKED_LOGIT` before sampling, so an illegal action is never drawn), and the values,
   log-probabilities, rewards and episode ends are stored in preallocated tensors;
2. **advantages** — generalised advantage estimation (:func:`gae`), truncated episodes
   bootstrapped from the value of their last observation;
3. **update** — ``n_epochs`` passes over the whole rollout in shuffled minibatches of
   ``batch_size``: clipped policy loss, (optionally clipped) value loss, entropy bonus
   (:func:`ppo_loss`), advantages normalised per minibatch, gradient norm clipped;
4. **schedules** — learning rate and entropy coefficient follow the run's progress
   (:func:`schedule_value`).

The network is sb3-contrib's own ``MaskableActorCriticPolicy`` module, held by a
``MaskablePPO`` object that never trains itself (:func:`make_model`): saving it writes a normal
sb3-contrib zip, so ``MaskablePPO.load(path)`` + ``predict(obs, action_masks=...)`` and
``agents.load(path)`` work on what this trainer produces, as on any other model.

The run loop itself (checkpoints, evaluation, self-play pool, logging) is :func:`train_ppo`;
every hyper-parameter is a documented field of :class:`~agents.training.config.TrainConfig`.

>>> import torch
>>> adv, ret = gae(torch.tensor([[0.0], [1.0]]), torch.tensor([[0.5], [0.5]]),
...                torch.tensor([[0.0], [1.0]]), torch.tensor([0.9]), gamma=1.0, lam=1.0)
>>> adv.flatten().tolist(), ret.flatten().tolist()
([0.5, 0.5], [1.0, 1.0])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

__all__ = [
    "MASKED_LOGIT",
    "FastTanh",
    "LeadPotential",
    "LossStats",
    "RolloutBuffer",
    "SpacesOnlyEnv",
    "forward",
    "gae",
    "make_model",
    "make_optimizer",
    "maskable_ppo_kwargs",
    "masked_logits",
    "ppo_loss",
    "sample_actions",
    "schedule_value",
]

#: Logit given to illegal actions: exp() of it underflows to exactly 0 in float32.
MASKED_LOGIT = -1e8


# ---------------------------------------------------------------------------- the network
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


#: The hidden activations of the trainer's networks (``TrainConfig.activation``).
ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}


def maskable_ppo_kwargs(cfg: Any) -> dict[str, Any]:
    """The ``MaskablePPO`` arguments both trainers take from ``cfg`` unchanged.

    The one mapping of config keys onto sb3-contrib's: rollout length, epochs, discount, GAE,
    clipping, loss weights, network, seed. Each caller adds what it sets its own way (learning
    rate, minibatch, logging).
    """
    activation = ACTIVATIONS[cfg.activation]
    return {
        "n_steps": cfg.n_steps,
        "n_epochs": cfg.n_epochs,
        "gamma": cfg.gamma,
        "gae_lambda": cfg.gae_lambda,
        "clip_range": cfg.clip_range,
        "ent_coef": cfg.ent_coef,
        "vf_coef": cfg.vf_coef,
        "max_grad_norm": cfg.max_grad_norm,
        "policy_kwargs": {"net_arch": list(cfg.net_arch), "activation_fn": activation},
        "seed": cfg.seed,
    }


def make_model(cfg: Any, observation_space: Any, action_space: Any, device: str = "cpu") -> Any:
    """A ``MaskablePPO`` holding a fresh ``MaskableActorCriticPolicy`` for ``cfg``'s network.

    The model's own ``learn`` is never called: the policy module (``model.policy``) is trained by
    this module's loop and the model object only gives it SB3's file format. Its
    hyper-parameters are set from ``cfg`` so that a user who continues training with
    ``MaskablePPO.load(path, env=...).learn(...)`` starts from the same settings.
    """
    from sb3_contrib import MaskablePPO

    kwargs = maskable_ppo_kwargs(cfg)
    policy: Any = "MlpPolicy"
    if cfg.policy_head == "afterstate":
        from ..afterstate import FarkleAfterstatePolicy

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


def forward(policy: Any, obs: torch.Tensor, precision: str = "float32") -> tuple[torch.Tensor, torch.Tensor]:
    """Raw action logits ``(B, A)`` and values ``(B,)`` of an SB3 actor-critic policy.

    The hidden layers run one by one (:func:`_hidden`): each ``nn.Tanh`` is computed by
    :class:`FastTanh` (the same function, within 2e-7, at a fifth of the CPU time of
    ``torch.tanh``), the other layers as they are. With ``precision="bfloat16"`` each hidden
    ``Linear`` and its activation run as one :class:`Bf16Dense` (product, bias and activation in
    bfloat16, the weights kept in float32), and the action head's product too (as
    ``torch.autocast`` runs every ``Linear``), its logits cast to float32; the value head
    (``addmv``: its gradient is an outer product, not a slow product with an inner size of 1),
    log-probabilities and losses stay float32.
    """
    if precision not in ("float32", "bfloat16"):
        raise ValueError(f"unknown precision {precision!r}; allowed: float32, bfloat16")
    features = policy.extract_features(obs, policy.pi_features_extractor)
    mlp = policy.mlp_extractor
    if not policy.share_features_extractor:  # pragma: no cover - not built by make_model
        raise ValueError("forward() needs a policy whose actor and critic share the features extractor")
    bf16 = precision == "bfloat16"
    latent_pi = _hidden(mlp.policy_net, features, bf16)
    latent_vf = _hidden(mlp.value_net, features, bf16)
    if getattr(mlp, "passes_features", False):  # agents.afterstate: its head reads the features too
        latent_pi = torch.cat([latent_pi.float(), features], dim=-1)
    head, value = policy.action_net, policy.value_net
    if not bf16:
        return head(latent_pi), value(latent_vf).squeeze(-1)
    if isinstance(head, nn.Linear) and head.bias is not None:  # bfloat16 product, float32 logits
        bf = torch.bfloat16
        logits = F.linear(latent_pi.to(bf), head.weight.to(bf), head.bias.to(bf))
    else:  # agents.afterstate's action scorer: float32, as it is
        logits = head(latent_pi.float())
    latent_vf = latent_vf.float()
    if isinstance(value, nn.Linear) and value.out_features == 1 and value.bias is not None:
        values = torch.addmv(value.bias, latent_vf, value.weight[0])  # gradient: an outer product
    else:  # pragma: no cover - make_model builds Linear heads
        values = value(latent_vf).squeeze(-1)
    return logits.float(), values


class FastTanh(torch.autograd.Function):
    """``tanh(x)`` as ``1 - 2 sigmoid(-2x)``, its gradient ``g (1 - y^2)`` from the saved output.

    PyTorch's CPU ``tanh`` kernel is about five times slower than its ``sigmoid``; this identity
    gives the same values within 2e-7 (float32) at a fifth of the time (three passes over the
    batch: scale, sigmoid in place, ``rsub``).
    Saved models keep SB3's ``nn.Tanh``: only the trainer's :func:`forward` uses this.

    >>> x = torch.linspace(-9.0, 9.0, 1001)
    >>> bool((FastTanh.apply(x) - torch.tanh(x)).abs().max() < 2e-7)
    True
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        y = torch.rsub(torch.mul(x, -2.0).sigmoid_(), 1.0, alpha=2.0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


class Bf16Dense(torch.autograd.Function):
    """One hidden layer ``act(x W^T + b)`` (``act``: tanh or relu) in bfloat16, forward and backward.

    ``x``, ``W`` and ``b`` are cast to bfloat16 (the float32 weights stay the optimiser's); the
    product, bias and activation give a bfloat16 output, which the next layer takes as it is. The
    backward pass takes the activation's gradient from the saved bfloat16 output and returns the
    weight and bias gradients in float32 (summed with float32 accumulators, rounded to bfloat16
    like the weight gradient's product). The same products as ``torch.autocast`` would run,
    without its casts of every activation to float32 and back: the element-wise work, not the
    products, is most of a bfloat16 update on a CPU. ``tanh`` runs as ``1 - 2 sigmoid(-2z)``
    (the factor -2 folded into the product): PyTorch's bfloat16 ``tanh`` on a CPU takes three
    times the time of its ``sigmoid``.

    >>> x, w, b = torch.randn(8, 3), torch.randn(4, 3), torch.randn(4)
    >>> y = Bf16Dense.apply(x, w, b, "tanh")
    >>> y.dtype, bool((y.float() - torch.tanh(x @ w.T + b)).abs().max() < 0.05)
    (torch.bfloat16, True)
    """

    @staticmethod
    def forward(
        ctx: Any, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, act: str
    ) -> torch.Tensor:
        xb, wb = x.to(torch.bfloat16), weight.to(torch.bfloat16)
        if act == "tanh":  # tanh(z) = 1 - 2 sigmoid(-2z): bfloat16 tanh is 3x slower than sigmoid
            z2 = torch.addmm(bias.to(torch.bfloat16), xb, wb.t(), beta=-2, alpha=-2)  # -2z, exactly
            y = torch.rsub(z2.sigmoid_(), 1, alpha=2)
        else:
            y = torch.addmm(bias.to(torch.bfloat16), xb, wb.t()).relu_()
        ctx.save_for_backward(xb, wb, y)
        ctx.act, ctx.x_dtype = act, x.dtype
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        xb, wb, y = ctx.saved_tensors
        g = grad.to(torch.bfloat16)
        if ctx.act == "tanh":
            gz = torch.ops.aten.tanh_backward(g, y)
        else:
            gz = torch.ops.aten.threshold_backward(g, y, 0)
        gx = (gz @ wb).to(ctx.x_dtype) if ctx.needs_input_grad[0] else None
        return gx, (gz.t() @ xb).float(), gz.sum(0).float(), None


_BF16_ACTS = {cls: name for name, cls in ACTIVATIONS.items()}


def _hidden(layers: nn.Module, x: torch.Tensor, bf16: bool) -> torch.Tensor:
    """``layers`` (an ``nn.Sequential``) applied to ``x``: ``nn.Tanh`` as :class:`FastTanh`; with
    ``bf16`` each ``Linear`` followed by ``nn.Tanh`` / ``nn.ReLU`` as one :class:`Bf16Dense` (any
    other ``Linear`` under ``torch.autocast``). The result is float32, or with ``bf16`` the
    last layer's output as it is (bfloat16 after a :class:`Bf16Dense`) for the heads to take."""
    mods = list(layers)
    i = 0
    while i < len(mods):
        layer, after = mods[i], mods[i + 1] if i + 1 < len(mods) else None
        act = _BF16_ACTS.get(type(after))
        if bf16 and isinstance(layer, nn.Linear) and layer.bias is not None and act is not None:
            x = Bf16Dense.apply(x, layer.weight, layer.bias, act)
            i += 2
            continue
        x = x.float()
        if isinstance(layer, nn.Tanh):
            x = FastTanh.apply(x)
        elif bf16 and isinstance(layer, nn.Linear):
            with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
                x = layer(x)
        else:
            x = layer(x)
        i += 1
    return x if bf16 else x.float()


def make_optimizer(params: Any, lr: float, eps: float) -> torch.optim.Adam:
    """Adam over ``params``: the fused kernel where this torch has it for their device (one pass
    over every parameter instead of a dozen small operations each; four times faster on a CPU
    for the small MLPs trained here), else the default implementation (same update rule)."""
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, eps=eps, fused=True)
    except (RuntimeError, TypeError, ValueError):  # pragma: no cover - torch < 2.4 on a CPU
        return torch.optim.Adam(params, lr=lr, eps=eps)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every illegal action (``mask`` False) set to :data:`MASKED_LOGIT`.

    >>> masked_logits(torch.zeros(1, 3), torch.tensor([[True, False, True]])).tolist()
    [[0.0, -100000000.0, 0.0]]
    """
    legal = mask.to(logits.dtype)  # one fused multiply-add, three times faster than torch.where on a CPU
    return torch.addcmul(torch.rsub(legal, 1.0).mul_(MASKED_LOGIT), logits, legal)


def sample_actions(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row drawn from ``softmax(logits)`` (Gumbel-max: one argmax, no Python loop).

    With masked logits an illegal action is never drawn: the Gumbel noise of float32 uniforms is
    below 20, far above :data:`MASKED_LOGIT`.
    """
    u = torch.rand(logits.shape, generator=generator, device=logits.device, dtype=logits.dtype)
    u = u.clamp_(min=1e-20)
    return torch.argmax(logits - torch.log(-torch.log(u)), dim=-1)


# ---------------------------------------------------------------------------- the algorithm
def gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    dones: torch.Tensor,
    last_values: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimates and returns of a rollout (all ``(T, N)``).

    ``dones[t]`` is 1 where step ``t`` ended its game's episode (then no value is carried over
    from step ``t + 1``, which belongs to the next episode); ``last_values`` ``(N,)`` are the
    values of the observations after the last step.
    """
    steps = rewards.shape[0]
    advantages = torch.zeros_like(rewards)
    carry = torch.zeros_like(last_values)
    next_values = last_values
    for t in range(steps - 1, -1, -1):
        live = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_values * live - values[t]
        carry = delta + gamma * lam * live * carry
        advantages[t] = carry
        next_values = values[t]
    return advantages, advantages + values


@dataclass
class LossStats:
    """What one minibatch update measured (floats, for logging)."""

    loss: float
    policy_loss: float
    value_loss: float
    entropy: float
    approx_kl: float
    clip_fraction: float


def ppo_loss(
    logits: torch.Tensor,
    values: torch.Tensor,
    actions: torch.Tensor,
    old_logprobs: torch.Tensor,
    old_values: torch.Tensor,
    advantages: torch.Tensor,
    returns: torch.Tensor,
    *,
    clip_range: float,
    clip_range_vf: float | None,
    ent_coef: float,
    vf_coef: float,
    normalize_advantage: bool = True,
) -> tuple[torch.Tensor, LossStats]:
    """The PPO loss of a minibatch and its statistics.

    ``logits`` must already be masked (:func:`masked_logits`). Policy loss: the clipped surrogate
    ``-mean(min(r A, clip(r, 1-c, 1+c) A))`` with ``r = exp(logp - old_logp)`` and ``A`` normalised
    to zero mean and unit standard deviation when ``normalize_advantage`` (and the batch holds
    more than one sample). Value loss: ``0.5 mean((V - R)^2)``, or with ``clip_range_vf`` the
    larger of that and the loss of ``old_V + clip(V - old_V, -c_vf, c_vf)``. Entropy: of the
    masked distribution. Total: ``policy + vf_coef * value - ent_coef * entropy``.
    """
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(1, actions.unsqueeze(1)).squeeze(1)
    probs = logp_all.exp()
    entropy = -(probs * logp_all).sum(dim=-1).mean()
    if normalize_advantage and advantages.numel() > 1:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    log_ratio = logp - old_logprobs
    ratio = log_ratio.exp()
    surrogate = torch.min(ratio * advantages, ratio.clamp(1.0 - clip_range, 1.0 + clip_range) * advantages)
    policy_loss = -surrogate.mean()
    value_loss = (values - returns).pow(2)
    if clip_range_vf is not None:
        clipped = old_values + (values - old_values).clamp(-clip_range_vf, clip_range_vf)
        value_loss = torch.max(value_loss, (clipped - returns).pow(2))
    value_loss = 0.5 * value_loss.mean()
    loss = policy_loss + vf_coef * value_loss - ent_coef * entropy
    with torch.no_grad():
        approx_kl = ((ratio - 1.0) - log_ratio).mean()  # the low-variance estimator (Schulman)
        clip_fraction = ((ratio - 1.0).abs() > clip_range).float().mean()
    stats = LossStats(
        *(float(x.detach()) for x in (loss, policy_loss, value_loss, entropy, approx_kl, clip_fraction))
    )
    return loss, stats


def schedule_value(start: float, end: float | None, kind: str, progress: float) -> float:
    """A scheduled value at ``progress`` in [0, 1] of the run.

    ``constant``: ``start``; ``linear``: from ``start`` to ``end`` (0 when ``end`` is None);
    ``cosine``: the same ends on a half cosine.

    >>> schedule_value(1.0, 0.0, "linear", 0.25), schedule_value(1.0, None, "constant", 0.9)
    (0.75, 1.0)
    """
    p = min(max(float(progress), 0.0), 1.0)
    if kind == "constant":
        return float(start)
    stop = 0.0 if end is None else float(end)
    if kind == "linear":
        return float(start + (stop - start) * p)
    if kind == "cosine":
        return float(stop + (start - stop) * 0.5 * (1.0 + math.cos(math.pi * p)))
    raise ValueError(f"unknown schedule {kind!r}; allowed: constant, linear, cosine")


# ---------------------------------------------------------------------------- the rollout
class LeadPotential:
    """The shaping potential of Farkle observations (``reward_shaping``): ``coef`` times the learner's
    lead counting the points in hand, ``(own banked + turn total - best other banked) / target``.

    The rollout adds ``gamma * phi(s') - phi(s)`` to each reward, with ``phi = 0`` once the game is
    over. Such potential-based shaping leaves the best policy unchanged (Ng, Harada & Russell,
    1999); with ``gamma = 1`` the shaped terms of a game sum to ``-phi`` of its first observation.

    >>> from dice_envs.rules import make_rules
    >>> from dice_envs.layouts import layout
    >>> lay = layout(make_rules("farkle"), 2)
    >>> obs = np.zeros((1, lay.size), dtype=np.float32)
    >>> obs[0, lay.index("turn_total")] = 500 / lay.scale("turn_total")
    >>> obs[0, lay.index("lead")] = 1000 / lay.scale("lead")  # the other seat leads by 1000
    >>> LeadPotential(make_rules("farkle"), 2, coef=2.0)(obs).tolist()
    [-0.1]
    """

    def __init__(self, rules: Any, num_players: int, coef: float) -> None:
        from dice_envs.layouts import layout

        self.layout, self.coef, self.target = layout(rules, num_players), float(coef), float(rules.target)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """``phi`` of each row of ``obs`` (float64 ``(B,)``)."""
        lay = self.layout
        points = lay.read(obs, "turn_total") - lay.read(obs, "lead")
        return self.coef * points / self.target


class RolloutBuffer:
    """Preallocated ``(n_steps, n_envs, ...)`` tensors of one rollout, on the training device."""

    def __init__(self, n_steps: int, n_envs: int, obs_size: int, n_actions: int, device: str) -> None:
        shape = (n_steps, n_envs)
        self.obs = torch.zeros((*shape, obs_size), dtype=torch.float32, device=device)
        self.masks = torch.zeros((*shape, n_actions), dtype=torch.bool, device=device)
        self.actions = torch.zeros(shape, dtype=torch.long, device=device)
        self.logprobs = torch.zeros(shape, dtype=torch.float32, device=device)
        self.values = torch.zeros(shape, dtype=torch.float32, device=device)
        self.rewards = torch.zeros(shape, dtype=torch.float32, device=device)
        self.dones = torch.zeros(shape, dtype=torch.float32, device=device)

    def flat(self, advantages: torch.Tensor, returns: torch.Tensor) -> dict[str, torch.Tensor]:
        """The rollout as one batch of ``n_steps * n_envs`` samples."""
        return {
            "obs": self.obs.flatten(0, 1),
            "masks": self.masks.flatten(0, 1),
            "actions": self.actions.flatten(),
            "logprobs": self.logprobs.flatten(),
            "values": self.values.flatten(),
            "advantages": advantages.flatten(),
            "returns": returns.flatten(),
        }
