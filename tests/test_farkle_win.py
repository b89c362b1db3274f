"""Exact two-player Farkle (agents.solver.farkle_win) and the win-optimal agent."""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import pytest

import agents
from agents.evaluation.regret import farkle_match, seat_games
from agents.solver import farkle_win as fw
from agents.solver.farkle_win import solve_farkle_win
from dice_envs.rules import ConfigError, make_rules
from dice_envs.rules.farkle import score

pytest.importorskip("numba")


# ------------------------------------------------------------------ an independent brute force
@cache
def _throws(n: int) -> list[tuple[float, list[tuple[int, int]]]]:
    """Every multiset of ``n`` dice: (probability, [(points, dice left to throw)]) from ``score``."""
    probs: dict[tuple[int, ...], float] = {}
    for faces in itertools.product(range(1, 7), repeat=n):
        key = tuple(sorted(faces))
        probs[key] = probs.get(key, 0.0) + 6.0**-n
    grouped: dict[tuple[tuple[int, int], ...], float] = {}
    for dice, p in probs.items():
        choices = set()
        for k in range(1, n + 1):
            for sub in set(itertools.combinations(dice, k)):
                pts = score(list(sub))
                if pts > 0:
                    choices.add((pts, n - k if n > k else 6))
        key = tuple(sorted(choices))
        grouped[key] = grouped.get(key, 0.0) + p  # throws offering the same choices
    return [(p, list(c)) for c, p in grouped.items()]


