"""Dice streams of the batched engines: where the faces of every throw come from.

A batched engine asks for the *face code* of ``counts[j]`` dice for each game ``games[j]``
(the code of faces ``f_0 .. f_{c-1}`` thrown in that order is ``sum((f_j - 1) * 6**j)``, see
:func:`dice_envs.tables.face_code`). :class:`RandomDice` draws codes from a seeded numpy
``Generator``; :class:`ScriptedDice` replays given faces per game, so a batched engine and the
scalar engines of :mod:`dice_envs.rules` can be driven with the *same* dice (the scalar engine
consumes the same faces in the same order when they are queued with ``DiceSource.inject``).

>>> s = ScriptedDice([[6, 6, 6, 6, 6, 1, 2], [1, 2, 3, 4, 5, 6, 6]])
>>> s.codes(np.array([0, 1]), np.array([5, 2])).tolist()  # 6-6-6-6-6 and 1-2
[7775, 6]
>>> s.codes(np.array([0]), np.array([2])).tolist()  # game 0 continues with 1-2
[6]
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Protocol, runtime_checkable

import numpy as np

from ..rules.dice import check_seed_arg
from ..tables import multisets

__all__ = [
    "POW6",
    "DiceStream",
    "RandomDice",
    "ScriptedDice",
    "face_codes",
    "outcome_code_table",
    "outcome_faces",
]

#: Powers of six, ``POW6[c] == 6**c``.
POW6 = 6 ** np.arange(8, dtype=np.int64)
_POW6_MAX = int(POW6[6])  # the most dice any engine throws at once
MAX_DICE = 6


def face_codes(faces: np.ndarray) -> np.ndarray:
    """Face codes of throws ``(..., k)`` of faces 1-6 in throw order (what the engines' throw
    lookups take); a code does not depend on the dice after the ``k`` given.

    >>> face_codes(np.array([[1, 2], [6, 6]])).tolist()
    [6, 35]
    """
    faces = np.asarray(faces, dtype=np.int64)
    return ((faces - 1) * POW6[: faces.shape[-1]]).sum(axis=-1)


@cache
def outcome_faces(k: int) -> np.ndarray:
    """The distinct throws of ``k`` dice as sorted faces ``(M, k)``, in the order of
    :func:`dice_envs.tables.multisets` (for five dice: ``scorecard_tables().rolls``'s): outcome
    ``j`` of a throw of ``k`` dice is row ``j``. Read-only, built once per ``k``."""
    faces = np.array(multisets(k), dtype=np.int64)
    faces.flags.writeable = False
    return faces


@cache
def outcome_code_table() -> np.ndarray:
    """``(7, 462)`` face codes of outcome ``j`` of ``k`` dice at ``[k, j]`` (0 past the last):
    ``outcome_code_table()[k, j]`` is what a throw of ``k`` dice showing outcome ``j`` hands the
    engines' ``apply_throws``."""
    table = np.zeros((MAX_DICE + 1, len(outcome_faces(MAX_DICE))), dtype=np.int64)
    for k in range(1, MAX_DICE + 1):
        table[k, : len(outcome_faces(k))] = face_codes(outcome_faces(k))
    table.flags.writeable = False
    return table


@runtime_checkable
class DiceStream(Protocol):
    """Where a batched engine's dice come from."""

    def codes(self, games: np.ndarray, counts: np.ndarray | int) -> np.ndarray:
        """Face codes of ``counts`` fresh dice (scalar or one per game) for each of ``games``."""
        ...


class RandomDice:
    """Fair dice from a numpy ``Generator``: one random integer per throw.

    A code of ``c`` dice is ``X mod 6**c`` with ``X`` uniform in ``[0, 6**6)``; as ``6**c``
    divides ``6**6`` this is exactly uniform. ``X`` values are drawn ``buffer`` at a time (one
    generator call serves many steps); the sequence depends only on the generator's seed.
    """

    def __init__(self, rng: np.random.Generator | int | None = None, buffer: int = 1 << 16) -> None:
        self._buffer_size = int(buffer)
        self.reseed(rng)

    def reseed(self, rng: np.random.Generator | int | None) -> None:
        """Start afresh from ``rng`` (a generator or a seed), as ``RandomDice(rng)`` would.

        The owner of an engine re-seeds the stream it gave the engine at construction, so
        one engine serves every episode (see :meth:`dice_envs.vector.env.DiceVectorEnv.reset`).
        """
        if not isinstance(rng, np.random.Generator):  # a seed: ConfigError naming a bad one
            rng = np.random.default_rng(check_seed_arg(rng))
        self.rng = rng
        self._buf = np.empty(0, dtype=np.int64)
        self._pos = 0

    def _draw(self, n: int) -> np.ndarray:
        if self._pos + n > self._buf.size:
            fresh = self.rng.integers(0, _POW6_MAX, size=max(n, self._buffer_size))
            self._buf = np.concatenate([self._buf[self._pos :], fresh])
            self._pos = 0
        out = self._buf[self._pos : self._pos + n]
        self._pos += n
        return out

    def codes(self, games: np.ndarray, counts: np.ndarray | int) -> np.ndarray:
        x = self._draw(len(games))
        if np.ndim(counts) == 0:
            return x % POW6[int(counts)] if counts != 6 else x.copy()
        return x % POW6[counts]


class ScriptedDice:
    """Replays given faces: row ``i`` of ``faces`` lists the faces game ``i`` throws, in order.

    Raises ``ValueError`` (naming the game) when a game needs more faces than it was given.
    """

    def __init__(self, faces: Sequence[Sequence[int]] | np.ndarray) -> None:
        arr = np.asarray(faces, dtype=np.int64)
        if arr.ndim != 2 or (arr.size and (arr.min() < 1 or arr.max() > 6)):
            raise ValueError("scripted dice must be a 2-d array of faces 1-6 (one row per game)")
        # pad with 6 columns so a gather never runs off the end (checked below)
        self.faces = np.concatenate([arr, np.ones((arr.shape[0], 6), dtype=np.int64)], axis=1)
        self.length = arr.shape[1]
        self.pos = np.zeros(arr.shape[0], dtype=np.int64)

    def codes(self, games: np.ndarray, counts: np.ndarray | int) -> np.ndarray:
        games = np.asarray(games, dtype=np.int64)
        counts = np.broadcast_to(np.asarray(counts, dtype=np.int64), games.shape)
        start = self.pos[games]
        end = start + counts
        if end.size and end.max() > self.length:
            bad = int(games[np.argmax(end > self.length)])
            raise ValueError(f"scripted dice of game {bad} ran out after {self.length} faces")
        cols = start[:, None] + np.arange(6)
        faces = self.faces[games[:, None], cols] - 1
        used = np.arange(6) < counts[:, None]
        self.pos[games] = end
        return (faces * POW6[:6] * used).sum(axis=1)
