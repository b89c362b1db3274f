"""Ensembles of trained policies, merged into one ordinary network (and one ordinary model file).

``K`` flat MLP policies (same game, same depth) are merged *exactly* into one wider
``MaskableActorCriticPolicy``: each hidden layer is the members' layers side by side (the first
stacked, the deeper ones block-diagonal), and the action and value heads average the members'
heads. So the merged logits are the mean of the members' (a product of experts) and so is the
value; docs/guide/training.md, "Ensembles", says what for and how the shipped bot uses it.

>>> import numpy as np, torch
>>> from agents.models.card import card_spaces, make_card
>>> from agents.training.policy import SpacesOnlyEnv
>>> from dice_envs.rules import make_rules
>>> from sb3_contrib import MaskablePPO
>>> env = SpacesOnlyEnv(*card_spaces(make_card(make_rules("farkle"), 2)))
>>> members = [MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [8, 4]}, n_steps=8, batch_size=8,
...            seed=s, device="cpu").policy for s in (0, 1)]
>>> merged = merge_policies(members)
>>> merged.net_arch
{'pi': [16, 8], 'vf': [16, 8]}
>>> obs = torch.rand(3, env.observation_space.shape[0])
>>> mean = sum(policy_logits(p, obs) for p in members) / 2
>>> bool(torch.allclose(policy_logits(merged, obs), mean, atol=1e-6))
True
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dice_envs.rules import ConfigError

__all__ = ["ENSEMBLE_METHOD", "merge_model_files", "merge_policies", "policy_logits"]

#: What a merged model's card says its network computes.
ENSEMBLE_METHOD = "mean of the members' action logits (product of experts) and of their values"


def policy_logits(policy: Any, obs: Any) -> Any:
    """The raw action logits ``(B, A)`` of a ``MaskableActorCriticPolicy`` (no mask applied)."""
    import torch

    with torch.no_grad():
        features = policy.extract_features(obs, policy.pi_features_extractor)
        return policy.action_net(policy.mlp_extractor.forward_actor(features))


def _layers(net: Any) -> list[Any]:
    import torch.nn as nn

    return [m for m in net if isinstance(m, nn.Linear)]


def _check_members(policies: Sequence[Any]) -> None:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import FlattenExtractor

    if len(policies) < 2:
        raise ConfigError(f"an ensemble needs at least 2 policies, got {len(policies)}")
    first = policies[0]
    for i, p in enumerate(policies):
        if type(p) is not MaskableActorCriticPolicy:
            raise ConfigError(
                f"member {i}: only flat MLP policies (MaskableActorCriticPolicy) can be merged, "
                f"got {type(p).__name__}"
            )
        if not isinstance(p.features_extractor, FlattenExtractor):
            raise ConfigError(
                f"member {i}: needs the flat features extractor, got {type(p.features_extractor).__name__}"
            )
        if p.observation_space != first.observation_space or p.action_space != first.action_space:
            raise ConfigError(
                f"member {i}: observation/action spaces {p.observation_space}, {p.action_space} differ from "
                f"member 0's {first.observation_space}, {first.action_space}"
            )
        if p.activation_fn is not first.activation_fn:
            raise ConfigError(
                f"member {i}: activation {p.activation_fn.__name__} differs from member 0's "
                f"{first.activation_fn.__name__}"
            )
        for net in ("policy_net", "value_net"):
            depth = len(_layers(getattr(p.mlp_extractor, net)))
            want = len(_layers(getattr(first.mlp_extractor, net)))
            if depth != want:
                raise ConfigError(f"member {i}: {net} has {depth} hidden layers, member 0's has {want}")


def merge_policies(policies: Sequence[Any]) -> Any:
    """One ``MaskableActorCriticPolicy`` (on the CPU, in eval mode) computing the mean logits and
    mean value of ``policies``: flat MLP policies with the same spaces, activation and depth
    (widths may differ; ``ConfigError`` names a member that does not fit)."""
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    _check_members(policies)
    members = [copy.deepcopy(p).cpu() for p in policies]
    k = len(members)
    arch = {
        key: [
            sum(_layers(getattr(p.mlp_extractor, net))[j].out_features for p in members)
            for j in range(len(_layers(getattr(members[0].mlp_extractor, net))))
        ]
        for key, net in (("pi", "policy_net"), ("vf", "value_net"))
    }
    first = members[0]
    merged = MaskableActorCriticPolicy(
        first.observation_space,
        first.action_space,
        lambda _: 0.0,
        net_arch=arch,
        activation_fn=first.activation_fn,
        share_features_extractor=first.share_features_extractor,
    )
    with torch.no_grad():
        for net, head in (("policy_net", "action_net"), ("value_net", "value_net")):
            out_layers = _layers(getattr(merged.mlp_extractor, net))
            for j, out in enumerate(out_layers):
                out.weight.zero_()
                row = col = 0
                for p in members:
                    layer = _layers(getattr(p.mlp_extractor, net))[j]
                    rows = layer.out_features
                    if j == 0:  # every member reads the whole observation
                        out.weight[row : row + rows] = layer.weight
                    else:
                        cols = layer.in_features
                        out.weight[row : row + rows, col : col + cols] = layer.weight
                        col += cols
                    out.bias[row : row + rows] = layer.bias
                    row += rows
            target = getattr(merged, head)
            target.weight.copy_(torch.cat([getattr(p, head).weight for p in members], dim=1) / k)
            target.bias.copy_(sum(getattr(p, head).bias for p in members) / k)
    merged.set_training_mode(False)
    return merged


def _same_file(a: Path, b: Path) -> bool:
    """Whether paths ``a`` and ``b`` name one file (links and ``..`` resolved)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return a.expanduser().resolve() == b.expanduser().resolve()