def brute_force(target: int, bank_minimum: int, bankruptcy: bool, cap: int) -> dict:
    """Plain value iteration over ``(mover, a, b)`` with each turn solved by memoized recursion.

    Seat 0 may throw on past the target up to ``target rounded up to 50 + cap`` (then banks);
    seat 1 wins by banking at or past the target; after seat 0 reaches it seat 1 has one turn.
    """
    top = -(-target // 50) * 50
    totals = range(0, top, 50)
    V = {(s, a, b): 0.5 for s in (0, 1) for a in totals for b in totals}

    def turn(bank, farkle, first_farkle, limit):
        memo: dict[tuple[int, int], float] = {}

        def throw(t, n, lose):
            v = 0.0
            for p, choices in _throws(n):
                if not choices:
                    v += p * lose
                    continue
                v += p * max(after(t + pts, left) for pts, left in choices)
            return v

        def after(t, n):
            if (t, n) in memo:
                return memo[(t, n)]
            b = bank(t) if t > bank_minimum else -1.0
            if b >= 1.0 or t >= limit:
                memo[(t, n)] = b
                return b
            v = max(b, throw(t, n, farkle))
            memo[(t, n)] = v
            return v

        return throw(0, 6, first_farkle)

    @cache
    def last_turn(d):  # seat 1's chance against a lead of d
        return turn(lambda t: 1.0 if t > d else 0.5 if t == d else 0.0, 0.0, 0.0, 10**9)

    for _ in range(200):
        delta = 0.0
        for a, b in sorted(((a, b) for a in totals for b in totals), key=lambda k: -(k[0] + k[1])):
            v0 = turn(
                lambda t, a=a, b=b: 1 - last_turn(a + t - b) if a + t >= target else 1 - V[(1, a + t, b)],
                1 - V[(1, a, b)],
                1 - V[(1, 0, b)] if bankruptcy else 1 - V[(1, a, b)],
                top + cap - a,
            )
            delta = max(delta, abs(v0 - V[(0, a, b)]))
            V[(0, a, b)] = v0
            v1 = turn(
                lambda t, a=a, b=b: 1.0 if b + t >= target else 1 - V[(0, a, b + t)],
                1 - V[(0, a, b)],
                1 - V[(0, a, 0)] if bankruptcy else 1 - V[(0, a, b)],
                10**9,
            )
            delta = max(delta, abs(v1 - V[(1, a, b)]))
            V[(1, a, b)] = v1
        if delta < 1e-13:
            return V
    raise AssertionError("brute force did not converge")


@pytest.mark.parametrize(
    ("target", "bank_minimum", "bankruptcy", "cap"),
    [(200, 0, True, 150), (250, 100, False, 200), (300, 200, True, 250), (300, 50, False, 300)],
)
def test_solver_matches_an_independent_brute_force(target, bank_minimum, bankruptcy, cap):
    rules = make_rules("farkle", target=target, bank_minimum=bank_minimum, bankruptcy=bankruptcy)
    sol = solve_farkle_win(rules, cap=cap, use_cache=False)
    ref = brute_force(target, bank_minimum, bankruptcy, cap)
    for (s, a, b), v in ref.items():
        table = sol.S0 if s == 0 else sol.S1
        assert table[a // 50, b // 50] == pytest.approx(v, abs=1e-9), (s, a, b)
    assert sol.win_probability() == pytest.approx(ref[(0, 0, 0)], abs=1e-9)


def test_doubling_the_cap_changes_no_value():
    """Totals far past the target: doubling the cap moves no turn-start value by 1e-10."""
    rules = make_rules("farkle", target=1000)
    a = solve_farkle_win(rules, cap=2 * fw.DEFAULT_CAP, use_cache=False)
    b = solve_farkle_win(rules, cap=fw.DEFAULT_CAP, use_cache=False)
    assert np.abs(a.S0 - b.S0).max() <= 1e-10 and np.abs(a.S1 - b.S1).max() <= 1e-10
    small = solve_farkle_win(rules, cap=1000, use_cache=False)  # a cap that binds moves values
    assert np.abs(small.S0 - b.S0).max() > 1e-7


@pytest.mark.parametrize(("bank_minimum", "bankruptcy"), [(350, True), (0, False), (500, True)])
def test_more_banked_points_never_lower_the_chance_of_winning(bank_minimum, bankruptcy):
    rules = make_rules("farkle", target=1500, bank_minimum=bank_minimum, bankruptcy=bankruptcy)
    sol = solve_farkle_win(rules)
    eps = 1e-12
    # seat 0 to move: own total a (rows) up, other's b (columns) down; seat 1: the reverse
    assert (np.diff(sol.S0, axis=0) >= -eps).all() and (np.diff(sol.S0, axis=1) <= eps).all()
    assert (np.diff(sol.S1, axis=1) >= -eps).all() and (np.diff(sol.S1, axis=0) <= eps).all()
    assert (np.diff(sol.F[1:]) <= eps).all()  # a bigger lead is harder to beat in the last turn
    assert ((sol.S0 >= 0) & (sol.S0 <= 1)).all()


def test_zero_sum_and_last_round_values():
    """Seat 1's last turn against a lead it cannot reach by one selection is a pure race, and
    the start value is consistent with the seats' turn tables."""
    rules = make_rules("farkle", target=500, bank_minimum=350)
    sol = solve_farkle_win(rules)
    # against a lead of 50 seat 1 wins whenever its turn banks anything (all banks exceed 350)
    B, _ = sol.turn_tables("final", 0, 50)
    assert B[8] == 1.0 and B[7] == -1.0  # 400 > 350 may bank; 350 may not
    # the start value: the best first decision of seat 0, averaged over the first throw
    assert 0 < sol.win_probability() < 1
    assert sol.value(0, 0, 0) == sol.win_probability()  # exact: the same table entry
    assert sol.value(1, 0, 0) == float(sol.S1[0, 0])  # exact: the same table entry


def test_win_probability_api_and_errors():
    with pytest.warns(UserWarning, match="max_turns=50 is ignored"):
        p = agents.solver.win_probability("farkle", num_players=2, target=500, max_turns=50)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert agents.solver.win_probability("farkle", target=500) == p  # exact: the same solve, memoized
    assert p == pytest.approx(solve_farkle_win(make_rules("farkle", target=500)).win_probability())
    with pytest.raises(ConfigError, match="num_players"):
        agents.solver.win_probability("farkle", num_players=3, target=500)
    with pytest.raises(ConfigError, match="farkle"):
        agents.solver.win_probability("spiffel")
    with pytest.raises(ValueError, match="cap"):
        solve_farkle_win(make_rules("farkle", target=500), cap=-50)


def test_threaded_sweeps_give_the_same_tables(monkeypatch):
    rules = make_rules("farkle", target=800, bank_minimum=300)
    monkeypatch.setenv("DICE_ENVS_SOLVER_THREADS", "1")
    one = solve_farkle_win(rules, use_cache=False)
    fw._SOLUTIONS.clear()
    monkeypatch.setenv("DICE_ENVS_SOLVER_THREADS", "2")
    two = solve_farkle_win(rules, use_cache=False)
    assert np.array_equal(one.S0, two.S0) and np.array_equal(one.S1, two.S1)


def test_tables_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("DICE_ENVS_CACHE", str(tmp_path))
    rules = make_rules("farkle", target=350, bank_minimum=100)
    fw._SOLUTIONS.clear()
    first = solve_farkle_win(rules)
    fw._SOLUTIONS.clear()
    second = solve_farkle_win(rules)
    assert not first.loaded_from_cache and second.loaded_from_cache
    assert np.array_equal(first.S0, second.S0) and np.array_equal(first.F, second.F)
    assert list(tmp_path.glob("farkle-win-*.npy"))


# ------------------------------------------------------------------ the agent
SMALL = {"target": 500, "max_turns": None}


def test_load_and_seat_option():
    agent = agents.load("win-optimal", game=make_rules("farkle", **SMALL), num_players=2, seed=0)
    assert type(agent).__name__ == "WinOptimalAgent"
    with pytest.raises(ConfigError, match="seat"):
        agents.load("win-optimal", game=make_rules("farkle", **SMALL), num_players=2, seat=2)
    with pytest.raises(ConfigError, match="not available"):
        agents.load("win-optimal", game="spiffel")


def test_reads_its_seat_from_the_observation():
    """At every decision of both seats the agent that reads its seat plays exactly as the one told
    its seat, also where nothing else in the observation tells the seats apart: seat 1's first
    turn after seat 0 farkled its opening throw (both totals 0, no turn taken by either seen)."""
    from dice_envs.encoding import encode
    from dice_envs.engine import FarkleGame

    rules = make_rules("farkle", **SMALL)
    reader = agents.load("win-optimal", game=rules, num_players=2)
    told = [agents.load("win-optimal", game=rules, num_players=2, seat=s) for s in (0, 1)]
    decisions = telling = 0
    for seed in range(60):
        game = FarkleGame(rules, num_players=2, seed=seed, opening=(2, 2, 3, 4, 6, 6))  # a farkle
        assert game.current_player == 1 and game.banked == [0, 0]
        while not game.done:
            s, mask = game.current_player, game.action_mask()
            obs = encode(game, s)
            action = told[s].act(obs, mask)
            assert reader.act(obs, mask) == action
            telling += s == 1 and game.turns == [1, 0] and told[0].act(obs, mask) != action
            game.apply(action)
            decisions += 1
    assert decisions > 200 and telling > 0  # the seat decides some of those first turns


def test_self_play_matches_the_solved_probability():
    """20,000 seat-0 games of win-optimal against itself in the native vector env: the win share
    is within 3 standard errors of the solved probability; so is seat 1's share (zero sum)."""
    rules = make_rules("farkle", **SMALL)
    p = solve_farkle_win(rules).win_probability()
    a0 = agents.load("win-optimal", game=rules, num_players=2, seat=0)
    a1 = agents.load("win-optimal", game=rules, num_players=2, seat=1)
    shares = seat_games(a0, a1, rules, seat=0, games=20_000, seed=3, num_envs=2000)
    se = math.sqrt(p * (1 - p) / len(shares))
    assert len(shares) == 20_000
    assert abs(shares.mean() - p) < 3 * se


def test_beats_max_expected():
    m = farkle_match("win-optimal", "max-expected", make_rules("farkle", **SMALL), games=3000, seed=4)
    assert m.ci95[0] > 0.5


def test_act_equals_act_batch_and_rows_are_legal():
    rules = make_rules("farkle", target=1000)
    agent = agents.load("win-optimal", game=rules, num_players=2, seed=0)
    from dice_envs.vector import FarkleVectorEnv

    env = FarkleVectorEnv(num_envs=64, opponents=["heuristic"], rules=rules, autoreset_mode="same_step")
    obs, info = env.reset(seed=7)
    for _ in range(30):
        mask = info["action_mask"]
        batch = agent.act_batch(obs, mask)
        fresh = [agents.load("win-optimal", game=rules, num_players=2) for _ in range(len(obs))]
        rows = [a.act(o, m) for a, o, m in zip(fresh, obs, mask, strict=True)]
        assert batch.tolist() == rows
        assert mask[np.arange(len(batch)), batch].all()
        obs, _, _, _, info = env.step(batch)


def test_three_players_and_solitaire_play_legal_games():
    from agents.evaluation import play_game

    rules = make_rules("farkle", target=300, bank_minimum=50)  # three seats: the equilibrium, in seconds
    for n in (1, 3):
        seats = [agents.load("win-optimal", game=rules, num_players=n)] + [
            agents.load("heuristic", game=rules, num_players=n) for _ in range(n - 1)
        ]
        game = play_game(rules, seats, seed=1)
        assert game.done


def test_batched_decode_equals_decode_row_by_row():
    from dice_envs.encoding import decode, decode_farkle_batch
    from dice_envs.vector import FarkleVectorEnv

    rules = make_rules("farkle", target=2000)
    env = FarkleVectorEnv(
        num_envs=32, opponents=["heuristic", "random"], rules=rules, autoreset_mode="same_step"
    )
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        bv = decode_farkle_batch(obs, rules, 3)
        for r, o in enumerate(obs):
            v = decode(o, rules, 3)
            assert tuple(int(x) for x in bv.dice[r, : bv.n_dice[r]]) == v.dice
            assert (bv.turn_total[r], bv.first_throw[r], bv.banked[r], bv.turns[r], bv.final_round[r]) == (
                v.turn_total,
                v.first_throw,
                v.banked,
                v.turns,
                v.final_round,
            )
            assert tuple(bv.others_banked[r].tolist()) == v.others_banked
        mask = info["action_mask"]
        obs, _, _, _, info = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    with pytest.raises(ValueError, match="do not fit"):
        decode_farkle_batch(obs[:, :-1], rules, 3)
