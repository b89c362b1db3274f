"""Farkle players that act from the exact N-player tables of :mod:`agents.solver.farkle_field`.

* ``best-response:<field>`` (:func:`best_response_agent`): in whatever seat it sits, the best
  response to the agent ``<field>`` (any spec :func:`agents.load` builds) in every other seat.
* The all-seats equilibrium (:func:`equilibrium_agent`; ``win-optimal`` plays it at three seats
  where the target is small enough to solve).

:data:`TARGET_LIMITS` says which seats and targets each kind solves; larger games are refused (their
solve would take hours: the :doc:`multi-player guide </guide/multiplayer>` has the measured costs).

At each decision the agent reads its turn's tables (:meth:`FieldSolution.turn`) and takes the
action that maximises its chance of winning, breaking ties as the solver does: among the
selections of the throw, the first in ``(points, dice left)`` order unless a later one is
better by more than ``1e-12``, then banking unless throwing on is better by more than that.
The tables are solved on first use, once per seat (they are costly: reduced targets only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agents.base import BaseAgent, check_mask, check_mask_width, legal_rows
from agents.solver.farkle_field import FieldSolution, best_response, equilibrium
from agents.solver.farkle_win import STEP
from dice_envs.encoding import decode, decode_farkle_batch
from dice_envs.engine import farkle_turn as turn
from dice_envs.rules import ConfigError, FarkleRules
from dice_envs.rules.farkle import BANK_FLAG

__all__ = ["TARGET_LIMITS", "SolvedSeatAgent", "best_response_agent", "check_target", "equilibrium_agent"]

#: The largest target (points) each kind of agent solves, by number of seats. A best response
#: costs far more than the equilibrium (it reads the field's play over every position): at four
#: seats and target 300 one best response to three ``greedy`` takes minutes, to a field whose
#: play reads every total (:attr:`agents.base.BaseAgent.totals_read`) far longer.
TARGET_LIMITS: dict[str, dict[int, int]] = {
    "equilibrium": {3: 1000},
    "best-response": {2: 1000, 3: 300, 4: 300},
}


def check_target(kind: str, rules: FarkleRules, num_players: int) -> None:
    """``ConfigError`` unless :data:`TARGET_LIMITS` ``[kind]`` allows ``num_players`` seats at
    ``rules.target``, naming the limits."""
    limits = TARGET_LIMITS[kind]
    if rules.target > limits.get(num_players, -1):
        known = ", ".join(f"{n} seats: target <= {t}" for n, t in limits.items())
        raise ConfigError(
            f"the exact {kind} is solved at reduced targets only; got {num_players} seats with "
            f"target {rules.target} (solved: {known})"
        )


_TOL = 1e-12
#: Turns' tables kept per agent at most (the oldest dropped first; about 11 KB each at three seats
#: and target 300, so 0.7 GB at most): a best response
#: to the agent meets every turn of the field many times.
_MEMO = 1 << 16


class SolvedSeatAgent(BaseAgent):
    """Acts from ``solve(seat)``, the :class:`FieldSolution` whose maximising seat it plays."""

    def __init__(
        self,
        rules: FarkleRules,
        num_players: int,
        solve: Callable[[int], FieldSolution],
        spec: str,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed)
        if not isinstance(rules, FarkleRules):
            raise ConfigError(f"{spec} plays farkle, got rules for {getattr(rules, 'game', rules)!r}")
        self.spec = spec
        self.rules, self.num_players = rules, int(num_players)
        self._solve = solve
        self._solutions: dict[int, FieldSolution] = {}
        self._turns: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] = {}

    @property
    def totals_read(self) -> str:  # type: ignore[override]
        """``"finished-top"`` for tables where every seat maximises (the equilibrium, a search):
        their final round is solved on the totals still in play, the highest finished total and
        how many hold it; ``"all"`` for a best response (a field agent may read every total)."""
        return "finished-top" if isinstance(self._solve, _EquilibriumSolve) else "all"

    def solution(self, seat: int) -> FieldSolution:
        """The tables of ``seat`` (solved on first use)."""
        if seat not in self._solutions:
            self._solutions[seat] = self._solve(seat)
        return self._solutions[seat]

    def _seat_totals(self, seat: np.ndarray, banked: np.ndarray, others: np.ndarray) -> np.ndarray:
        """Every seat's banked total ``(B, N)`` (points) from the own seat's view."""
        n = self.num_players
        totals = np.zeros((len(seat), n), dtype=np.int64)
        rows = np.arange(len(seat))
        totals[rows, seat] = banked
        for i in range(others.shape[1]):
            totals[rows, (seat + 1 + i) % n] = others[:, i]
        return totals

    def _lookup(
        self, seat: np.ndarray, totals: np.ndarray, final: np.ndarray
    ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """The distinct turns of the rows and, per row, which: ``(inverse, tables)`` with the
        ``(B, W)`` tables of each distinct turn in the value component of the seat it plays
        (``B[t]``, ``W[t, n]``), memoised per turn; the turns not met yet are searched batched, one
        :meth:`FieldSolution.turns` per seat. (Rows are grouped in numpy, not keyed one by one: a
        best response to this agent reads millions of its decisions over a few thousand turns.)"""
        rows = np.column_stack([seat, totals, final]).astype(np.int64)
        # np.unique(rows, axis=0) by a sort on the columns: the same groups in the same order;
        # farkle-search-3p decides 65,536 field decisions in 0.20 s instead of 0.28 s (its best
        # responses read millions; np.unique's row sort was a third of their time)
        order = np.lexsort(rows.T[::-1])
        ordered = rows[order]
        first = np.ones(len(rows), dtype=bool)
        first[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
        inverse = np.empty(len(rows), dtype=np.int64)
        inverse[order] = np.cumsum(first) - 1
        keys = [(int(r[0]), tuple(r[1:-1].tolist()), bool(r[-1])) for r in ordered[first]]
        found = {k: self._turns[k] for k in keys if k in self._turns}
        for s in sorted({k[0] for k in keys}):
            new = [k for k in keys if k[0] == s and k not in found]
            if not new:
                continue
            sol = self.solution(s)
            c = 0 if sol.seat is not None else s
            B, W = sol.turns(np.array([k[1] for k in new]), s, np.array([k[2] for k in new]))
            for i, k in enumerate(new):
                found[k] = (B[i, :, c].copy(), W[i, :, :, c].copy())
                if len(self._turns) >= _MEMO:  # the oldest turn out: a long match meets many
                    del self._turns[next(iter(self._turns))]
                self._turns[k] = found[k]
        return inverse.reshape(-1), [found[k] for k in keys]

    def _tables(self, observation: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
        """The decoded ``observation`` and the ``(B, W)`` tables of its turn (see :meth:`_lookup`)."""
        view = decode(observation, self.rules, self.num_players)
        seat = np.array([view.seat])
        totals = self._seat_totals(
            seat, np.array([view.banked]), np.array([view.others_banked], dtype=np.int64)
        )
        B, W = self._lookup(seat, totals, np.array([view.final_round]))[1][0]
        return view, B, W

    def _options(self, view: Any, legal: np.ndarray) -> list[tuple[int, int, int]]:
        """``(turn total in steps, dice left, action)`` of each legal selection that throws on."""
        tt = turn.farkle_turn_tables()
        throw = int(turn.throw_of_dice(tt, np.array([list(view.dice) + [0] * (6 - len(view.dice))]))[0])
        options = []
        for a in legal.tolist():
            mask, bank = turn.split_action(a)
            if not bank:
                t2, left = turn.set_aside(tt, throw, view.turn_total, mask)
                options.append((int(t2) // STEP, int(left), a))
        return options

    def action_values(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """``(n_actions,)``: the seat's chance of winning after each action when every seat plays
        the solved tables from then on; ``-inf`` where not legal, ``nan`` for throwing on past
        the model's forced bank (``target + cap`` with the lead: the solved game banks there, so
        it holds no value for throwing on)."""
        legal = check_mask(action_mask, self.rules)
        view, B, W = self._tables(observation)
        out = np.full(len(action_mask), -np.inf)
        for t2, left, a in self._options(view, legal):
            w = float(W[t2, left])
            out[a] = np.nan if w < 0 else w
            if action_mask[a + BANK_FLAG]:
                out[a + BANK_FLAG] = float(B[t2])
        return out

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = check_mask(action_mask, self.rules)
        view, B, W = self._tables(observation)
        best: tuple[float, int, bool] | None = None
        for t2, left, a in sorted(self._options(view, legal)):  # the solver's order: points, dice left
            banks = bool(B[t2] >= 0 and B[t2] >= W[t2, left] - _TOL)
            q = float(B[t2] if banks else W[t2, left])
            if best is None or q > best[0] + _TOL:
                best = (q, a, banks)
        if best is None:
            raise ValueError("the action mask has no legal selection")
        _, a, banks = best
        return int(a + BANK_FLAG) if banks else int(a)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """:meth:`act` of every row, the same choices: the tables of the batch's turns are
        searched in one call per seat, and the legal selections scanned in the solver's order
        over all rows at once (a best response to this agent reads millions of its decisions)."""
        check_mask_width(action_masks, self.rules)
        legal = legal_rows(action_masks)[:, :BANK_FLAG]  # the selections that throw on
        counts = legal.sum(axis=1)
        if (counts == 0).any():
            raise ValueError("an action mask of the batch has no legal selection")
        bv = decode_farkle_batch(observations, self.rules, self.num_players)
        totals = self._seat_totals(bv.seat, bv.banked, bv.others_banked)
        inv, tables = self._lookup(bv.seat, totals, bv.final_round)
        size = max(len(B) for B, _ in tables)  # the distinct turns' tables, padded to one length
        Bs, Ws = np.full((len(tables), size), -1.0), np.full((len(tables), size, 7), -1.0)
        for j, (B, W) in enumerate(tables):
            Bs[j, : len(B)], Ws[j, : len(W)] = B, W
        tt = turn.farkle_turn_tables()
        throw = turn.throw_of_dice(tt, bv.dice)
        r, a = np.nonzero(legal)  # every legal selection (rows in order): 4 a row, not 64
        t2 = (bv.turn_total[r] + tt.points[throw[r], a]) // STEP
        left = tt.next_dice[throw[r], a]
        bank, cont = Bs[inv[r], t2], Ws[inv[r], t2, left]
        banks = (bank >= 0) & (bank >= cont - _TOL)
        q = np.where(banks, bank, cont)
        # act's scan: in each row, selections by (turn total, dice left, action); a later one
        # replaces the best only if better by more than _TOL
        order = np.lexsort((a, left, t2, r))
        starts = np.cumsum(counts) - counts
        best = order[starts]
        best_q = q[best]
        for j in range(1, int(counts.max())):  # the rows with a j-th legal selection
            k = np.flatnonzero(counts > j)
            cand = order[starts[k] + j]
            take = q[cand] > best_q[k] + _TOL
            best[k[take]], best_q[k[take]] = cand[take], q[cand[take]]
        return np.where(banks[best], a[best] + BANK_FLAG, a[best]).astype(np.int64)


class _BestResponseSolve:
    """``seat`` -> the best response to ``make_field()`` in every other seat (a class, not a
    closure, so the agent pickles)."""

    def __init__(self, make_field: Callable[[], Any], rules: FarkleRules, num_players: int, cap: int) -> None:
        self.make_field, self.rules, self.num_players, self.cap = make_field, rules, num_players, cap

    def __call__(self, seat: int) -> FieldSolution:
        field = [self.make_field() for s in range(self.num_players) if s != seat]
        return best_response(self.rules, field, seat, cap=self.cap)


class _EquilibriumSolve:
    """Every seat -> the one all-seats equilibrium, solved on first use."""

    def __init__(
        self, rules: FarkleRules, num_players: int, cap: int, solution: FieldSolution | None
    ) -> None:
        self.rules, self.num_players, self.cap, self.solution = rules, num_players, cap, solution

    def __call__(self, seat: int) -> FieldSolution:
        if self.solution is None:
            self.solution = equilibrium(self.rules, self.num_players, cap=self.cap)
        return self.solution


def best_response_agent(
    field_spec: str,
    make_field: Callable[[], Any],
    rules: FarkleRules,
    num_players: int,
    seed: int | None = None,
    cap: int = 0,
) -> SolvedSeatAgent:
    """``best-response:<field_spec>``: the best response to ``make_field()`` (a fresh agent of
    ``field_spec``, built by the caller: the registry sits above this module) in every other seat."""
    check_target("best-response", rules, num_players)
    solve = _BestResponseSolve(make_field, rules, num_players, cap)
    return SolvedSeatAgent(rules, num_players, solve, f"best-response:{field_spec}", seed)


def equilibrium_agent(
    rules: FarkleRules,
    num_players: int,
    seed: int | None = None,
    cap: int = 0,
    solution: FieldSolution | None = None,
) -> SolvedSeatAgent:
    """Plays the all-seats equilibrium (one solve serves every seat; ``solution``: one already
    solved by :func:`~agents.solver.farkle_field.equilibrium` for these rules and seats)."""
    if solution is not None and (solution.seat is not None or solution.players != num_players):
        raise ConfigError(f"solution must be the {num_players}-seat equilibrium, got {solution!r}")
    if solution is not None and (solution.rules != rules or solution.cap != cap):
        raise ConfigError(
            f"solution is for {solution.rules} with cap {solution.cap}, not {rules} with cap {cap}"
        )
    check_target("equilibrium", rules, num_players)
    solve = _EquilibriumSolve(rules, num_players, cap, solution)
    return SolvedSeatAgent(rules, num_players, solve, "win-optimal", seed)
