"""Exact solitaire optimum of the scorecard games by backward induction.

A state between turns is ``(filled-boxes mask, upper total capped at the bonus threshold,
five-of-a-kind state)``; the five-of-a-kind state ``z`` is ``0`` while the five-of-a-kind box is
open or holds 0, and ``1 + c`` once it holds 50 with ``c`` bonuses paid (``c`` capped at the bonus
limit; a single state ``1`` when the bonus is unlimited). The value ``V[mask, u, z]`` is the
expected number of points still to come under optimal play.

Each turn is solved by the "widget" over the 252 sorted throws and 462 kept multisets: after the
last throw the player scores the best box; before, he compares scoring now with the best kept
sub-multiset, whose value is ``keep_to_roll @ E_next``. The best sub-multiset of every throw is
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

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from dice_envs.engine.scorecard_flow import scorecard_flow
from dice_envs.rules.scorecard import UPPER_FACES, ScorecardRules
from dice_envs.tables import ScoreTables, score_tables, scorecard_tables

from .cache import cache_key, cached_array, single_thread_blas
from .plans import PlanCache, State, TurnPlan

__all__ = ["ScorecardSolution", "TurnPlan", "TurnSolver", "solve_scorecard", "turn_solver"]

NEG = -np.inf


@cache
def _lattice() -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray]:
    """Keep-lattice index arrays: per size 1..4 the keep indices and their children (padded).

    Returns ``(level_keeps, level_children, roll_children, keep_size)``: ``level_keeps[s-1]`` are
    the keep indices of size ``s``; ``level_children[s-1]`` (n_s × s) the keeps one die smaller
    (padded by repetition); ``roll_children`` (252 × 5) the 4-dice sub-keeps of every throw.
    """
    t = scorecard_tables()
    sizes = np.array([len(k) for k in t.keeps])

    def children(k: tuple[int, ...], width: int) -> list[int]:
        kids = sorted({t.keep_index[k[:i] + k[i + 1 :]] for i in range(len(k))})
        return (kids + [kids[0]] * width)[:width]

    level_keeps, level_children = [], []
    for s in range(1, 5):
        idx = np.flatnonzero(sizes == s)
        level_keeps.append(idx)
        level_children.append(np.array([children(t.keeps[i], s) for i in idx], dtype=np.int64))
    roll_children = np.array([children(tuple(int(x) for x in r), 5) for r in t.rolls], dtype=np.int64)
    return level_keeps, level_children, roll_children, sizes


@cache
def _lattice_cols() -> tuple[list[slice], list[np.ndarray], np.ndarray]:
    """:func:`_lattice` as contiguous level slices and column-major child indices."""
    level_keeps, level_children, roll_children, _ = _lattice()
    slices = []
    for keeps in level_keeps:
        assert np.array_equal(keeps, np.arange(keeps[0], keeps[-1] + 1))
        slices.append(slice(int(keeps[0]), int(keeps[-1]) + 1))
    return slices, [np.ascontiguousarray(k.T) for k in level_children], np.ascontiguousarray(roll_children.T)


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
        return self.solver.turn_plans(np.array([self.solver.box_values_one(self.values, *k) for k in states]))


class TurnSolver:
    """Rule-derived constants and the vectorized turn solver of one rule set.

    Public for the built-in agents that judge turns the solver's way
    (:class:`agents.scorecard_agents.HeuristicAgent`): the solver state of a card
    (:meth:`z_of`, :meth:`status`), the points and legal boxes of five-of-a-kind throws
    (:meth:`face_jokers`, :meth:`five_kind_table`, :meth:`five_kind_boxes`) and the turn
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
        self.k2r = t.keep_to_roll[:210]  # keeps of 0-4 dice (re-throwing at least one)
        self.upper_idx = [b for b in range(self.k) if self.upper[b]]
        self.lower_idx = [b for b in range(self.k) if not self.upper[b]]
        self._reach: dict[int, np.ndarray] = {}

    # ---------------------------------------------------------------- five-of-a-kind state
    def z_of(self, five_box: int | None, bonuses: int) -> int:
        """The five-of-a-kind state of a card whose five-of-a-kind box holds ``five_box``."""
        if five_box != 50:
            return 0
        return 1 + (min(int(bonuses), self.limit) if self.limit is not None else 0)

    def status(self, z: int, five_filled: bool) -> tuple[bool, bool, int]:
        """``(bonus_due, joker, z_after)`` of a five-of-a-kind throw entered in state ``z``."""
        if not five_filled:
            return False, False, z
        # the joker before its face's upper box is known (see face_jokers)
        due, joker = self.flow.five_kind_status(True, *self._five_card(z), True)
        z_after = z + 1 if due and self.limit is not None else z
        return bool(due), bool(joker), z_after

    def _five_card(self, z: int) -> tuple[int, int]:
        """``(five-of-a-kind box points, bonuses paid)`` of a filled box in state ``z``."""
        return (50, max(z - 1, 0)) if z >= 1 else (0, 0)

    def face_jokers(self, z: int, mask: int) -> np.ndarray:
        """``(6,)`` bool: joker scoring of the five-of-a-kind throw of each face (``fk_faces``)
        in state ``z`` with the boxes of ``mask`` filled (the five-of-a-kind box among them)."""
        face_filled = np.array([bool(mask >> self.face_box[int(f)] & 1) for f in self.fk_faces])
        _, jokers = self.flow.five_kind_status(True, *self._five_card(z), face_filled)
        return np.broadcast_to(np.asarray(jokers, dtype=bool), face_filled.shape).copy()

    def five_kind_table(self, jokers: np.ndarray) -> np.ndarray:
        """``(6, K)`` points of the five-of-a-kind throws, joker scoring where ``jokers``."""
        f = self.flow
        return f.entry_points(self.fk_rows[:, None], f.box_ids[None, :], jokers[:, None]).astype(np.float64)

    def five_kind_boxes(self, mask: int) -> np.ndarray:
        """``(6, K)`` bool: the boxes a forced joker five of a kind of each face may go in, with
        the boxes of ``mask`` filled (only open boxes are meaningful)."""
        open_ = np.array([not mask >> b & 1 for b in range(self.k)])
        return self.flow.forced_joker_boxes(np.broadcast_to(open_, (6, self.k)), self.fk_rows)

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

    # ---------------------------------------------------------------- scoring step
    def box_values(
        self, V: np.ndarray, mask: int, ucols: np.ndarray, zcols: np.ndarray
    ) -> tuple[list[int], np.ndarray]:
        """Values (n_open, 252, nu, nz) of entering each throw in each open box, ``-inf`` if illegal."""
        T = self.T
        open_ = [b for b in range(self.k) if not mask >> b & 1]
        nu, nz = len(ucols), len(zcols)
        out = np.empty((len(open_), 252, nu, nz))
        five_filled = bool(mask >> self.five & 1)
        steps = np.arange(6)
        for i, b in enumerate(open_):
            nxt = V[mask | 1 << b]
            if self.upper[b]:
                pts = self.face[b] * steps  # points of 0..5 dice of the face
                raw = ucols[None, :] + pts[:, None]
                bonus = self.upper_bonus(ucols[None, :], raw)
                tab = (pts[:, None] + bonus)[:, :, None] + nxt[np.minimum(raw, T)][:, :, zcols]
                out[i] = tab[self.counts[:, self.face[b]]]
            elif b == self.five:
                pts = self.normal[:, b]
                nz2 = nxt[ucols][:, :2]  # (nu, 2): z after = 1 if 50 scored else 0
                out[i] = (pts[:, None] + nz2[:, (pts == 50).astype(np.int64)].T)[:, :, None]
            else:
                out[i] = self.normal[:, b][:, None, None] + nxt[np.ix_(ucols, zcols)][None]
        if five_filled:
            self._five_kind_rows(V, mask, open_, ucols, zcols, out)
        return open_, out

    def _five_kind_rows(
        self,
        V: np.ndarray,
        mask: int,
        open_: list[int],
        ucols: np.ndarray,
        zcols: np.ndarray,
        out: np.ndarray,
    ) -> None:
        r, T = self.rules, self.T
        legal_boxes = self.five_kind_boxes(mask) if self.flow.forced else None
        for zi, z in enumerate(zcols):
            bonus_due, joker, z2 = self.status(int(z), True)
            jokers = self.face_jokers(int(z), mask)
            if not (bonus_due or jokers.any()):
                continue
            extra = float(r.five_kind_bonus) if bonus_due else 0.0
            table = self.five_kind_table(jokers)  # (6, K)
            for i, b in enumerate(open_):
                nxt = V[mask | 1 << b]
                pts = table[:, b]  # (6,)
                if self.upper[b]:
                    raw = ucols[None, :] + pts[:, None].astype(np.int64)
                    bonus = self.upper_bonus(ucols[None, :], raw)
                    vals = pts[:, None] + bonus + nxt[np.minimum(raw, T), z2]
                else:
                    vals = pts[:, None] + nxt[ucols, z2][None, :]
                vals = vals + extra
                if joker and legal_boxes is not None:
                    vals = np.where(legal_boxes[:, b, None], vals, NEG)
                out[i, self.fk_rows, :, zi] = vals

    # ---------------------------------------------------------------- widget
    def widget(self, S: np.ndarray, by_column: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        """Turn values from the scoring values ``S`` (252, C): ``(E_first (252, C), keep values)``.

        ``by_column``: each column's expectations are its own matrix-vector product, the very
        product a one-column call makes, so a column's values do not depend on the others (a
        matrix-matrix product may sum in another order); for batches of turns of separate games.
        """
        level_slices, level_children, roll_children = _lattice_cols()
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
        prob = self.t.roll_prob
        for mask in range(full - 1, start_mask - 1, -1):
            if mask & start_mask != start_mask:
                continue
            ucols, zcols = self.ucols(mask), self.zcols(mask)
            _, bv = self.box_values(V, mask, ucols, zcols)
            S = bv.max(axis=0).reshape(252, -1)
            E1, _ = self.widget(S)
            V[mask][np.ix_(ucols, zcols)] = (prob @ E1).reshape(len(ucols), len(zcols))
        return V

    def box_values_one(self, V: np.ndarray, mask: int, u: int, z: int) -> np.ndarray:
        """Values (K, 252) of entering each throw in each box from one state (``-inf``: not legal).

        The same numbers as :meth:`box_values` for a single column, computed box-vectorized
        (the per-turn path of the optimal agent).
        """
        T = self.T
        out = np.full((self.k, 252), NEG)
        open_ = [b for b in range(self.k) if not mask >> b & 1]
        ou = [b for b in open_ if self.upper[b]]
        ol = [b for b in open_ if not self.upper[b] and b != self.five]
        if ou:
            faces = np.array([self.face[b] for b in ou])
            pts = faces[:, None] * np.arange(6)[None, :]
            raw = u + pts
            bonus = self.upper_bonus(u, raw)
            nxt = np.array([mask | 1 << b for b in ou])
            tab = pts + bonus + V[nxt[:, None], np.minimum(raw, T), z]
            out[ou] = tab[np.arange(len(ou))[:, None], self.counts[:, faces].T]
        if ol:
            out[ol] = self.normal[:, ol].T + V[[mask | 1 << b for b in ol], u, z][:, None]
        if not mask >> self.five & 1:
            nxt5 = V[mask | 1 << self.five, u]
            pts5 = self.normal[:, self.five]
            out[self.five] = pts5 + np.where(pts5 == 50, nxt5[1], nxt5[0])
            return out
        bonus_due, joker, z2 = self.status(z, True)
        jokers = self.face_jokers(z, mask)
        if not (bonus_due or jokers.any()):
            return out
        ob = np.array(open_)
        pts6 = self.five_kind_table(jokers)[:, ob]  # (6, n_open)
        is_up = np.array([self.upper[b] for b in open_])
        raw = (u + pts6).astype(np.int64)
        bonus = np.where(is_up[None, :], self.upper_bonus(u, raw), 0.0)
        urow = np.where(is_up[None, :], np.minimum(raw, T), u)
        vals = pts6 + bonus + V[(mask | (1 << ob))[None, :], urow, z2]
        if bonus_due:
            vals = vals + float(self.rules.five_kind_bonus)
        if joker and self.flow.forced:
            vals = np.where(self.five_kind_boxes(mask)[:, ob], vals, NEG)
        out[np.ix_(ob, self.fk_rows)] = vals.T
        return out

    def plan(self, V: np.ndarray, mask: int, u: int, z: int) -> TurnPlan:
        """The solved turn of state ``(mask, u, z)`` under the value table ``V``."""
        return self.turn_plans(self.box_values_one(V, mask, u, z)[None])[0]

    def turn_plans(self, box_values: np.ndarray) -> list[TurnPlan]:
        """The turn plan of each of ``n`` states from its box values ``(n, K, 252)``: one widget pass
        for all (``by_column``), so each plan is the very one its state alone gets."""
        E1, keep_values = self.widget(box_values.max(axis=1).T, by_column=True)
        copy = len(box_values) > 1  # a cached plan does not hold its batch's arrays
        return [
            TurnPlan(
                box_values[j].copy() if copy else box_values[j],
                [np.ascontiguousarray(kv[:, j]) for kv in keep_values],
                float(self.t.roll_prob @ np.ascontiguousarray(E1[:, j])),
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
    >>> known_optimum(make_rules("yahtzee")), known_optimum(make_rules("yahtzee", joker=False))
    (254.58772873449573, None)
    """
    from dice_envs.rules import make_rules

    value = KNOWN_OPTIMA.get(rules.game)
    return value if value is not None and rules == make_rules(rules.game) else None


_SOLUTIONS: dict[ScorecardRules, ScorecardSolution] = {}


def solve_scorecard(rules: ScorecardRules, use_cache: bool = True) -> ScorecardSolution:
    """Solve ``rules`` (memoized in the process and, with ``use_cache``, on disk)."""
    got = _SOLUTIONS.get(rules) if use_cache else None
    if got is not None:
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
        _SOLUTIONS[rules] = sol
    return sol
