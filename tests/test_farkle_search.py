"""The Farkle search learner and its agent: trained from scratch with every solver blocked, legal
play, the same seed the same weights, refusals, and the search over an exact table plays as the
solved agent does (reduced targets: seconds)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import agents
from agents.evaluation.runner import balanced_lineups, run_games
from agents.evaluation.stats import win_shares
from agents.players.field_optimal import SolvedSeatAgent, _EquilibriumSolve
from agents.players.search.farkle import FarkleSearchAgent, FarkleValue, random_farkle_net
from agents.solver import farkle_field
from agents.solver.farkle_field import equilibrium, searched_solution
from agents.training.train import train
from dice_envs.rules import ConfigError, make_rules

RULES = make_rules("farkle", target=500)
TINY = {
    "name": "fs",
    "game": "farkle",
    "num_players": 2,
    "reward": "win",
    "rules": {"target": 500},
    "iterations": 2,
    "games_per_iteration": 16,
    "fit_steps": 20,
    "batch_size": 64,
    "hidden": [16],
    "eval_every": 0,
    "eval_games": 16,
    "eval_opponent": "heuristic",
    "final_eval_games": 16,
    "progress_bar": False,
}


def _block_solvers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way to a solver's values raises, wherever it was imported: the two-player and
    N-player solves and the solver's disk cache."""
    from agents.solver import cache, farkle_win

    def refuse(*args, **kwargs):
        raise AssertionError("a solver's values were read")

    originals = {
        "solve_farkle_win": farkle_win.solve_farkle_win,
        "equilibrium": farkle_field.equilibrium,
        "best_response": farkle_field.best_response,
        "cached_array": cache.cached_array,
    }
    for name, original in originals.items():
        for module in list(sys.modules.values()):
            if module is not None and vars(module).get(name) is original:
                monkeypatch.setattr(module, name, refuse)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A tiny run at target 500 with every solver blocked; the model's path."""
    mp = pytest.MonkeyPatch()
    try:
        cache = tmp_path_factory.mktemp("cache")
        mp.setenv("DICE_ENVS_CACHE", str(cache))
        _block_solvers(mp)
        result = train(_config(), out=tmp_path_factory.mktemp("run") / "fs", command="test")
        assert list(cache.iterdir()) == []  # nothing solved, nothing read from the cache
    finally:
        mp.undo()
    return result.model_path


def _config():
    from agents.training.search.config import SearchConfig

    return SearchConfig.from_dict(TINY)


def test_training_with_the_solvers_blocked_writes_a_loadable_model(model):
    card = agents.load(str(model), game=RULES, num_players=2).card
    assert card["game"] == "farkle" and card["num_players"] == 2 and card["trainer"] == "search"
    assert card["value"]["features"] == "farkle-turn-start-v1" and card["value"]["output"] == "softmax"
    assert "no solver values read" in card["learner"] and card["games"] == 2 * 16
    assert (model.parent / "progress.csv").is_file() and (model.parent / "learning_curve.png").is_file()
    agent = agents.load(f"search:{model}", game=RULES, num_players=2)
    assert isinstance(agent, FarkleSearchAgent) and agent.net.hidden == [16]


def test_the_same_seed_gives_the_same_weights(model, tmp_path):
    again = train(_config(), out=tmp_path / "again", command="test").model_path
    assert again.read_bytes() == model.read_bytes()


def test_the_agent_takes_legal_actions_only(model):
    """The game runner checks every action against the mask (an illegal one raises); the agent
    plays both seats against random, whose play reaches odd positions."""
    agent = agents.load(str(model), game=RULES, num_players=2)
    lineups = balanced_lineups(2, 40)
    rand = agents.load("random", game=RULES, num_players=2, seed=0)  # seeded: the same games every run
    out = run_games(RULES, [agent, rand], lineups, range(40))
    assert out.winners.any(axis=1).all() and agent.decisions > 100
    assert win_shares(out.winners)[lineups == 0].mean() > 0.6  # better than random


