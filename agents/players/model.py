"""Trained models as agents: :class:`ModelAgent`, the one class that lets a policy network play.

A model is a ``MaskablePPO`` zip with its *model card* beside it (:mod:`agents.models.card`).
``agents.load(path)`` and ``pretrained:<name>`` build a :class:`ModelAgent` with
:meth:`ModelAgent.from_file`, only for the game, rules and encoding on its card, in any seat a
seat view exists for (:mod:`agents.models.seat_views`).

The training pipeline wraps its in-memory networks in the same class: evaluation of a model
being trained, behaviour cloning's accuracy check, self-play snapshots.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import BaseAgent, check_mask, legal_rows
from agents.models.card import fit_card, read_card
from agents.models.seat_views import SeatView
from dice_envs.rules import ConfigError, RuleConfig

__all__ = ["MODEL_SUFFIXES", "PRETRAINED_DIR", "ModelAgent", "pretrained_names", "resolve_model_path"]

#: Model files: policies (``.zip``, sb3-contrib) and value models (``.npz``, :mod:`agents.players.search`).
MODEL_SUFFIXES = (".zip", ".npz")
#: Where ``pretrained:<name>`` models live.
PRETRAINED_DIR = Path(__file__).resolve().parents[1] / "pretrained"


def pretrained_names() -> list[str]:
    """Names ``<name>`` of the models usable as ``pretrained:<name>``."""
    if not PRETRAINED_DIR.is_dir():
        return []
    return sorted(p.stem for p in PRETRAINED_DIR.iterdir() if p.suffix in MODEL_SUFFIXES)


def resolve_model_path(spec: str) -> Path:
    """The model file named by a ``pretrained:<name>`` spec or a path, checked; ``ConfigError`` if not.

    ``<name>`` must be one of :func:`pretrained_names` (no paths: ``/``, ``\\``, ``..`` are
    refused); a path must be an existing ``.zip`` (or value model ``.npz``) file with its card beside it.
    """
    from agents.models.files import check_model_path

    if spec.startswith("pretrained:"):
        name = spec.split(":", 1)[1]
        known = pretrained_names()
        if name not in known:
            raise ConfigError(
                f"no pretrained model {name!r} in {PRETRAINED_DIR}; "
                f"available: {', '.join(known) or 'none yet'}"
                " (pretrained:<name> takes only these names; give other models as a path to their .zip)"
            )
        return next(p for s in MODEL_SUFFIXES if (p := PRETRAINED_DIR / f"{name}{s}").is_file())
    return check_model_path(spec)


class ModelAgent(BaseAgent):
    """A policy network as an agent: masked argmax (``deterministic``) or masked sampling, batched.

    ``policy`` is a sb3-contrib ``MaskableActorCriticPolicy`` or a ``MaskablePPO`` holding one;
    sampling draws from the agent's seeded generator. ``view`` (a
    :data:`~agents.models.seat_views.SeatView`) turns a table's observations into the model's.
    :meth:`from_file` also sets ``path``, ``card``, ``rules`` and ``num_players``.
    """

    def __init__(
        self,
        policy: Any,
        deterministic: bool = True,
        name: str = "trained",
        seed: int | None = None,
        view: SeatView | None = None,
    ) -> None:
        super().__init__(seed)
        self.policy = getattr(policy, "policy", policy)
        self.deterministic = deterministic
        self.spec = name
        self.view = view
        self.path: Path | None = None
        self.card: dict[str, Any] | None = None
        self.rules: RuleConfig | None = None
        self.num_players: int | None = None

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        rules: RuleConfig,
        num_players: int = 1,
        seed: int | None = None,
        device: str = "cpu",
        allow_rules: Sequence[str] = (),
        deterministic: bool = True,
    ) -> ModelAgent:
        """The model at ``path`` (a ``.zip`` or ``pretrained:<name>``) in a seat of a ``num_players``
        game of ``rules``: weights only (:func:`agents.models.files.load_policy`), the card fitted by
        :func:`~agents.models.card.fit_card` (rule parameters in ``allow_rules`` may differ)."""
        from agents.models.files import load_policy  # weights only: nothing in the file is unpickled

        resolved = resolve_model_path(str(path))
        card = read_card(resolved)
        view = fit_card(card, rules, num_players, allow_rules)
        agent = cls(
            load_policy(resolved, card, device=device),
            deterministic=deterministic,
            name=str(path),
            seed=seed,
            view=view,
        )
        n_act = int(agent.policy.action_space.n)
        if n_act != card["n_actions"]:
            raise ConfigError(f"{resolved}: the model has {n_act} actions, its card says {card['n_actions']}")
        agent.path, agent.card, agent.rules, agent.num_players = resolved, card, rules, num_players
        return agent

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        check_mask(action_mask, self.rules)
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions of a whole batch in one forward pass (seen through the seat view, if any)."""
        import torch

        masks = legal_rows(action_masks)
        obs = np.asarray(observations, dtype=np.float32)
        if self.view is not None:
            obs = self.view(obs)
        width = int(np.prod(self.policy.observation_space.shape))
        if obs.ndim != 2 or obs.shape[1] != width:
            raise ValueError(f"observations of shape {obs.shape}, the network reads (batch, {width})")
        with torch.no_grad():
            tensor = torch.as_tensor(obs, device=self.policy.device)
            probs = self.policy.get_distribution(tensor, action_masks=masks).distribution.probs
            if self.deterministic:  # the distribution's mode, as sb3's predict(deterministic=True)
                return probs.argmax(dim=1).cpu().numpy().astype(np.int64)
            probs = probs.cpu().numpy().astype(np.float64)
        return _sample(np.where(masks, probs, 0.0), masks, self.rng)


def _sample(probs: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row drawn from ``probs`` (zero off the mask) by inverse-CDF sampling."""
    cdf = np.cumsum(probs, axis=1)
    u = rng.random(len(probs))[:, None] * cdf[:, -1:]
    actions = np.minimum((cdf <= u).sum(axis=1), masks.shape[1] - 1)
    # guard against float edges: fall back to the most likely legal action
    bad = ~masks[np.arange(len(actions)), actions]
    actions[bad] = np.argmax(np.where(masks[bad], probs[bad], -1.0), axis=1)
    return actions.astype(np.int64)
