"""Turn plans of the scorecard games and their in-memory cache.

A :class:`TurnPlan` is the solved turn of one card state ``(filled-box mask, upper total, five-of-a-kind
state)``: what scoring each throw in each box, and keeping each multiset before a re-throw, is worth.
The planning agents (``optimal``, ``heuristic``) keep the plans of the states they meet in a
:class:`PlanCache`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

__all__ = ["PLAN_CACHE_SIZE", "PlanCache", "State", "TurnPlan"]

#: Turn plans kept per cache (least recently used dropped first; about 30 kB each).
PLAN_CACHE_SIZE = 2048


@dataclass
class TurnPlan:
    """The solved turn of one state: values of scoring each box and of each kept multiset.

    ``box_values[b, r]``: expected final future points (this turn's points included) of entering
    throw ``r`` in box ``b`` (``-inf`` where not legal); ``keep_values[j][k]``: expected points of
    keeping multiset ``k`` after throw ``j + 1`` and re-throwing the rest.
    """

    box_values: np.ndarray
    keep_values: list[np.ndarray]
    value: float


State = tuple[int, int, int]
Key = TypeVar("Key", bound=tuple)


class PlanCache(Generic[Key]):
    """Turn plans by state (a tuple of ints, ``(mask, u, z)`` in solitaire): the least recently used
    dropped past ``size``, the states not cached made together, ``chunk`` at a time, by ``make``
    (states -> their plans)."""

    def __init__(
        self, make: Callable[[list[Key]], list[TurnPlan]], size: int = PLAN_CACHE_SIZE, chunk: int = 256
    ) -> None:
        self.make, self.size, self.chunk = make, size, chunk
        self._plans: OrderedDict[Key, TurnPlan] = OrderedDict()

    def __len__(self) -> int:
        return len(self._plans)

    def get(self, states: Sequence[Key]) -> list[TurnPlan]:
        """The plan of each state, in order (a state given twice: the same plan object)."""
        found: dict[Key, TurnPlan] = {}
        missing: list[Key] = []
        for key in dict.fromkeys(states):
            plan = self._plans.get(key)
            if plan is None:
                missing.append(key)
            else:
                self._plans.move_to_end(key)
                found[key] = plan
        for lo in range(0, len(missing), self.chunk):
            chunk = missing[lo : lo + self.chunk]
            for key, plan in zip(chunk, self.make(chunk), strict=True):
                found[key] = self._plans[key] = plan
                if len(self._plans) > self.size:
                    self._plans.popitem(last=False)
        return [found[key] for key in states]
