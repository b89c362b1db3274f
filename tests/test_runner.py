"""The game runner (agents.evaluation.run_games) and the callers that count wins through it:
training's play_games, agents.evaluation.regret's seat games and scripts/measure_bots.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from agents import load
from agents.base import BaseAgent, check_mask
from agents.evaluation import (
    SeededDice,
    balanced_lineups,
    play_game,
    run_games,
    win_shares,
    wins_draws_losses,
)
from agents.training.score_table import play_games
from dice_envs.rules import ConfigError, make_rules

ROOT = Path(__file__).resolve().parents[1]
FARKLE = make_rules("farkle", target=2000)


def _farkle_pair() -> list:
    return [load(s, game=FARKLE, num_players=2) for s in ("heuristic", "threshold:400")]


def test_a_games_dice_depend_on_its_seed_only() -> None:
    d = SeededDice(3)
    d.start(np.array([0, 1, 2]), [5, 5, 6])
    first = d.codes(np.array([0, 1, 2]), 6)
    assert first[0] == first[1] != first[2]
    d.start(np.array([2]), [5])  # a slot restarted with seed 5 throws game 0's dice again
    assert d.codes(np.array([2]), 6)[0] == first[0]
    faces = np.array([[(c // 6**j) % 6 + 1 for j in range(6)] for c in d.codes(np.arange(3), 6)])
    assert faces.min() >= 1 and faces.max() <= 6


def test_results_do_not_depend_on_width_or_position_for_deterministic_agents() -> None:
    seeds = [3, 3, 4, 4, 5, 5, 6, 6]
    lineups = balanced_lineups(2, 8)
    full = run_games(FARKLE, _farkle_pair(), lineups, seeds, keep_states=True)
    narrow = run_games(FARKLE, _farkle_pair(), lineups, seeds, width=3)
    assert np.array_equal(full.scores, narrow.scores) and np.array_equal(full.winners, narrow.winners)
    alone = run_games(FARKLE, _farkle_pair(), lineups[5:6], seeds[5:6])
    assert np.array_equal(alone.scores[0], full.scores[5])
    assert [tuple(g.totals()) for g in full.states] == [tuple(r) for r in full.scores.tolist()]
    assert np.array_equal(full.winners, full.scores == full.scores.max(axis=1, keepdims=True))


def test_same_seed_same_dice_in_every_seat() -> None:
    """Two copies of one deterministic policy: swapping their seats changes nothing at all."""
    twins = [load("heuristic", game=FARKLE, num_players=2) for _ in range(2)]
    out = run_games(FARKLE, twins, [[0, 1], [1, 0], [0, 1]], [11, 11, 12])
    assert np.array_equal(out.scores[0], out.scores[1])
    assert not np.array_equal(out.scores[0], out.scores[2])  # another deal, other dice


def test_balanced_lineups_seat_every_agent_equally() -> None:
    lineups = balanced_lineups(3, 9)
    for agent in range(3):
        assert ((lineups == agent).sum(axis=0) == 3).all()
    assert all(sorted(row) == [0, 1, 2] for row in lineups.tolist())


class _Tracker(BaseAgent):
    """Records the game ids it is told about, plays the first legal action."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[int] = []
        self.seen: set[int] = set()

    def start_episodes(self, games: np.ndarray) -> None:
        self.started += np.asarray(games).tolist()

    def act_batch(self, observations, action_masks, games=None):
        self.seen |= set(np.asarray(games).tolist())
        return np.array([check_mask(m)[0] for m in action_masks], dtype=np.int64)


def test_one_object_in_several_seats_gets_a_game_id_per_seat() -> None:
    tracker = _Tracker()
    out = run_games(make_rules("spiffel"), [tracker], [[0, 0]] * 5, [1, 2, 3, 4, 5], width=2)
    assert len(out) == 5
    assert len(tracker.started) == 10  # every game, both seats
    assert tracker.seen == {0, 1, 2, 3}  # slot * 2 + seat over two slots


class _Illegal(BaseAgent):
    def act(self, observation, action_mask) -> int:
        return int(np.flatnonzero(np.asarray(action_mask) == 0)[0])


