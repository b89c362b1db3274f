"""Dice: validation of user-given dice and a seeded, injectable dice source."""

from __future__ import annotations

import numbers
from collections import deque
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["FACES", "DiceSource", "is_canonical_selection", "validate_dice"]

FACES = (1, 2, 3, 4, 5, 6)


def validate_dice(dice: Sequence[int], counts: Iterable[int]) -> tuple[int, ...]:
    """Return ``dice`` as a sorted tuple of ints, or raise ``ValueError`` saying what is allowed.

    ``counts`` lists the allowed numbers of dice.

    >>> validate_dice([5, 2, 5], counts=range(1, 7))
    (2, 5, 5)
    >>> validate_dice([0, 1, 2, 3, 4], counts=[5])
    Traceback (most recent call last):
    ...
    ValueError: dice faces must be integers 1-6, got [0, 1, 2, 3, 4]
    """
    allowed = tuple(counts)
    if isinstance(dice, (str, bytes)) or not isinstance(dice, (Sequence, np.ndarray)):
        raise ValueError(f"dice must be a sequence of integers 1-6, got {dice!r}")
    values = list(dice)
    if len(values) not in allowed:
        what = f"{allowed[0]}" if len(allowed) == 1 else f"{allowed[0]} to {allowed[-1]}"
        raise ValueError(f"expected {what} dice, got {len(values)}: {values!r}")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= int(v) <= 6:
            raise ValueError(f"dice faces must be integers 1-6, got {values!r}")
    return tuple(sorted(int(v) for v in values))


def is_canonical_selection(dice: Sequence[int], mask: int) -> bool:
    """True when ``mask`` is the smallest bitmask selecting its multiset of faces.

    Dice are sorted, so among equal faces the selected ones must be the leftmost: selecting die
    ``i + 1`` but not die ``i`` of the same face duplicates another action and is not legal.
    """
    for i in range(len(dice) - 1):
        if dice[i] == dice[i + 1] and (mask >> (i + 1)) & 1 and not (mask >> i) & 1:
            return False
    return True


class DiceSource:
    """Throws dice from a numpy ``Generator``; faces queued with :meth:`inject` come first.

    Injection lets tests drive any path of a game:

    >>> src = DiceSource(np.random.default_rng(0))
    >>> src.inject(6, 6, 6)
    >>> src.throw(5)[:3]
    (6, 6, 6)
    """

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()
        self._queue: deque[int] = deque()

    def inject(self, *faces: int) -> None:
        """Queue faces (1-6) to be thrown before any random ones."""
        flat: list[int] = []
        for f in faces:
            flat.extend(f if isinstance(f, (list, tuple)) else [f])
        for f in flat:
            if isinstance(f, bool) or not isinstance(f, numbers.Integral) or not 1 <= int(f) <= 6:
                raise ValueError(f"injected dice faces must be integers 1-6, got {f!r}")
        self._queue.extend(int(f) for f in flat)

    @property
    def pending(self) -> int:
        """How many injected faces are still queued."""
        return len(self._queue)

    def clear(self) -> None:
        """Drop any injected faces not thrown yet."""
        self._queue.clear()

    def throw(self, n: int) -> tuple[int, ...]:
        """Throw ``n`` dice (unsorted, in throw order)."""
        out = []
        while self._queue and len(out) < n:
            out.append(self._queue.popleft())
        if len(out) < n:
            out.extend(self.rng.integers(1, 7, size=n - len(out)).tolist())
        return tuple(out)
