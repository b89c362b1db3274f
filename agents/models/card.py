"""The model card: what a trained model was trained for, built, validated, read and written here.

Beside every model ``<stem>.zip`` lies its card ``<stem>.json`` (:func:`card_path`), a JSON
object holding :data:`REQUIRED_KEYS`, what its run adds (every field: docs/guide/agents.md) and,
for a model file changed after its run, ``notes`` (a list of sentences saying how).
:func:`agents.models.files.save_model` binds a card to its weights (``weights_sha256``,
``zip_sha256``, ``policy``: :func:`network_spec`). A model is only loaded for the game, rules and
observation encoding on its card (:func:`fit_card`); anything else raises
:class:`~dice_envs.rules.ConfigError` naming what was expected and what the file holds.

>>> from dice_envs.rules import make_rules
>>> card = make_card(make_rules("spiffel"), 1, steps=10)
>>> card["observation_encoding"], card["env_id"], card["n_actions"]
('scorecard-v1', 'dice_envs/Spiffel-v0', 45)
>>> check_card(card, make_rules("dice_poker"), 1)
Traceback (most recent call last):
...
dice_envs.rules.config.ConfigError: the model card does not fit: game: expected 'dice_poker', ...
"""

from __future__ import annotations

import copy
import datetime as _dt
import functools
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.models.activations import ACTIVATION_NAMES
from agents.models.seat_views import SeatView, seat_view
from dice_envs import code_revision
from dice_envs.encoding import encoding_id, observation_bounds, observation_size
from dice_envs.games import env_id_of
from dice_envs.io import atomic_write_text
from dice_envs.layouts import legacy_size
from dice_envs.rules import GAMES, ConfigError, RuleConfig, make_rules

