"""Chance outcomes of a throw, and what every forward state shares.

A throw of ``k`` dice has ``C(k + 5, 5)`` distinct outcomes as sorted multisets (252 for five,
462 for six, 126 for four, 56, 21 and 6), each with its exact multinomial probability
(:func:`dice_envs.tables.multiset_prob`). :func:`throw_outcomes` lists them once per ``k`` in the
order of :func:`itertools.combinations_with_replacement` (for five dice: the order of
``scorecard_tables().rolls``), so an outcome is named by its index in that table.

>>> faces, probs = throw_outcomes(2)
>>> faces.shape, faces[:3].tolist(), round(float(probs.sum()), 12)
((21, 2), [[1, 1], [1, 2], [1, 3]], 1.0)
"""

from __future__ import annotations

import copy
import itertools
import reprlib
from collections.abc import Sequence
from functools import cache
from typing import Any, TypeVar

import numpy as np

from ..tables import face_code, multiset_prob

__all__ = [
    "CHANCE",
    "N_OUTCOMES",
    "TERMINAL",
    "ForwardBatch",
    "ForwardState",
    "Rows",
    "outcome_code_table",
    "outcome_index",
    "outcome_prob_table",
    "throw_outcomes",
]

#: :meth:`ForwardState.current_player` of a chance node (OpenSpiel's ``kChancePlayerId``).
CHANCE = -1
#: :meth:`ForwardState.current_player` of a terminal state (OpenSpiel's ``kTerminalPlayerId``).
TERMINAL = -4

MAX_DICE = 6

#: Row indices or one value per row: a sequence of ints or an integer array.
Rows = Sequence[int] | np.ndarray

_S = TypeVar("_S", bound="ForwardState")
_B = TypeVar("_B", bound="ForwardBatch")


def _is_int(value: object) -> bool:
    """Whether ``value`` is exactly an integer: a Python int or a numpy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def throw_outcomes(k: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct throws of ``k`` dice (1 to 6): sorted faces ``(M, k)`` and probabilities ``(M,)``.

    Read-only arrays, built once per ``k``; the probabilities sum to 1.
    """
    if not _is_int(k) or not 1 <= k <= MAX_DICE:  # type: ignore[operator]
        raise ValueError(f"a throw has 1 to {MAX_DICE} dice (an integer), got {k!r}")
    return _throw_outcomes(int(k))  # type: ignore[call-overload]


@cache
def _throw_outcomes(k: int) -> tuple[np.ndarray, np.ndarray]:
    outcomes = list(itertools.combinations_with_replacement(range(1, 7), k))
    faces = np.array(outcomes, dtype=np.int64)
    probs = np.array([multiset_prob(o) for o in outcomes])
    faces.flags.writeable = probs.flags.writeable = False
    return faces, probs


