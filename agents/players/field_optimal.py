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

from agents.base import BaseAgent, check_mask
from agents.solver.farkle_field import FieldSolution, best_response, equilibrium
from agents.solver.farkle_win import STEP
from dice_envs.encoding import decode
from dice_envs.engine import farkle_turn as turn
from dice_envs.rules import ConfigError, FarkleRules
from dice_envs.rules.farkle import BANK_FLAG

__all__ = ["TARGET_LIMITS", "SolvedSeatAgent", "best_response_agent", "check_target", "equilibrium_agent"]

#: The largest target (points) each kind of agent solves, by number of seats. A best response
#: costs far more than the equilibrium (it reads the field's play over every position).
TARGET_LIMITS: dict[str, dict[int, int]] = {
    "equilibrium": {3: 1000},
    "best-response": {2: 1000, 3: 300},
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
#: Turns' tables kept per agent at most (the oldest dropped first).
_MEMO = 4096


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

    def solution(self, seat: int) -> FieldSolution:
        """The tables of ``seat`` (solved on first use)."""
        if seat not in self._solutions:
            self._solutions[seat] = self._solve(seat)
        return self._solutions[seat]

    def _tables(self, observation: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray, int]:
        """The decoded ``observation`` and the ``(B, W)`` tables of its turn, with the value
        component of the seat it plays."""
        view = decode(observation, self.rules, self.num_players)
        seat, n = view.seat, self.num_players
        totals = [0] * n
        totals[seat] = view.banked
        for i, other in enumerate(view.others_banked):
            totals[(seat + 1 + i) % n] = other
        sol = self.solution(seat)
        key = (seat, tuple(totals), view.final_round)
        if key not in self._turns:
            if len(self._turns) >= _MEMO:  # the oldest turn out: a long match meets many
                del self._turns[next(iter(self._turns))]
            self._turns[key] = sol.turn(totals, seat, view.final_round)
        B, W = self._turns[key]
        return view, B, W, (0 if sol.seat is not None else seat)

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
        view, B, W, c = self._tables(observation)
        out = np.full(len(action_mask), -np.inf)
        for t2, left, a in self._options(view, legal):
            w = float(W[t2, left, c])
            out[a] = np.nan if w < 0 else w
            if action_mask[a + BANK_FLAG]:
                out[a + BANK_FLAG] = float(B[t2, c])
        return out

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = check_mask(action_mask, self.rules)
        view, B, W, c = self._tables(observation)
        best: tuple[float, int, bool] | None = None
        for t2, left, a in sorted(self._options(view, legal)):  # the solver's order: points, dice left
            banks = bool(B[t2, c] >= 0 and B[t2, c] >= W[t2, left, c] - _TOL)
            q = float(B[t2, c] if banks else W[t2, left, c])
            if best is None or q > best[0] + _TOL:
                best = (q, a, banks)
        if best is None:
            raise ValueError("the action mask has no legal selection")
        _, a, banks = best
        return int(a + BANK_FLAG) if banks else int(a)


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
