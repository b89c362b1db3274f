"""Exact two-player Farkle: the probability of winning when both seats play to win.

States. Between turns the game is ``(mover, a, b)``: seat 0 has banked ``a``, seat 1 has
banked ``b`` (both below the target: once a seat reaches it the game is in its last round) and
``mover`` is to throw. ``S[s][a, b]`` is the probability that the mover ``s`` wins (a shared
win counts half) under play that maximises each seat's own chance. Inside a turn the state
adds the turn total ``t`` and the number ``n`` of dice about to be thrown.

One turn (backward induction over ``t``, from large totals down; every selection scores at
least 50, so totals only grow): after each throw the mover picks a scoring selection and then
banks (only when ``t > bank_minimum``) or throws the dice left (six after hot dice). A farkle
ends the turn and loses ``t``; a farkle on the turn's first throw also wipes the banked total
when ``bankruptcy`` is on. Banking hands the turn to the other seat, except:

* seat 0 banking ``a + t >= target`` starts the last round: seat 1 gets one turn and wins by
  ending strictly above ``a + t`` (equal shares the win). Seat 1's chance in that last turn is
  ``F[d]`` for a lead of ``d = a + t - b`` (a one-turn problem solved exactly, below). Seat 0 may
  throw on past the target to leave seat 1 more to beat; totals ``a + t`` at or above the cap
  ``target + cap`` are banked (the cap's effect on the values is measured: ``--check-cap`` of
  ``scripts/solve_farkle_win.py``, and the guide to evaluation);
* seat 1 banking ``b + t >= target`` ends the game at once, won (seat 0 is below the target).

Farkles and bankruptcy make the turn-start states cyclic, so the table is found by value
iteration: Gauss-Seidel sweeps over the score pairs in decreasing ``a + b`` (a bank always
raises the sum), with Anderson acceleration on the whole table, until a sweep changes no value
by more than ``tol`` (1e-12; the error of the values is a small multiple of that).

Every throw outcome and probability comes from the forward model
(:func:`dice_envs.forward.farkle_throws`), every legal selection and score from
:func:`dice_envs.tables.farkle_turn_tables` (built from the rules' scoring function); the inner loops
run in numba (the ``[solver]`` extra), imported only when a table must be computed. The rule
parameter ``max_turns`` (a truncation of environments) is ignored: the solved game has no turn
limit.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from agents.solver.cache import (
    cache_key,
    cached_array,
    cached_array_is_sound,
    progress_note,
    single_thread_blas,
)
from dice_envs.engine import farkle_turn as turn
from dice_envs.rules.farkle import NUM_DICE, FarkleRules

__all__ = [
    "DEFAULT_CAP",
    "STEP",
    "FarkleWinSolution",
    "final_turn_values",
    "is_solved",
    "option_groups",
    "solve_farkle_win",
]

#: Every Farkle score is a multiple of this.
STEP = 50
#: Points above the target up to which seat 0 may keep throwing (then it banks).
DEFAULT_CAP = 4_000
_PAD = 160  # largest selection (six 1s = 8000 points) in steps of 50
#: Turn tables kept per solution (least recently used dropped first).
TURN_CACHE_SIZE = 2048


@cache
def option_groups() -> tuple[np.ndarray, ...]:
    """Throw outcomes of 1-6 dice grouped by their set of choices, from the rules' tables.

    Returns ``(g_start, g_prob, o_start, o_pts, o_left, farkle_p)``: the groups of ``n`` dice are
    ``g_start[n] .. g_start[n + 1] - 1``; group ``k`` has probability ``g_prob[k]`` (summed over
    the throws sharing its choices) and choices ``o_start[k] .. o_start[k + 1] - 1``, each setting
    aside ``o_pts`` (in steps of 50) and leaving ``o_left`` dice to throw (six after hot dice);
    ``farkle_p[n]`` is the probability that ``n`` dice score nothing.
    """
    from dice_envs.forward import farkle_throws

    tt = turn.farkle_turn_tables()
    g_start = [0, 0]
    g_prob: list[float] = []
    o_start = [0]
    o_pts: list[int] = []
    o_left: list[int] = []
    farkle_p = np.zeros(NUM_DICE + 1)
    for n in range(1, NUM_DICE + 1):
        groups: dict[tuple[tuple[int, int], ...], float] = {}
        for throw, p in zip(*(a.tolist() for a in farkle_throws(n)), strict=True):
            row = tt.points[throw]
            masks = np.flatnonzero(row > 0)
            if masks.size == 0:
                farkle_p[n] += p
                continue
            left = tt.next_dice[throw, masks]  # six after hot dice
            opts = tuple(sorted({(int(row[m]) // STEP, int(k)) for m, k in zip(masks, left, strict=True)}))
            groups[opts] = groups.get(opts, 0.0) + p
        for opts, p in sorted(groups.items()):
            g_prob.append(p)
            for pts, k in opts:
                o_pts.append(pts)
                o_left.append(k)
            o_start.append(len(o_pts))
        g_start.append(len(g_prob))
    if (tt.points % STEP).any():  # pragma: no cover
        raise RuntimeError("a Farkle score is not a multiple of 50")
    return (
        np.array(g_start, dtype=np.int64),
        np.array(g_prob),
        np.array(o_start, dtype=np.int64),
        np.array(o_pts, dtype=np.int64),
        np.array(o_left, dtype=np.int64),
        farkle_p,
    )


@cache
def _kernels() -> Any:
    """The module of compiled inner loops (numba caches the machine code on disk)."""
    try:
        from agents.solver import _farkle_win_numba
    except ImportError as exc:  # pragma: no cover - numba ships with the [solver] extra
        raise ImportError(
            "the exact two-player Farkle solver needs numba for its inner loops: "
            "pip install 'dice-envs[solver]' (also pulled in by [train] and [dev])"
        ) from exc
    return _farkle_win_numba


@dataclass(frozen=True)
class _Params:
    X: int  # banked totals below the target, in steps: 0 .. X - 1
    U: int  # cap: seat 0 banks at a + t >= U (steps)
    tb: int  # smallest turn total (steps) that may be banked
    bankrupt: bool

    @property
    def rows(self) -> int:
        """Turn totals (steps) a turn table holds: every total a selection can reach from the cap."""
        return self.U + self.tb + 2 * (_PAD + 1) + 2


def _params(rules: FarkleRules, cap: int) -> _Params:
    if not isinstance(cap, int) or isinstance(cap, bool) or cap < 0:
        raise ValueError(f"cap must be a non-negative integer number of points, got {cap!r}")
    X = -(-rules.target // STEP)
    steps = np.arange(rules.bank_minimum // STEP + 2)
    tb = int(np.argmax(turn.may_bank(steps * STEP, rules.bank_minimum)))  # first bankable total
    U = X + max(cap // STEP, tb)  # the forced bank at the cap must be legal
    return _Params(X=X, U=U, tb=tb, bankrupt=bool(rules.bankruptcy))


def _rule_params(rules: FarkleRules) -> dict[str, Any]:
    """The rule parameters the tables depend on (``max_turns`` does not enter them)."""
    return {k: v for k, v in rules.to_dict().items() if k != "max_turns"}


def final_turn_values(rules: FarkleRules, cap: int = DEFAULT_CAP) -> np.ndarray:
    """``F[d]``: the chance that seat 1 wins its last turn against a lead of ``d`` steps (ties half),
    for every lead up to the cap and one selection beyond."""
    p = _params(rules, cap)
    return _kernels().final_turn(p.U + _PAD + 1, p.tb, *option_groups())


def _threaded_sweep(
    S0: np.ndarray, S1: np.ndarray, p: _Params, F: np.ndarray, pool: Any, threads: int
) -> None:
    """The numba ``sweep`` with each sum's pairs split over ``threads`` threads (the kernels
    release the GIL; the pairs of one sum are independent)."""
    k = _kernels()
    g = option_groups()
    X = p.X
    rows = p.rows
    width = -(-X // threads)
    bufs = [
        (
            np.zeros((rows, 7, width)),
            np.zeros((rows, width)),
            np.zeros(width, dtype=np.int64),
            *np.zeros((4, width)),
        )
        for _ in range(threads)
    ]

    def run(seat: int, A: np.ndarray, Bs: np.ndarray, buf: tuple[np.ndarray, ...]) -> None:
        Q, B, tops, L, Lf, acc, best = buf
        m = len(A)
        Qm, Bm = np.ascontiguousarray(Q[:, :, :m]), np.ascontiguousarray(B[:, :m])
        if seat == 0:
            k.fill0(A, Bs, X, p.U, p.tb, S1, F, p.bankrupt, tops[:m], Bm, L[:m], Lf[:m])
        else:
            k.fill1(A, Bs, X, p.tb, S0, p.bankrupt, tops[:m], Bm, L[:m], Lf[:m])
        v = k.diag_turn(tops[:m], Bm, L[:m], Lf[:m], Qm, acc[:m], best[:m], *g)
        (S0 if seat == 0 else S1)[A, Bs] = v

    for total in range(2 * X - 2, -1, -1):
        A = np.arange(max(0, total - X + 1), min(X - 1, total) + 1)
        parts = [c for c in np.array_split(A, threads) if len(c)]
        for seat in (0, 1):
            futures = [pool.submit(run, seat, c, total - c, bufs[i]) for i, c in enumerate(parts)]
            for f in futures:
                f.result()


def _anderson_solve(
    p: _Params,
    F: np.ndarray,
    tol: float,
    max_sweeps: int,
    history: int,
    log: list[dict[str, float]],
    threads: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    k = _kernels()
    g = option_groups()
    X = p.X
    n = X * X
    pool = None
    if threads > 1:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(threads)

    def G(x: np.ndarray) -> np.ndarray:
        S0 = x[:n].reshape(X, X).copy()
        S1 = x[n:].reshape(X, X).copy()
        if pool is None:
            k.sweep(S0, S1, X, p.U, p.tb, F, p.bankrupt, *g)
        else:
            _threaded_sweep(S0, S1, p, F, pool, threads)
        return np.concatenate([S0.ravel(), S1.ravel()])

    x = np.full(2 * n, 0.5)
    dx: list[np.ndarray] = []
    df: list[np.ndarray] = []
    gx_prev = f_prev = None
    start = time.perf_counter()
    for it in range(max_sweeps):
        gx = G(x)
        f = gx - x
        res = float(np.abs(f).max())
        log.append({"sweep": it + 1, "residual": res, "seconds": time.perf_counter() - start})
        progress_note(f"sweep {it + 1}, largest change {res:.1e} (done at {tol:.0e})")
        if res <= tol:
            if pool is not None:
                pool.shutdown()
            return gx[:n].reshape(X, X), gx[n:].reshape(X, X)
        if f_prev is not None and res > 0.99 * float(np.abs(f_prev).max()):
            dx.clear()  # not contracting: restart the history (a policy switched)
            df.clear()
        elif f_prev is not None and gx_prev is not None:
            dx.append(gx - gx_prev)
            df.append(f - f_prev)
            if len(dx) > history:
                dx.pop(0)
                df.pop(0)
        gx_prev, f_prev = gx, f
        if df:
            dF = np.stack(df, axis=1)
            gamma = np.linalg.lstsq(dF, f, rcond=None)[0]
            x = np.clip(gx - np.stack(dx, axis=1) @ gamma, 0.0, 1.0)
        else:
            x = gx
    if pool is not None:
        pool.shutdown()
    raise RuntimeError(f"value iteration did not converge to {tol} in {max_sweeps} sweeps (last {res:.3g})")


def _threads(X: int) -> int:
    """Threads for a solve: up to two (the target machine has two cores) for large tables."""
    env = os.environ.get("DICE_ENVS_SOLVER_THREADS")
    if env:
        return max(1, int(env))
    return 1 if X < 60 else max(1, min(2, os.cpu_count() or 1))


def _compute(rules: FarkleRules, cap: int, tol: float, log: list[dict[str, float]]) -> np.ndarray:
    p = _params(rules, cap)
    F = final_turn_values(rules, cap)
    with single_thread_blas():
        S0, S1 = _anderson_solve(p, F, tol, max_sweeps=400, history=8, log=log, threads=_threads(p.X))
    return np.concatenate([S0.ravel(), S1.ravel(), F])


@dataclass
class FarkleWinSolution:
    """Solved turn-start values of two-player Farkle under one rule set.

    ``S0[a, b]``: chance that seat 0, about to start its turn with ``a`` banked against seat 1's
    ``b`` (in steps of 50, both below the target), wins; ``S1[a, b]``: chance that seat 1, about
    to start its turn in the same position, wins. ``F[d]``: chance that seat 1 wins its last turn
    against a lead of ``d`` steps (ties half).
    """

    rules: FarkleRules
    cap: int
    S0: np.ndarray = field(repr=False)
    S1: np.ndarray = field(repr=False)
    F: np.ndarray = field(repr=False)
    loaded_from_cache: bool = False
    log: list[dict[str, float]] = field(default_factory=list, repr=False)
    _turns: OrderedDict[tuple[str, int, int], tuple[np.ndarray, np.ndarray]] = field(
        default_factory=OrderedDict, repr=False, compare=False
    )

    @property
    def params(self) -> _Params:
        return _params(self.rules, self.cap)

    def win_probability(self) -> float:
        """P(seat 0 wins) from the start of the game (shared wins count half)."""
        return float(self.S0[0, 0])

    def start_value(self, seat0: int = 0, seat1: int = 0) -> float:
        """P(seat 0 wins) when the game starts with these banked totals (points, seat 0 to move)."""
        a, b = self._index(seat0), self._index(seat1)
        return float(self.S0[a, b])

    def _index(self, points: int) -> int:
        if points % STEP or not 0 <= points < self.rules.target:
            raise ValueError(
                f"banked totals are multiples of {STEP} below the target {self.rules.target}, got {points!r}"
            )
        return points // STEP

    def value(self, seat: int, own: int, other: int) -> float:
        """Chance that ``seat``, about to start its turn with ``own`` banked against ``other``, wins."""
        a, b = (own, other) if seat == 0 else (other, own)
        return float((self.S0 if seat == 0 else self.S1)[self._index(a), self._index(b)])

    def turn_tables(self, kind: str, own: int, other: int) -> tuple[np.ndarray, np.ndarray]:
        """``(B, W)`` of one turn of the mover (``kind`` ``"seat0"``, ``"seat1"`` or ``"final"``: seat
        1's last turn against a finished seat 0) with ``own`` banked against ``other`` (points).

        ``B[t]``: the mover's chance of winning when banking turn total ``t`` (steps; -1 where
        banking is not allowed); ``W[t, n]``: when throwing ``n`` dice on from ``t`` (-1 where the
        turn is settled: banking is then allowed and decides). Both are cached (LRU)."""
        return self.many_turn_tables([(kind, own, other)])[0]

    def many_turn_tables(self, keys: list[tuple[str, int, int]]) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`turn_tables` of many turns; the missing ones are solved together (vectorized)."""
        missing = [k for k in dict.fromkeys(keys) if k not in self._turns]
        for kind in ("seat0", "seat1", "final"):
            todo = [k for k in missing if k[0] == kind]
            for i in range(0, len(todo), 512):
                self._solve_turns(kind, todo[i : i + 512])
        out = []
        for key in keys:
            hit = self._turns.get(key)
            if hit is None:  # evicted meanwhile (more keys than the cache holds)
                self._solve_turns(key[0], [key])
                hit = self._turns[key]
            self._turns.move_to_end(key)
            out.append(hit)
        return out

    def _solve_turns(self, kind: str, keys: list[tuple[str, int, int]]) -> None:
        p = self.params
        k = _kernels()
        g = option_groups()
        m = len(keys)
        rows = p.rows
        tops = np.zeros(m, dtype=np.int64)
        B = np.zeros((rows, m))
        L, Lf = np.zeros(m), np.zeros(m)
        if kind == "final":
            t = np.arange(rows)[:, None]
            d = np.zeros(m, dtype=np.int64)
            for i, (_, own, other) in enumerate(keys):
                if other % STEP or own % STEP or other <= own:
                    raise ValueError(
                        f"a last turn needs the other total above one's own, got {own} vs {other}"
                    )
                d[i] = (other - own) // STEP
            B[:] = np.where(t < p.tb, -1.0, np.where(t > d, 1.0, np.where(t == d, 0.5, 0.0)))
            tops[:] = np.maximum(d + 1, p.tb)
        elif kind in ("seat0", "seat1"):
            seat = int(kind[-1])
            ab = [(own, other) if seat == 0 else (other, own) for _, own, other in keys]
            A = np.array([self._index(a) for a, _ in ab], dtype=np.int64)
            Bs = np.array([self._index(b) for _, b in ab], dtype=np.int64)
            if seat == 0:
                k.fill0(A, Bs, p.X, p.U, p.tb, self.S1, self.F, p.bankrupt, tops, B, L, Lf)
            else:
                k.fill1(A, Bs, p.X, p.tb, self.S0, p.bankrupt, tops, B, L, Lf)
        else:
            raise ValueError(f"kind must be 'seat0', 'seat1' or 'final', got {kind!r}")
        Q = np.zeros((rows, 7, m))
        k.diag_turn(tops, B, L, Lf, Q, np.zeros(m), np.zeros(m), *g)
        W = np.zeros((rows, 7, m))
        k.throw_tables(tops, Q, L, W, *g)
        for i, key in enumerate(keys):
            n = int(tops[i]) + _PAD + 1
            entry = (B[:n, i].copy(), np.ascontiguousarray(W[:n, :, i]))
            for arr in entry:
                arr.setflags(write=False)
            self._turns[key] = entry
            if len(self._turns) > TURN_CACHE_SIZE:
                self._turns.popitem(last=False)


