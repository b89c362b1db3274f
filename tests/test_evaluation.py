"""Evaluation and tournaments (agents.evaluation, scripts/evaluate.py, scripts/leaderboard.py).

Structural tests use ``random`` plus two tiny agents defined here (through ``evaluate``'s
``loader`` hook), so they do not depend on the built-in agents; the statistical orderings at the
end use the built-in ``greedy`` / ``optimal`` / ``heuristic`` agents and are skipped when
``agents.load`` does not know them.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents import load
from agents.base import BaseAgent, check_mask
from agents.evaluation import (
    RESULTS_SCHEMA,
    GameRecord,
    derive_seeds,
    dice_seed,
    evaluate,
    mean_ci,
    parse_rule_overrides,
    rate_agents,
    replay,
    rotations,
    schedule,
    wilson_interval,
    write_outputs,
)
from dice_envs.rules import ConfigError

ROOT = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class FirstLegal(BaseAgent):
    """Deterministic: the lowest legal action (Farkle: set aside the fewest, throw on)."""

    spec = "first"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(check_mask(action_mask)[0])


class LastLegal(BaseAgent):
    """Deterministic: the highest legal action (Farkle: bank whenever allowed)."""

    spec = "last"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(check_mask(action_mask)[-1])


def toy_loader(spec: str, game, num_players: int = 1, seed: int | None = None, **kw):
    """``agents.load`` plus the two test agents above (module level, so workers can use it)."""
    if spec == "first":
        return FirstLegal(seed)
    if spec == "last":
        return LastLegal(seed)
    return load(spec, game=game, num_players=num_players, seed=seed, **kw)


def _sig(result) -> list[tuple]:
    return [(r.pairing, r.deal, r.rotation, r.seed, r.seats, r.scores, r.winners) for r in result.records]


# ----------------------------------------------------------------------------- helpers
def test_schedule_and_rotations_cover_every_seat() -> None:
    assert schedule(["a", "b"], 1) == [("a",), ("b",)]
    pairings = schedule(list("abcd"), 3)
    assert len(pairings) == math.comb(4, 3)
    for p in pairings:
        rots = rotations(p)
        for seat in range(3):
            assert sorted(r[seat] for r in rots) == sorted(p)


def test_derive_seeds_common_deals_distinct_agents() -> None:
    d0, a0 = derive_seeds(7, 0, 3, 2)
    d1, a1 = derive_seeds(7, 1, 3, 2)
    assert d0 == d1  # same deal, every pairing
    assert a0 != a1 and len(set(a0)) == 2
    assert derive_seeds(7, 0, 4, 2)[0] != d0
    assert derive_seeds(8, 0, 3, 2)[0] != d0


@given(st.integers(1, 500), st.data())
def test_wilson_interval_contains_rate(n: int, data) -> None:
    wins = data.draw(st.integers(0, 2 * n)) / 2  # half wins (shared) allowed
    lo, hi = wilson_interval(wins, n)
    assert 0.0 <= lo <= wins / n <= hi <= 1.0
    lo4, hi4 = wilson_interval(4 * wins, 4 * n)
    assert hi4 - lo4 < hi - lo  # more games, narrower


def test_mean_ci_matches_normal_formula() -> None:
    x = np.random.default_rng(0).normal(100, 15, size=400)
    m, (_lo, hi) = mean_ci(x)
    assert m == pytest.approx(x.mean())
    assert hi - m == pytest.approx(1.959964 * x.std(ddof=1) / 20, rel=1e-5)


def test_parse_rule_overrides_and_errors() -> None:
    assert parse_rule_overrides(["a=1", "b=true", "c=None", "d=x"]) == {
        "a": 1,
        "b": True,
        "c": None,
        "d": "x",
    }
    with pytest.raises(ConfigError, match="key=value"):
        parse_rule_overrides(["target"])


def test_ratings_order_and_ties() -> None:
    def rec(seats, scores):
        best = max(scores)
        winners = tuple(s for s, v in enumerate(scores) if v == best)
        return GameRecord(0, 0, 0, 0, seats, (0, 0), scores, winners, (1, 1), False)

    strong = [rec(("a", "b"), (10, 5)) if i % 2 else rec(("b", "a"), (5, 10)) for i in range(20)]
    r = rate_agents(strong, ["a", "b"])
    assert r["a"]["rating"] > 1500 > r["b"]["rating"] and r["a"]["ci95"][0] > r["b"]["ci95"][1]
    ties = [rec(("a", "b"), (7, 7)) for _ in range(10)]
    t = rate_agents(ties, ["a", "b"])
    assert t["a"]["rating"] == pytest.approx(t["b"]["rating"]) == pytest.approx(1500)
    assert rec(("a", "b"), (7, 7)).win_shares() == (0.5, 0.5)


# ----------------------------------------------------------------------------- solitaire
def test_solitaire_schema_files_and_rates(tmp_path: Path) -> None:
    res = evaluate(
        "spiffel", ["random", "last"], games=12, seed=3, workers=1, loader=toy_loader, optimum=False
    )
    paths = write_outputs(res, tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    jsonschema.validate(data, RESULTS_SCHEMA)
    assert data["game"] == "spiffel" and data["players"] == 1 and data["games"] == 12 and data["seed"] == 3
    assert data["rules"]["upper_bonus_threshold"] == 63 and data["pairings"] == []
    for spec in ("random", "last"):
        s = data["agents"][spec]
        assert s["games"] == 12 and s["win_rate"] is None and s["rating"] is None
        assert s["ci95"][0] <= s["mean_score"] <= s["ci95"][1]
        scores = [r.scores[0] for r in res.records if r.seats == (spec,)]
        assert s["mean_score"] == pytest.approx(np.mean(scores)) and s["median"] == np.median(scores)
        bonus = [r.upper_bonus[0] for r in res.records if r.seats == (spec,)]
        assert s["upper_bonus_rate"] == pytest.approx(np.mean(bonus))
    # the same dice seeds for every agent (common deals)
    assert [r.seed for r in res.records[:12]] == [r.seed for r in res.records[12:]]
    rows = list(csv.DictReader((tmp_path / "games.csv").open()))
    assert len(rows) == 24 and set(rows[0]) >= {
        "pairing",
        "game",
        "seat_order",
        "seed",
        "seat0_score",
        "winners",
    }
    assert (tmp_path / "scores.png").read_bytes()[:8] == PNG_MAGIC
    assert "win_matrix" not in paths and not (tmp_path / "win_matrix.png").exists()


def test_farkle_solitaire_stats() -> None:
    res = evaluate("farkle", ["last"], games=6, players=1, seed=0, workers=1, loader=toy_loader)
    s = res.summary()["agents"]["last"]
    reached = [r for r in res.records if r.reached_target[0]]
    assert s["target_rate"] == pytest.approx(len(reached) / 6)
    if reached:
        assert s["mean_turns_to_target"] == pytest.approx(np.mean([r.turns[0] for r in reached]))
    assert all(r.scores[0] >= 10_000 or r.truncated for r in res.records)


def test_gap_to_optimum_when_solver_exists() -> None:
    solver = pytest.importorskip("agents.solver")
    if not hasattr(solver, "expected_score"):
        pytest.skip("agents.solver.expected_score not available yet")
    res = evaluate("spiffel", ["random"], games=3, seed=0, workers=1)
    assert res.optimum == pytest.approx(solver.expected_score("spiffel"))
    assert 240 < res.optimum < 270  # the exact value is the solver's own test
    s = res.summary()["agents"]["random"]
    assert s["gap_to_optimum"] == pytest.approx(res.optimum - s["mean_score"])
    assert evaluate("spiffel", ["random"], games=1, seed=0, workers=1, optimum=False).optimum is None
    data = res.summary()
    jsonschema.validate(data, RESULTS_SCHEMA)
    multi = evaluate("spiffel", ["random", "last"], games=1, players=2, workers=1, loader=toy_loader)
    assert multi.optimum is None  # the solitaire optimum says nothing about tables


# ----------------------------------------------------------------------------- tournaments
def test_tournament_schema_seat_balance_and_same_dice(tmp_path: Path) -> None:
    agents = ["random", "first", "last"]
    res = evaluate("farkle", agents, games=3, seed=11, workers=1, loader=toy_loader, rules={"max_turns": 25})
    assert res.players == 2
    data = res.summary()
    write_outputs(res, tmp_path)
    jsonschema.validate(json.loads((tmp_path / "results.json").read_text()), RESULTS_SCHEMA)
    assert len(data["pairings"]) == 3 and data["total_games"] == 3 * 3 * 2
    for i, p in enumerate(data["pairings"]):
        assert p["games"] == 6 and p["seat_games"] == [[3, 3], [3, 3]]
        assert sum(p["wins"]) == pytest.approx(6) and p["win_rate"][0] + p["win_rate"][1] == pytest.approx(1)
        for w, (lo, hi) in zip(p["win_rate"], p["ci95"], strict=True):
            assert lo <= w <= hi
        recs = [r for r in res.records if r.pairing == i]
        for deal in range(3):
            pair = [r for r in recs if r.deal == deal]
            assert len(pair) == 2 and pair[0].seed == pair[1].seed  # same dice, seats swapped
            assert pair[0].seats == pair[1].seats[::-1]
            assert pair[0].agent_seeds == pair[1].agent_seeds[::-1]  # each agent keeps its seed
    for spec in agents:
        s = data["agents"][spec]
        assert s["games"] == 12 and 0 <= s["win_rate"] <= 1 and isinstance(s["rating"], float)
    # every deal is the same across pairings (common random numbers)
    assert len({r.seed for r in res.records}) == 3
    assert (tmp_path / "win_matrix.png").read_bytes()[:8] == PNG_MAGIC
    rows = list(csv.DictReader((tmp_path / "games.csv").open()))
    assert len(rows) == len(res.records)
    for row, rec in zip(rows, res.records, strict=True):  # the CSV holds every seed needed to replay
        assert int(row["seed"]) == rec.seed and row["seat_order"] == "|".join(rec.seats)
        assert [int(row[f"seat{s}_agent_seed"]) for s in range(2)] == list(rec.agent_seeds)
        assert [int(row[f"seat{s}_score"]) for s in range(2)] == list(rec.scores)
    m = res.win_matrix()
    off = ~np.eye(3, dtype=bool)
    assert np.isnan(np.diag(m)).all() and np.allclose((m + m.T)[off], 1.0)
    assert m[0, 2] == pytest.approx(data["pairings"][1]["win_rate"][0])  # random vs last


def test_three_player_tables_rotate_every_seat() -> None:
    agents = ["random", "first", "last", "dummy"]
    res = evaluate("spiffel", agents[:3], games=2, players=3, seed=5, workers=1, loader=toy_loader)
    (p,) = res.summary()["pairings"]
    assert p["games"] == 6 and p["seat_games"] == [[2, 2, 2]] * 3
    assert sum(p["wins"]) == pytest.approx(6)


def test_replay_reproduces_every_recorded_game() -> None:
    res = evaluate("farkle", ["random", "last"], games=2, seed=2, workers=1, loader=toy_loader)
    for rec in res.records:
        game = replay(res, rec)
        assert tuple(game.totals()) == rec.scores and tuple(game.winners()) == rec.winners
    # the recorded dice seed is the deal's (both seat orders of a deal throw the same dice)
    assert all(r.seed == dice_seed(res.seed, r.deal) for r in res.records)
    assert len({r.seed for r in res.records}) == 2


def test_deterministic_for_a_seed_and_worker_count() -> None:
    kw = dict(games=4, seed=9, loader=toy_loader, rules={"max_turns": 25})
    one = evaluate("farkle", ["random", "first", "last"], workers=1, **kw)
    again = evaluate("farkle", ["random", "first", "last"], workers=1, **kw)
    two = evaluate("farkle", ["random", "first", "last"], workers=2, **kw)
    assert one == again == two
    assert one.summary() == two.summary()
    other = evaluate("farkle", ["random", "first", "last"], workers=1, **{**kw, "seed": 10})
    assert _sig(other) != _sig(one)
    solo1 = evaluate("dice_poker", ["random"], games=10, seed=1, workers=1, optimum=False)
    solo2 = evaluate("dice_poker", ["random"], games=10, seed=1, workers=2, optimum=False)
    assert solo1.summary() == solo2.summary()


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(game="spifel"), "unknown game 'spifel'.*spiffel, dice_poker, yahtzee, farkle"),
        (dict(agents=["random", "nobody"]), "unknown agent spec 'nobody'.*random"),
        (dict(players=0), r"players must be an integer in \[1, 8\], got 0"),
        (dict(players=9), r"players must be an integer in \[1, 8\], got 9"),
        (dict(players=3), "3-player tables need at least 3 distinct agents"),
        (dict(agents=["random", "random"]), "repeated: random"),
        (dict(agents=[]), "no agents"),
        (dict(games=0), "games must be a positive integer, got 0"),
        (
            dict(rules={"targt": 5}),
            r"unknown rule parameter 'targt' for farkle \(did you mean 'target'\?\); allowed: target",
        ),
        (dict(rules={"target": -1}), "'target' must be an integer"),
        (dict(workers=0), "workers must be at least 1"),
    ],
)
def test_bad_input_names_what_is_allowed(kwargs: dict, match: str) -> None:
    args = dict(game="farkle", agents=["random", "last"], games=1, workers=1, loader=toy_loader)
    args.update(kwargs)
    with pytest.raises(ConfigError, match=match):
        evaluate(**args)


def test_cli_runs_and_rejects_bad_input(tmp_path: Path) -> None:
    script = str(ROOT / "scripts" / "evaluate.py")
    ok = subprocess.run(
        [sys.executable, script, "--game", "farkle", "--agents", "random", "--players", "1", "--games", "3",
         "--seed", "4", "--out", str(tmp_path / "o"), "--workers", "1", "--rules", "target=2000", "--quiet"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    data = json.loads((tmp_path / "o" / "results.json").read_text())
    assert data["rules"]["target"] == 2000 and data["agents"]["random"]["games"] == 3
    assert {p.name for p in (tmp_path / "o").iterdir()} == {"results.json", "games.csv", "scores.png"}
    bad = subprocess.run(
        [sys.executable, script, "--game", "farkle", "--agents", "random", "nobody",
         "--out", str(tmp_path / "b")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2 and "unknown agent spec 'nobody'" in bad.stderr
    assert not (tmp_path / "b").exists()


def test_leaderboard_smoke(tmp_path: Path) -> None:
    out = tmp_path / "lb.md"
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "leaderboard.py"), "--games", "3", "--tournament-games", "1",
         "--only", "spiffel", "farkle", "--out", str(out), "--runs", str(tmp_path / "runs"), "--quiet",
         "--workers", "1", "--no-exact"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert "## spiffel — solitaire" in text and "## farkle — solitaire" in text and "`random`" in text
    assert "Generated by `dice-envs leaderboard --games 3 " in text  # the command that made it
    assert "Played 20" in text and " cores of " in text  # the date and the machine
    assert (tmp_path / "runs" / "spiffel-solitaire" / "results.json").is_file()


# ----------------------------------------------------------------------------- who beats whom
def _need(game: str, *specs: str, players: int = 1) -> None:
    for spec in specs:
        try:
            load(spec, game=game, num_players=players, seed=0)
        except ConfigError as exc:
            pytest.skip(f"agent {spec!r} not available: {exc}")


def test_spiffel_orderings_random_greedy_optimal() -> None:
    _need("spiffel", "greedy", "optimal")
    res = evaluate("spiffel", ["random", "greedy", "optimal"], games=60, seed=0, workers=2, optimum=False)
    s = res.summary()["agents"]
    assert s["greedy"]["ci95"][0] > s["random"]["ci95"][1]
    assert s["optimal"]["ci95"][0] > s["greedy"]["ci95"][1]


def test_farkle_heuristic_beats_random() -> None:
    _need("farkle", "heuristic", players=2)
    res = evaluate("farkle", ["random", "heuristic"], games=60, players=2, seed=0, workers=2)
    (p,) = res.summary()["pairings"]
    assert p["agents"] == ["random", "heuristic"]
    assert p["ci95"][1][0] > 0.70  # lower end of heuristic's 95% interval, 120 seat-balanced games
