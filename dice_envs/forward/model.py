"""What every forward state and batch shares: OpenSpiel's vocabulary over the engines' halves.

A batch (:class:`ForwardBatch`) holds ``N`` rows of a batched engine's state arrays and steps them
with the engine's own two halves (a decision's afterstate, a throw's outcome); a scalar state
(:class:`ForwardState`) is a batch of one.
"""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any, TypeVar

import numpy as np

from ..engine.common import BatchedEngine
from ..rules.config import ConfigError, is_int
from .chance import (
    CHANCE,
    N_OUTCOMES,
    TERMINAL,
    Rows,
    outcome_code_table,
    outcome_index,
    outcome_list,
    outcome_prob_table,
    throw_outcomes,
)

__all__ = ["ForwardBatch", "ForwardState"]

_S = TypeVar("_S", bound="ForwardState")
_B = TypeVar("_B", bound="ForwardBatch")


class ForwardState:
    """What the scalar forward states share: OpenSpiel's vocabulary over a batch of one.

    A state holds its row as a one-row :class:`ForwardBatch` of its family (``_batch``) and steps
    it in place with the batch's halves; :attr:`game` is a one-game machine built from that row,
    to read. A subclass names its batch class (``_batch_class``).
    """

    _batch_class: type[ForwardBatch]
    _batch: ForwardBatch

    def __init__(self, game: Any) -> None:
        """The state of ``game``, a one-game machine of the family (a decision or terminal state;
        copied: the game is not touched by the model)."""
        machine = self._batch_class.game_class
        if not isinstance(game, machine):
            raise ConfigError(f"expected a {machine.__name__}, got {type(game).__name__}")
        arrays = {name: np.asarray(value)[None] for name, value in game.row().items()}
        self._set(self._batch_class(game.rules, game.num_players, **arrays))

    def _set(self, batch: ForwardBatch) -> None:
        self._batch, self.num_players, self._game = batch, batch.num_players, None

    @classmethod
    def _of(cls: type[_S], batch: ForwardBatch) -> _S:
        """The state of a one-row ``batch`` (kept, not copied)."""
        state = object.__new__(cls)
        state._set(batch)
        return state

    @classmethod
    def from_game(cls: type[_S], game: Any) -> _S:
        """The state of ``game`` (copied: the game is not touched by the model)."""
        return cls(game)

    @classmethod
    def from_engine(cls: type[_S], engine: Any, i: int) -> _S:
        """The state of game ``i`` of a batched engine of the family."""
        return cls._of(cls._batch_class.from_engine(engine, [int(i)]))

    @classmethod
    def new(cls: type[_S], rules: Any, num_players: int = 1) -> _S:
        """A fresh game whose opening throw is pending (a chance node)."""
        return cls._of(cls._batch_class.fresh(rules, num_players, 1))

    @property
    def game(self) -> Any:
        """The state as a one-game machine of the engine (``game.dice``, ``game.throw``,
        ``game.turn_total``, ...): to read, not to step. At a chance node its dice are those
        shown before the throw (none where a turn opens)."""
        if self._game is None:
            self._game = self._batch.game(0)
        return self._game

    def clone(self: _S) -> _S:
        """An independent copy."""
        return self._of(self._batch.copy())

    @property
    def dice_to_throw(self) -> int:
        """Dice the pending throw throws (0 at a decision or terminal state)."""
        return int(self._batch.to_throw[0])

    @property
    def seat(self) -> int:
        """The seat whose turn it is (also at a chance node: the seat that throws)."""
        return int(self._batch.current[0])

    def is_terminal(self) -> bool:
        """The game is over."""
        return bool(self._batch.done[0])

    def legal_actions(self) -> list[int]:
        """Legal actions of a decision node, ascending (the engine's mask); none elsewhere."""
        return np.flatnonzero(self._batch.action_masks()[0]).tolist()

    def returns(self) -> list[float]:
        """Each seat's total: the points so far, the final scores at a terminal state."""
        return self._batch.returns()[0].tolist()

    def _act(self, action: int) -> None:
        self._batch._decide_rows(np.array([action], dtype=np.int64))
        self._game = None

    def _throw(self, index: int) -> None:
        self._batch._throw_rows(np.array([index], dtype=np.int64))
        self._game = None

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
        return list(outcome_list(k)) if k else []

    def rewards(self) -> list[int]:
        """Points each seat gained in the last transition (a decision or a throw)."""
        return self._batch.last_rewards[0].tolist()

    def _check_action(self, action: object) -> int:
        if self.is_terminal():
            raise ValueError("the game is over; no action is legal")
        if self.is_chance_node():
            raise ValueError(
                f"a chance node ({self.dice_to_throw} dice to throw) takes an outcome, not an action; "
                "see chance_outcomes()"
            )
        legal = self.legal_actions()
        if not is_int(action) or int(action) not in legal:  # type: ignore[call-overload]
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
            n = len(outcome_list(k))
            if not is_int(action) or not 0 <= int(action) < n:  # type: ignore[call-overload]
                raise ValueError(f"a chance outcome of {k} dice is an index 0..{n - 1}, got {action!r}")
            self._throw(int(action))
            return
        self._act(self._check_action(action))

    def children(self: _S) -> list[tuple[_S, float]]:
        """Every ``(state after outcome, probability)`` of a chance node (empty otherwise)."""
        if not self.dice_to_throw:
            return []
        kids, _, probs = self._batch.children()
        return [(self._of(kids.take([j])), float(p)) for j, p in enumerate(probs.tolist())]


