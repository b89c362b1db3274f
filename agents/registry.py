"""``agents.load(spec, game=...)``: build an agent from a spec string.

The :doc:`agents guide </guide/agents>` lists every spec; :func:`known_specs` lists those of one
game.

>>> agent = load("heuristic", game="farkle", num_players=2, seed=0)
>>> type(agent).__name__
'HeuristicFarkleAgent'
>>> load("optimal", game="farkle")
Traceback (most recent call last):
...
dice_envs.rules.config.ConfigError: agent spec 'optimal' is not available for farkle; known: random, ...
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.base import Agent, RandomAgent
from dice_envs.checks import check_seed_arg
from dice_envs.rules import ConfigError, FarkleRules, RuleConfig, make_rules
from dice_envs.rules.config import check_int

__all__ = [
    "AgentSpec",
    "anchored_spec",
    "check_fit",
    "check_seed_arg",
    "check_spec",
    "known_specs",
    "load",
    "make_opponent",
    "planner_model",
    "resolve",
    "resolve_specs",
]

_COMMON = ["random", "greedy", "heuristic"]
_BEST_RESPONSE = "best-response:"
_TAIL = ["human", "pretrained:<name>", "a path to a .zip model"]


def known_specs(game: str | RuleConfig = "spiffel") -> list[str]:
    """The spec strings :func:`load` accepts for ``game``."""
    rules = make_rules(game)
    special = (
        [
            "max-expected",
            "threshold:N",
            "win-optimal",
            "best-response:<spec>",
            "planner:<model>",
            "search:<model>",
        ]
        if isinstance(rules, FarkleRules)
        else ["optimal", "search:<model>"]
    )
    return _COMMON + special + _TAIL


def load(
    spec: str | Agent,
    game: str | RuleConfig | None = None,
    num_players: int | None = None,
    seed: int | None = None,
    rules: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> Agent:
    """Build the agent named by ``spec`` for ``game`` (a name or a rule configuration).

    A trained model (``pretrained:<name>`` or a path) reads its game, rules and number of
    players from its model card: ``game`` and ``num_players`` may be left out; when given they
    must fit the card (another game or other rule values are refused by name; another number
    of seats is played through a seat view, :mod:`agents.models.seat_views`). ``rules`` (a dict of rule
    parameters) is merged over the card's rules, or over ``game``'s for the built-in agents
    (default game ``"spiffel"``, default ``num_players`` 1).

    ``kwargs`` go to the agent's constructor (e.g. ``device`` for a trained model, ``input`` /
    ``output`` streams for ``human``). An object that already has ``act`` is returned as is.
    Unknown specs raise :class:`~dice_envs.rules.ConfigError` listing the known ones.
    """
    if not isinstance(spec, str):
        if hasattr(spec, "act"):
            return spec
        raise ConfigError(f"an agent spec must be a string or an object with act(), got {spec!r}")
    seed = check_seed_arg(seed)
    if rules is not None and not isinstance(rules, Mapping):
        raise ConfigError(f"rules must be a dict of rule parameters, e.g. {{'target': 5000}}, got {rules!r}")
    overrides = dict(rules or {})
    name = spec.strip()
    key = name.lower()
    if key.startswith(_SEARCH_PREFIXES):
        model = planner_model(name)
        return _load_model(spec, model, game, num_players, seed, overrides, kwargs, planner=True)
    if _names_model(name):
        return _load_model(spec, name, game, num_players, seed, overrides, kwargs)
    base = make_rules("spiffel" if game is None else game)
    rules_cfg = make_rules(base, **overrides) if overrides else base
    num_players = 1 if num_players is None else num_players
    return resolve(spec, rules_cfg).build(num_players, seed, **kwargs)


@dataclass(frozen=True)
class AgentSpec:
    """An agent spec parsed and checked once for ``rules`` (:func:`resolve`), to build its agents
    from (:meth:`build`) without reading the string again: what a training run holds for each
    agent its config names.

    >>> threshold = resolve("threshold:400", "farkle")
    >>> threshold.threshold, type(threshold.build(2, seed=0)).__name__
    (400, 'ThresholdAgent')
    """

    spec: str  #: the spec as given (tables name the agent by it)
    rules: RuleConfig
    key: str  #: the spec stripped and lower-cased: a built-in agent's name
    model: str | None = None  #: the model spec of a model (also of ``search:`` / ``planner:``)
    path: Path | None = None  #: that model's file
    card: Mapping[str, Any] | None = None  #: that model's card, read once
    planner: bool = False  #: a ``search:`` / ``planner:`` spec
    threshold: int | None = None  #: the ``N`` of ``threshold:N``

    def build(self, num_players: int, seed: int | None = None, **kwargs: Any) -> Agent:
        """The agent in a seat of a ``num_players`` game: the one ``load(spec, game=rules, ...)``
        builds, through the same code (the same seed plays the same)."""
        seed = check_seed_arg(seed)
        if self.model is not None:
            return _load_model(self.spec, self.model, self.rules, num_players, seed, {}, kwargs, self.planner)
        check_int("num_players", num_players, 1, 8)
        return _load_builtin(self, num_players, seed, kwargs)


def resolve(spec: str, game: str | RuleConfig = "spiffel") -> AgentSpec:
    """``spec`` checked for ``game`` (``ConfigError`` listing the known specs unless :func:`load`
    knows it); builds nothing: a model spec is checked for its file and card only.

    >>> resolve("randm", "farkle")
    Traceback (most recent call last):
    ...
    dice_envs.rules.config.ConfigError: unknown agent spec 'randm' for farkle; known: random, ...
    """
    rules = make_rules(game)
    name = str(spec).strip()
    key = name.lower()
    planner = key.startswith(_SEARCH_PREFIXES)
    if planner:
        _check_prefix(spec, rules)
        name = planner_model(name)
    if planner or _names_model(name):
        from agents.models.card import read_card
        from agents.players.model import resolve_model_path

        path = resolve_model_path(name)
        return AgentSpec(str(spec), rules, key, name, path, read_card(path), planner)
    farkle = isinstance(rules, FarkleRules)
    builtin = {"random", "greedy", "heuristic", "human"}
    farkle_only = {"max-expected", "max_expected", "win-optimal", "win_optimal"}
    builtin |= farkle_only if farkle else {"optimal"}
    if farkle and key.startswith("threshold:"):
        return AgentSpec(str(spec), rules, key, threshold=_threshold(spec, key))
    if farkle and key.startswith(_BEST_RESPONSE):
        field = name[len(_BEST_RESPONSE) :].strip()
        if not field or field.lower().startswith(_BEST_RESPONSE) or field.lower() == "human":
            raise ConfigError(
                "best-response needs the spec of the agent it answers (not a person, not another "
                "best response), e.g. best-response:heuristic; "
                f"got {spec!r}"
            )
        resolve(field, rules)
        return AgentSpec(str(spec), rules, key)
    if key in builtin:
        return AgentSpec(str(spec), rules, key)
    known = ", ".join(known_specs(rules))
    if key in {"optimal"} | farkle_only or key.startswith(("threshold:", _BEST_RESPONSE)):
        raise ConfigError(f"agent spec {spec!r} is not available for {rules.game}; known: {known}")
    raise ConfigError(f"unknown agent spec {spec!r} for {rules.game}; known: {known}")


def resolve_specs(lists: Mapping[str, Sequence[str]], game: str | RuleConfig) -> dict[str, AgentSpec]:
    """Each spec of ``lists`` (spec lists by the config key that names them) resolved once for
    ``game``, by spec; an unknown spec is refused naming its key.

    >>> sorted(resolve_specs({"opponents": ["random", "greedy"], "pool": ["random"]}, "farkle"))
    ['greedy', 'random']
    """
    rules, resolved = make_rules(game), {}
    for key, specs in lists.items():
        for spec in specs:
            try:
                resolved[spec] = resolved.get(spec) or resolve(spec, rules)
            except ConfigError as exc:
                raise ConfigError(f"config {key!r}: {exc}") from None
    return resolved


def check_spec(spec: str, game: str | RuleConfig = "spiffel") -> None:
    """:func:`resolve`, for its ``ConfigError`` only."""
    resolve(spec, game)


def check_fit(spec: str | AgentSpec, rules: RuleConfig, num_players: int) -> None:
    """:func:`resolve` (unless given its result), then a model spec (also the model of a
    ``planner:``) loaded once: refused as playing it would refuse it, unless it fits ``rules`` with
    ``num_players`` seats (no planner table is built); for commands that check every agent before
    long work starts."""
    model = (spec if isinstance(spec, AgentSpec) else resolve(spec, rules)).model
    if model is not None:
        load(model, game=rules, num_players=num_players)


def make_opponent(spec: str, rules: RuleConfig, num_players: int, seed: int | None = None) -> Agent:
    """The factory :mod:`dice_envs.opponents` calls (entry point ``dice_envs.agents: default``)."""
    return load(spec, game=rules, num_players=num_players, seed=seed)


def _models_for(game: str) -> str:
    from agents.models.card import read_card
    from agents.players.model import pretrained_names, resolve_model_path

    fits = []
    for n in pretrained_names():
        try:
            if read_card(resolve_model_path(f"pretrained:{n}"))["game"] == game:
                fits.append(f"pretrained:{n}")
        except ConfigError:
            continue
    return ", ".join(fits) or "none shipped (train one: dice-envs train)"


def _load_model(
    spec: str,
    name: str,
    game: str | RuleConfig | None,
    num_players: int | None,
    seed: int | None,
    overrides: dict[str, Any],
    kwargs: dict[str, Any],
    planner: bool = False,
) -> Agent:
    """The model ``name`` (its card's game, rules and seats, checked against ``game``), or with
    ``planner`` the ``planner:`` agent over it (:mod:`agents.players.planner`)."""
    from agents.models.card import card_rules, read_card
    from agents.players.model import ModelAgent, resolve_model_path

    card = read_card(resolve_model_path(name))
    trained = card_rules(card, name)
    card_game = trained.game
    if game is not None:
        given = make_rules(game)
        if given.game != card_game:
            raise ConfigError(
                f"{name} is a {card_game} model, not a {given.game} one; "
                f"models for {given.game}: {_models_for(given.game)}"
            )
        if isinstance(game, RuleConfig):
            expected = make_rules(trained, **overrides) if overrides else trained
            if given != expected:
                want, got = expected.to_dict(), given.to_dict()
                diff = ", ".join(
                    f"{k}: the game plays {got[k]!r}, the model was trained for {want[k]!r}"
                    for k in want
                    if want[k] != got[k]
                )
                raise ConfigError(
                    f"{name} does not fit these rules ({diff}); a model plays the rules on its card. "
                    f"To play it under others on purpose (Python), pass the agent in place of its spec: "
                    f"agents.load({spec!r}, rules={{...}})"
                )
    rules_cfg = make_rules(trained, **overrides) if overrides else trained
    if planner:
        _check_prefix(spec, rules_cfg)
    n = int(card.get("num_players", 1)) if num_players is None else num_players
    check_int("num_players", n, 1, 8)
    from agents.players.search.agent import SearchAgent, is_value_card

    if is_value_card(card):  # a value model plays by search, with or without the search: prefix
        path = resolve_model_path(name)
        return _build(spec, SearchAgent.from_file, name, path, rules_cfg, num_players=n, seed=seed, **kwargs)
    if planner:
        from agents.players.planner import PlannerAgent

        if not isinstance(rules_cfg, FarkleRules):
            raise ConfigError(
                f"{spec!r}: {name} is a {card.get('algorithm')} policy; search over a {card_game} model "
                "needs a value model of turn starts (dice-envs train --config "
                f"configs/train/{card_game}-search.yaml, or pretrained:{card_game}-search)"
            )
        return _build(spec, PlannerAgent, name, rules_cfg, num_players=n, seed=seed, **kwargs)
    return _build(
        spec,
        ModelAgent.from_file,
        name,
        rules_cfg,
        num_players=n,
        seed=seed,
        allow_rules=tuple(overrides),
        **kwargs,
    )


def anchored_spec(spec: str, folder: str | Path) -> str:
    """``spec`` with a relative model path made absolute against ``folder``; other specs as given.

    For a run that goes on in another working directory (a Ray Tune trial runs in its own
    folder): a model path is read against the folder the user gave it in.

    >>> anchored_spec("planner:runs/x/model.zip", "/home/me")
    'planner:/home/me/runs/x/model.zip'
    >>> [anchored_spec(s, "/home/me") for s in ("heuristic", "pretrained:farkle-scratch", "/m.zip")]
    ['heuristic', 'pretrained:farkle-scratch', '/m.zip']
    """
    name = spec.strip()
    if name.lower().startswith(_SEARCH_PREFIXES):
        prefix = name.split(":", 1)[0]
        return f"{prefix}:" + anchored_spec(planner_model(name), folder)
    if name.lower().startswith("pretrained:") or Path(name).expanduser().is_absolute():
        return spec
    here = Path(folder) / name
    return str(here) if name.lower().endswith(".zip") or _is_file(str(here)) else spec


#: Spec prefixes of the agents that search over a model: ``search:<model>``, ``planner:<model>``.
_SEARCH_PREFIXES = ("search:", "planner:")


def _check_prefix(spec: str, rules: RuleConfig) -> None:
    """Refuse (``ConfigError`` listing the known specs) a ``planner:`` spec for a game other than
    Farkle (``search:`` plays every game): the one rule :func:`load` and :func:`check_spec` apply."""
    if spec.strip().lower().startswith("planner:") and not isinstance(rules, FarkleRules):
        known = ", ".join(known_specs(rules))
        raise ConfigError(f"agent spec {spec!r} is not available for {rules.game}; known: {known}")


def planner_model(spec: str) -> str:
    """The model spec inside ``search:<model>`` / ``planner:<model>`` (refused by name when missing
    or itself a search spec).

    >>> planner_model("planner:pretrained:farkle-scratch-ppo"), planner_model("search:runs/x/v.npz")
    ('pretrained:farkle-scratch-ppo', 'runs/x/v.npz')
    """
    prefix, _, model = spec.strip().partition(":")
    model = model.strip()
    if not model or model.lower().startswith(_SEARCH_PREFIXES):
        if prefix.lower() == "planner":
            raise ConfigError(
                "planner spec needs a two-player Farkle model, e.g. planner:pretrained:farkle-scratch-ppo "
                f"or planner:runs/x/model.zip; got {spec!r}"
            )
        raise ConfigError(
            "a search spec needs a model: a value model (search:pretrained:spiffel-search, "
            "search:runs/x/x.npz) or a two-player Farkle model (search:pretrained:farkle-scratch-ppo); "
            f"got {spec!r}"
        )
    return model


def _load_builtin(resolved: AgentSpec, num_players: int, seed: int | None, kwargs: dict[str, Any]) -> Agent:
    """The built-in agent of a spec :func:`resolve` accepted."""
    spec, key, rules = resolved.spec, resolved.key.replace("_", "-"), resolved.rules
    if key == "random":
        return _build(spec, RandomAgent, seed=seed, rules=rules, **kwargs)  # rules: masks checked
    if resolved.key.startswith(_BEST_RESPONSE):
        from agents.players.field_optimal import best_response_agent

        field = spec.strip()[len(_BEST_RESPONSE) :].strip()
        make_field = functools.partial(load, field, rules, num_players, seed=seed)
        return best_response_agent(field, make_field, rules, num_players, seed=seed, **kwargs)
    args: tuple[Any, ...] = (rules,)
    if key == "human":
        from agents.players.human import HumanAgent

        cls: Any = HumanAgent
    elif key == "win-optimal":
        from agents.players.win_optimal import WinOptimalAgent

        cls = WinOptimalAgent
    elif isinstance(rules, FarkleRules):
        from agents.players import farkle as fa

        if key.startswith("threshold:"):
            cls, args = fa.ThresholdAgent, (rules, resolved.threshold)
        else:
            cls = {
                "greedy": fa.GreedyFarkleAgent,
                "heuristic": fa.HeuristicFarkleAgent,
                "max-expected": fa.MaxExpectedAgent,
            }[key]
    else:
        from agents.players import scorecard as sa

        cls = {"greedy": sa.GreedyAgent, "heuristic": sa.HeuristicAgent, "optimal": sa.OptimalAgent}[key]
    return _build(spec, cls, *args, num_players=num_players, seed=seed, **kwargs)


def _threshold(spec: str, key: str) -> int:
    """The ``N`` of a ``threshold:N`` spec (``ConfigError`` unless an integer >= 0)."""
    try:
        threshold = int(key.split(":", 1)[1])
    except ValueError:
        raise ConfigError(f"threshold spec needs an integer, e.g. threshold:1000; got {spec!r}") from None
    if threshold < 0:
        raise ConfigError(f"threshold must be >= 0, got {threshold}")
    return threshold


def _names_model(name: str) -> bool:
    """Whether a spec (not a search's) names a model: ``pretrained:<name>``, a ``.zip`` / ``.npz``, a file."""
    key = name.lower()
    return key.startswith("pretrained:") or key.endswith((".zip", ".npz")) or _is_file(name)


def _is_file(name: str) -> bool:
    """Whether ``name`` is an existing file (False for names no file can have, e.g. too long)."""
    try:
        return bool(name) and Path(name).is_file()
    except (OSError, ValueError):
        return False


def _build(spec: str, cls: Any, *args: Any, **kwargs: Any) -> Agent:
    """``cls(*args, **kwargs)`` (a class or factory), with options the agent does not take refused by name."""
    params = inspect.signature(cls).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        allowed = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY or p.default is not p.empty]
        allowed = [n for n in allowed if n not in ("num_players", "seed", "allow_rules", "rules")]
        for key in kwargs:
            if key not in params:
                rule_hint = ""
                if key not in ("device", "deterministic"):
                    rule_hint = "; rule parameters go in rules={...} or game=make_rules(game, ...)"
                raise ConfigError(
                    f"agent {spec!r} takes no option {key!r}; its options: {', '.join(allowed) or 'none'}"
                    f"{rule_hint}"
                )
    return cls(*args, **kwargs)