def test_a_model_is_refused_for_another_game_or_player_count(model):
    with pytest.raises(ConfigError, match="trained for 2-player Farkle"):
        agents.load(str(model), game=RULES, num_players=3)
    with pytest.raises(ConfigError, match="farkle model, not a spiffel one"):
        agents.load(str(model), game="spiffel")
    with pytest.raises(ConfigError, match="the value network reads"):
        FarkleValue(random_farkle_net(3, hidden=(4,)), RULES, 2)


def test_the_search_over_the_exact_table_is_the_solved_agent():
    """Searching each turn over the equilibrium's own turn-start values gives its tables, so the
    agent plays as the solved one, decision for decision."""
    sol = equilibrium(RULES, 2)

    def table(movers, totals):
        return sol.values[(movers, *totals.T)]

    searched = searched_solution(RULES, 2, table)
    assert searched.win_probability(0) == pytest.approx(sol.win_probability(0), abs=1e-12)
    turns = [([a, b], m, False) for a in range(0, 500, 100) for b in range(0, 500, 150) for m in (0, 1)]
    turns += [([a, b], 1, True) for a in (500, 650) for b in (0, 300)]  # seat 1's last turn
    for totals, mover, final in turns:
        got, want = searched.turn(totals, mover, final), sol.turn(totals, mover, final)
        assert np.allclose(got[0], want[0], atol=1e-12) and np.allclose(got[1], want[1], atol=1e-12)
    solved = SolvedSeatAgent(RULES, 2, _EquilibriumSolve(RULES, 2, 0, sol), "equilibrium")
    out_a = run_games(RULES, [solved], np.zeros((20, 2), dtype=np.int64), list(range(20)))
    mine = SolvedSeatAgent(RULES, 2, _EquilibriumSolve(RULES, 2, 0, searched), "searched")
    out_b = run_games(RULES, [mine], np.zeros((20, 2), dtype=np.int64), list(range(20)))
    assert np.array_equal(out_a.scores, out_b.scores)


def test_three_seats_train_and_play(tmp_path):
    """Three seats: a tiny run (the final round searched over two turns) writes a model that
    loads for three seats only and plays legally against two others."""
    from agents.training.search.config import SearchConfig

    cfg = SearchConfig.from_dict({**TINY, "num_players": 3, "eval_games": 6, "final_eval_games": 6})
    path = train(cfg, out=tmp_path / "fs3", command="test").model_path
    agent = agents.load(str(path), game=RULES, num_players=3)
    assert agent.card["num_players"] == 3 and agent.card["evaluation"]["games"] == 6
    with pytest.raises(ConfigError, match="trained for 3-player Farkle"):
        agents.load(str(path), game=RULES, num_players=2)
    lineups = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]] * 2)  # the agent in each seat
    out = run_games(RULES, [agent, agents.load("heuristic", game=RULES, num_players=3)], lineups, range(6))
    assert np.allclose(win_shares(out.winners).sum(axis=1), 1.0) and agent.decisions > 6


def test_the_shipped_three_seat_bot_plays_its_card_and_gives_nothing_away():
    """``pretrained:farkle-search-3p`` loads for three seats at target 300 only, and over a few
    games against the three-seat equilibrium none of its decisions gives up any chance of winning
    (with the bank minimum above the target the open game is three turn starts, all learned)."""
    from agents.evaluation.field_regret import field_regret

    rules = make_rules("farkle", target=300)
    agent = agents.load("pretrained:farkle-search-3p", game=rules, num_players=3)
    assert isinstance(agent, FarkleSearchAgent)
    assert agent.card["num_players"] == 3 and agent.card["rules"]["target"] == 300
    with pytest.raises(ConfigError, match="trained for 3-player Farkle"):
        agents.load("pretrained:farkle-search-3p", game=rules, num_players=2)
    with pytest.raises(ConfigError, match="the model was trained for 300"):
        agents.load("pretrained:farkle-search-3p", game=make_rules("farkle"), num_players=3)
    lost = field_regret(agent, rules, players=3, games=30, seed=0)
    assert lost.decisions > 30 and lost.mean == pytest.approx(0.0, abs=1e-9)