def _same_game(rules: Any, seats: int, other: Any, other_seats: int, what: str) -> None:
    """Refuse (``ValueError`` naming both) ``other`` rules or seats that are not ``rules``, ``seats``."""
    if other != rules or other_seats != seats:
        raise ValueError(
            f"{what}: {other!r} with {other_seats} seat(s); the batch holds {rules!r} with {seats} "
            "seat(s) (a batch holds one game, one set of rules and one seat count)"
        )


class ForwardBatch:
    """What the batched forward models share: rows of the batched engine's state arrays (the
    family's ``STATE_FIELDS``, first axis: the state; ``to_throw`` the dice of the pending throw,
    0 at a decision or terminal state; ``last_rewards`` ``(N, P)`` of the last transition),
    stepped by the two halves of the family's engine module ``_engine`` (``apply_decisions``,
    ``apply_throws``) and read by its ``legal_masks``; ``game_class`` is the family's one-game
    machine (``ROW_FIELDS``, ``from_row``)."""

    _engine: ModuleType
    _fields: tuple[str, ...] = ()
    game_class: Any
    rules: Any
    num_players: int
    to_throw: np.ndarray
    done: np.ndarray
    current: np.ndarray
    totals: np.ndarray
    last_rewards: np.ndarray

    def __init__(self, rules: Any, num_players: int, **arrays: np.ndarray) -> None:
        """Rows of state arrays (named by ``_fields``; ``to_throw`` and ``last_rewards`` default to
        decision nodes with no reward, ``pending`` to no re-throw)."""
        self.rules, self.num_players = rules, int(num_players)
        n = len(arrays["done"])
        arrays.setdefault("to_throw", np.zeros(n, dtype=np.int64))
        arrays.setdefault("pending", np.full(n, -1, dtype=np.int64))
        arrays.setdefault("last_rewards", np.zeros((n, self.num_players), dtype=np.int64))
        missing = set(self._fields) - set(arrays)
        if missing:
            raise ValueError(f"missing state arrays: {sorted(missing)}")
        for name in self._fields:  # C order: the engine's halves write through flat views
            setattr(self, name, np.array(arrays[name], order="C"))

    @classmethod
    def fresh(cls: type[_B], rules: Any, num_players: int, n: int) -> _B:
        """``n`` fresh games, each a chance node: the opening throw is pending."""
        return cls(rules, num_players, **cls._engine.fresh_rows(rules, num_players, n))

    @classmethod
    def from_engine(cls: type[_B], engine: Any, games: Rows | None = None) -> _B:
        """The states of the batched ``engine``'s games ``games`` (default: all), copied (with no
        reward yet)."""
        g = np.arange(engine.num_games) if games is None else np.asarray(games, dtype=np.int64)
        arrays = {name: getattr(engine, name)[g] for name in cls._fields if name != "last_rewards"}
        return cls(engine.rules, engine.num_players, **arrays)

    @classmethod
    def from_states(cls: type[_B], states: Sequence[ForwardState]) -> _B:
        """A batch of scalar states (one game, one set of rules and one seat count; others are
        refused by name)."""
        rules, seats = cls._one_game(states)
        rows = [s._batch for s in states]
        return cls(
            rules, seats, **{name: np.concatenate([getattr(r, name) for r in rows]) for name in cls._fields}
        )

    def game(self, i: int) -> Any:
        """Row ``i`` as the family's one-game machine, built as a batched engine builds one."""
        return BatchedEngine.to_game(self, i)  # type: ignore[arg-type]

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
        rules, seats = states[0]._batch.rules, states[0].num_players
        for i, s in enumerate(states):
            _same_game(rules, seats, s._batch.rules, s.num_players, f"state {i}")
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

    def action_masks(self) -> np.ndarray:
        """Legal actions ``(N, n_actions)`` bool, by the engine's ``legal_masks`` (none at a chance
        node or a terminal state)."""
        if not len(self):
            return np.zeros((0, self.rules.n_actions), dtype=bool)
        return self._engine.legal_masks(self, slice(None)) & ((self.to_throw == 0) & ~self.done)[:, None]

    def returns(self) -> np.ndarray:
        """``(N, P)`` each seat's total (the final scores where a row is terminal)."""
        return self.totals.astype(np.float64)

    def afterstates(self: _B, actions: Rows) -> _B:
        """A new batch: each row (a decision node) after its legal action, up to the next throw.

        Raises ``ValueError`` naming the first illegal row and its legal actions (this batch is
        unchanged).
        """
        a = self._int_rows(actions, "actions")
        self._illegal(a, self.action_masks())
        out = self.copy()
        out._decide_rows(a)
        return out

    def _decide_rows(self, actions: np.ndarray) -> None:
        """Every row after its (legal, unchecked) decision, in place: the engine's half."""
        self.last_rewards[:] = 0
        self._engine.apply_decisions(self, np.arange(len(self)), actions)

    def _throw_rows(self, outcome_index: np.ndarray) -> None:
        """Every row (a chance node) after its throw shows ``outcome_index`` (unchecked), in place:
        the engine's half, on the outcome's face codes."""
        self.last_rewards[:] = 0
        codes = outcome_code_table()[self.to_throw, outcome_index]
        self._engine.apply_throws(self, np.arange(len(self)), codes)

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

    def apply_outcomes(self: _B, outcome_index: Rows) -> _B:
        """A new batch: each row (a chance node) after its throw shows outcome ``outcome_index``
        (an index into :meth:`chance_outcomes` of the row's ``to_throw`` dice)."""
        idx = self._check_outcomes(outcome_index)
        out = self.copy()
        out._throw_rows(idx)
        return out

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
