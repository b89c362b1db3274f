"""A Farkle policy that scores each action by the state it leads to (``policy_head: afterstate``).

Which dice a Farkle action sets aside matters only through what follows: the points they add and
the dice thrown next. The flat head (one ``Linear`` to 128 logits) learns that for every selection
of every throw on its own; :class:`FarkleAfterstatePolicy` scores every action's *afterstate* with
one shared small network, so what is learnt about one throw carries to every other.

Per action, ``[bank, one-hot dice thrown next (zeros when banking), points / 1000, new turn
total / 1000]``, computed from the observation itself (:meth:`FarkleAfterstateHead.features`). The
logit of an action is ``u(h) . phi(a) + c(a)``: ``h`` the actor MLP's last hidden layer, ``a`` the
action's afterstate and ``phi(a) = relu(F a + b)``; the critic is the usual MLP.

It is a ``MaskableActorCriticPolicy`` subclass (``MaskablePPO.load`` works with ``dice-envs``
installed; :func:`agents.models.files.load_policy` rebuilds it from the card); the points table is
a non-persistent buffer, so the file holds weights only.

>>> import torch
>>> from dice_envs.envs.farkle import FarkleEnv
>>> env = FarkleEnv(opponents=["random"])
>>> policy = FarkleAfterstatePolicy(env.observation_space, env.action_space, lambda _: 1e-3)
>>> obs, info = env.reset(seed=3)
>>> logits = policy.action_net(policy.mlp_extractor.forward_actor(torch.as_tensor(obs[None])))
>>> tuple(logits.shape)
(1, 128)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn

from dice_envs.layouts import layout
from dice_envs.rules import make_rules
from dice_envs.rules.farkle import NUM_DICE, dice_to_throw, score

__all__ = ["FarkleAfterstateHead", "FarkleAfterstatePolicy", "ObsPassingExtractor", "points_table"]

_FACES = 6
_FEATURES = 1 + NUM_DICE + 2  # bank, dice thrown next (one-hot), points, new turn total


def points_table() -> np.ndarray:
    """Points of setting aside dice with face counts ``c`` (``c[f]`` dice showing ``f + 1``), at
    index ``sum(c[f] * 7**f)``; 0 where the dice do not all score (or none are set aside).

    >>> t = points_table()
    >>> int(t[1]), int(t[3 * 7**4]), int(t[1 + 7**4]), int(t[7])
    (100, 500, 150, 0)
    """
    table = np.zeros(7**_FACES, dtype=np.float32)
    for code in range(1, 7**_FACES):
        counts = [code // 7**f % 7 for f in range(_FACES)]
        if sum(counts) <= NUM_DICE:
            table[code] = score([f + 1 for f in range(_FACES) for _ in range(counts[f])])
    return table


class ObsPassingExtractor(MlpExtractor):
    """SB3's ``MlpExtractor`` whose actor latent also carries the features it was given:
    ``cat(policy_net(x), x)`` (the head reads the dice from them); the critic is unchanged
    (``MlpExtractor.forward`` calls both)."""

    def __init__(self, feature_dim: int, **kwargs: Any) -> None:
        super().__init__(feature_dim, **kwargs)
        self.hidden_dim_pi = self.latent_dim_pi
        self.latent_dim_pi += feature_dim

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.policy_net(features), features], dim=-1)


class FarkleAfterstateHead(nn.Module):
    """Logits ``(B, 128)`` from ``cat(h, obs)``: ``u(h) . phi(afterstate)`` for every action.

    An afterstate is the kind of the action (bank, or throw on with 1-6 dice) and the points it sets
    aside, a few hundred in all: ``phi`` of all of them, one matrix product ``u(h) @ phi.T``, and
    each action's logit gathered from its afterstate's score.
    """

    def __init__(self, hidden_dim: int, num_players: int, width: int) -> None:
        super().__init__()
        lay = layout(make_rules("farkle"), num_players)
        self.hidden_dim = int(hidden_dim)
        self.dice = lay.slice("dice")
        self.turn_total = lay.index("turn_total")
        self.tt_scale = float(lay.scale("turn_total"))
        self.state = nn.Linear(self.hidden_dim, width)
        self.action = nn.Linear(_FEATURES - 1, width)
        self.out = nn.Linear(width, 1)
        bits = np.array([[m >> i & 1 for i in range(NUM_DICE)] for m in range(2**NUM_DICE)], np.float32)
        kept = bits.sum(axis=1)
        self.register_buffer("bits", torch.from_numpy(bits), persistent=False)
        self.register_buffer("kept", torch.from_numpy(kept), persistent=False)
        self.register_buffer("pow7", torch.tensor([7.0**f for f in range(_FACES)]), persistent=False)
        table = points_table()
        self.register_buffer("points", torch.from_numpy(table / self.tt_scale), persistent=False)
        values, rank = np.unique(table, return_inverse=True)  # each code's rank among the point values
        self.num_points = len(values)
        rank = torch.from_numpy(rank.reshape(-1).astype(np.int64))
        self.register_buffer("point_rank", rank, persistent=False)
        # The afterstates, kind-major (kind 0 banks, kind n throws n dice on): [bank, one-hot dice
        # thrown next, points], the first 8 of the per-action features (the new turn total is the
        # state's turn total plus the points, so u(h) carries it).
        kinds = np.zeros((1 + NUM_DICE, 1 + NUM_DICE), np.float32)
        kinds[0, 0] = 1.0
        kinds[1:, 1:] = np.eye(NUM_DICE, dtype=np.float32)
        points = np.tile(values / self.tt_scale, 1 + NUM_DICE)[:, None]
        grid = np.concatenate([np.repeat(kinds, len(values), axis=0), points], axis=1)
        self.register_buffer("afterstates", torch.from_numpy(grid.astype(np.float32)), persistent=False)

    def _selections(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per selection of the dice (B, 64): its face-count code, its points and the dice thrown next."""
        b = obs.shape[0]
        dice = obs[:, self.dice].reshape(b, NUM_DICE, _FACES)
        counts = torch.einsum("mi,bif->bmf", self.bits, dice)  # faces set aside by each selection
        code = (counts @ self.pow7).round().long().clamp_(0, self.points.numel() - 1)
        thrown = dice.sum(dim=(1, 2)).round()
        after = dice_to_throw(thrown[:, None], self.kept[None, :])  # six after hot dice
        after = after.long().clamp_(1, NUM_DICE)
        return code, self.points[code], after

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        """The ``(B, 128, 9)`` afterstate features of every action of each observation:
        ``[bank, one-hot dice thrown next (zeros when banking), points / 1000, new turn total / 1000]``."""
        _, points, after = self._selections(obs)
        onehot = nn.functional.one_hot(after - 1, NUM_DICE).to(obs.dtype)
        total = obs[:, self.turn_total, None] + points
        zeros = torch.zeros_like(points)[..., None]
        throw = torch.cat([zeros, onehot, points[..., None], total[..., None]], dim=-1)
        bank = torch.cat([zeros + 1.0, torch.zeros_like(onehot), points[..., None], total[..., None]], dim=-1)
        return torch.cat([throw, bank], dim=1)  # action = mask + 64 * bank

    def afterstate_index(self, obs: torch.Tensor) -> torch.Tensor:
        """``(B, 128)`` row of :attr:`afterstates` that each action leads to."""
        code, _, after = self._selections(obs)
        rank = self.point_rank[code]
        return torch.cat([after * self.num_points + rank, rank], dim=1)  # throw rows, then bank rows

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        h, obs = latent[:, : self.hidden_dim], latent[:, self.hidden_dim :]
        phi = torch.relu(self.action(self.afterstates))  # (K, width)
        scores = self.state(h) @ phi.T + self.out(phi).T  # (B, K)
        return scores.gather(1, self.afterstate_index(obs))


class FarkleAfterstatePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` with :class:`FarkleAfterstateHead` as its ``action_net``.

    ``head_width``: hidden units of the shared action scorer; ``num_players``: the seats of the
    observation's layout. Every other argument is ``MaskableActorCriticPolicy``'s.
    """

    def __init__(self, *args: Any, head_width: int = 64, num_players: int = 2, **kwargs: Any) -> None:
        self.head_width = int(head_width)
        self.num_players = int(num_players)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = ObsPassingExtractor(
            self.features_dim, net_arch=self.net_arch, activation_fn=self.activation_fn, device=self.device
        )

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        head = FarkleAfterstateHead(self.mlp_extractor.hidden_dim_pi, self.num_players, self.head_width)
        if self.ortho_init:
            for layer, gain in ((head.state, 0.01), (head.action, np.sqrt(2)), (head.out, 0.01)):
                self.init_weights(layer, gain=gain)
        self.action_net = head.to(self.device)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(head_width=self.head_width, num_players=self.num_players)
        return data
