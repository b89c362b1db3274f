"""The one table of the games: each game's rules class, the names of its environments and the
observation each version of them serves.

Every other table of games (Gymnasium registration, the trainers, the benchmark, the SB3 and
RLlib adapters, the env id on a model card) is derived from :data:`GAME_SPECS`. Classes are named
by import path, so reading this table imports no environment.

An env id keeps its word: its version changes when its observation changes. Only the newest
version of a game is served; an older id (``dice_envs/Farkle-v0``) or PettingZoo module
(``farkle_v0``) raises an error naming its replacement (:meth:`GameSpec.retired_message`).

>>> spec = game_spec("dice_poker")
>>> spec.env_id, spec.aec_module, spec.vector_class
('dice_envs/DicePoker-v0', 'dice_envs.multiagent.dice_poker_v0', 'dice_envs.vector:DicePokerVectorEnv')
>>> load_object(spec.vector_class).__name__
'DicePokerVectorEnv'
>>> vector_env_class("farkle").__name__, raw_env_class("spiffel").__module__
('FarkleVectorEnv', 'dice_envs.multiagent.spiffel_v0')
>>> farkle = game_spec("farkle")
>>> farkle.env_id, farkle.aec_module, farkle.encoding, farkle.retired_env_ids
('dice_envs/Farkle-v1', 'dice_envs.multiagent.farkle_v1', 'farkle-v3', ('dice_envs/Farkle-v0',))
>>> farkle.env_id_of("farkle-v2"), farkle.env_id_of("farkle-v3"), farkle.env_id_of("scorecard-v1")
('dice_envs/Farkle-v0', 'dice_envs/Farkle-v1', None)
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from .rules import GAMES, ConfigError, RuleConfig

__all__ = [
    "GAME_SPECS",
    "GameSpec",
    "env_id_of",
    "game_spec",
    "load_object",
    "raw_env_class",
    "vector_env_class",
]


@dataclass(frozen=True)
class GameSpec:
    """One game and its environments."""

    name: str  #: the game's name in rule files, configs and agent specs ("dice_poker")
    title: str  #: its name in class names ("DicePoker")
    rules_class: type[RuleConfig]  #: its rule configuration
    #: The observation encodings (:func:`dice_envs.encoding.encoding_id`) each env version served,
    #: oldest version first (index = version). The last version is the served one and serves
    #: exactly one encoding; every earlier version is retired.
    observations: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        if not self.observations or len(self.observations[-1]) != 1:
            raise ValueError(f"{self.name}: the served env version must serve exactly one encoding")

    @property
    def version(self) -> int:
        """The version of the served env ids (changes with the observation)."""
        return len(self.observations) - 1

    @property
    def encoding(self) -> str:
        """The observation encoding the served env ids give (e.g. ``"farkle-v3"``)."""
        return self.observations[-1][0]

    def versioned_env_id(self, version: int) -> str:
        """The Gymnasium id of env version ``version`` (served or retired)."""
        return f"dice_envs/{self.title}-v{version}"

    def versioned_aec_name(self, version: int) -> str:
        """The name of the PettingZoo module of env version ``version`` (``"farkle_v0"``)."""
        return f"{self.name}_v{version}"

    @property
    def env_id(self) -> str:
        """The Gymnasium id (``gym.make``)."""
        return self.versioned_env_id(self.version)

    @property
    def retired_env_ids(self) -> tuple[str, ...]:
        """The Gymnasium ids of the retired versions, oldest first."""
        return tuple(self.versioned_env_id(v) for v in range(self.version))

    def env_id_of(self, encoding: str) -> str | None:
        """The id of the newest env version that served ``encoding`` (``None``: none did): a model
        trained on observations of ``encoding`` reads the observations of this id."""
        served = [v for v, encodings in enumerate(self.observations) if encoding in encodings]
        return self.versioned_env_id(served[-1]) if served else None

    def retired_message(self, version: int, *, pettingzoo: bool = False) -> str:
        """Why env version ``version`` (a retired one) is not served, and what replaces it: the
        Gymnasium id, or with ``pettingzoo=True`` the PettingZoo module."""
        if pettingzoo:
            kind, old, new = (
                "PettingZoo env",
                f"dice_envs.multiagent.{self.versioned_aec_name(version)}",
                self.aec_module,
            )
        else:
            kind, old, new = "Environment", self.versioned_env_id(version), self.env_id
        return (
            f"{kind} `{old}` is retired because its observation changed: it served the observation "
            f"encodings {', then '.join(self.observations[version])}. Please use `{new}`, which serves "
            f"{self.encoding} only."
        )

    @property
    def env_class(self) -> str:
        """``module:Class`` of the Gymnasium env."""
        return f"dice_envs.envs.{self.name}:{self.title}Env"

    @property
    def vector_class(self) -> str:
        """``module:Class`` of the native vector env (``gym.make_vec``)."""
        return f"dice_envs.vector:{self.title}VectorEnv"

    @property
    def aec_module(self) -> str:
        """The PettingZoo module (``raw_env`` and ``env()``)."""
        return f"dice_envs.multiagent.{self.versioned_aec_name(self.version)}"

    @property
    def raw_env_class(self) -> str:
        """``module:Class`` of the PettingZoo game logic (``raw_env``, no wrappers)."""
        return f"{self.aec_module}:raw_env"


def _title(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


#: The observation encodings each env version of a game served (:attr:`GameSpec.observations`;
#: the history is told in each env module's docstring).
_OBSERVATIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "spiffel": (("scorecard-v1",),),
    "dice_poker": (("scorecard-v1",),),
    "yahtzee": (("scorecard-v1",),),
    "farkle": (("farkle-v1", "farkle-v2", "farkle-v3"), ("farkle-v3",)),
}

#: Every game, in the order of :data:`dice_envs.rules.GAMES`.
GAME_SPECS: dict[str, GameSpec] = {
    name: GameSpec(name, _title(name), cls, _OBSERVATIONS[name]) for name, cls in GAMES.items()
}


def game_spec(game: str) -> GameSpec:
    """The spec of ``game`` (a name or an env id); ``ConfigError`` names the games otherwise, or
    the replacement of a retired env id."""
    key = str(game).lower().replace("-", "_")
    for spec in GAME_SPECS.values():
        if key == spec.name or game == spec.env_id:
            return spec
        if game in spec.retired_env_ids:
            raise ConfigError(spec.retired_message(spec.retired_env_ids.index(game)))
    raise ConfigError(f"unknown game {game!r}; games: {', '.join(GAME_SPECS)}")


def env_id_of(game: Any, encoding: Any) -> str | None:
    """The newest env id of ``game`` (a name) that served observation ``encoding``; ``None`` when
    none did or there is no such game. A model card's ``env_id``.

    >>> env_id_of("farkle", "farkle-v2"), env_id_of("yahtzee", "scorecard-v1")
    ('dice_envs/Farkle-v0', 'dice_envs/Yahtzee-v0')
    """
    spec = GAME_SPECS.get(str(game))
    return spec.env_id_of(str(encoding)) if spec else None


def load_object(path: str) -> Any:
    """The object named by ``module:attribute`` (an entry of :class:`GameSpec`)."""
    module, _, attr = path.partition(":")
    obj = importlib.import_module(module)
    return getattr(obj, attr) if attr else obj


def vector_env_class(game: str) -> type:
    """The native vector env class of ``game`` (a name or an env id)."""
    return load_object(game_spec(game).vector_class)


def raw_env_class(game: str) -> type:
    """The PettingZoo ``raw_env`` class of ``game`` (a name or an env id)."""
    return load_object(game_spec(game).raw_env_class)
