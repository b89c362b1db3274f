"""The hidden-layer activations of every policy network: the one table, by name.

Configs (``TrainConfig.activation``, RLlib's ``model_config``), model cards, self-play snapshots
and command lines write a name; the networks (the native trainer, SB3 policies, the RLlib
module) need the ``torch.nn`` class. torch is imported only when a class is asked for, so
checking a name (a config, a card, ``--help``) stays light.

>>> ACTIVATION_NAMES
('tanh', 'relu')
>>> activation_class("relu").__name__
'ReLU'
>>> activation_name(activation_class("tanh"))
'tanh'
"""

from __future__ import annotations

from typing import Any

from dice_envs.rules import ConfigError

__all__ = ["ACTIVATION_NAMES", "activation_class", "activation_classes", "activation_name"]

#: name → the ``torch.nn`` class it stands for (by attribute name, so torch stays unimported).
_TORCH_CLASSES: dict[str, str] = {"tanh": "Tanh", "relu": "ReLU"}
#: Every activation name a config, card or command line may give.
ACTIVATION_NAMES: tuple[str, ...] = tuple(_TORCH_CLASSES)


def activation_class(name: str) -> Any:
    """The ``torch.nn`` module class of ``name``; ``ConfigError`` naming the allowed ones otherwise."""
    if name not in _TORCH_CLASSES:
        raise ConfigError(f"activation must be one of {', '.join(ACTIVATION_NAMES)}, got {name!r}")
    from torch import nn

    return getattr(nn, _TORCH_CLASSES[name])


def activation_classes() -> dict[str, Any]:
    """Every name with its ``torch.nn`` class (imports torch)."""
    return {name: activation_class(name) for name in ACTIVATION_NAMES}


def activation_name(cls: Any) -> str:
    """The name of the ``torch.nn`` class ``cls``; ``ConfigError`` for a class outside the table."""
    for name, known in activation_classes().items():
        if cls is known:
            return name
    raise ConfigError(f"activation {cls!r} has no name; allowed: {', '.join(ACTIVATION_NAMES)}")