def _validate(arr: np.ndarray, p: _Params) -> bool:
    n = p.X * p.X
    return (
        arr.ndim == 1
        and arr.shape[0] == 2 * n + p.U + _PAD + 2
        and bool(np.isfinite(arr).all())
        and float(arr.min()) >= -1e-12
        and float(arr.max()) <= 1 + 1e-12
    )


_SOLUTIONS: OrderedDict[tuple[Any, ...], FarkleWinSolution] = OrderedDict()
DEFAULT_TOL = 1e-12


def _cache_key(rules: FarkleRules, cap: int, tol: float) -> str:
    """The disk-cache key of the tables of ``rules``."""
    return cache_key("farkle-win", "farkle", {**_rule_params(rules), "cap": cap, "tol": tol})


def is_solved(rules: FarkleRules, cap: int = DEFAULT_CAP, tol: float = DEFAULT_TOL) -> bool:
    """Whether :func:`solve_farkle_win` would load the tables of ``rules`` (from this process's
    memo or a sound disk-cache file) instead of computing them."""
    params = _rule_params(rules)
    if (tuple(sorted(params.items())), cap, tol) in _SOLUTIONS:
        return True
    return cached_array_is_sound(_cache_key(rules, cap, tol), {**params, "cap": cap})


def solve_farkle_win(
    rules: FarkleRules, cap: int = DEFAULT_CAP, use_cache: bool = True, tol: float = DEFAULT_TOL
) -> FarkleWinSolution:
    """Solve (or load from the disk cache) the win-probability tables of two-player Farkle."""
    if not isinstance(rules, FarkleRules):
        raise TypeError(f"rules must be a FarkleRules instance, got {type(rules).__name__}")
    p = _params(rules, cap)
    params = _rule_params(rules)
    key = (tuple(sorted(params.items())), cap, tol)
    if use_cache and key in _SOLUTIONS:
        return _SOLUTIONS[key]
    log: list[dict[str, float]] = []
    loaded = False
    if use_cache:
        ckey = _cache_key(rules, cap, tol)
        arr, loaded = cached_array(ckey, lambda: _compute(rules, cap, tol, log), {**params, "cap": cap})
        if not _validate(arr, p):
            arr, loaded = _compute(rules, cap, tol, log), False
    else:
        arr = _compute(rules, cap, tol, log)
    n = p.X * p.X
    arr = np.asarray(arr, dtype=np.float64)
    S0 = arr[:n].reshape(p.X, p.X)
    S1 = arr[n : 2 * n].reshape(p.X, p.X)
    F = arr[2 * n :]
    for a in (S0, S1, F):
        a.setflags(write=False)
    sol = FarkleWinSolution(rules, cap, S0, S1, F, loaded_from_cache=loaded, log=log)
    if use_cache:
        _SOLUTIONS[key] = sol
    if len(_SOLUTIONS) > 8:
        _SOLUTIONS.popitem(last=False)
    return sol
