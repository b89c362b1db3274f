"""One source of chance: the solvers, the search agents and the Farkle planner read the forward
model's tables (:mod:`dice_envs.forward.turns`), which are its throw outcomes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from agents.players.planner import _first_throws
from agents.players.search.agent import SearchAgent
from agents.players.search.value import ValueNet
from agents.players.search.win import WinSearch, random_win_net
from agents.solver import farkle as farkle_solver
from agents.solver.farkle_win import option_groups
from agents.solver.scorecard import turn_solver
from dice_envs.engine import farkle_turn as turn
from dice_envs.forward import FarkleState, farkle_throws, keep_outcomes, throw_outcomes
from dice_envs.rules import FarkleRules, make_rules
from dice_envs.tables import scorecard_tables

TURN = turn.farkle_turn_tables()


@pytest.mark.parametrize("game", ["spiffel", "yahtzee", "dice_poker"])
def test_scorecard_solver_and_search_read_the_forward_tables(game: str) -> None:
    """The turn solver's re-throw and first-throw chance are the forward model's arrays (not
    copies), and the search agents (points and win) plan through that very solver."""
    rules = make_rules(game)
    solver = turn_solver(rules)
    assert solver.roll_prob is throw_outcomes(5)[1]
    assert np.shares_memory(solver.k2r, keep_outcomes())
    assert solver.k2r.shape == (210, 252) and solver.k2r.base is keep_outcomes()
    agent = SearchAgent(rules, net=ValueNet.random(solver, hidden=(4,), seed=0))
    assert agent._solver is solver
    assert WinSearch(solver, random_win_net(solver, hidden=(4,), seed=0)).solver is solver


def test_keep_outcomes_are_the_throws_of_the_dice_not_kept() -> None:
    """Row ``k``: every way to throw the other dice, counted face by face (no multiset formula)."""
    t, p = scorecard_tables(), keep_outcomes()
    assert p.shape == (462, 252) and not p.flags.writeable
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(p[t.keep_index[()]], throw_outcomes(5)[1], rtol=1e-15)
    for ki in np.random.default_rng(0).choice(len(t.keeps), size=30, replace=False):
        keep = t.keeps[ki]
        expect = np.zeros(252)
        for add in itertools.product(range(1, 7), repeat=5 - len(keep)):
            expect[t.roll_index[tuple(sorted(keep + add))]] += 6.0 ** -(5 - len(keep))
        np.testing.assert_allclose(p[ki], expect, rtol=1e-12, atol=1e-15)
    for ri, r in enumerate(t.rolls):  # a full keep leads to itself
        assert p[t.keep_index[tuple(int(x) for x in r)], ri] == 1.0  # exact: nothing thrown, 6**0


@pytest.mark.parametrize("n", range(1, 7))
def test_farkle_throws_are_the_forward_outcomes(n: int) -> None:
    """Row ``j`` of ``farkle_throws(n)`` is outcome ``j`` of ``n`` dice: the same faces as the
    forward state's chance node, the same probability array."""
    rows, probs = farkle_throws(n)
    faces, outcome_probs = throw_outcomes(n)
    assert probs is outcome_probs
    assert [TURN.faces[r] for r in rows.tolist()] == [tuple(f) for f in faces.tolist()]
    if n == 6:  # a turn's first throw: the forward state's chance node
        outcomes = FarkleState.new(FarkleRules()).chance_outcomes()
        assert [o for o, _ in outcomes] == [TURN.faces[r] for r in rows.tolist()]


def test_farkle_solvers_and_planner_read_the_forward_tables() -> None:
    """The max-expected solver's, the win solver's and the planner's throw chances are those of
    :func:`farkle_throws`: the same arrays, or sums of them by the turn tables' farkles."""
    options = farkle_solver._options()
    g_start, g_prob, *_, farkle_p = option_groups()
    for n in range(1, 7):
        rows, probs = farkle_throws(n)
        assert options[n][0] is probs
        np.testing.assert_array_equal(options[n][1], TURN.points[rows])
        lost = TURN.farkle[rows]
        assert farkle_p[n] == pytest.approx(probs[lost].sum(), rel=1e-12)
        kept = g_prob[g_start[n] : g_start[n + 1]].sum()
        assert kept == pytest.approx(probs[~lost].sum(), rel=1e-12)
    throws, probs, p_farkle = _first_throws()
    rows, six = farkle_throws(6)
    scoring = ~TURN.farkle[rows]
    np.testing.assert_array_equal(throws, rows[scoring])
    np.testing.assert_array_equal(probs, six[scoring])  # exact: the same entries, taken
    assert p_farkle == pytest.approx(six[~scoring].sum(), rel=1e-12)
    assert round(p_farkle, 6) == 0.023148
    rates = [round(float(farkle_p[n]), 6) for n in range(1, 6)]
    assert rates == [0.666667, 0.444444, 0.277778, 0.157407, 0.07716]


def test_farkle_throws_refuses_other_dice_counts() -> None:
    for bad in (0, 7, True, 2.0):
        with pytest.raises(ValueError, match="1 to 6 dice"):
            farkle_throws(bad)  # type: ignore[arg-type]
