"""Warm start of a fresh run (:func:`warm_start`): behaviour cloning of an expert
(:mod:`agents.training.bc`), or the weights of a trained model (``warm_start: model``,
:func:`start_from_model`; docs/guide/training.md, "Fine-tuning"). Only the weights are taken; the
card records what the run started from under ``evaluation.warm_start``, so that
:func:`agents.models.card.training_totals` can add the lineage up.
"""

from __future__ import annotations

from typing import Any

from agents.training.config import TrainConfig
from dice_envs.rules import ConfigError

__all__ = ["start_from_model", "warm_start"]


def warm_start(model: Any, cfg: TrainConfig, device: str = "cpu") -> dict[str, Any] | None:
    """Warm-start a fresh run's ``model`` (a ``MaskablePPO``) as ``cfg.warm_start`` says; return the
    record its card keeps under ``evaluation.warm_start`` (``None`` for ``none``)."""
    if cfg.warm_start == "model":
        record = start_from_model(model.policy, cfg, device)
        print(f"warm start: the weights of {cfg.init_model} ({record['steps']} steps of training)")
        return record
    if cfg.warm_start != "bc":
        return None
    from agents.training.bc import behaviour_clone

    bc = behaviour_clone(model, cfg)
    print(
        f"warm start: {bc.samples} decisions of {bc.expert!r} "
        f"(expert's mean return {bc.expert_mean_return:.2f}), "
        f"accuracy {bc.accuracy:.3f}, {bc.collect_s + bc.fit_s:.0f}s"
    )
    record = bc.to_dict()
    spec = cfg.expert_spec.strip()
    if spec.lower().startswith(("planner:", "search:")):  # expert iteration: the model it searched over
        from agents.registry import planner_model

        spec = planner_model(spec)
    if spec.lower().startswith("pretrained:") or spec.lower().endswith((".zip", ".npz")):  # a model's lineage
        record["expert_model"] = _lineage(spec)
    return {"kind": "bc", **record}


def _lineage(spec: str) -> dict[str, Any]:
    """What a warm start took from the model ``spec``: its file's checksum, its recipe and the steps
    and wall time of its whole training (:func:`agents.models.card.training_totals`)."""
    from agents.models.card import read_card, training_totals
    from agents.players.model import resolve_model_path

    card = read_card(resolve_model_path(spec))
    steps, wall = training_totals(card)
    return {
        "model": spec,
        "weights_sha256": card.get("weights_sha256"),
        "name": card.get("config", {}).get("name"),
        "seed": card.get("seed"),
        "steps": steps,
        "wall_time_s": wall,
        "command": card.get("command"),
    }


def _expected_network(cfg: TrainConfig) -> dict[str, Any]:
    """The network a run of ``cfg`` builds, in the terms of :func:`agents.models.card.network_spec`."""
    afterstate = cfg.policy_head == "afterstate"
    want: dict[str, Any] = {
        "class": "FarkleAfterstatePolicy" if afterstate else "MaskableActorCriticPolicy",
        "net_arch": list(cfg.net_arch),
        "activation": cfg.activation,
        "share_features_extractor": True,
    }
    if afterstate:
        want["head_width"] = cfg.head_width
    return want


def _arch_as_list(arch: Any) -> Any:
    """A ``{"pi": h, "vf": h}`` architecture with equal halves is the list ``h`` (what configs write)."""
    if isinstance(arch, dict) and set(arch) == {"pi", "vf"} and arch["pi"] == arch["vf"]:
        return list(arch["pi"])
    return arch


def start_from_model(policy: Any, cfg: TrainConfig, device: str = "cpu") -> dict[str, Any]:
    """Copy the weights of ``cfg.init_model`` into ``policy`` (the run's fresh network); the
    ``warm_start`` record of the run's card. :class:`ConfigError` names each mismatch when the
    model does not fit ``cfg`` (same game, rules, seats, encoding and network), and the values
    that would."""
    from agents.models.card import check_card, network_spec, read_card
    from agents.models.files import load_policy
    from agents.players.model import resolve_model_path
    from dice_envs.encoding import encoding_id

    spec = cfg.init_model
    path = resolve_model_path(spec)
    card = read_card(path)
    rules = cfg.rule_config()
    try:
        check_card(card, rules, cfg.num_players)  # an older encoding that the current one begins with passes
    except ConfigError as exc:
        raise ConfigError(
            f"init_model {spec}: {exc} (the run's game, rules and num_players must fit it)"
        ) from None
    found = network_spec(card, str(path))
    want = _expected_network(cfg)
    bad = [
        f"{key}: the config asks for {want[key]!r}, the model has {found_value!r}"
        for key in want
        if (found_value := _arch_as_list(found.get(key))) != want[key]
    ]
    if bad:
        fits = {"policy_head": "afterstate" if found["class"] == "FarkleAfterstatePolicy" else "flat"}
        fits.update(
            {k: _arch_as_list(found[k]) for k in ("net_arch", "activation", "head_width") if k in found}
        )
        hint = "a config that fits it sets " + ", ".join(f"{k}: {v}" for k, v in fits.items())
        raise ConfigError(
            f"init_model {spec}: the network does not fit the config ({'; '.join(bad)}); {hint}"
        )
    source = load_policy(path, card, device=device)
    state = source.state_dict()
    widened = None
    if card.get("observation_encoding") != encoding_id(rules):
        state = _widen_inputs(state, policy.state_dict(), found["class"], spec)
        widened = card.get("observation_encoding")
    policy.load_state_dict(state, strict=True)
    lineage = _lineage(spec)
    del lineage["model"]
    return {
        "kind": "model",
        "init_model": spec,
        **lineage,
        **({"widened_from_encoding": widened} if widened else {}),
    }


def _widen_inputs(state: dict[str, Any], target: dict[str, Any], cls: str, spec: str) -> dict[str, Any]:
    """The weights of a model of an older observation encoding, the leading part of today's
    (:func:`dice_envs.layouts.legacy_size`): each input layer gets zero columns for the new fields,
    so the widened network computes exactly what the model did."""
    import torch

    if cls != "MaskableActorCriticPolicy":
        raise ConfigError(
            f"init_model {spec}: a {cls} of an older observation encoding cannot be widened to today's "
            "(only flat MaskableActorCriticPolicy networks are); it can still play through agents.load"
        )
    out = dict(state)
    for name, weight in state.items():
        want = target[name].shape
        if weight.shape == want:
            continue
        if weight.dim() == 2 and weight.shape[0] == want[0] and weight.shape[1] < want[1]:
            pad = torch.zeros(want[0], want[1] - weight.shape[1], dtype=weight.dtype, device=weight.device)
            out[name] = torch.cat([weight, pad], dim=1)
        else:  # pragma: no cover - only input layers read the observation
            raise ConfigError(
                f"init_model {spec}: {name} has shape {tuple(weight.shape)}, the run needs {tuple(want)}"
            )
    return out
