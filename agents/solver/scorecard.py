"""Exact solitaire optimum of the scorecard games by backward induction.

A state between turns is ``(filled-boxes mask, upper total capped at the bonus threshold,
five-of-a-kind state)``; the five-of-a-kind state ``z`` is ``0`` while the five-of-a-kind box is
open or holds 0, and ``1 + c`` once it holds 50 with ``c`` bonuses paid (``c`` capped at the bonus
limit; a single state ``1`` when the bonus is unlimited). The value ``V[mask, u, z]`` is the
expected number of points still to come under optimal play.

Each turn is solved by the "widget" over the 252 sorted throws and 462 kept multisets: after the
last throw the player scores the best box; before, he compares scoring now with the best kept
sub-multiset, whose value is ``keep_outcomes() @ E_next`` (the chance of a re-throw,
:func:`dice_envs.forward.keep_outcomes`). The best sub-multiset of every throw is
found on the keep lattice (each keep's best = max of itself and its one-die-smaller children), so
a turn costs a few dense matrix products over all ``(u, z)`` columns of a mask at once.

Everything about scoring comes from :mod:`dice_envs.tables` (built from the rules' scoring
functions) and the rule attributes of :class:`~dice_envs.rules.scorecard.ScorecardRules`: upper
bonus threshold and value, bonus value and limit, joker on/off, joker trigger (``"bonus"``: a
paid bonus brings it; ``"filled"``: a filled five-of-a-kind box does) and joker order
(``"free"`` or ``"forced"``).

A threshold of 0 pays the upper bonus with the first box scored, whatever it is: a constant that
:meth:`ScorecardSolution.expected_score` adds.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

import numpy as np

from agents.solver.cache import cache_key, cached_array, single_thread_blas
from agents.solver.plans import PlanCache, State, TurnPlan
from dice_envs.engine.scorecard_flow import scorecard_flow
from dice_envs.forward import keep_outcomes, throw_outcomes
from dice_envs.rules.scorecard import UPPER_FACES, ScorecardRules
from dice_envs.tables import ScoreTables, score_tables, scorecard_tables

__all__ = [
    "MEMO_BYTES",
    "ScorecardSolution",
    "TurnPlan",
    "TurnSolver",
    "forget_scorecard",
    "solve_scorecard",
    "turn_solver",
]

NEG = -np.inf


class FiveKindState(NamedTuple):
    """What a five-of-a-kind throw entered now gets on each of ``n`` cards
    (:meth:`TurnSolver.five_kind_state`); all False where the five-of-a-kind box is open."""

    bonus_due: np.ndarray  #: (n,) a five-of-a-kind bonus is paid
    joker: np.ndarray  #: (n,) joker scoring before the face's upper box is known: the forced order's trigger
    z_after: np.ndarray  #: (n,) the five-of-a-kind state after it
    jokers: np.ndarray  #: (n, 6) joker scoring of the throw of each face (``fk_faces``)


@cache
def _lattice() -> tuple[list[slice], list[np.ndarray], np.ndarray]:
    """The keep lattice: per keep size ``s`` = 1..4 the slice of those keeps (contiguous in
    ``keeps``) and their keeps one die smaller ``(s, n_s)`` (padded by repetition); and the 4-dice
    sub-keeps of every throw ``(5, 252)``. Index arrays column-major."""
    t = scorecard_tables()
    sizes = np.array([len(k) for k in t.keeps])

    def children(k: tuple[int, ...], width: int) -> list[int]:
        kids = sorted({t.keep_index[k[:i] + k[i + 1 :]] for i in range(len(k))})
        return (kids + [kids[0]] * width)[:width]

    slices, level_children = [], []
    for s in range(1, 5):
        idx = np.flatnonzero(sizes == s)
        assert np.array_equal(idx, np.arange(idx[0], idx[-1] + 1))
        slices.append(slice(int(idx[0]), int(idx[-1]) + 1))
        kids = np.array([children(t.keeps[i], s) for i in idx], dtype=np.int64)
        level_children.append(np.ascontiguousarray(kids.T))
    roll_children = np.array([children(tuple(int(x) for x in r), 5) for r in t.rolls], dtype=np.int64)
    return slices, level_children, np.ascontiguousarray(roll_children.T)


@dataclass
class ScorecardSolution:
    """The value table of one scorecard rule set and the per-turn planner built on it."""

    rules: ScorecardRules
    values: np.ndarray = field(repr=False)  # (2**K, U, Z)
    solve_seconds: float = 0.0
    loaded_from_cache: bool = False

    def __post_init__(self) -> None:
        self.solver = turn_solver(self.rules)
        self._plans = PlanCache(self._solve_turns)

    @property
    def value(self) -> float:
        """Expected future points at the start of a game (without a threshold-0 upper bonus)."""
        return float(self.values[0, 0, 0])

    def expected_score(self) -> float:
        """Optimal expected grand total of a solitaire game."""
        r = self.rules
        return self.value + (r.upper_bonus if r.upper_bonus_threshold == 0 else 0)

    def state(self, boxes: tuple[int | None, ...], upper_total: int, bonuses: int) -> tuple[int, int, int]:
        """``(mask, u, z)`` of a card (boxes, ``None`` = open), its upper total and bonuses paid."""
        mask = sum(1 << i for i, v in enumerate(boxes) if v is not None)
        u = min(int(upper_total), self.rules.upper_bonus_threshold)
        return mask, u, self.solver.z_of(boxes[self.solver.five], bonuses)

    def plan(self, mask: int, u: int, z: int) -> TurnPlan:
        """The solved turn of state ``(mask, u, z)`` (cached)."""
        return self._plans.get([(mask, u, z)])[0]

    def plans(self, states: Sequence[State]) -> list[TurnPlan]:
        """:meth:`plan` of each state; those not cached are solved together, each exactly as alone."""
        return self._plans.get(states)

    def _solve_turns(self, states: list[State]) -> list[TurnPlan]:
        return self.solver.turn_plans(self.solver.box_values_of(self.values, np.array(states)))


class TurnSolver:
    """Rule-derived constants and the vectorized turn solver of one rule set.

    Public for the built-in agents that judge turns the solver's way
    (:class:`agents.players.scorecard.HeuristicAgent`): the solver state of a card
    (:meth:`z_of`), what a five-of-a-kind throw gets and where it may go
    (:meth:`five_kind_state`, :meth:`five_kind_boxes`, for a batch of cards) and the turn
    "widget" (:meth:`widget`). Every rule it applies is a function of
    :class:`~dice_envs.engine.scorecard_flow.ScorecardFlow` (:attr:`flow`).
    """

    def __init__(self, rules: ScorecardRules) -> None:
        self.rules = rules
        self.flow = scorecard_flow(rules)
        t = scorecard_tables()
        st: ScoreTables = score_tables(type(rules))
        self.t, self.st = t, st
        cats = rules.categories
        self.k = len(cats)
        self.T = int(rules.upper_bonus_threshold)
        self.U = self.T + 1
        self.limit = rules.five_kind_bonus_limit
        self.Z = 1 + (self.limit + 1 if self.limit is not None else 1)
        self.five = st.five_kind_box
        self.upper = [bool(x) for x in st.upper]
        self.face = [UPPER_FACES.get(b, 0) for b in cats]
        self.face_box = {UPPER_FACES[b]: i for i, b in enumerate(cats) if b in UPPER_FACES}
        self.normal = st.normal.astype(np.float64)
        self.joker_tab = st.joker.astype(np.float64)
        self.counts = np.stack([(t.rolls == f).sum(axis=1) for f in range(7)], axis=1)  # (252, 7)
        self.fk_rows = np.flatnonzero(t.five_kind)  # five-of-a-kind throws, faces 1..6 in order
        self.fk_faces = t.rolls[self.fk_rows, 0].astype(int)
        self.k2r = keep_outcomes()[:210]  # keeps of 0-4 dice (re-throwing at least one)
        self.roll_prob = throw_outcomes(5)[1]  # the turn's first throw
        self.upper_idx = [b for b in range(self.k) if self.upper[b]]
        self.lower_idx = [b for b in range(self.k) if not self.upper[b]]
        self._reach: dict[int, np.ndarray] = {}
        # constants of box_values_of: the upper boxes, the other boxes but five of a kind
        self._up = np.array(self.upper_idx, dtype=np.int64)
        self._low = np.array([b for b in self.lower_idx if b != self.five], dtype=np.int64)
        up_faces = np.array([self.face[b] for b in self.upper_idx])
        self._up_pts = up_faces[:, None] * np.arange(6)  # (n_up, 6): points of 0..5 dice of the face
        self._up_counts = self.counts[:, up_faces].T  # (n_up, 252): dice of the face in each throw
        self._low_points = self.normal[:, self._low].T.copy()  # (n_low, 252)
        self._bits = 1 << np.arange(self.k)
        self._is_upper = np.array(self.upper)
        self._fk_face_boxes = np.array([self.face_box[int(f)] for f in self.fk_faces])

    # ---------------------------------------------------------------- five-of-a-kind state
    def z_of(self, five_box: int | None, bonuses: int) -> int:
        """The five-of-a-kind state of a card whose five-of-a-kind box holds ``five_box``."""
        if five_box != 50:
            return 0
        return 1 + (min(int(bonuses), self.limit) if self.limit is not None else 0)

    def five_kind_state(self, open_: np.ndarray, z: np.ndarray) -> FiveKindState:
        """What a five-of-a-kind throw entered now gets on cards with open boxes ``open_`` ``(n, K)``
        in five-of-a-kind states ``z`` ``(n,)`` (all zero where that box is still open)."""
        five_filled = ~open_[:, self.five]
        five_points = np.where(z >= 1, 50, np.where(five_filled, 0, -1))  # the box: 50, 0 or open
        paid = np.maximum(z - 1, 0)
        due, joker = self.flow.five_kind_status(True, five_points, paid, True)
        face_filled = ~open_[:, self._fk_face_boxes]
        jokers = self.flow.five_kind_status(True, five_points[:, None], paid[:, None], face_filled)[1]
        z_after = np.where(due & (self.limit is not None), z + 1, z)
        return FiveKindState(due, joker & five_filled, z_after, jokers & five_filled[:, None])

    def five_kind_boxes(self, open_: np.ndarray) -> np.ndarray:
        """``(n, 6, K)`` bool: the boxes a forced joker five of a kind of each face (``fk_faces``)
        may go in on cards with open boxes ``open_`` ``(n, K)`` (only open boxes are meaningful)."""
        return self.flow.forced_joker_boxes(open_[:, None, :], self.fk_rows[None, :])

    def upper_bonus(self, u: np.ndarray | int, raw: np.ndarray) -> np.ndarray:
        """The upper bonus paid when capped upper total ``u`` becomes ``raw`` (0 or its points);
        a capped total has reached the threshold exactly when the bonus is paid (``u == T``)."""
        return self.flow.upper_bonus_due(np.asarray(u) >= self.T, raw) * float(self.rules.upper_bonus)

    def ucols(self, mask: int) -> np.ndarray:
        """Reachable capped upper totals given the filled upper boxes of ``mask``."""
        umask = sum(1 << b for b in self.upper_idx if mask >> b & 1)
        got = self._reach.get(umask)
        if got is None:
            reach = {0}
            for b in self.upper_idx:
                if umask >> b & 1:
                    f = self.face[b]
                    reach = {min(s + f * c, self.T) for s in reach for c in range(6)}
            got = np.array(sorted(reach), dtype=np.int64)
            self._reach[umask] = got
        return got

    def zcols(self, mask: int) -> np.ndarray:
        return np.arange(self.Z) if mask >> self.five & 1 else np.zeros(1, dtype=np.int64)

    # ---------------------------------------------------------------- widget
    def widget(self, S: np.ndarray, by_column: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        """Turn values from the scoring values ``S`` (252, C): ``(E_first (252, C), keep values)``.

        ``by_column``: each column's expectations are its own matrix-vector product, the very
        product a one-column call makes, so a column's values do not depend on the others (a
        matrix-matrix product may sum in another order); for batches of turns of separate games.
        """
        level_slices, level_children, roll_children = _lattice()
        E = S
        keep_values: list[np.ndarray] = []
        for _ in range(int(self.rules.num_throws) - 1):  # type: ignore[attr-defined]
            if by_column:
                EK = np.empty((self.k2r.shape[0], E.shape[1]))
                for j in range(E.shape[1]):
                    EK[:, j : j + 1] = self.k2r @ np.ascontiguousarray(E[:, j : j + 1])
            else:
                EK = self.k2r @ E  # (210, C)
            keep_values.append(EK)
            M = EK.copy()
            for sl, kids in zip(level_slices, level_children, strict=True):
                acc = M[sl]  # a view: updated in place, children are one level down
                for col in kids:
                    np.maximum(acc, M.take(col, axis=0), out=acc)
            best = M.take(roll_children[0], axis=0)
            for col in roll_children[1:]:
                np.maximum(best, M.take(col, axis=0), out=best)
            E = np.maximum(S, best)
        keep_values.reverse()
        return E, keep_values

    def solve(self, start_mask: int = 0) -> np.ndarray:
        """The value table; only masks containing ``start_mask`` are solved (others stay NaN)."""
        V = np.full((1 << self.k, self.U, self.Z), np.nan)
        full = (1 << self.k) - 1
        V[full] = 0.0
        prob = self.roll_prob
        for mask in range(full - 1, start_mask - 1, -1):
            if mask & start_mask != start_mask:
                continue
            ucols, zcols = self.ucols(mask), self.zcols(mask)
            states = np.empty((len(ucols) * len(zcols), 3), dtype=np.int64)  # (u, z) row-major
            states[:, 0], states[:, 1] = mask, np.repeat(ucols, len(zcols))
            states[:, 2] = np.tile(zcols, len(ucols))
            S = self.box_values_of(V, states).max(axis=1).T  # (252, nu * nz)
            E1, _ = self.widget(np.ascontiguousarray(S))
            V[mask][np.ix_(ucols, zcols)] = (prob @ E1).reshape(len(ucols), len(zcols))
        return V

    def box_values_one(self, V: np.ndarray, mask: int, u: int, z: int) -> np.ndarray:
        """Values (K, 252) of entering each throw in each box from one state (``-inf``: not legal):
        :meth:`box_values_of` of that state alone."""
        return self.box_values_of(V, np.array([[mask, u, z]]))[0]

    def box_values_of(self, V: np.ndarray, states: np.ndarray) -> np.ndarray:
        """Values ``(n, K, 252)`` of entering each throw in each box from each of ``states``
        ``(n, 3)`` of ``(mask, u, z)`` (``-inf``: not legal; a state's full mask has none).

        The one scoring step of the solver: :meth:`solve` calls it with every column of a mask,
        the optimal agent with the states it meets. Every value is a sum of a few terms taken
        element by element, so a state's values do not depend on the others in the batch.
        """
        states = np.asarray(states, dtype=np.int64).reshape(-1, 3)
        masks, u, z = states[:, 0], states[:, 1], states[:, 2]
        n, T, five = len(states), self.T, self.five
        out = np.empty((n, self.k, 252))
        open_ = masks[:, None] & self._bits == 0  # (n, K)
        live = open_.any(axis=0)  # the boxes open on some card: only those are computed
        if (up := live[self._up]).any():  # upper boxes: points, bonus and next upper total by count
            pts = self._up_pts[up]  # (m, 6)
            raw = u[:, None, None] + pts  # (n, m, 6)
            bonus = self.upper_bonus(u[:, None, None], raw)
            after = (masks[:, None] | self._bits[self._up[up]])[:, :, None]
            nxt = V[after, np.minimum(raw, T), z[:, None, None]]
            at = np.arange(len(pts))[:, None] * 6 + self._up_counts[up]  # (m, 252) into a row of tab
            tab = (pts + bonus + nxt).reshape(n, -1)
            out[:, self._up[up]] = np.take(tab, at.ravel(), axis=1).reshape(n, len(pts), 252)
        if (low := live[self._low]).any():  # the other boxes but five of a kind: the same u and z
            nxt = V[masks[:, None] | self._bits[self._low[low]], u[:, None], z[:, None]]  # (n, m)
            out[:, self._low[low]] = self._low_points[low] + nxt[:, :, None]
        if live[five]:  # five of a kind: z after is 1 if 50 was scored, else 0
            pts5, nxt5 = self.normal[:, five], V[masks | 1 << five, u]  # (252,), (n, Z)
            out[:, five] = pts5 + np.where(pts5 == 50, nxt5[:, 1:2], nxt5[:, :1])
        out[~open_] = NEG  # a filled box (its numbers above, if any, were read from this same card)
        filled = np.flatnonzero(~open_[:, five])
        if filled.size:
            self._five_kind_throws(V, states[filled], open_[filled], out, filled)
        return out

    def _five_kind_throws(
        self, V: np.ndarray, states: np.ndarray, open_: np.ndarray, out: np.ndarray, at: np.ndarray
    ) -> None:
        """The five-of-a-kind throws' rows of :meth:`box_values_of` for ``states`` whose
        five-of-a-kind box is filled (written into ``out[at]``): joker points, the five-of-a-kind
        bonus and the forced joker order, where any of them applies."""
        f, T = self.flow, self.T
        fk = self.five_kind_state(open_, states[:, 2])
        some = np.flatnonzero(fk.bonus_due | fk.jokers.any(axis=1))
        if not some.size:
            return
        at, (masks, u, _), open_ = at[some], states[some].T, open_[some]
        due, joker, z2 = fk.bonus_due[some], fk.joker[some], fk.z_after[some]
        pts = f.entry_points(self.fk_rows[:, None], f.box_ids, fk.jokers[some][:, :, None]).astype(np.float64)
        ur = u[:, None, None]  # pts: (r, 6, K)
        raw = (ur + pts).astype(np.int64)
        bonus = np.where(self._is_upper, self.upper_bonus(ur, raw), 0.0)
        urow = np.where(self._is_upper, np.minimum(raw, T), ur)
        vals = pts + bonus + V[(masks[:, None] | self._bits)[:, None, :], urow, z2[:, None, None]]
        vals = np.where(due[:, None, None], vals + float(self.rules.five_kind_bonus), vals)
        legal = open_[:, None, :]  # a filled box stays -inf
        if f.forced and joker.any():
            legal = np.where(joker[:, None, None], self.five_kind_boxes(open_), legal)
        vals = np.where(legal, vals, NEG).transpose(0, 2, 1)
        out[at[:, None, None], f.box_ids[:, None], self.fk_rows] = vals

    def turn_plans(self, box_values: np.ndarray) -> list[TurnPlan]:
        """The turn plan of each of ``n`` states from its box values ``(n, K, 252)``: one widget pass
        for all (``by_column``), so each plan is the very one its state alone gets."""
        E1, keep_values = self.widget(box_values.max(axis=1).T, by_column=True)
        copy = len(box_values) > 1  # a cached plan does not hold its batch's arrays
        return [
            TurnPlan(
                box_values[j].copy() if copy else box_values[j],
                [np.ascontiguousarray(kv[:, j]) for kv in keep_values],
                float(self.roll_prob @ np.ascontiguousarray(E1[:, j])),
            )
            for j in range(len(box_values))
        ]


_SOLVERS: dict[ScorecardRules, TurnSolver] = {}


def turn_solver(rules: ScorecardRules) -> TurnSolver:
    """The (memoized) :class:`TurnSolver` of ``rules``."""
    got = _SOLVERS.get(rules)
    if got is None:
        got = _SOLVERS[rules] = TurnSolver(rules)
    return got


def _solve(rules: ScorecardRules) -> np.ndarray:
    with single_thread_blas():
        return TurnSolver(rules).solve()


def _table_shape(rules: ScorecardRules) -> tuple[int, int, int]:
    """Shape of the value table of ``rules`` (as :meth:`TurnSolver.solve` builds it)."""
    limit = rules.five_kind_bonus_limit
    return (
        1 << len(rules.categories),
        int(rules.upper_bonus_threshold) + 1,
        1 + (limit + 1 if limit is not None else 1),
    )


#: The optimum of each game's default rules exactly as :func:`solve_scorecard` computes it
#: (``tests/test_solver.py`` checks each against a fresh solve). :func:`known_optimum` gives it
#: without the cold solve (about 10 s on one core) that a learning curve's reference line would
#: otherwise cost on a machine whose cache is empty.
KNOWN_OPTIMA: dict[str, float] = {
    "spiffel": 253.38412265487372,
    "dice_poker": 314.81566441315704,
    "yahtzee": 254.58772873449573,
}


def known_optimum(rules: ScorecardRules) -> float | None:
    """The optimal expected grand total of ``rules`` when they are a game's default rules
    (:data:`KNOWN_OPTIMA`), else ``None`` (solve them: :func:`solve_scorecard`).

    >>> from dice_envs.rules import make_rules
    >>> round(known_optimum(make_rules("yahtzee")), 4), known_optimum(make_rules("yahtzee", joker=False))
    (254.5877, None)
    """
    from dice_envs.rules import make_rules

    value = KNOWN_OPTIMA.get(rules.game)
    return value if value is not None and rules == make_rules(rules.game) else None


#: Most bytes of value tables the memo of :func:`solve_scorecard` holds: the most recently used
#: tables (each rule set's takes 8-33 MB: yahtzee 8, spiffel 12, dice_poker 33; a table larger
#: than the bound alone is not held). A dropped table is loaded again from the disk cache.
MEMO_BYTES = 128 * 2**20

_SOLUTIONS: OrderedDict[ScorecardRules, ScorecardSolution] = OrderedDict()
_MEMO_LOCK = threading.Lock()  # solves may run in several threads (the game pad's)


def _remember(rules: ScorecardRules, sol: ScorecardSolution) -> None:
    """Hold ``sol`` in the memo, dropping the least recently used tables past :data:`MEMO_BYTES`."""
    with _MEMO_LOCK:
        _SOLUTIONS[rules] = sol
        _SOLUTIONS.move_to_end(rules)
        while _SOLUTIONS and sum(s.values.nbytes for s in _SOLUTIONS.values()) > MEMO_BYTES:
            _SOLUTIONS.popitem(last=False)


def forget_scorecard(rules: ScorecardRules) -> bool:
    """Drop the memoized table of ``rules`` (the disk cache keeps it); whether one was held.

    For a long-running process (the game pad) once nothing uses the table any more: holders of
    the solution keep theirs, and the next :func:`solve_scorecard` loads it again."""
    with _MEMO_LOCK:
        return _SOLUTIONS.pop(rules, None) is not None


def solve_scorecard(rules: ScorecardRules, use_cache: bool = True) -> ScorecardSolution:
    """Solve ``rules`` (memoized in the process, at most :data:`MEMO_BYTES` of tables, and with
    ``use_cache`` on disk)."""
    if use_cache:
        with _MEMO_LOCK:
            got = _SOLUTIONS.get(rules)
            if got is not None:
                _SOLUTIONS.move_to_end(rules)
                return got
    start = time.perf_counter()
    if use_cache:
        key = cache_key("scorecard-values", rules.game, rules.to_dict())
        meta = {"game": rules.game, "rules": rules.to_dict()}
        values, loaded = cached_array(
            key, lambda: _solve(rules), meta, shape=_table_shape(rules), dtype=np.float64
        )
    else:
        values, loaded = _solve(rules), False
    sol = ScorecardSolution(rules, values, time.perf_counter() - start, loaded)
    if use_cache:
        _remember(rules, sol)
    return sol
