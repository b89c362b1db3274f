"""The options of every env, validated once: :class:`EnvOptions`.

The three faces of a game — the Gymnasium env (:mod:`dice_envs.envs`), the PettingZoo env
(:mod:`dice_envs.multiagent`) and the native vector env (:mod:`dice_envs.vector`) — take the
same keyword options and build one frozen :class:`EnvOptions` from them
(:meth:`EnvOptions.from_kwargs`); inner code trusts it. A refused value raises
:class:`~dice_envs.rules.ConfigError` (a ``ValueError``) naming the key, the value and what is
allowed. Each face also takes a ready object as ``options=`` (alone), so one object configures
all three:

>>> opts = EnvOptions.from_kwargs("farkle", {"opponents": ["random"], "target": 2000})
>>> opts.num_players, opts.reward, opts.rules.target
(2, 'win', 2000)
>>> import gymnasium as gym
>>> import dice_envs
>>> from dice_envs.multiagent import farkle_v1
>>> gym.make("dice_envs/Farkle-v1", options=opts).unwrapped.num_players
2
>>> farkle_v1.env(options=opts).unwrapped.rules.target
2000
>>> gym.make_vec("dice_envs/Farkle-v1", num_envs=3, options=opts).num_players
2
>>> EnvOptions.from_kwargs("spiffel", {"reward": "money"})
Traceback (most recent call last):
...
dice_envs.rules.config.ConfigError: unknown reward 'money'; allowed: score, win

Which keys each face takes (besides the rule parameters of its game) is :data:`OPTION_KEYS`.
The PettingZoo env seats every player as an agent, so it takes no ``opponents``, ``seat`` or
``illegal_action`` keywords and ignores those fields of an :class:`EnvOptions` it is given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .checks import check_illegal_reward
from .opponents import as_opponent_list, check_opponent
from .rules import ConfigError, RuleConfig, make_rules, rules_class
from .rules.config import check_int, did_you_mean, is_int

__all__ = [
    "ILLEGAL_ACTION_MODES",
    "MAX_PLAYERS",
    "OPTION_KEYS",
    "RENDER_MODES",
    "REWARD_MODES",
    "EnvOptions",
    "Face",
    "check_illegal_action",
    "check_render_mode",
    "check_reward",
    "check_seat",
    "default_reward",
    "options_of",
]

#: The reward definitions every env offers (see :mod:`dice_envs.multiagent.base`).
REWARD_MODES = ("score", "win")
#: What a single-learner env does with an illegal action (the rule: :mod:`dice_envs.outcome`).
ILLEGAL_ACTION_MODES = ("penalize", "raise")
#: Every render mode of the scalar envs (the vector env offers ``"ansi"`` only).
RENDER_MODES = ("ansi", "human", "rgb_array")
#: The most seats a game has.
MAX_PLAYERS = 8

#: The four faces whose constructors take options.
Face = Literal["raw_env", "pettingzoo", "gymnasium", "vector"]
_SINGLE_LEARNER = ("opponents", "num_players", "seat", "reward", "illegal_action", "illegal_reward")
#: The option keywords of each face, besides its game's rule parameters. ``num_envs`` and
#: ``autoreset_mode`` are the vector env's own (not fields of :class:`EnvOptions`).
OPTION_KEYS: dict[Face, tuple[str, ...]] = {
    "raw_env": ("num_players", "reward", "render_mode", "rules"),
    "pettingzoo": ("num_players", "reward", "illegal_reward", "render_mode", "rules"),
    "gymnasium": (*_SINGLE_LEARNER, "render_mode", "rules"),
    "vector": ("num_envs", *_SINGLE_LEARNER, "render_mode", "rules", "autoreset_mode"),
}
#: How an error message names each face (after the game's name).
_FACE_NAMES: dict[Face, str] = {
    "raw_env": "PettingZoo raw_env",
    "pettingzoo": "PettingZoo env",
    "gymnasium": "env",
    "vector": "vector env",
}
#: Defaults a face has that :class:`EnvOptions` does not (PettingZoo games seat two by default).
_FACE_DEFAULTS: dict[Face, dict[str, Any]] = {"raw_env": {"num_players": 2}, "pettingzoo": {"num_players": 2}}


def default_reward(num_players: int) -> str:
    """``"score"`` in solitaire, ``"win"`` otherwise."""
    return "score" if num_players == 1 else "win"


def check_reward(reward: str | None, num_players: int) -> str:
    """A reward mode (``None`` → :func:`default_reward`); ``ConfigError`` naming the allowed ones."""
    if reward is None:
        return default_reward(num_players)
    if reward not in REWARD_MODES:
        raise ConfigError(f"unknown reward {reward!r}; allowed: {', '.join(REWARD_MODES)}")
    if reward == "win" and num_players < 2:
        raise ConfigError("reward 'win' needs at least 2 players; use reward='score' in solitaire")
    return reward


def check_seat(seat: Any, num_players: int) -> int | None:
    """The learner's seat: ``None`` (drawn per episode) or an integer in ``[0, num_players)``."""
    if seat is None:
        return None
    if not is_int(seat) or not 0 <= seat < num_players:
        raise ConfigError(f"seat must be None (random) or an integer in [0, {num_players - 1}], got {seat!r}")
    return int(seat)


