"""Exact N-player Farkle at reduced targets: a seat's best response to a fixed field, and the
all-seats equilibrium.

The game solved is the rules' game without a turn limit (``max_turns`` is ignored), with one
modelling choice shared with :mod:`agents.solver.farkle_win`: a seat whose banked total plus
turn total reaches ``target + cap`` (and passes every other seat) banks; ``cap`` defaults to 0
here (the two-player solver's default cap would multiply the final-round positions). The state between turns
is every seat's banked total (steps of 50), the seat to move, and whether the final round has
begun (somebody reached the target; the seats after it in the order then take one last turn
each, the highest total wins, equal totals share). Inside a turn: the turn total and the dice
to throw; throws and their probabilities come from :func:`agents.solver.farkle_win.option_groups`
(built from the forward model and the rules' turn tables).

* **Best response** (:func:`best_response`): the other seats play fixed agents, read batched
  over every decision of every turn they can face (observations as the environments build
  them, with the turn counter at 0: the solved game has none). Their turns become exact
  distributions over how the turn ends; the responding seat maximises its chance of winning.
* **Equilibrium** (:func:`equilibrium`): every seat maximises its own chance of winning; a seat
  indifferent between choices (within ``tol``) banks before throwing on, and among selections
  takes the first in ``option_groups`` order (fewest points, then fewest dice left). With two
  seats it is :func:`~agents.solver.farkle_win.solve_farkle_win`'s game.

The final round is solved backwards over the seats still to play; the turn-start states before
it are cyclic (farkles pass the turn, bankruptcy lowers a total) and are found by Gauss-Seidel
sweeps in decreasing sum of the banked totals until no value changes by more than ``tol``.
The solve cost grows with the number of final-round positions, so this is for reduced targets;
the :doc:`multi-player guide </guide/multiplayer>` records what each player count solves in time.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.solver.farkle_field_play import FieldPlay
from agents.solver.farkle_win import STEP, option_groups
from dice_envs.engine import farkle_turn as turn
from dice_envs.rules import ConfigError, FarkleRules

__all__ = [
    "FieldSolution",
    "TurnValues",
    "best_response",
    "equilibrium",
    "exploitability",
    "searched_solution",
]

_TOL = 1e-12
_CHUNK = 512
#: Values ``(n, K)`` of turn starts before the final round: ``value(movers, totals)`` with the
#: seats to move ``(n,)`` and every seat's banked total ``(n, N)`` (steps of 50, each below the target).
TurnValues = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _kernel() -> Any:
    try:
        from agents.solver import _farkle_field_numba
    except ImportError as exc:  # pragma: no cover - numba ships with the [solver] extra
        raise ImportError("the N-player Farkle solver needs numba: pip install 'dice-envs[solver]'") from exc
    return _farkle_field_numba


@dataclass
class FieldSolution:
    """Solved turn-start values of N-player Farkle.

    ``values[mover, *totals]`` (totals in steps of 50, each below the target; ``(K,)`` per
    position): for :func:`best_response` ``K = 1``, the responding seat's chance of winning; for
    :func:`equilibrium` ``K = players``, every seat's chance. ``log``: one row per sweep.
    """

    rules: FarkleRules
    players: int
    cap: int
    seat: int | None  # the responding seat, None for the equilibrium
    values: np.ndarray | TurnValues = field(repr=False)
    log: list[dict[str, float]] = field(default_factory=list, repr=False)
    model: Any = field(default=None, repr=False, compare=False)

    def win_probability(self, seat: int | None = None) -> float:
        """The chance that ``seat`` wins from the start (the responding seat by default)."""
        zero = np.zeros((1, self.players), dtype=np.int64)
        v = self.values(zero[:, 0], zero)[0] if callable(self.values) else self.values[(0, *zero[0])]
        if self.seat is not None:
            if seat not in (None, self.seat):
                raise ValueError(f"this best response solved seat {self.seat} only, not {seat!r}")
            return float(v[0])
        if seat is None or not 0 <= seat < self.players:
            raise ValueError(f"seat must be 0 to {self.players - 1}, got {seat!r}")
        return float(v[seat])

    def turn(self, totals: list[int], mover: int, final: bool) -> tuple[np.ndarray, np.ndarray]:
        """``(B, W)`` of the mover's turn from banked ``totals`` (points): ``B[t, :]`` the values
        after banking ``t`` steps, ``W[t, n, :]`` after throwing ``n`` dice on (``-1`` where the
        turn banks). The mover must be a maximising seat."""
        B, W = self.turns(np.asarray([totals]), mover, np.asarray([final]))
        return B[0], W[0]

    def turns(self, totals: np.ndarray, mover: int, final: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`turn` of many positions at once (one kernel call): ``totals`` ``(n, N)``
        points, ``final`` ``(n,)``; ``B`` ``(n, rows, K)`` and ``W`` ``(n, rows, 7, K)``, ``rows``
        the most any of them needs."""
        totals = np.asarray(totals, dtype=np.int64) // STEP
        return self.model.turns(totals, mover, np.asarray(final, dtype=bool), self.values)


