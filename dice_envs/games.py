"""The one table of the games: each game's rules class and the names of its environments.

Every other table of games (Gymnasium registration, the trainers, the benchmark, the SB3 and
RLlib adapters) is derived from :data:`GAME_SPECS`. Classes are named by import path, so reading
this table imports no environment.

>>> spec = game_spec("dice_poker")
>>> spec.env_id, spec.aec_module, spec.vector_class
('dice_envs/DicePoker-v0', 'dice_envs.multiagent.dice_poker_v0', 'dice_envs.vector:DicePokerVectorEnv')
>>> load_object(spec.vector_class).__name__
'DicePokerVectorEnv'
>>> vector_env_class("farkle").__name__, raw_env_class("spiffel").__module__
('FarkleVectorEnv', 'dice_envs.multiagent.spiffel_v0')
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from .rules import GAMES, ConfigError, RuleConfig

__all__ = ["GAME_SPECS", "GameSpec", "game_spec", "load_object", "raw_env_class", "vector_env_class"]


@dataclass(frozen=True)
class GameSpec:
    """One game and its environments."""

    name: str  #: the game's name in rule files, configs and agent specs ("dice_poker")
    title: str  #: its name in class names ("DicePoker")
    rules_class: type[RuleConfig]  #: its rule configuration
    version: int  #: the version of its env ids (changes with the observation)

    @property
    def env_id(self) -> str:
        """The Gymnasium id (``gym.make``)."""
        return f"dice_envs/{self.title}-v{self.version}"

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
        return f"dice_envs.multiagent.{self.name}_v{self.version}"

    @property
    def raw_env_class(self) -> str:
        """``module:Class`` of the PettingZoo game logic (``raw_env``, no wrappers)."""
        return f"{self.aec_module}:raw_env"


def _title(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


#: Every game, in the order of :data:`dice_envs.rules.GAMES`.
GAME_SPECS: dict[str, GameSpec] = {
    name: GameSpec(name, _title(name), cls, version=0) for name, cls in GAMES.items()
}


def game_spec(game: str) -> GameSpec:
    """The spec of ``game`` (a name or an env id); ``ConfigError`` names the games otherwise."""
    key = str(game).lower().replace("-", "_")
    for spec in GAME_SPECS.values():
        if key == spec.name or game == spec.env_id:
            return spec
    raise ConfigError(f"unknown game {game!r}; games: {', '.join(GAME_SPECS)}")


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