def check_illegal_action(mode: Any) -> str:
    """An illegal-action mode, one of :data:`ILLEGAL_ACTION_MODES`."""
    if not isinstance(mode, str) or mode not in ILLEGAL_ACTION_MODES:
        raise ConfigError(f"unknown illegal_action {mode!r}; allowed: {', '.join(ILLEGAL_ACTION_MODES)}")
    return mode


def check_render_mode(mode: Any, allowed: Sequence[str] = RENDER_MODES) -> str | None:
    """``None`` or one of ``allowed``."""
    if mode is not None and (not isinstance(mode, str) or mode not in allowed):
        raise ConfigError(f"unknown render_mode {mode!r}; allowed: None, {', '.join(allowed)}")
    return mode


def _check_num_players(n: Any) -> int:
    check_int("num_players", n, 1, MAX_PLAYERS, what="")
    return int(n)


@dataclasses.dataclass(frozen=True, init=False)
class EnvOptions:
    """The validated options of one env (any face); see the module docstring.

    Built from keywords by :meth:`from_kwargs`, or directly (``rules`` may then be a game name,
    e.g. ``EnvOptions("yahtzee", num_players=3)``); either way ``__post_init__`` checks every
    field and fills the defaults, so an instance is always valid (``dataclasses.replace``
    checks again).

    The attributes below are the keywords of ``gym.make`` (besides the game's rule parameters);
    the docs render them as one table.

    Attributes:
        rules: the game's rule configuration (e.g. ``SpiffelRules(joker=False)``); to ``gym.make``
            also a dict of rule parameters, which may as well be given as keywords of their own
            (``upper_bonus_threshold=64``). Default: the game's rules as RULES.md settles them.
        opponents: one agent spec per other seat: ``"random"``, ``"greedy"``, ``"heuristic"``, a
            path to a trained model, ... (resolved by ``agents.load``), or agent objects (used
            as they are). Default: none (solitaire), or ``num_players - 1`` × ``"random"`` when
            only ``num_players`` is given. One spec or agent alone counts as a list of one.
        num_players: implied by ``len(opponents) + 1``; a different value is refused.
        seat: the learner's seat; ``None`` draws one each episode.
        reward: ``"score"`` (points as scored, summing to the learner's final total; the default
            in solitaire) or ``"win"`` (zero-sum at the end: +1 / -1 with two players, shared wins
            split; the default with opponents), see :mod:`dice_envs.multiagent.base`.
        illegal_action: ``"penalize"`` (end the episode with ``illegal_reward``) or ``"raise"``
            (a ``ValueError`` naming the legal actions).
        illegal_reward: the reward of an illegal action under ``"penalize"``, a finite number.
        render_mode: ``None``, ``"rgb_array"`` (``render()`` returns an ``(H, W, 3)`` uint8 image
            of the dice and the card / table; works with Gymnasium's ``RecordVideo``), ``"ansi"``
            (the score card / table as text) or ``"human"`` (printed after every move, opponents'
            included).
    """

    rules: RuleConfig
    opponents: tuple[Any, ...] = ()
    num_players: int = 1
    seat: int | None = None
    reward: str = "score"
    illegal_action: str = "penalize"
    illegal_reward: float = -1.0
    render_mode: str | None = None

    def __init__(
        self,
        rules: RuleConfig | str,
        opponents: Sequence[Any] | Any | None = None,
        num_players: int | None = None,
        seat: int | None = None,
        reward: str | None = None,
        illegal_action: str = "penalize",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
    ) -> None:
        if not isinstance(rules, (RuleConfig, str)):
            raise ConfigError(f"rules must be a rule configuration or a game name, got {rules!r:.80}")
        if num_players is not None:
            num_players = _check_num_players(num_players)
        opponents = as_opponent_list(opponents)
        if opponents is None:
            opponents = ["random"] * (num_players - 1) if num_players is not None else []
        try:
            opponents = list(opponents)
        except TypeError:
            raise ConfigError(
                f"opponents must be a list of agent specs or agents, got {opponents!r:.80}"
            ) from None
        for i, spec in enumerate(opponents):
            check_opponent(i, spec)
        n = _check_num_players(len(opponents) + 1)
        if num_players is not None and num_players != n:
            raise ConfigError(
                f"num_players={num_players!r} does not fit {len(opponents)} opponents (needs {n})"
            )
        values = {
            "rules": make_rules(rules),
            "opponents": tuple(opponents),
            "num_players": n,
            "seat": check_seat(seat, n),
            "reward": check_reward(reward, n),
            "illegal_action": check_illegal_action(illegal_action),
            "illegal_reward": check_illegal_reward(illegal_reward),
            "render_mode": check_render_mode(render_mode),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def game(self) -> str:
        """The game's name (``"spiffel"``, ...)."""
        return self.rules.game

    @classmethod
    def from_kwargs(cls, game: str, kwargs: Mapping[str, Any], face: Face = "gymnasium") -> EnvOptions:
        """The options of ``face``'s constructor keywords ``kwargs`` for ``game``.

        ``kwargs`` holds option keys (:data:`OPTION_KEYS` of ``face``) and rule parameters;
        an unknown key is refused, naming both lists.
        """
        keys = OPTION_KEYS[face]
        where = f"the {game} {_FACE_NAMES[face]}"
        params = rules_class(game).parameter_names()
        for key in kwargs:
            if key not in keys and key not in params:
                raise ConfigError(
                    f"unknown keyword {key!r} for {where}{did_you_mean(key, (*params, *keys))}; "
                    f"allowed: {', '.join(params)} (rule parameters); "
                    f"{', '.join(keys)} (env options)"
                )
        fields = {f.name for f in dataclasses.fields(cls)}
        options = {**_FACE_DEFAULTS.get(face, {}), **{k: v for k, v in kwargs.items() if k in fields}}
        rules = options.pop("rules", None)
        rule_params = {k: v for k, v in kwargs.items() if k in params}
        if isinstance(rules, Mapping):  # rules={"upper_bonus": 50}, as agents.load and configs take them
            both = sorted(k for k in rules if k in rule_params and rules[k] != rule_params[k])
            if both:
                raise ConfigError(
                    f"rule parameter(s) {both} given twice to {where} with different values: "
                    "in rules= and as keywords"
                )
            rule_params = {**rules, **rule_params}
            rules = None
        if rules is not None and (not isinstance(rules, RuleConfig) or rules.game != rules_class(game).game):
            given = f"rules for {rules.game!r}" if isinstance(rules, RuleConfig) else f"rules {rules!r:.80}"
            raise ConfigError(
                f"{given} given to {where}; pass a {rules_class(game).__name__}, a dict of rule parameters "
                f"(allowed: {', '.join(params)}) or those parameters as keywords"
            )
        return cls(make_rules(rules if rules is not None else game, **rule_params), **options)


def options_of(game: str, kwargs: Mapping[str, Any], face: Face) -> EnvOptions:
    """The options of one constructor call of ``face``: ``kwargs["options"]`` alone, or the keywords.

    Every face calls this first; ``options=`` must be an :class:`EnvOptions` of ``game`` and
    comes without other option keywords.
    """
    if "options" not in kwargs:
        return EnvOptions.from_kwargs(game, kwargs, face)
    options = kwargs["options"]
    others = [repr(k) for k in kwargs if k != "options"]
    if others:
        raise ConfigError(f"options= comes alone; got also {', '.join(others)}")
    if not isinstance(options, EnvOptions):
        raise ConfigError(f"options must be an EnvOptions, got {options!r:.80}")
    if options.game != rules_class(game).game:
        raise ConfigError(f"options for {options.game!r} given to the {game} {_FACE_NAMES[face]}")
    return options
