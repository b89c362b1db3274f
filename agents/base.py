"""The agent protocol: anything that picks a legal action from an observation and a mask.

>>> import numpy as np
>>> agent = RandomAgent(seed=0)
>>> mask = np.array([0, 1, 0, 1], dtype=np.int8)
>>> agent.act(np.zeros(3, dtype=np.float32), mask) in (1, 3)
True
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Agent", "BaseAgent", "RandomAgent", "check_mask"]


@runtime_checkable
class Agent(Protocol):
    """What every seat-holder implements. ``reset`` is optional (see :class:`BaseAgent`)."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Return a legal action (an index where ``action_mask`` is 1)."""
        ...


def check_mask(action_mask: np.ndarray) -> np.ndarray:
    """Return the legal action indices of a mask; ``ValueError`` if none is legal."""
    legal = np.flatnonzero(np.asarray(action_mask))
    if legal.size == 0:
        raise ValueError("the action mask has no legal action")
    return legal


class BaseAgent:
    """Convenience base: a seeded generator, ``reset(seed)`` and a looping ``act_batch``."""

    #: Spec string that :func:`agents.load` builds this agent from.
    spec: str = ""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; reseed when ``seed`` is given."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:  # pragma: no cover
        raise NotImplementedError

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions for a batch (rows of observations and masks)."""
        return np.array(
            [self.act(o, m) for o, m in zip(observations, action_masks, strict=True)], dtype=np.int64
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"


class RandomAgent(BaseAgent):
    """Uniform over the legal actions."""

    spec = "random"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.rng.choice(check_mask(action_mask)))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        m = np.asarray(action_masks) > 0
        if not m.any(axis=1).all():
            raise ValueError("an action mask of the batch has no legal action")
        u = self.rng.random(m.shape) * m
        return np.argmax(u, axis=1).astype(np.int64)
