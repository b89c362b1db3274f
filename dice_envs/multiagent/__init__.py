"""PettingZoo AEC environments, one module per game (PettingZoo classic style).

>>> from dice_envs.multiagent import spiffel_v0
>>> env = spiffel_v0.env(num_players=3)
>>> env.reset(seed=1)
>>> env.possible_agents
['player_0', 'player_1', 'player_2']

Each module has ``env(num_players=2, render_mode=None, **kwargs)`` (wrapped) and ``raw_env``
(game logic only); :mod:`dice_envs.multiagent.base` holds the shared flow :class:`~.base.DiceAECEnv`.

The module of a retired env version (``farkle_v0``: its observation changed) is not served:
``import dice_envs.multiagent.farkle_v0`` and ``from dice_envs.multiagent import farkle_v0`` raise
``ImportError`` naming ``farkle_v1`` (:meth:`dice_envs.games.GameSpec.retired_message`); as an
attribute it is missing (``hasattr`` is false; the ``AttributeError`` names ``farkle_v1`` too).
"""

from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder
from typing import Any

from ..games import GAME_SPECS
from . import dice_poker_v0, farkle_v1, spiffel_v0, yahtzee_v0
from .base import DiceAECEnv, win_rewards

__all__ = ["DiceAECEnv", "dice_poker_v0", "farkle_v1", "spiffel_v0", "win_rewards", "yahtzee_v0"]


def _retired(name: str) -> str | None:
    """Why the module ``name`` (of this package) is not served, if it is a retired env version's."""
    for spec in GAME_SPECS.values():
        for version in range(spec.version):
            if name == f"{__name__}.{spec.versioned_aec_name(version)}":
                return spec.retired_message(version, pettingzoo=True)
    return None


class _RetiredModules(MetaPathFinder):
    """Importing a retired module raises ``ImportError`` saying why and naming its replacement."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        message = _retired(fullname)
        if message is not None:
            raise ImportError(message, name=fullname)


sys.meta_path.append(_RetiredModules())  # asked last: only for names no other finder serves


def __getattr__(name: str) -> Any:
    """A missing attribute: ``AttributeError``, naming the replacement of a retired module."""
    message = _retired(f"{__name__}.{name}")
    raise AttributeError(message or f"module {__name__!r} has no attribute {name!r}")