def test_illegal_actions_and_bad_input_are_named() -> None:
    rules = make_rules("spiffel")
    with pytest.raises(ValueError, match=r"_Illegal.*seat 1: illegal action \d+; legal actions"):
        play_game(rules, [load("greedy", game=rules, num_players=2), _Illegal()], seed=0)
    with pytest.raises(ConfigError, match="one dice seed per game"):
        run_games(rules, [_Illegal()], [[0]], [1, 2])
    with pytest.raises(ConfigError, match=r"lineups index agents 0\.\.0, got 0\.\.1"):
        run_games(rules, [_Illegal()], [[0, 1]], [1])
    with pytest.raises(ConfigError, match="width must be a positive integer"):
        run_games(rules, [_Illegal()], [[0]], [1], width=0)


def test_win_counting() -> None:
    winners = np.array([[True, False], [True, True], [False, True], [True, False]])
    assert win_shares(winners).sum(axis=1).tolist() == [1.0] * 4
    assert wins_draws_losses(winners, np.array([0, 0, 0, 1])) == (1, 1, 2)


def test_training_play_games_balances_seats_and_counts_every_game() -> None:
    agent = load("heuristic", game=FARKLE, num_players=2)
    stats = play_games(agent, FARKLE, 40, opponents=["random"], seed=3, batch=16)
    assert stats.games == 40 and stats.wins + stats.draws + stats.losses == 40
    assert stats.win_rate > 0.7 and stats.opponent == "random"
    again = play_games(agent, FARKLE, 40, opponents=["random"], seed=3, batch=16)
    assert again == stats  # a seed repeats the table row
    solo = play_games(load("greedy", game="spiffel"), make_rules("spiffel"), 12, seed=0)
    assert solo.opponent == "solitaire" and "wins" not in solo.to_dict() and solo.mean_score > 100


def test_regret_seat_games_count_win_shares() -> None:
    from agents.evaluation.regret import seat_games

    a, b = _farkle_pair()
    shares = seat_games(a, b, FARKLE, seat=1, games=30, seed=4, num_envs=8)
    assert shares.shape == (30,) and set(shares.tolist()) <= {0.0, 0.5, 1.0}


def _measure_bots_script():
    """scripts/measure_bots.py as a module (skips where the training extras or farkle.zip are missing)."""
    pytest.importorskip("sb3_contrib")
    if not (ROOT / "agents" / "pretrained" / "farkle.zip").is_file():
        pytest.skip("farkle.zip not shipped")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import measure_bots
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return measure_bots


def test_measure_bots_records_counts_and_intervals(tmp_path: Path) -> None:
    measure_bots = _measure_bots_script()
    out = tmp_path / "m.json"
    assert (
        measure_bots.main(["--bots", "farkle", "--games", "24", "--opponents", "random", "--out", str(out)])
        == 0
    )
    row = json.loads(out.read_text())["farkle"]["vs"]["random"]
    assert row["games"] == 24 and row["wins"] + row["draws"] + row["losses"] == 24
    lo, hi = row["win_rate_ci95"]
    assert row["win_rate"] == pytest.approx(row["wins"] / 24) and lo <= row["win_rate"] <= hi


def test_measure_bots_pools_several_seeds_exactly(tmp_path: Path) -> None:
    measure_bots = _measure_bots_script()

    def row(*args: str) -> dict:
        out = tmp_path / f"m{len(list(tmp_path.iterdir()))}.json"
        argv = ["--bots", "farkle", "--games", "16", "--opponents", "greedy", "--out", str(out), *args]
        assert measure_bots.main(argv) == 0
        return json.loads(out.read_text())["farkle"]

    one, two = row("--seed", "3"), row("--seed", "4")
    both = row("--seeds", "3", "4")
    assert both["seed"] == [3, 4] and both["games"] == 32
    pooled, a, b = both["vs"]["greedy"], one["vs"]["greedy"], two["vs"]["greedy"]
    for key in ("games", "wins", "draws", "losses"):
        assert pooled[key] == a[key] + b[key], key
    assert pooled["per_seed_win_rate"] == [a["win_rate"], b["win_rate"]]
    assert pooled["win_rate"] == pytest.approx((a["wins"] + b["wins"]) / 32)
