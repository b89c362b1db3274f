"""Export a trained RLlib policy as an sb3-contrib ``MaskablePPO`` zip plus its model card.

The :class:`~agents.ray.rllib.module.MaskedPPOModule` has exactly the parameters (names and shapes)
of the ``MaskableActorCriticPolicy`` that :func:`agents.training.policy.make_model` builds for the
same ``net_arch`` / ``activation``, so the export is a 1:1 copy of the weights. The result is an
ordinary model of this project: ``agents.load(path, game=...)``, ``gym.make(...,
opponents=[path])``, ``scripts/evaluate.py --agents path`` and ``MaskablePPO.load(path)`` take it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents.ray.rllib.module import MaskedPPOModule
from agents.ray.rllib.selfplay import LEARNER
from dice_envs.rules import ConfigError, RuleConfig, make_rules

__all__ = ["TRAINER", "algo_settings", "export_policy", "learner_module"]


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


#: RLlib ``PPOConfig`` attributes read into the card's config, by TrainConfig field (same meaning;
#: ``vf_clip_param`` clips the value loss, not the value change of ``clip_range_vf``: left out).
_ALGO_KNOBS = {
    "learning_rate": "lr",
    "batch_size": "minibatch_size",
    "n_epochs": "num_epochs",
    "ent_coef": "entropy_coeff",
    "gamma": "gamma",
    "gae_lambda": "lambda_",
    "clip_range": "clip_param",
    "vf_coef": "vf_loss_coeff",
    "max_grad_norm": "grad_clip",
    "seed": "seed",
}
#: What the card's ``trainer`` says (the native trainer writes its own there).
TRAINER = "RLlib PPO (agents.ray.rllib, MaskedPPOModule, new API stack)"


def algo_settings(source: Any) -> dict[str, Any]:
    """The TrainConfig fields an RLlib ``Algorithm`` ran with (its PPO knobs, ``reward``); empty
    for a bare module. A schedule or an unset value (``grad_clip=None``) is left out."""
    algo_cfg = None if isinstance(source, MaskedPPOModule) else getattr(source, "config", None)
    if algo_cfg is None:
        return {}
    out: dict[str, Any] = {}
    for key, attr in _ALGO_KNOBS.items():
        value = getattr(algo_cfg, attr, None)
        if key == "max_grad_norm" and getattr(algo_cfg, "grad_clip_by", None) != "global_norm":
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = value
    env_cfg = getattr(algo_cfg, "env_config", None)
    if isinstance(env_cfg, Mapping) and env_cfg.get("reward") in ("score", "win"):
        out["reward"] = env_cfg["reward"]
    return out


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
    seed: int | None = None,
    config: Mapping[str, Any] | None = None,
    overwrite: bool = False,
) -> tuple[Path, Path]:
    """Write ``path`` (sb3-contrib zip) and its card (same stem, ``.json``); return both paths.

    ``source``: an RLlib ``Algorithm`` (its ``module_id`` module) or a ``MaskedPPOModule``.
    ``game``: the game name or rule configuration it was trained on (the card records it and
    ``agents.load`` checks it). Refuses to replace an existing file unless ``overwrite``.

    The card's ``config`` holds the run's settings in :class:`~agents.training.config.TrainConfig`
    terms, and only those: the network of the module, the algorithm's PPO knobs
    (:func:`algo_settings`), then ``config`` (its ``TrainConfig`` keys checked as such, e.g.
    :func:`agents.ray.rllib.config.run_settings`; any other key kept as is), plus
    ``trainer: rllib``. ``seed``: default the config's.
    """
    import torch

    from agents.models.card import card_path, make_card
    from agents.models.files import save_model
    from agents.training.config import TrainConfig
    from agents.training.policy import make_model

    module = learner_module(source, module_id)
    rules = make_rules(game)
    path = Path(path)
    if path.suffix != ".zip":
        raise ConfigError(f"the exported model's path must end in .zip, got {path}")
    if not overwrite:
        for p in (path, card_path(path)):
            if p.exists():
                raise ConfigError(f"{p} exists; choose another path or pass overwrite=True")
    values: dict[str, Any] = {"name": "rllib", **algo_settings(source)}
    fields = set(TrainConfig.field_names()) - {"trainer"}
    values.update({k: v for k, v in (config or {}).items() if k in fields})
    extra = {k: v for k, v in (config or {}).items() if k not in fields}
    if seed is not None:
        values["seed"] = seed
    values.update(
        game=rules.game,
        rules=rules.to_dict(),
        num_players=int(num_players),
        net_arch=list(module.net_arch),
        activation=module.activation,
    )
    cfg = TrainConfig.from_dict(values)
    obs_space = module.observation_space["observations"]
    model = make_model(cfg, obs_space, module.action_space, device="cpu")
    try:
        with torch.no_grad():
            model.policy.load_state_dict(module.policy_state(), strict=True)
    except RuntimeError as exc:  # names every missing, unexpected or mis-shaped parameter
        raise ConfigError(f"the RLlib module's layers do not match the sb3 policy: {exc}") from None
    settings = {k: v for k, v in cfg.to_dict().items() if k in values}
    card = make_card(
        rules,
        int(num_players),
        config={**settings, **extra, "trainer": "rllib", "backend": "rllib"},
        steps=int(steps),
        wall_time_s=float(wall_time_s),
        evaluation=dict(evaluation or {}),
        command=command,
        seed=cfg.seed,
        provenance=True,
        algorithm="PPO (RLlib, MaskedPPOModule) exported to MaskablePPO",
        trainer=TRAINER,
        exported=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    save_model(model, path, card, overwrite=True)  # zip and card, atomically, with checksums
    return path, card_path(path)
