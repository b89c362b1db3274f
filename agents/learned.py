"""Trained models as agents, and the model cards that say what a model was trained for.

A model is a ``MaskablePPO`` zip (sb3-contrib; ``torch`` is an optional dependency, imported only
when a model is loaded). Beside it lies its *model card*, a JSON file with the same stem
(``spiffel.zip`` → ``spiffel.json``)::

    {"format": "dice-envs-model-card", "format_version": 1,
     "game": "spiffel", "rules": {...rule parameters...}, "num_players": 1,
     "observation_encoding": "scorecard-v1", "n_actions": 45,
     "algorithm": "MaskablePPO", "config": {...}, "steps": 1000000, "wall_time_s": 812.4,
     "evaluation": {...}, "command": "python scripts/train.py ..."}

A model is only loaded for the game, rules and observation encoding written on its card (rule
parameters changed on purpose through ``agents.load(..., rules=...)`` excepted); anything else
raises :class:`~dice_envs.rules.ConfigError` naming what was expected and what the file holds.
It plays any number of seats for which a seat view exists (:mod:`agents.views`: a solitaire
scorecard model takes any seat of an N-player game, a 2-player Farkle model plays 1-8 players).

>>> from dice_envs.rules import make_rules
>>> card = make_card(make_rules("spiffel"), 1, steps=10)
>>> card["observation_encoding"], card["n_actions"]
('scorecard-v1', 45)
>>> check_card(card, make_rules("dice_poker"), 1)
Traceback (most recent call last):
...
dice_envs.rules.config.ConfigError: the model card does not fit: game: expected 'dice_poker', ...
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dice_envs.encoding import encoding_id, observation_size
from dice_envs.rules import ConfigError, RuleConfig, make_rules

from .base import BaseAgent, check_mask
from .views import SeatView, seat_view

__all__ = [
    "CARD_FORMAT",
    "CARD_VERSION",
    "PRETRAINED_DIR",
    "REQUIRED_KEYS",
    "LearnedAgent",
    "ModelAgent",
    "card_path",
    "check_card",
    "fit_card",
    "make_card",
    "pretrained_names",
    "read_card",
    "resolve_model_path",
    "write_card",
]

CARD_FORMAT = "dice-envs-model-card"
CARD_VERSION = 1
#: Keys every model card holds.
REQUIRED_KEYS = (
    "format",
    "format_version",
    "game",
    "rules",
    "num_players",
    "observation_encoding",
    "n_actions",
    "algorithm",
    "config",
    "steps",
    "wall_time_s",
    "evaluation",
    "command",
)
#: Where ``pretrained:<name>`` models live.
PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"


def card_path(path: str | Path) -> Path:
    """The card of a model file (``x.zip`` → ``x.json``); a ``.json`` path is returned as is."""
    p = Path(path)
    return p if p.suffix == ".json" else p.with_suffix(".json")


def make_card(
    rules: RuleConfig,
    num_players: int,
    *,
    algorithm: str = "MaskablePPO",
    config: dict[str, Any] | None = None,
    steps: int = 0,
    wall_time_s: float = 0.0,
    evaluation: dict[str, Any] | None = None,
    command: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """A complete model card for a model of ``rules`` with ``num_players`` seats."""
    card: dict[str, Any] = {
        "format": CARD_FORMAT,
        "format_version": CARD_VERSION,
        "game": rules.game,
        "rules": _plain(rules.to_dict()),
        "num_players": int(num_players),
        "observation_encoding": encoding_id(rules),
        "n_actions": int(rules.n_actions),  # type: ignore[attr-defined]
        "algorithm": algorithm,
        "config": config or {},
        "steps": int(steps),
        "wall_time_s": float(wall_time_s),
        "evaluation": evaluation or {},
        "command": command,
    }
    card.update(extra)
    return card


def _plain(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


def _validate_format(card: Any, where: str) -> dict[str, Any]:
    if not isinstance(card, dict):
        raise ConfigError(f"{where}: a model card must be a JSON object, got {type(card).__name__}")
    if card.get("format") != CARD_FORMAT:
        raise ConfigError(
            f"{where}: not a model card (format {card.get('format')!r}, expected {CARD_FORMAT!r})"
        )
    if card.get("format_version") != CARD_VERSION:
        raise ConfigError(
            f"{where}: model card format_version {card.get('format_version')!r} is not supported "
            f"(this version reads {CARD_VERSION})"
        )
    missing = [k for k in REQUIRED_KEYS if k not in card]
    if missing:
        raise ConfigError(f"{where}: the model card lacks {', '.join(missing)}")
    return card


def read_card(path: str | Path) -> dict[str, Any]:
    """Read and validate the card of a model (``path`` is the model's ``.zip`` or its ``.json``)."""
    p = card_path(path)
    if not p.is_file():
        raise ConfigError(
            f"model card not found: {p} (every model needs its card beside it, same stem, .json)"
        )
    try:
        card = json.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read model card {p}: {exc}") from exc
    return _validate_format(card, str(p))


def write_card(path: str | Path, card: dict[str, Any], *, overwrite: bool = True) -> Path:
    """Validate ``card`` and write it beside the model ``path`` (atomically); return the card's path.

    With ``overwrite=False`` an existing card is a :class:`FileExistsError`.
    """
    from dice_envs.io import atomic_write_text

    p = card_path(path)
    _validate_format(card, str(p))
    return atomic_write_text(
        p, json.dumps(_plain(card), indent=2, sort_keys=False) + "\n", overwrite=overwrite
    )


def check_card(card: dict[str, Any], rules: RuleConfig, num_players: int) -> None:
    """Raise ``ConfigError`` unless ``card`` fits ``rules`` with ``num_players`` seats.

    The message lists every mismatch as "expected X, the file holds Y".
    """
    expected = {
        "game": rules.game,
        "rules": _plain(rules.to_dict()),
        "num_players": int(num_players),
        "observation_encoding": encoding_id(rules),
        "n_actions": int(rules.n_actions),  # type: ignore[attr-defined]
    }
    problems = []
    for key, want in expected.items():
        got = card.get(key)
        if key == "rules" and isinstance(got, dict) and isinstance(want, dict):
            diff = sorted(set(want) | set(got))
            bad = [k for k in diff if want.get(k, "<absent>") != got.get(k, "<absent>")]
            if bad:
                problems.append(
                    "rules: "
                    + ", ".join(
                        f"{k} expected {want.get(k, '<absent>')!r}, the file holds {got.get(k, '<absent>')!r}"
                        for k in bad
                    )
                )
        elif got != want:
            problems.append(f"{key}: expected {want!r}, the file holds {got!r}")
    if problems:
        raise ConfigError("the model card does not fit: " + "; ".join(problems))


def fit_card(
    card: dict[str, Any], rules: RuleConfig, num_players: int, allow_rules: Sequence[str] = ()
) -> SeatView:
    """How the model of ``card`` sees a seat of a ``num_players`` game of ``rules``.

    The game, observation encoding and actions must be the card's; the rule parameters too,
    except those named in ``allow_rules`` (rules the caller changed on purpose, e.g.
    ``agents.load(..., rules={"target": 5000})``). The number of seats may differ when a seat
    view exists (:mod:`agents.views`). Otherwise ``ConfigError`` says why and what would fit.
    """
    model_players = card.get("num_players")
    if isinstance(model_players, bool) or not isinstance(model_players, int) or not 1 <= model_players <= 8:
        raise ConfigError(f"the model card's num_players must be an integer in 1..8, got {model_players!r}")
    wanted = _plain(rules.to_dict())
    allowed = {k: wanted[k] for k in allow_rules if k in wanted}
    check_card(dict(card, rules={**dict(card.get("rules") or {}), **allowed}), rules, model_players)
    if allowed:
        trained = make_rules(str(card["game"]), **dict(card["rules"]))
        if observation_size(rules, model_players) != observation_size(trained, model_players):
            raise ConfigError(
                f"the model reads observations of {observation_size(trained, model_players)} values; under "
                f"{allowed} they have {observation_size(rules, model_players)}: these rules change what "
                "the model sees"
            )
    return seat_view(rules, model_players, num_players)


def pretrained_names() -> list[str]:
    """Names ``<name>`` of the models usable as ``pretrained:<name>``."""
    if not PRETRAINED_DIR.is_dir():
        return []
    return sorted(p.stem for p in PRETRAINED_DIR.glob("*.zip"))


def resolve_model_path(spec: str) -> Path:
    """The model file named by a ``pretrained:<name>`` spec or a path, checked; ``ConfigError`` if not.

    ``<name>`` must be one of :func:`pretrained_names` (no paths: ``/``, ``\\``, ``..`` are
    refused); a path must be an existing ``.zip`` file with its card beside it.
    """
    from .model_io import check_model_path

    if spec.startswith("pretrained:"):
        name = spec.split(":", 1)[1]
        known = pretrained_names()
        if name not in known:
            raise ConfigError(
                f"no pretrained model {name!r} in {PRETRAINED_DIR}; "
                f"available: {', '.join(known) or 'none yet'}"
                " (pretrained:<name> takes only these names; give other models as a path to their .zip)"
            )
        return PRETRAINED_DIR / f"{name}.zip"
    return check_model_path(spec)


class ModelAgent(BaseAgent):
    """An in-memory SB3 ``MaskablePPO`` model (or a bare ``MaskableActorCriticPolicy``) as an agent.

    Masked argmax (or sampling), batched: both offer ``predict(obs, action_masks=, deterministic=)``.

    The one place a policy network picks actions; :class:`LearnedAgent` (a model file checked
    against its card) and the training pipeline's evaluation both use it.
    """

    def __init__(
        self, model: Any, deterministic: bool = True, name: str = "trained", seed: int | None = None
    ) -> None:
        super().__init__(seed)
        self.model = model
        self.deterministic = deterministic
        self.spec = name

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        check_mask(action_mask)
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions of a whole batch in one forward pass."""
        masks = np.asarray(action_masks) > 0
        if not masks.any(axis=1).all():
            raise ValueError("an action mask of the batch has no legal action")
        actions, _ = self.model.predict(
            np.asarray(observations, dtype=np.float32), action_masks=masks, deterministic=self.deterministic
        )
        return np.asarray(actions, dtype=np.int64).reshape(-1)


class LearnedAgent(ModelAgent):
    """A trained policy acting deterministically (argmax of the masked policy).

    Loaded by :func:`agents.model_io.load_policy`: only the weights, checked against the card's
    checksum, with ``torch.load(weights_only=True)``; nothing in the file is unpickled. It may sit
    at a table of another size than it was trained for: :func:`fit_card` chooses the seat view
    (:mod:`agents.views`) that turns the table's observations into the model's.
    """

    def __init__(
        self,
        path: str | Path,
        rules: RuleConfig,
        num_players: int = 1,
        seed: int | None = None,
        device: str = "cpu",
        allow_rules: Sequence[str] = (),
    ) -> None:
        self.path = resolve_model_path(str(path))
        self.card = read_card(self.path)
        self.view: SeatView = fit_card(self.card, rules, num_players, allow_rules)
        self.rules, self.num_players = rules, num_players
        from .model_io import load_policy  # weights only: nothing in the file is unpickled

        super().__init__(load_policy(self.path, self.card, device=device), name=str(path), seed=seed)
        n_act = int(self.model.action_space.n)
        if n_act != self.card["n_actions"]:
            raise ConfigError(
                f"{self.path}: the model has {n_act} actions, its card says {self.card['n_actions']}"
            )

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions of a batch of this table's observations, seen through the seat view."""
        return super().act_batch(self.view(np.asarray(observations, dtype=np.float32)), action_masks)