class _Model(FieldPlay):
    """The positions and turns of one solve; ``policies[s]`` is None for a maximising seat,
    else the agent playing it; ``obj[s]`` the value component seat ``s`` maximises."""

    def __init__(
        self, rules: FarkleRules, players: int, cap: int, policies: list[Any], K: int, obj: list[int]
    ):
        if not isinstance(rules, FarkleRules):
            raise ConfigError(f"rules must be FarkleRules, got {type(rules).__name__}")
        if isinstance(players, bool) or players not in range(2, 9):
            raise ConfigError(f"players must be 2 to 8, got {players!r}")
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0 or cap % STEP:
            raise ConfigError(f"cap must be a non-negative multiple of {STEP} points, got {cap!r}")
        self.rules, self.N, self.policies, self.K, self.obj = rules, players, policies, K, obj
        self.g = option_groups()
        self.pad = int(self.g[3].max())
        self.X = -(-rules.target // STEP)
        steps = np.arange(rules.bank_minimum // STEP + 2)
        self.tb = int(np.argmax(turn.may_bank(steps * STEP, rules.bank_minimum)))
        self.U = self.X + max(cap // STEP, self.tb)
        # totals (steps) stay below R: the forced bank plus a selection per seat; -1 marks a
        # finished seat that cannot win any more (:meth:`final_values`)
        self.R = self.U + players * (self.pad + 2) + 2
        self._final: dict[int, dict[int, np.ndarray]] = {}
        self._dists: dict[int, dict[tuple[int, ...], tuple[np.ndarray, ...]]] = {}

    # ------------------------------------------------------------------ positions
    def tops(self, totals: np.ndarray, m: int) -> np.ndarray:
        """Turn total (steps) from which the mover banks: at ``target + cap``, and past every
        other seat, and at least a bankable total."""
        own = totals[:, m]
        others = np.delete(totals, m, axis=1).max(axis=1)
        return np.maximum(np.maximum(self.U, others + 1), own + self.tb) - own

    def shares(self, totals: np.ndarray) -> np.ndarray:
        """Terminal values ``(n, K)``: the seats at the highest total share the win."""
        top = totals == totals.max(axis=1, keepdims=True)
        s = top / top.sum(axis=1, keepdims=True)
        return s if self.K == self.N else s[:, [self.obj.index(0)]]

    def ends(self, totals: np.ndarray, m: int, rows: int) -> np.ndarray:
        """Totals ``(n, rows + 2, N)`` after the mover's turn ends: banking ``t`` (row ``t``),
        a farkle (row ``rows``), a farkle on the first throw (row ``rows + 1``)."""
        out = np.repeat(totals[:, None, :], rows + 2, axis=1)
        out[:, :rows, m] += np.arange(rows)
        if self.rules.bankruptcy:
            out[:, rows + 1, m] = 0
        return out

    # ------------------------------------------------------------------ turns
    def solve_turns(self, m: int, totals: np.ndarray, after: np.ndarray, full: bool = False) -> Any:
        """The mover's turns from ``totals`` given ``after`` ``(n, rows + 2, K)``, the values of
        :meth:`ends`: maximised (the kernel) or played by the seat's agent. Returns the start
        values ``(n, K)``, or the kernel's ``(start, Q, W)`` when ``full``."""
        tops = self.tops(totals, m)
        rows = after.shape[1] - 2
        if self.policies[m] is None:
            B = np.ascontiguousarray(after[:, :rows].transpose(1, 0, 2))
            obj = np.full(len(totals), self.obj[m], dtype=np.int64)
            out = _kernel().turn_tables(
                obj, tops, self.tb, B, after[:, rows].copy(), after[:, rows + 1].copy(), _TOL, *self.g
            )
            return out if full else out[0]
        return _mix(self.field_dist(m, totals, rows), after)

    # ------------------------------------------------------------------ final round
    def final_values(self, m: int, totals: np.ndarray) -> np.ndarray:
        """Values ``(n, K)`` of final-round positions with seat ``m`` to move, memoised per seat.

        Where seat ``m`` and every seat after it maximise, a position's value depends only on the
        totals of the seats still to play, the highest finished total and which finished seats
        hold it (a finished seat below it cannot win any more), so positions are memoised on
        those; a fixed agent still to play sees every total, so there on every total. Without
        the memo, each seat's final-round turns were solved again for every earlier turn that
        reaches them: four seats at target 200 did not finish in ten minutes."""
        keys = totals.copy()
        if all(p is None for p in self.policies[m:]):
            done = keys[:, :m]
            top = done.max(axis=1, keepdims=True)
            keys[:, :m] = np.where(done == top, top, -1)
        if keys.max() >= self.R - 1:
            raise AssertionError(f"a final-round total of {keys.max()} steps is past the code's range")
        code = (keys + 1) @ (self.R ** np.arange(self.N, dtype=np.int64))
        uniq, first, inv = np.unique(code, return_index=True, return_inverse=True)
        memo = self._final.setdefault(m, {})
        todo = np.array([i for i, c in enumerate(uniq.tolist()) if c not in memo], dtype=np.int64)
        if todo.size:
            memo.update(zip(uniq[todo].tolist(), self._final_turns(m, keys[first[todo]]), strict=True))
        return np.array([memo[c] for c in uniq.tolist()]).reshape(len(uniq), self.K)[inv.reshape(-1)]

    def _final_turns(self, m: int, totals: np.ndarray) -> np.ndarray:
        """The final-round turns of seat ``m`` from ``totals`` solved (or played), in chunks."""
        out = np.zeros((len(totals), self.K))
        live = np.flatnonzero(~self.lost(m, totals))
        size = _CHUNK if self.policies[m] is None else 8 * _CHUNK
        for lo in range(0, len(live), size):
            at = live[lo : lo + size]
            chunk = totals[at]
            ends, need, rows = self.turn_ends(chunk, m)
            after = np.zeros((*ends.shape[:2], self.K))
            if self.policies[m] is None:
                after[need] = self.after_final(m, ends[need])
                out[at] = self.solve_turns(m, chunk, after)
                continue
            # the ends the agent never reaches need no value: with `lost`, 6.7x fewer decisions read
            # (27.5M to 4.1M) by seat 0's three-seat best response to a field that banks when it may
            # (target 50, bank minimum 50); this alone 2.3x fewer
            dist = self.field_dist(m, chunk, rows, final=True)
            need &= _support(dist)
            after[need] = self.after_final(m, ends[need])
            out[at] = _mix(dist, after)
        return out

    def lost(self, m: int, totals: np.ndarray) -> np.ndarray:
        """Which final-round positions with seat ``m`` to move the responding seat of a best
        response has lost already: it has had its last turn and so has a seat holding more (their
        totals no longer change), so its value there is 0 (computing it gave exactly 0 too).
        17% fewer decisions read in the best response of :meth:`_final_turns`' note."""
        r = self.obj.index(0) if self.K == 1 else m
        if r >= m:
            return np.zeros(len(totals), dtype=bool)
        return (totals[:, :m] > totals[:, [r]]).any(axis=1)

    def turn_ends(self, totals: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, int]:
        """:meth:`ends` of the mover's turns, which of them can happen (a bank from a bankable
        total up to the forced bank plus one selection; the farkles) and the rows."""
        tops = self.tops(totals, m)
        rows = int(tops.max()) + self.pad + 1
        t = np.arange(rows + 2)
        need = ((t >= self.tb) & (t <= tops[:, None] + self.pad)) | (t >= rows)
        return self.ends(totals, m, rows), need, rows

    def after_final(self, m: int, ends: np.ndarray) -> np.ndarray:
        """Values of positions ``(n, N)`` reached when seat ``m``'s turn ends in the final round."""
        return self.shares(ends) if m == self.N - 1 else self.final_values(m + 1, ends)

    # ------------------------------------------------------------------ before the final round
    def solve(self, tol: float, max_sweeps: int, log: list[dict[str, float]]) -> np.ndarray:
        """Turn-start values ``(N, X, ..., X, K)`` before the final round."""
        N, X, K = self.N, self.X, self.K
        V = np.full((N,) + (X,) * N + (K,), 1.0 / N)
        grid = np.stack(np.unravel_index(np.arange(X**N), (X,) * N), axis=1)
        at_level = [np.flatnonzero(grid.sum(axis=1) == s) for s in range(N * (X - 1), -1, -1)]
        fixed: dict[tuple[int, int], Any] = {}
        start = time.perf_counter()
        for m in range(N):  # the parts of every turn's outcome that lie in the final round
            ends, need, rows = self.turn_ends(grid, m)
            reach = need & (ends[:, :, m] >= X)
            dist = None
            if self.policies[m] is not None:
                dist = self.field_dist(m, grid, rows)
            vals = np.zeros((*ends.shape[:2], K))
            value = reach if dist is None else reach & _support(dist)
            if value.any():
                vals[value] = self.after_final(m, ends[value])
            for li, idx in enumerate(at_level):
                part = None if dist is None else tuple(d[idx] for d in dist)
                fixed[m, li] = (ends[idx], reach[idx], vals[idx], part)
        log.append({"sweep": 0, "residual": float("nan"), "seconds": time.perf_counter() - start})
        for sweep in range(1, max_sweeps + 1):
            change = 0.0
            for li, idx in enumerate(at_level):
                tot = grid[idx]
                for m in range(N):
                    ends, reach, vals, field_dist = fixed[m, li]
                    after = vals.copy()
                    nxt = (m + 1) % N
                    inside = ~reach & (ends[:, :, m] < X)
                    e = ends[inside]
                    after[inside] = V[(np.full(len(e), nxt), *tuple(e.T))]
                    if field_dist is None:
                        new = self.solve_turns(m, tot, after)
                    else:
                        pb, pf, pbust = field_dist
                        rows = pb.shape[1]
                        new = np.einsum("nt,ntk->nk", pb, after[:, :rows])
                        new += pf[:, None] * after[:, rows] + pbust[:, None] * after[:, rows + 1]
                    at = (np.full(len(tot), m), *tuple(tot.T))
                    change = max(change, float(np.abs(new - V[at]).max()))
                    V[at] = new
            log.append({"sweep": sweep, "residual": change, "seconds": time.perf_counter() - start})
            if change <= tol:
                return V
        raise RuntimeError(
            f"value iteration did not converge to {tol} in {max_sweeps} sweeps (last {change:.3g})"
        )

    def turns(
        self, totals: np.ndarray, m: int, final: np.ndarray, V: np.ndarray | TurnValues
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(B, W)`` of turns of maximising seat ``m`` from ``totals`` ``(n, N)`` (steps; see
        :meth:`FieldSolution.turns`) over the turn-start values ``V`` before the final round (a
        table or a :data:`TurnValues`)."""
        if self.policies[m] is not None:
            raise ValueError(f"seat {m} plays a fixed agent in this solve, not a solved policy")
        ends, need, rows = self.turn_ends(totals, m)
        after = np.zeros((*ends.shape[:2], self.K))
        last = need & (final[:, None] | (ends[:, :, m] >= self.X))
        if last.any():
            after[last] = self.after_final(m, ends[last])
        before = need & ~last
        nxt, e = np.full(int(before.sum()), (m + 1) % self.N), ends[before]
        after[before] = V(nxt, e) if callable(V) else V[(nxt, *tuple(e.T))]
        _, _, W = self.solve_turns(m, totals, after, full=True)
        B = after[:, :rows].copy()
        B[~need[:, :rows]] = -1.0
        return B, W.transpose(2, 0, 1, 3)


def _mix(dist: tuple[np.ndarray, ...], after: np.ndarray) -> np.ndarray:
    """Values ``(n, K)`` of turns ending as :meth:`FieldPlay.field_turns` says, given the values
    ``after`` ``(n, rows + 2, K)`` of their ends (:meth:`_Model.ends`)."""
    pb, pf, pbust = dist
    rows = pb.shape[1]
    out = np.einsum("nt,ntk->nk", pb, after[:, :rows])
    return out + pf[:, None] * after[:, rows] + pbust[:, None] * after[:, rows + 1]


def _support(dist: tuple[np.ndarray, ...]) -> np.ndarray:
    """``(n, rows + 2)``: the ends of :meth:`_Model.ends` that turns ending as ``dist`` reach."""
    pb, pf, pbust = dist
    return np.concatenate([pb, pf[:, None], pbust[:, None]], axis=1) > 0


def _solve(
    rules: FarkleRules,
    players: int,
    cap: int,
    policies: list[Any],
    K: int,
    obj: list[int],
    seat: int | None,
    tol: float,
    max_sweeps: int,
) -> FieldSolution:
    model = _Model(rules, players, cap, policies, K, obj)
    log: list[dict[str, float]] = []
    V = model.solve(tol, max_sweeps, log)
    V.setflags(write=False)
    return FieldSolution(rules, players, cap, seat, V, log, model)


def searched_solution(rules: FarkleRules, players: int, value: TurnValues, cap: int = 0) -> FieldSolution:
    """Every seat maximising its own chance of winning by exact search of its turn over ``value``,
    the turn starts' values before the final round (``K = players``); the final round is searched
    exactly to the game's end (its last turns kept per rules, seats and cap: they do not depend on
    ``value``). Nothing is solved: each :meth:`FieldSolution.turn` is one search."""
    return FieldSolution(rules, players, cap, None, value, [], _searched_model(rules, players, cap))


@functools.lru_cache(maxsize=4)
def _searched_model(rules: FarkleRules, players: int, cap: int) -> _Model:
    return _Model(rules, players, cap, [None] * players, players, list(range(players)))


def best_response(
    rules: FarkleRules,
    field: list[Any],
    seat: int,
    cap: int = 0,
    tol: float = _TOL,
    max_sweeps: int = 500,
) -> FieldSolution:
    """The best response of ``seat`` to the agents of ``field`` (one per other seat, in seat
    order): its chance of winning at every turn start, ``K = 1``."""
    players = len(field) + 1
    if isinstance(seat, bool) or seat not in range(players):
        raise ConfigError(f"seat must be 0 to {players - 1} for a field of {len(field)}, got {seat!r}")
    for agent in field:
        if callable(getattr(agent, "start_episodes", None)):
            raise ConfigError(
                f"{type(agent).__name__} keeps a history of its games: "
                "its play is not a function of the position"
            )
    policies = [*list(field[:seat]), None, *list(field[seat:])]
    obj = [0 if s == seat else -1 for s in range(players)]
    return _solve(rules, players, cap, policies, 1, obj, seat, tol, max_sweeps)


def equilibrium(
    rules: FarkleRules, players: int, cap: int = 0, tol: float = _TOL, max_sweeps: int = 500
) -> FieldSolution:
    """Every seat maximises its own chance of winning (ties as the module says): every seat's
    chance at every turn start, ``K = players``."""
    return _solve(rules, players, cap, [None] * players, players, list(range(players)), None, tol, max_sweeps)


@dataclass(frozen=True)
class Exploitability:
    """How much a best response gains against an agent in every other seat.

    ``best_response[s]``: seat ``s``'s chance of winning under its best response;
    ``nash_conv``: their sum minus 1 (the seats' chances of any one game sum to 1);
    ``exploitability``: ``nash_conv / players``, the mean gain of a seat over its share when the
    agent plays itself."""

    players: int
    best_response: tuple[float, ...]

    @property
    def nash_conv(self) -> float:
        return float(sum(self.best_response) - 1.0)

    @property
    def exploitability(self) -> float:
        return self.nash_conv / self.players


def exploitability(
    rules: FarkleRules,
    players: int,
    make_agent: Any,
    cap: int = 0,
    tol: float = _TOL,
    on_seat: Any = None,
    solved: dict[int, float] | None = None,
) -> Exploitability:
    """The best response of every seat to ``make_agent(seat)`` in all the others (``on_seat(seat,
    chance)`` as each seat's solve ends: a caller keeps what a long measure solved so far;
    ``solved``: the chances of seats solved before, taken as they are)."""
    brs: list[float] = []
    for seat in range(players):
        if solved and seat in solved:
            brs.append(float(solved[seat]))
            continue
        field_agents = [make_agent(s) for s in range(players) if s != seat]
        brs.append(best_response(rules, field_agents, seat, cap=cap, tol=tol).win_probability())
        if on_seat is not None:
            on_seat(seat, brs[-1])
    return Exploitability(players, tuple(brs))
