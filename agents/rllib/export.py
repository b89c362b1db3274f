"""Export a trained RLlib policy as an sb3-contrib ``MaskablePPO`` zip plus its model card.

The :class:`~agents.rllib.module.MaskedPPOModule` has exactly the parameters (names and shapes)
of the ``MaskableActorCriticPolicy`` that :func:`agents.training.ppo.make_model` builds for the
same ``net_arch`` / ``activation``, so the export is a 1:1 copy of the weights. The result is an
ordinary model of this project: ``agents.load(path, game=...)``, ``gym.make(...,
opponents=[path])``, ``scripts/evaluate.py --agents path`` and ``MaskablePPO.load(path)`` take it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dice_envs.rules import ConfigError, RuleConfig, make_rules

from .module import MaskedPPOModule
from .selfplay import LEARNER

__all__ = ["export_policy", "learner_module"]


def learner_module(source: Any, module_id: str = LEARNER) -> MaskedPPOModule:
    """The :class:`MaskedPPOModule` of ``source``: the module itself, or an RLlib ``Algorithm``."""
    if isinstance(source, MaskedPPOModule):
        return source
    get_module = getattr(source, "get_module", None)
    if callable(get_module):
        module = get_module(module_id)
        if isinstance(module, MaskedPPOModule):
            return module
        raise ConfigError(
            f"module {module_id!r} of the algorithm is {type(module).__name__}, not MaskedPPOModule"
        )
    raise TypeError(
        f"export_policy needs an RLlib Algorithm or a MaskedPPOModule, got {type(source).__name__}"
    )


def export_policy(
    source: Any,
    path: str | Path,
    game: str | RuleConfig,
    num_players: int,
    *,
    module_id: str = LEARNER,
    steps: int = 0,
    wall_time_s: float = 0.0,
    evaluation: Mapping[str, Any] | None = None,
    command: str = "",
    seed: int = 0,
    config: Mapping[str, Any] | None = None,
    overwrite: bool = False,
) -> tuple[Path, Path]:
    """Write ``path`` (sb3-contrib zip) and its card (same stem, ``.json``); return both paths.

    ``source``: an RLlib ``Algorithm`` (its ``module_id`` module) or a ``MaskedPPOModule``.
    ``game``: the game name or rule configuration it was trained on (the card records it and
    ``agents.load`` checks it). Refuses to replace an existing file unless ``overwrite``.
    """
    import torch

    from ..model_card import card_path, make_card
    from ..model_io import save_model
    from ..training.config import TrainConfig
    from ..training.ppo import make_model

    module = learner_module(source, module_id)
    rules = make_rules(game)
    path = Path(path)
    if path.suffix != ".zip":
        raise ConfigError(f"the exported model's path must end in .zip, got {path}")
    card_file = path.with_suffix(".json")
    if not overwrite:
        for p in (path, card_file):
            if p.exists():
                raise ConfigError(f"{p} exists; choose another path or pass overwrite=True")
    cfg = TrainConfig.from_dict(
        {
            "name": "rllib",
            "game": rules.game,
            "rules": rules.to_dict(),
            "num_players": int(num_players),
            "net_arch": list(module.net_arch),
            "activation": module.activation,
            "seed": int(seed),
        }
    )
    obs_space = module.observation_space["observations"]
    model = make_model(cfg, obs_space, module.action_space, device="cpu")
    state = module.policy_state()
    target = model.policy.state_dict()
    if set(state) != set(target) or any(state[k].shape != target[k].shape for k in target):
        raise ConfigError(
            "the RLlib module's layers do not match the sb3 policy: "
            f"{sorted((k, tuple(v.shape)) for k, v in state.items())} vs "
            f"{sorted((k, tuple(v.shape)) for k, v in target.items())}"
        )
    with torch.no_grad():
        model.policy.load_state_dict(state, strict=True)
    card = make_card(
        rules,
        int(num_players),
        config={**cfg.to_dict(), **dict(config or {}), "backend": "rllib"},
        steps=int(steps),
        wall_time_s=float(wall_time_s),
        evaluation=dict(evaluation or {}),
        command=command,
        seed=int(seed),
        provenance=True,
        algorithm="PPO (RLlib, MaskedPPOModule) exported to MaskablePPO",
        exported=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    save_model(model, path, card, overwrite=True)  # zip and card, atomically, with checksums
    return path, card_path(path)
