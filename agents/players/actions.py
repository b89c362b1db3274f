"""Turning choices about dice faces into the engines' canonical action indices.

Both engines name dice by their position in the sorted throw, and among equal faces only the
leftmost may be selected (see :func:`dice_envs.rules.dice.is_canonical_selection`).

>>> select_mask((1, 5, 5, 6, 6), [5, 6])
10
>>> hold_to_reroll_mask((2, 2, 3, 6, 6), [6, 6])
7
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

__all__ = ["hold_to_reroll_mask", "select_mask"]


def select_mask(dice: Sequence[int], faces: Iterable[int]) -> int:
    """Canonical bitmask selecting the multiset ``faces`` from sorted ``dice``.

    Raises ``ValueError`` naming the dice when ``faces`` is not a sub-multiset of them.
    """
    faces = [int(f) for f in faces]
    want = Counter(faces)
    have = Counter(dice)
    missing = want - have
    if missing:
        raise ValueError(f"the dice {list(dice)} do not hold {sorted(int(f) for f in faces)}")
    mask = 0
    for i, f in enumerate(dice):
        if want[f] > 0:
            mask |= 1 << i
            want[f] -= 1
    return mask


def hold_to_reroll_mask(dice: Sequence[int], hold: Iterable[int]) -> int:
    """Canonical re-throw bitmask that holds the multiset ``hold`` and re-throws the rest."""
    rest = Counter(dice) - Counter(int(f) for f in hold)
    held = list((Counter(dice) - rest).elements())
    if sorted(held) != sorted(int(f) for f in hold):
        raise ValueError(f"the dice {list(dice)} do not hold {sorted(int(f) for f in hold)}")
    return select_mask(dice, rest.elements())