__all__ = [
    "CARD_FORMAT",
    "CARD_VERSION",
    "DEFAULT_NET_ARCH",
    "REQUIRED_KEYS",
    "card_path",
    "card_rules",
    "card_spaces",
    "check_card",
    "fit_card",
    "library_versions",
    "lineage_totals",
    "machine_info",
    "make_card",
    "network_spec",
    "read_card",
    "training_totals",
    "validate_card",
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
#: Policy classes a card's ``policy`` entry may name, with the game each is limited to (None: any).
POLICY_CLASSES: dict[str, str | None] = {
    "MaskableActorCriticPolicy": None,
    "FarkleAfterstatePolicy": "farkle",
}
#: The network of a card that names none (SB3's default ``MlpPolicy``).
DEFAULT_NET_ARCH: dict[str, list[int]] = {"pi": [64, 64], "vf": [64, 64]}


# ------------------------------------------------------------------------------------- build
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
    seed: int | None = None,
    provenance: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """A complete model card for a model of ``rules`` with ``num_players`` seats.

    ``seed`` (when given) is recorded as ``seed``; ``provenance=True`` (what a training run
    writes) adds ``created`` (UTC, ISO 8601), ``library_versions``, ``code_revision``; ``extra`` last.
    """
    card: dict[str, Any] = {
        "format": CARD_FORMAT,
        "format_version": CARD_VERSION,
        "game": rules.game,
        "rules": _plain(rules.to_dict()),
        "num_players": int(num_players),
        "observation_encoding": encoding_id(rules),
        "env_id": env_id_of(rules.game, encoding_id(rules)),
        "n_actions": int(rules.n_actions),  # type: ignore[attr-defined]
        "algorithm": algorithm,
        "config": config or {},
        "steps": int(steps),
        "wall_time_s": float(wall_time_s),
        "evaluation": evaluation or {},
        "command": command,
    }
    if provenance:
        card["created"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    if seed is not None:
        card["seed"] = int(seed)
    if provenance:
        card["library_versions"] = library_versions()
        card["code_revision"] = code_revision()
    card.update(extra)
    return card


def library_versions() -> dict[str, str]:
    """Versions of the libraries a model depends on (the card's ``library_versions``)."""
    import importlib

    versions = {"python": sys.version.split()[0]}
    for name in ("dice_envs", "numpy", "torch", "gymnasium", "stable_baselines3", "sb3_contrib"):
        versions[name] = importlib.import_module(name).__version__
    return versions


def machine_info(device: str, threads: int) -> dict[str, Any]:
    """The machine a model was trained on (the card's ``machine``): ``threads`` torch threads on
    ``device``."""
    import platform

    import torch

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    info: dict[str, Any] = {
        "cpu": platform.processor() or platform.machine(),
        "cores_usable": cores,
        "torch_threads": int(threads),
        "device": device,
        "platform": platform.platform(terse=True),
    }
    if device.startswith("cuda") and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def _plain(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


# ------------------------------------------------------------------------------- read / write
def card_path(path: str | Path) -> Path:
    """The card of a model file (``x.zip`` → ``x.json``); a ``.json`` path is returned as is."""
    p = Path(path)
    return p if p.suffix == ".json" else p.with_suffix(".json")


def validate_card(card: Any, where: str) -> dict[str, Any]:
    """``card`` if it is a model card of this format with every required key, else ``ConfigError``
    (``where`` names the file in the message)."""
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
    want = env_id_of(card["game"], card["observation_encoding"])
    if want is not None and card.get("env_id", want) != want:
        raise ConfigError(f"{where}: env_id {card['env_id']!r} does not fit its game and encoding ({want!r})")
    return card


def _ancestor(card: dict[str, Any]) -> dict[str, Any] | None:
    """The record of the model a card's run came from, with that model's totals: the start of a
    fine-tune (``warm_start: model``) or the model a cloned planner searched over (``expert_model``)."""
    evaluation = card.get("evaluation")
    warm = evaluation.get("warm_start") if isinstance(evaluation, dict) else None
    if isinstance(warm, dict) and warm.get("kind") == "model":
        return warm
    if isinstance(warm, dict) and isinstance(warm.get("expert_model"), dict):
        return warm["expert_model"]
    return None


def training_totals(card: dict[str, Any]) -> tuple[int, float]:
    """Environment steps and wall seconds that went into a model, the model it started from or
    cloned a planner over (recorded under ``evaluation.warm_start``) included.

    >>> training_totals({"steps": 10, "wall_time_s": 2.0,
    ...                  "evaluation": {"warm_start": {"kind": "model", "steps": 90, "wall_time_s": 8.0}}})
    (100, 10.0)
    """
    return lineage_totals([card])


def lineage_totals(cards: list[dict[str, Any]]) -> tuple[int, float]:
    """:func:`training_totals` of several models (an ensemble's members); a model they came from
    counts once (by ``weights_sha256``).

    >>> start = {"kind": "model", "weights_sha256": "ab", "steps": 90, "wall_time_s": 8.0}
    >>> member = {"steps": 10, "wall_time_s": 2.0, "evaluation": {"warm_start": start}}
    >>> lineage_totals([member, member])
    (110, 12.0)
    """
    steps, wall = 0, 0.0
    seen: set[str] = set()
    for card in cards:
        steps += int(card.get("steps", 0))
        wall += float(card.get("wall_time_s", 0.0))
        parent = _ancestor(card)
        if parent is None:
            continue
        sha = parent.get("weights_sha256")
        if isinstance(sha, str) and sha in seen:
            continue
        if isinstance(sha, str):
            seen.add(sha)
        steps += int(parent.get("steps", 0))
        wall += float(parent.get("wall_time_s", 0.0))
    return steps, wall


def read_card(path: str | Path) -> dict[str, Any]:
    """Read and validate a model's card (``path``: its ``.zip`` or ``.json``); older cards get ``env_id``."""
    p = card_path(path)
    if not p.is_file():
        raise ConfigError(
            f"model card not found: {p} (every model needs its card beside it, same stem, .json)"
        )
    try:
        card = json.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read model card {p}: {exc}") from exc
    card = validate_card(card, str(p))
    card.setdefault("env_id", env_id_of(card["game"], card["observation_encoding"]))  # older cards lack it
    return card


def write_card(path: str | Path, card: dict[str, Any], *, overwrite: bool = True) -> Path:
    """Validate ``card`` and write it beside the model ``path`` (atomically); return the card's path.

    With ``overwrite=False`` an existing card is a :class:`FileExistsError`.
    """
    p = card_path(path)
    validate_card(card, str(p))
    return atomic_write_text(p, json.dumps(_plain(card), indent=2) + "\n", overwrite=overwrite)


# ------------------------------------------------------------------------------------- check
def card_rules(card: dict[str, Any], where: str = "the model card") -> RuleConfig:
    """The rule configuration a card was trained under (``ConfigError`` naming the known games)."""
    game = card.get("game")
    if game not in GAMES:
        raise ConfigError(
            f"{where}: the model card names an unknown game {game!r}; known: {', '.join(GAMES)}"
        )
    try:
        return make_rules(str(game), **dict(card.get("rules") or {}))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: the card's rules do not describe a {game} game: {exc}") from exc


def check_card(card: dict[str, Any], rules: RuleConfig, num_players: int) -> None:
    """Raise ``ConfigError`` unless ``card`` fits ``rules`` with ``num_players`` seats.

    The message lists every mismatch as "expected X, the file holds Y".
    """
    fresh = make_card(rules, num_players)  # how a card records this game
    problems = []
    for key in ("game", "rules", "num_players", "observation_encoding", "n_actions"):
        want = fresh[key]
        got = card.get(key)
        if key == "rules" and isinstance(got, dict):  # each parameter that differs, by name
            diffs = [
                f"{k} expected {want.get(k, '<absent>')!r}, the file holds {got.get(k, '<absent>')!r}"
                for k in sorted(set(want) | set(got))
                if want.get(k, "<absent>") != got.get(k, "<absent>")
            ]
            if diffs:
                problems.append("rules: " + ", ".join(diffs))
        elif key == "observation_encoding" and isinstance(got, str) and legacy_size(got, rules, num_players):
            continue  # an older encoding that the current observation begins with (read cut)
        elif got != want:
            problems.append(f"{key}: expected {want!r}, the file holds {got!r}")
    if problems:
        raise ConfigError("the model card does not fit: " + "; ".join(problems))


def fit_card(
    card: dict[str, Any], rules: RuleConfig, num_players: int, allow_rules: Sequence[str] = ()
) -> SeatView:
    """How the model of ``card`` sees a seat of a ``num_players`` game of ``rules``.

    Game, encoding (or an older one the observation begins with: cut to it), actions and rule
    parameters must be the card's, except rules named in ``allow_rules`` (changed on purpose);
    the seats may differ where a seat view exists. Otherwise ``ConfigError`` says why.
    """
    model_players = card.get("num_players")
    if isinstance(model_players, bool) or not isinstance(model_players, int) or not 1 <= model_players <= 8:
        raise ConfigError(f"the model card's num_players must be an integer in 1..8, got {model_players!r}")
    wanted = _plain(rules.to_dict())
    allowed = {k: wanted[k] for k in allow_rules if k in wanted}
    check_card(dict(card, rules={**dict(card.get("rules") or {}), **allowed}), rules, model_players)
    if allowed:
        trained = card_rules(card)
        if observation_size(rules, model_players) != observation_size(trained, model_players):
            raise ConfigError(
                f"the model reads observations of {observation_size(trained, model_players)} values; under "
                f"{allowed} they have {observation_size(rules, model_players)}: these rules change what "
                "the model sees"
            )
    view = seat_view(rules, model_players, num_players)
    old = legacy_size(str(card.get("observation_encoding")), rules, model_players)
    if old is None:
        return view
    return functools.partial(_cut, view, old)  # a partial of a module function: the agent pickles


def _cut(view: SeatView, width: int, obs: np.ndarray) -> np.ndarray:
    """``view(obs)`` cut to its first ``width`` values (an older encoding's observation)."""
    return view(obs)[:, :width]


# ----------------------------------------------------------------------------------- network
def network_spec(card: dict[str, Any], where: str) -> dict[str, Any]:
    """The network a card describes: ``class``, ``net_arch``, ``activation``,
    ``share_features_extractor`` and, for ``FarkleAfterstatePolicy``, ``head_width``.

    From its ``policy`` entry, else (older cards) from ``config.net_arch`` / ``config.activation``;
    each value checked (``ConfigError`` naming the allowed values).
    """
    spec = card.get("policy")
    if spec is None:  # an older card: the training config's network, else the defaults below
        config = card.get("config") if isinstance(card.get("config"), dict) else {}
        spec = {k: config[k] for k in ("net_arch", "activation") if k in config}
    if not isinstance(spec, dict):
        raise ConfigError(f"{where}: the card's policy entry must be an object, got {spec!r}")
    arch = spec.get("net_arch")
    if arch is None:
        arch = copy.deepcopy(DEFAULT_NET_ARCH)

    def layers(v: Any) -> bool:
        return isinstance(v, list) and all(
            isinstance(x, int) and not isinstance(x, bool) and 0 < x <= 65536 for x in v
        )

    ok = layers(arch) or (
        isinstance(arch, dict) and set(arch) <= {"pi", "vf"} and all(layers(v) for v in arch.values())
    )
    if not ok:
        raise ConfigError(
            f"{where}: net_arch must be a list of layer sizes (1..65536) or {{'pi': [...], 'vf': [...]}}, "
            f"got {arch!r}"
        )
    act = spec.get("activation", "tanh")
    if act not in ACTIVATION_NAMES:
        raise ConfigError(f"{where}: activation must be one of {', '.join(ACTIVATION_NAMES)}, got {act!r}")
    share = spec.get("share_features_extractor", True)
    if not isinstance(share, bool):
        raise ConfigError(f"{where}: share_features_extractor must be true or false, got {share!r}")
    cls = spec.get("class", "MaskableActorCriticPolicy")
    if cls not in POLICY_CLASSES:
        raise ConfigError(f"{where}: policy class must be one of {', '.join(POLICY_CLASSES)}, got {cls!r}")
    game = POLICY_CLASSES[cls]
    if game is not None and card.get("game") != game:
        raise ConfigError(
            f"{where}: policy class {cls} plays {game} only, the card's game is {card.get('game')!r}"
        )
    out = {"class": cls, "net_arch": arch, "activation": act, "share_features_extractor": share}
    if cls == "FarkleAfterstatePolicy":
        width = spec.get("head_width")
        if not (isinstance(width, int) and not isinstance(width, bool) and 0 < width <= 65536):
            raise ConfigError(f"{where}: policy head_width must be an integer in [1, 65536], got {width!r}")
        out["head_width"] = width
    return out


def card_spaces(card: dict[str, Any], where: str = "the model card") -> tuple[Any, Any]:
    """The observation ``Box`` and action ``Discrete`` space of the card's game and seats.

    ``ConfigError`` when the card's ``n_actions`` (or its ``policy`` entry's sizes) do not fit.
    """
    from gymnasium import spaces

    rules = card_rules(card, where)
    try:
        num_players = card["num_players"]
        n_obs = observation_size(rules, num_players)
        low, high = observation_bounds(rules, num_players)
        old = legacy_size(str(card.get("observation_encoding")), rules, num_players)
        if old is not None:  # a model of an older encoding reads the leading values
            n_obs, low, high = old, low[:old], high[:old]
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"{where}: the card's game/rules/num_players do not describe a game: {exc}"
        ) from exc
    n_act = card.get("n_actions")
    if n_act != int(rules.n_actions):  # type: ignore[attr-defined]
        raise ConfigError(
            f"{where}: n_actions {n_act!r} does not fit {rules.game} ({rules.n_actions} actions)"  # type: ignore[attr-defined]
        )
    spec = card.get("policy")
    if isinstance(spec, dict):
        for key, want in (("observation_size", n_obs), ("n_actions", n_act)):
            if key in spec and spec[key] != want:
                raise ConfigError(
                    f"{where}: policy {key} {spec[key]!r} does not fit the card's game ({want})"
                )
    return spaces.Box(low, high, (n_obs,), np.float32), spaces.Discrete(int(n_act))
