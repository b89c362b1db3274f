"""Ratings: a Bradley-Terry fit over all games, independent of game order, consistent with head to head."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.evaluation import ELO_MEAN, ELO_SCALE, GameRecord, bradley_terry, rate_agents, wilson_interval

#: The README leaderboard's 2-player Farkle pairings (300 games each): win rate of the first.
README_PAIRINGS = {
    ("random", "greedy"): 11.0, ("random", "heuristic"): 7.7, ("random", "max-expected"): 3.0,
    ("random", "threshold:400"): 10.0, ("random", "threshold:1000"): 13.7, ("random", "pretrained"): 7.3,
    ("greedy", "heuristic"): 35.3, ("greedy", "max-expected"): 26.0, ("greedy", "threshold:400"): 36.7,
    ("greedy", "threshold:1000"): 49.3, ("greedy", "pretrained"): 25.7, ("heuristic", "max-expected"): 45.3,
    ("heuristic", "threshold:400"): 55.0, ("heuristic", "threshold:1000"): 70.0,
    ("heuristic", "pretrained"): 44.3, ("max-expected", "threshold:400"): 63.5,
    ("max-expected", "threshold:1000"): 78.0, ("max-expected", "pretrained"): 50.3,
    ("threshold:400", "threshold:1000"): 69.3, ("threshold:400", "pretrained"): 37.5,
    ("threshold:1000", "pretrained"): 22.0,
}  # fmt: skip


def rec(seats: tuple[str, ...], scores: tuple[int, ...], deal: int = 0, rotation: int = 0) -> GameRecord:
    best = max(scores)
    winners = tuple(s for s, v in enumerate(scores) if v == best)
    n = len(seats)
    return GameRecord(0, deal, rotation, deal, seats, (0,) * n, scores, winners, (1,) * n, False)


def games_from_counts(counts: dict[tuple[str, str], tuple[int, int]]) -> list[GameRecord]:
    """``(a, b) -> (wins of a, games)`` as game records, seats alternating."""
    out = []
    for (a, b), (wins, n) in counts.items():
        for k in range(n):
            a_wins = k < wins
            seats, scores = ((a, b), (1, 0) if a_wins else (0, 1))
            if k % 2:
                seats, scores = (b, a), scores[::-1]
            out.append(rec(seats, scores, deal=k, rotation=k % 2))
    return out


def readme_games() -> tuple[list[str], list[GameRecord]]:
    agents = sorted({a for pair in README_PAIRINGS for a in pair})
    counts = {pair: (round(rate * 3), 300) for pair, rate in README_PAIRINGS.items()}
    return agents, games_from_counts(counts)


def test_the_same_games_shuffled_give_the_same_ratings() -> None:
    agents, games = readme_games()
    base = rate_agents(games, agents, samples=50)
    for seed in range(3):
        shuffled = list(games)
        random.Random(seed).shuffle(shuffled)
        assert rate_agents(shuffled, agents, samples=50) == base  # exact: one machine, the same sorted games
    other = rate_agents(games, list(reversed(agents)), samples=50)  # nor on the agents' order
    for agent, v in base.items():
        assert other[agent]["rating"] == pytest.approx(v["rating"], abs=1e-9)
        assert other[agent]["ci95"] == pytest.approx(v["ci95"], abs=1e-9)


def test_ratings_agree_with_the_readme_head_to_head_table() -> None:
    """The README's complaint: heuristic (61.9%, beats threshold:400 55% head to head) rated lower."""
    agents, games = readme_games()
    r = rate_agents(games, agents, samples=50)
    assert r["heuristic"]["rating"] > r["threshold:400"]["rating"]
    for (a, b), rate in README_PAIRINGS.items():
        lo, hi = wilson_interval(rate * 3, 300)
        if lo > 0.5:
            assert r[a]["rating"] > r[b]["rating"], (a, b)
        if hi < 0.5:
            assert r[a]["rating"] < r[b]["rating"], (a, b)
    # order = order of total wins (a balanced round robin)
    wins = {a: 0.0 for a in agents}
    for g in games:
        wins[g.seats[g.winners[0]]] += 1
    by_rating = sorted(agents, key=lambda a: -r[a]["rating"])
    assert by_rating == sorted(agents, key=lambda a: -wins[a])  # exact: two orders of names
    for a in agents:
        lo, hi = r[a]["ci95"]
        assert lo < r[a]["rating"] < hi and r[a]["sd"] > 0


def test_two_agents_fit_the_head_to_head_odds_exactly() -> None:
    wins = np.array([[0.0, 70.0], [30.0, 0.0]])
    r = bradley_terry(wins, prior_draws=0.0)
    assert 1 / (1 + math.exp(-(r[0] - r[1]))) == pytest.approx(0.7, abs=1e-8)
    games = games_from_counts({("a", "b"): (70, 100)})
    out = rate_agents(games, ["a", "b"], samples=20)
    diff = (out["a"]["rating"] - out["b"]["rating"]) / ELO_SCALE
    assert 0.6 < 1 / (1 + math.exp(-diff)) < 0.7  # the prior's one virtual draw pulls slightly to 50%
    assert (out["a"]["rating"] + out["b"]["rating"]) / 2 == pytest.approx(ELO_MEAN)


@settings(max_examples=40)
@given(
    st.integers(3, 5).flatmap(
        lambda n: st.lists(st.integers(0, 20), min_size=n * (n - 1) // 2, max_size=n * (n - 1) // 2).map(
            lambda w: (n, w)
        )
    )
)
def test_balanced_round_robin_orders_by_total_wins(case: tuple[int, list[int]]) -> None:
    n, wins_list = case
    w = np.zeros((n, n))
    for (i, j), k in zip(itertools.combinations(range(n), 2), wins_list, strict=True):
        w[i, j], w[j, i] = k, 20 - k
    r = bradley_terry(w)
    total = w.sum(axis=1)
    for i, j in itertools.permutations(range(n), 2):
        if total[i] > total[j]:
            assert r[i] > r[j] - 1e-9
        if total[i] == total[j]:
            assert r[i] == pytest.approx(r[j], abs=1e-6)


def test_strengths_are_recovered_from_simulated_games() -> None:
    rng = np.random.default_rng(0)
    true = np.array([0.0, 0.5, 1.0, 2.0])
    w = np.zeros((4, 4))
    for i, j in itertools.combinations(range(4), 2):
        p = 1 / (1 + math.exp(-(true[i] - true[j])))
        k = rng.binomial(2000, p)
        w[i, j], w[j, i] = k, 2000 - k
    r = bradley_terry(w, prior_draws=0.0)
    assert np.allclose(r, true - true.mean(), atol=0.1)


def test_multi_seat_games_place_winners_over_the_rest() -> None:
    games = [rec(("a", "b", "c"), (30, 20, 10), deal=k) for k in range(10)]
    r = rate_agents(games, ["a", "b", "c"], samples=10)
    assert r["a"]["rating"] > r["b"]["rating"] > r["c"]["rating"]
