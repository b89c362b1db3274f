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

from dice_envs.rules import RuleConfig, make_rules

__all__ = ["Agent", "BaseAgent", "RandomAgent", "check_mask", "check_mask_width", "legal_rows"]


@runtime_checkable
class Agent(Protocol):
    """What every seat-holder implements. ``reset`` is optional (see :class:`BaseAgent`)."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Return a legal action (an index where ``action_mask`` is 1)."""
        ...


def check_mask(action_mask: np.ndarray, rules: RuleConfig | None = None) -> np.ndarray:
    """Return the legal action indices of a mask; ``ValueError`` if none is legal, and, given the
    game's ``rules``, if the mask is not 1-D with one entry per action.

    >>> check_mask(np.ones(3, np.int8), make_rules("spiffel"))
    Traceback (most recent call last):
    ...
    ValueError: an action mask of shape (3,) does not fit spiffel: its action space is Discrete(45), ...
    """
    m = np.asarray(action_mask)
    if rules is not None:
        check_mask_width(m, rules, batch=False)
    legal = np.flatnonzero(m)
    if legal.size == 0:
        raise ValueError("the action mask has no legal action")
    return legal


def check_mask_width(masks: np.ndarray, rules: RuleConfig, batch: bool = True) -> None:
    """``ValueError`` unless ``masks`` is one mask (``batch=False``: 1-D) or a batch of masks
    (2-D, a row per game) with one entry per action of ``rules``' game."""
    m = np.asarray(masks)
    n = int(rules.n_actions)  # type: ignore[attr-defined]
    if m.ndim != (2 if batch else 1):
        what = "a batch of action masks must be 2-D (rows, actions)"
        what = what if batch else "an action mask must be 1-D"
        raise ValueError(f"{what}, got shape {m.shape}")
    if m.shape[-1] != n:
        raise ValueError(
            f"an action mask of shape {m.shape} does not fit {rules.game}: its action space is "
            f"Discrete({n}), so a mask holds {n} entries"
        )


def legal_rows(action_masks: np.ndarray) -> np.ndarray:
    """The legal actions of a batch of masks as a bool array ``(rows, actions)``; ``ValueError`` if
    a row has none.

    >>> legal_rows(np.array([[0, 1], [1, 1]], dtype=np.int8)).tolist()
    [[False, True], [True, True]]
    """
    legal = np.asarray(action_masks) > 0
    if not legal.any(axis=1).all():
        raise ValueError("an action mask of the batch has no legal action")
    return legal


class BaseAgent:
    """Convenience base: a seeded generator, ``reset(seed)`` and a looping ``act_batch``."""

    #: Spec string that :func:`agents.load` builds this agent from.
    spec: str = ""
    #: What of the seats' banked totals a Farkle agent's play reads: ``"all"`` (the default);
    #: ``"own-and-highest"`` (its own total and the highest other total, not who holds it nor the
    #: rest); ``"finished-top"`` (every total, but in the final round the seats that have had
    #: their last turn only by their highest total and how many of them hold it). The exact best
    #: response (:mod:`agents.solver.farkle_field`) reads such an agent's turns once per what it
    #: reads instead of once per position of every total.
    totals_read: str = "all"

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
    """Uniform over the legal actions.

    Given ``rules`` (a game name or rule configuration), :meth:`act` and :meth:`act_batch` refuse
    a mask whose length is not the game's number of actions, by name, as the other built-in
    agents refuse observations of the wrong shape. Without ``rules`` any 1-D mask is taken.
    """

    spec = "random"
    totals_read = "own-and-highest"  # it reads none

    def __init__(self, seed: int | None = None, rules: str | RuleConfig | None = None) -> None:
        super().__init__(seed)
        #: The game's rules, when known; they fix the mask length.
        self.rules: RuleConfig | None = None if rules is None else make_rules(rules)
        self.n_actions: int | None = None if self.rules is None else int(self.rules.n_actions)  # type: ignore[attr-defined]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.rng.choice(check_mask(action_mask, self.rules)))

    def action_probabilities(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``(B, n_actions)``: the chance of each action per row, uniform over the legal ones (what
        an exact solver reads instead of one draw, e.g. a best response to this agent)."""
        if self.rules is not None:
            check_mask_width(action_masks, self.rules)
        m = legal_rows(action_masks)
        return m / m.sum(axis=1, keepdims=True)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        if self.rules is not None:
            check_mask_width(action_masks, self.rules)
        m = legal_rows(action_masks)
        u = self.rng.random(m.shape) * m
        return np.argmax(u, axis=1).astype(np.int64)