@cache
def _outcome_list(k: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    faces, probs = throw_outcomes(k)
    return tuple((tuple(int(f) for f in row), float(p)) for row, p in zip(faces, probs, strict=True))


@cache
def _outcome_lookup(k: int) -> dict[tuple[int, ...], int]:
    return {o: i for i, (o, _) in enumerate(_outcome_list(k))}


@cache
def outcome_code_table() -> np.ndarray:
    """``(7, 462)`` face codes (:func:`dice_envs.tables.face_code`) of outcome ``j`` of ``k`` dice
    at ``[k, j]`` (0 past the last outcome): what the engines' throw lookups take."""
    table = np.zeros((MAX_DICE + 1, len(_outcome_list(MAX_DICE))), dtype=np.int64)
    for k in range(1, MAX_DICE + 1):
        for j, (o, _) in enumerate(_outcome_list(k)):
            table[k, j] = face_code(o)
    table.flags.writeable = False
    return table


def outcome_index(k: int, outcome: Sequence[int]) -> int:
    """The index in :func:`throw_outcomes` of ``outcome`` (``k`` faces 1-6, any order: a sequence
    or a 1-D array of integers).

    Raises ``ValueError`` when ``outcome`` is not a throw of ``k`` dice.
    """
    throw_outcomes(k)  # k checked
    ok = isinstance(outcome, (Sequence, np.ndarray)) and not isinstance(outcome, (str, bytes))
    faces = list(outcome) if ok else []
    index = None
    if all(_is_int(f) for f in faces):  # a (k, m) array's rows, a string's letters are not
        index = _outcome_lookup(k).get(tuple(sorted(int(f) for f in faces)))
    if index is None:
        raise ValueError(
            f"outcome {reprlib.repr(outcome)} is not a throw of {k} dice: give {k} faces, "
            "each an integer 1-6, in any order"
        )
    return index


class ForwardState:
    """What the scalar forward states share: OpenSpiel's vocabulary on top of four primitives.

    A subclass holds its one-game machine in ``game`` and the dice of the pending throw in
    ``_to_throw`` (``k > 0``: a chance node that throws ``k`` dice), copies a game with
    ``_copy_game`` and implements :meth:`is_terminal`, :meth:`legal_actions`, :meth:`returns`,
    ``_act`` (a legal decision, in place) and ``_throw`` (an outcome index, in place); both set
    ``_rewards``.
    """

    game: Any
    _to_throw: int
    _rewards: list[int]
    num_players: int

    @staticmethod
    def _copy_game(game: Any) -> Any:  # pragma: no cover - abstract
        """A copy of the one-game machine's state (the forward model never throws from it)."""
        raise NotImplementedError

    def clone(self: _S) -> _S:
        """An independent copy."""
        out = copy.copy(self)
        out.game = self._copy_game(self.game)
        out._rewards = list(self._rewards)
        return out

    @property
    def dice_to_throw(self) -> int:
        """Dice the pending throw throws (0 at a decision or terminal state)."""
        return self._to_throw

    @property
    def seat(self) -> int:
        """The seat whose turn it is (also at a chance node: the seat that throws)."""
        return int(self.game.current_player)

    # ------------------------------------------------------------------ to implement

    def is_terminal(self) -> bool:  # pragma: no cover - abstract
        """The game is over."""
        raise NotImplementedError

    def legal_actions(self) -> list[int]:  # pragma: no cover - abstract
        """Legal actions of a decision node, ascending (none at a chance or terminal state)."""
        raise NotImplementedError

    def returns(self) -> list[float]:  # pragma: no cover - abstract
        """Each seat's total: the points so far, the final scores at a terminal state."""
        raise NotImplementedError

    def _act(self, action: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _throw(self, index: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------------ shared
    def is_chance_node(self) -> bool:
        """Dice are to be thrown: the next step is an outcome of :meth:`chance_outcomes`."""
        return self.dice_to_throw > 0

    def current_player(self) -> int:
        """The seat to decide, :data:`CHANCE` at a chance node, :data:`TERMINAL` once over."""
        if self.is_terminal():
            return TERMINAL
        return CHANCE if self.is_chance_node() else self.seat

    def chance_outcomes(self) -> list[tuple[tuple[int, ...], float]]:
        """The distinct throws of the pending dice (sorted faces) with their exact probabilities;
        empty at a decision or terminal state. Outcome ``i`` is ``apply_action(i)``'s."""
        k = self.dice_to_throw
        return list(_outcome_list(k)) if k else []

    def rewards(self) -> list[int]:
        """Points each seat gained in the last transition (a decision or a throw)."""
        return list(self._rewards)

    def _check_action(self, action: object) -> int:
        if self.is_terminal():
            raise ValueError("the game is over; no action is legal")
        if self.is_chance_node():
            raise ValueError(
                f"a chance node ({self.dice_to_throw} dice to throw) takes an outcome, not an action; "
                "see chance_outcomes()"
            )
        legal = self.legal_actions()
        if not _is_int(action) or int(action) not in legal:  # type: ignore[call-overload]
            raise ValueError(f"illegal action {action!r} for seat {self.seat}; legal actions: {legal}")
        return int(action)  # type: ignore[call-overload]

    def afterstate(self: _S, action: int) -> _S:
        """A new state: this one after the legal ``action``, up to (not including) the next throw.

        Raises ``ValueError`` naming the legal actions when ``action`` is not legal (this state
        is unchanged).
        """
        a = self._check_action(action)
        child = self.clone()
        child._act(a)
        return child

    def apply_outcome(self: _S, outcome: Sequence[int]) -> _S:
        """A new state: this chance node after the dice show ``outcome`` (``k`` faces, any order)."""
        k = self.dice_to_throw
        if not k:
            raise ValueError("not a chance node: no dice to throw")
        child = self.clone()
        child._throw(outcome_index(k, outcome))
        return child

    def apply_action(self, action: int) -> None:
        """OpenSpiel's step, in place: a legal action at a decision node, the index of an outcome
        of :meth:`chance_outcomes` at a chance node."""
        k = self.dice_to_throw
        if k and not self.is_terminal():
            n = len(_outcome_list(k))
            if not _is_int(action) or not 0 <= int(action) < n:  # type: ignore[call-overload]
                raise ValueError(f"a chance outcome of {k} dice is an index 0..{n - 1}, got {action!r}")
            self._throw(int(action))
            return
        self._act(self._check_action(action))

    def children(self: _S) -> list[tuple[_S, float]]:
        """Every ``(state after outcome, probability)`` of a chance node (empty otherwise)."""
        k = self.dice_to_throw
        out = []
        for i, (_, p) in enumerate(_outcome_list(k) if k else ()):
            child = self.clone()
            child._throw(i)
            out.append((child, p))
        return out


#: Outcomes of a throw of ``k`` dice, ``n_outcomes[k]`` (``n_outcomes[0] == 0``: nothing thrown).
N_OUTCOMES = np.array([0, 6, 21, 56, 126, 252, 462], dtype=np.int64)


@cache
def outcome_prob_table() -> np.ndarray:
    """``(7, 462)`` probabilities of outcome ``j`` of ``k`` dice at ``[k, j]`` (0 past the last)."""
    table = np.zeros((MAX_DICE + 1, int(N_OUTCOMES[-1])))
    for k in range(1, MAX_DICE + 1):
        table[k, : N_OUTCOMES[k]] = throw_outcomes(k)[1]
    table.flags.writeable = False
    return table


def _same_game(rules: Any, seats: int, other: Any, other_seats: int, what: str) -> None:
    """Refuse (``ValueError`` naming both) ``other`` rules or seats that are not ``rules``, ``seats``."""
    if other != rules or other_seats != seats:
        raise ValueError(
            f"{what}: {other!r} with {other_seats} seat(s); the batch holds {rules!r} with {seats} "
            "seat(s) (a batch holds one game, one set of rules and one seat count)"
        )


class ForwardBatch:
    """What the batched forward models share: rows of state arrays named by ``_fields`` (first
    axis: the state), ``to_throw`` (dice of the pending throw, 0 at a decision or terminal
    state), ``done``, ``current`` and the ``last_rewards`` ``(N, P)`` of the last transition."""

    _fields: tuple[str, ...] = ()
    #: How many of the first ``_fields`` are the batched engine's own arrays.
    _engine_fields = 0
    rules: Any
    num_players: int
    to_throw: np.ndarray
    done: np.ndarray
    current: np.ndarray
    last_rewards: np.ndarray

    def _set_arrays(self, arrays: dict[str, np.ndarray], **defaults: Any) -> None:
        """Store ``arrays`` (copied) as the rows; ``to_throw`` and ``last_rewards`` default to
        decision nodes with no reward, ``defaults`` give fill values of other fields."""
        n = len(arrays["done"])
        arrays.setdefault("to_throw", np.zeros(n, dtype=np.int64))
        arrays.setdefault("last_rewards", np.zeros((n, self.num_players), dtype=np.int64))
        for name, value in defaults.items():
            arrays.setdefault(name, np.full(n, value, dtype=np.int64))
        missing = set(self._fields) - set(arrays)
        if missing:
            raise ValueError(f"missing state arrays: {sorted(missing)}")
        for name in self._fields:
            setattr(self, name, np.array(arrays[name]))

    @classmethod
    def from_engine(cls: type[_B], engine: Any, games: Rows | None = None) -> _B:
        """The states of the batched ``engine``'s games ``games`` (default: all), copied."""
        g = np.arange(engine.num_games) if games is None else np.asarray(games, dtype=np.int64)
        arrays = {name: getattr(engine, name)[g] for name in cls._fields[: cls._engine_fields]}
        return cls(engine.rules, engine.num_players, **arrays)  # type: ignore[call-arg]

    def __len__(self) -> int:
        return len(self.done)

    def copy(self: _B) -> _B:
        """An independent copy."""
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        for name in self._fields:
            setattr(out, name, getattr(self, name).copy())
        return out

    def take(self: _B, rows: Rows) -> _B:
        """A new batch of the rows ``rows`` (repeats allowed: one state expanded many times)."""
        rows = np.asarray(rows, dtype=np.int64)
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        for name in self._fields:
            setattr(out, name, getattr(self, name)[rows])
        return out

    @staticmethod
    def _one_game(states: Sequence[ForwardState]) -> tuple[Any, int]:
        """The rules and seat count that every one of ``states`` has (``ValueError`` naming the
        first state that differs): what :meth:`from_states` builds a batch of."""
        if not states:
            raise ValueError("a batch needs at least one state")
        rules, seats = states[0].game.rules, states[0].num_players
        for i, s in enumerate(states):
            _same_game(rules, seats, s.game.rules, s.num_players, f"state {i}")
        return rules, seats

    def put(self: _B, rows: Rows, other: ForwardBatch) -> _B:
        """A new batch: this one with rows ``rows`` replaced by the rows of ``other`` (in order; of
        the same game, rules and number of seats)."""
        _same_game(self.rules, self.num_players, other.rules, other.num_players, "the rows put")
        rows = np.asarray(rows, dtype=np.int64)
        out = self.copy()
        for name in self._fields:
            getattr(out, name)[rows] = getattr(other, name)
        return out

    def apply_actions(self: _B, values: Rows) -> _B:
        """OpenSpiel's step on every row, as a new batch: ``values[i]`` is a legal action where
        row ``i`` is a decision node, an outcome index where it is a chance node, and ignored where
        it is terminal (such a row is left as it is; rows may be of all three kinds)."""
        v = self._int_rows(values, "values")
        chance = self.to_throw > 0
        out = self.copy()
        decide = np.flatnonzero(~chance & ~self.done)
        if decide.size:
            out = out.put(decide, self.take(decide).afterstates(v[decide]))
        throw = np.flatnonzero(chance)
        if throw.size:
            out = out.put(throw, self.take(throw).apply_outcomes(v[throw]))
        return out

    def afterstates(self: _B, actions: Rows) -> _B:  # pragma: no cover - abstract
        """A new batch: each row (a decision node) after its legal action, up to the next throw."""
        raise NotImplementedError

    def is_chance_node(self) -> np.ndarray:
        """``(N,)`` bool: the next step of the row is a throw of ``to_throw`` dice."""
        return self.to_throw > 0

    def is_terminal(self) -> np.ndarray:
        """``(N,)`` bool: the game of the row is over."""
        return self.done.copy()

    def current_player(self) -> np.ndarray:
        """``(N,)``: the seat to decide, :data:`CHANCE` at a chance node, :data:`TERMINAL` once over."""
        return np.where(self.done, TERMINAL, np.where(self.to_throw > 0, CHANCE, self.current))

    def rewards(self) -> np.ndarray:
        """``(N, P)`` points each seat gained in the last transition of each row."""
        return self.last_rewards.copy()

    @staticmethod
    def chance_outcomes(k: int) -> tuple[np.ndarray, np.ndarray]:
        """The outcome table of a throw of ``k`` dice: faces ``(M, k)``, probabilities ``(M,)``
        (:func:`throw_outcomes`); a row throwing ``k`` dice takes an index into it."""
        return throw_outcomes(k)

    def apply_outcomes(self: _B, outcome_index: Rows) -> _B:  # pragma: no cover - abstract
        """A new batch: each row (a chance node) after its throw shows outcome ``outcome_index``."""
        raise NotImplementedError

    def _check_outcomes(self, outcome_index: Rows) -> np.ndarray:
        idx = self._int_rows(outcome_index, "outcome indices")
        k = self.to_throw
        if not (k > 0).all():
            rows = np.flatnonzero(k <= 0)[:10].tolist()
            raise ValueError(f"rows {rows} are not chance nodes (no dice to throw)")
        bad = (idx < 0) | (idx >= N_OUTCOMES[k])
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"row {i}: outcome {int(idx[i])} of a throw of {int(k[i])} dice is outside "
                f"0..{N_OUTCOMES[k[i]] - 1}"
            )
        return idx

    def children(self: _B) -> tuple[_B, np.ndarray, np.ndarray]:
        """Every outcome of every row (all chance nodes): ``(children, parent, probs)``, the
        children as one batch, ``parent[j]`` the row child ``j`` comes from and ``probs[j]`` its
        probability (each row's probabilities sum to 1)."""
        counts = N_OUTCOMES[self.to_throw]
        parent = np.repeat(np.arange(len(self)), counts)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        idx = np.arange(parent.size) - starts
        probs = outcome_prob_table()[self.to_throw[parent], idx]
        return self.take(parent).apply_outcomes(idx), parent, probs

    def _int_rows(self, values: Rows, what: str) -> np.ndarray:
        """``values`` as an ``(N,)`` int64 array, refused (``ValueError`` naming them) unless they
        are exactly one integer per row: a sequence of ints or a 1-D integer array (no bools,
        floats or strings, no other shape)."""
        v = np.asarray(values)
        ok = v.shape == self.done.shape and (v.dtype.kind in "iu" or v.size == 0)
        if ok and not isinstance(values, np.ndarray):
            ok = not any(isinstance(x, bool) for x in values)
        if not ok:
            raise ValueError(
                f"expected {len(self)} {what}, one integer per row (a sequence of ints or a 1-D "
                f"integer array), got {reprlib.repr(values)}"
            )
        return v.astype(np.int64, copy=False)

    def _illegal(self, a: np.ndarray, masks: np.ndarray) -> None:
        """Raise ``ValueError`` naming the first row whose action is not legal (if any)."""
        n = masks.shape[1]
        inside = (a >= 0) & (a < n)
        ok = inside & masks[np.arange(len(a)), np.where(inside, a, 0)]
        if ok.all():
            return
        i = int(np.argmax(~ok))
        if self.done[i]:
            raise ValueError(f"row {i}: the game is over; no action is legal")
        if self.to_throw[i] > 0:
            k = int(self.to_throw[i])
            raise ValueError(f"row {i} is a chance node ({k} dice to throw): it takes an outcome")
        raise ValueError(
            f"row {i}: illegal action {int(a[i])} for seat {int(self.current[i])}; "
            f"legal actions: {np.flatnonzero(masks[i]).tolist()}"
        )