def _check_distinct(
    paths: Sequence[str | Path], resolved: Sequence[Path], cards: Sequence[dict[str, Any]], out: str | Path
) -> None:
    """Refuse a member given twice (same file or same weights) and an ``out`` that is a member."""
    out_path = Path(out)
    for i, (spec, p, card) in enumerate(zip(paths, resolved, cards, strict=True)):
        if _same_file(out_path, p) or _same_file(out_path.with_suffix(".json"), p.with_suffix(".json")):
            raise ConfigError(
                f"the output {str(out)!r} is member {i} ({str(spec)!r}): the merge would replace its own "
                "input (even with --force); write the ensemble to a new file"
            )
        for j in range(i):
            other = str(paths[j])
            if _same_file(p, resolved[j]):
                raise ConfigError(
                    f"member {i} ({str(spec)!r}) is the same file as member {j} ({other!r}); "
                    "give each model once"
                )
            sha = card.get("weights_sha256")
            if sha is not None and sha == cards[j].get("weights_sha256"):
                raise ConfigError(
                    f"member {i} ({str(spec)!r}) has the same weights as member {j} ({other!r}) "
                    f"(weights_sha256 {str(sha)[:16]}...); give each model once"
                )


def merge_model_files(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    overwrite: bool = False,
    command: str = "",
) -> Path:
    """Merge the model files ``paths`` (``.zip`` with their cards, or ``pretrained:<name>``) into
    the model ``out`` (card beside it, written atomically; an existing one only with
    ``overwrite``); return its path.

    All members must be for the same game, rules, players and encoding. The card is member 0's
    with the members' training summed (:func:`~agents.models.card.lineage_totals`: a start model
    they share counts once), an empty ``evaluation`` and ``ensemble``: the method and each
    member's file, checksum, seed, steps, wall time and machine. A member given twice (same file
    or same ``weights_sha256``) and an ``out`` that is a member are refused by name.
    """
    from sb3_contrib import MaskablePPO

    from agents.models.card import lineage_totals, make_card, read_card, training_totals
    from agents.models.files import load_policy, save_model
    from agents.players.model import resolve_model_path
    from agents.training.policy import SpacesOnlyEnv

    resolved = [resolve_model_path(str(p)) for p in paths]
    cards = [read_card(p) for p in resolved]
    _check_distinct(paths, resolved, cards, out)
    keys = ("game", "rules", "num_players", "observation_encoding", "n_actions")
    for p, card in zip(resolved[1:], cards[1:], strict=True):
        for key in keys:
            if card.get(key) != cards[0].get(key):
                raise ConfigError(
                    f"{p}: its card's {key} {card.get(key)!r} differs from "
                    f"{resolved[0]}'s {cards[0].get(key)!r}; "
                    "only models of one game, rules and encoding can be merged"
                )
    policies = [load_policy(p, c) for p, c in zip(resolved, cards, strict=True)]
    merged = merge_policies(policies)
    model = MaskablePPO(
        "MlpPolicy",
        SpacesOnlyEnv(merged.observation_space, merged.action_space),
        policy_kwargs={
            "net_arch": merged.net_arch,
            "activation_fn": merged.activation_fn,
            "share_features_extractor": merged.share_features_extractor,
        },
        n_steps=8,
        batch_size=8,
        device="cpu",
    )
    model.policy.load_state_dict(merged.state_dict(), strict=True)
    from dice_envs.rules import make_rules

    base = cards[0]
    total_steps, total_wall = lineage_totals(cards)  # a start model shared by members counts once
    card = make_card(
        make_rules(base["game"], **base["rules"]),
        int(base["num_players"]),
        algorithm=str(base.get("algorithm", "MaskablePPO")),
        config=copy.deepcopy(base.get("config", {})),
        steps=total_steps,
        wall_time_s=total_wall,
        command=command,
        provenance=True,
        observation_encoding=base["observation_encoding"],
        env_id=base["env_id"],
        ensemble={
            "method": ENSEMBLE_METHOD,
            "members": [
                {
                    "file": str(spec),
                    "weights_sha256": c.get("weights_sha256"),
                    "seed": c.get("seed", c.get("config", {}).get("seed")),
                    "steps": training_totals(c)[0],
                    "wall_time_s": training_totals(c)[1],
                    "machine": c.get("machine"),
                    "command": c.get("command"),
                }
                for spec, c in zip(paths, cards, strict=True)
            ],
        },
    )
    for key in ("trainer", "warm_start"):
        if key in base:
            card[key] = base[key]
    return save_model(model, out, card, overwrite=overwrite)
