"""Two-player scorecard play for the win: the win network's features, the turn search over it, its
agent and its learner (agents.players.search.win, win_agent, win_play; the learner with reward win)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import agents
from agents.players.search.win import (
    WinSearch,
    random_win_net,
    win_feature_size,
    win_features,
)
from agents.players.search.win_agent import WinSearchAgent
from agents.players.search.win_play import play_win_games, win_shares
from agents.solver.scorecard import turn_solver
from agents.training.search.config import SearchConfig
from agents.training.search.learner import match, run
from dice_envs.engine.scorecard import ScorecardEngine
from dice_envs.rules import ConfigError, make_rules
from dice_envs.tables import scorecard_tables
from tests.floats import assert_close

RULES = make_rules("spiffel")
SOLVER = turn_solver(RULES)
FULL = (1 << SOLVER.k) - 1
CHANCE = RULES.categories.index("chance")
TINY = {
    "name": "win-tiny",
    "num_players": 2,
    "reward": "win",
    "iterations": 2,
    "games_per_iteration": 6,
    "fit_steps": 3,
    "batch_size": 16,
    "eval_every": 0,
    "eval_games": 2,
    "eval_opponent": "greedy",
    "final_eval_games": 0,
    "checkpoint_every": 1,
    "hidden": [8],
    "progress_bar": False,
}


@pytest.fixture(scope="module")
def net():
    return random_win_net(SOLVER, hidden=(16,), seed=3)


def test_features_read_both_cards_and_the_difference():
    own = np.array([[0, 0, 0], [FULL ^ 1, 63, 1]])
    other = np.array([[1, 5], [FULL ^ 3, 12]])
    x = win_features(SOLVER, own, other, np.array([-30, 0]))
    assert x.shape == (2, win_feature_size(SOLVER))
    tail = x[:, -7:]  # d / 100, ahead, level, three ramps, second seat
    assert_close(tail[0], [-0.3, 0, 0, -1, -1, -0.5, 1])
    assert_close(tail[1], [0, 0, 1, 0, 0, 0, 0])
    assert x[:, : SOLVER.k].sum(axis=1).tolist() == [SOLVER.k, 1]  # own open boxes


def test_entries_follow_the_scoring_rules():
    search = WinSearch(SOLVER, random_win_net(SOLVER, hidden=(4,), seed=0))
    pts, nxt = search.entries(np.array([[0, 0, 0]]))
    t = scorecard_tables()
    r = t.roll_index[(1, 1, 2, 3, 4)]
    assert pts[0, 0, r] == 2  # two ones in the ones box
    m, u, z = np.unravel_index(nxt[0, 0, r], search.shape)
    assert (m, u, z) == (1, 2, 0)
    five = t.roll_index[(6, 6, 6, 6, 6)]
    m, u, z = np.unravel_index(nxt[0, SOLVER.five, five], search.shape)
    assert (pts[0, SOLVER.five, five], m, z) == (50, 1 << SOLVER.five, 1)
    closed, _ = search.entries(np.array([[1, 3, 0]]))
    assert np.isneginf(closed[0, 0]).all()  # a filled box takes nothing


def test_the_last_entry_of_the_game_is_scored_exactly(net):
    search = WinSearch(SOLVER, net)
    own = np.array([[FULL ^ (1 << CHANCE), 0, 0]])
    bv = search.box_values(own, np.array([[FULL, 0]]), np.array([-10]))[0]
    sums = scorecard_tables().rolls.sum(axis=1)
    want = np.where(sums > 10, 1.0, np.where(sums == 10, 0.5, 0.0))
    assert_close(bv[CHANCE], want)
    assert np.isneginf(np.delete(bv, CHANCE, axis=0)).all()
    (plan,) = search.turn_plans(own, np.array([[FULL, 0]]), np.array([-10]))
    assert 0.5 < plan.value <= 1.0  # at least 11 with three throws of five dice
    # before the other's last turn the value is the network's, a chance strictly inside (0, 1)
    early = search.box_values(own, np.array([[FULL ^ 1, 0]]), np.array([-10]))[0, CHANCE]
    assert ((early > 0) & (early < 1)).all()


def test_the_agent_plays_a_full_game_with_legal_actions(net):
    bot = WinSearchAgent(RULES, 2, net=net)
    engine = ScorecardEngine(RULES, 3, seed=5, num_players=2)
    moves = 0
    while not engine.done.all():
        g = np.flatnonzero(~engine.done)
        obs = engine.observe(engine.current[g], g)
        masks = engine.action_masks(g)
        acts = bot.act_batch(obs, masks)
        assert masks[np.arange(len(g)), acts].all()
        assert bot.act(obs[0], masks[0]) == acts[0]  # the same action alone
        engine.step(acts, g)
        moves += 1
    assert (engine.cards >= 0).all() and moves >= 2 * SOLVER.k


def test_self_play_targets_are_chances(net):
    out = play_win_games(SOLVER, net, games=4, seed=2)
    assert out.own.shape == (4 * 2 * SOLVER.k, 3) and out.d.shape == out.targets.shape
    assert ((out.targets >= -1e-9) & (out.targets <= 1 + 1e-9)).all()  # sums of chances
    last = slice(-4, None)  # the second seat's last turn: other card full
    assert (out.other[last, 0] == FULL).all()
    assert set(win_shares(out.totals).tolist()) <= {0.0, 0.5, 1.0}


def test_match_balances_seats(net, monkeypatch):
    from agents.evaluation import regret

    played = []  # (the agent in seat 0, game dice seed) of every game the match plays

    def recording(rules, players, lineups, dice_seeds, **kwargs):
        played.extend((players[row[0]], int(s)) for row, s in zip(lineups, dice_seeds, strict=True))
        return real(rules, players, lineups, dice_seeds, **kwargs)

    real = regret.run_games
    monkeypatch.setattr(regret, "run_games", recording)
    bot, greedy = WinSearchAgent(RULES, 2, net=net), agents.load("greedy", game=RULES, num_players=2)
    rate, se = match(bot, greedy, RULES, games=6, seed=1, width=2)
    assert 0 <= rate <= 1 and se >= 0
    # each of the 3 deals is played twice on the same dice: once with each player in seat 0
    deals = {s for _, s in played}
    assert len(played) == 6 and len(deals) == 3
    starts = sorted((s, a is bot) for a, s in played)
    assert starts == sorted((s, first) for s in deals for first in (False, True))
    monkeypatch.undo()
    # a player against a copy of itself wins exactly half of each deal, whoever starts
    twin = agents.load("greedy", game=RULES, num_players=2)
    assert match(greedy, twin, RULES, games=20, seed=3) == (0.5, 0.0)  # exact: shares s and 1 - s
    # the same games seen from the other side: the rates add up to 1, the stronger player leads
    heuristic = agents.load("heuristic", game=RULES, num_players=2)
    a, se_a = match(heuristic, greedy, RULES, games=40, seed=3)
    b, se_b = match(greedy, heuristic, RULES, games=40, seed=3)
    assert_close([a + b, se_a], [1.0, se_b])
    assert a > 0.5 + 2 * se_a, (a, se_a)


def test_learner_runs_and_its_model_loads(tmp_path):
    cfg = SearchConfig.from_dict(TINY)
    result = run(cfg, tmp_path / "run", False, "dice-envs train --config x.yaml")
    card = json.loads(result.card_path.read_text())
    assert (card["reward"], card["num_players"], card["value"]["features"]) == ("win", 2, "win-turn-start-v1")
    assert card["command"] == "dice-envs train --config x.yaml"
    rows = (tmp_path / "run" / "progress.csv").read_text().splitlines()
    assert len(rows) == 3
    bot = agents.load(f"search:{result.model_path}", game="spiffel", num_players=2)
    assert isinstance(bot, WinSearchAgent)
    engine = ScorecardEngine(RULES, 1, seed=0, num_players=2)
    a = bot.act(engine.observe(0)[0], engine.action_masks()[0])
    assert 0 <= a < RULES.n_actions
    # resuming the finished run with one more iteration continues from its checkpoint
    more = SearchConfig.from_dict({**TINY, "iterations": 3})
    run(more, tmp_path / "run", True, "dice-envs train --config x.yaml")
    assert len((tmp_path / "run" / "progress.csv").read_text().splitlines()) == 4


@pytest.mark.parametrize(
    ("values", "match_"),
    [
        ({"num_players": 2}, "two-player play for the win"),
        ({"reward": "win"}, "num_players 1, reward score"),
        ({"num_players": 2, "reward": "win", "eval_games": 7}, "eval_games"),
        ({"num_players": 2, "reward": "win", "final_eval_games": 3}, "final_eval_games"),
        ({"num_players": 2, "reward": "win", "eval_opponent": ""}, "eval_opponent"),
    ],
)
def test_config_errors(values, match_):
    with pytest.raises(ConfigError, match=match_):
        SearchConfig.from_dict(values)


def test_a_win_network_does_not_fit_other_features():
    with pytest.raises(ConfigError, match="features"):
        WinSearch(SOLVER, random_win_net(turn_solver(make_rules("dice_poker")), hidden=(4,)))


def _points_net():
    from agents.players.search.value import ValueNet

    return ValueNet.random(SOLVER, hidden=(6,), seed=4)


def test_points_features_read_the_projected_difference():
    from agents.players.search.value import LearnedValues, feature_size, state_features
    from agents.players.search.win import card_points

    values = LearnedValues(_points_net(), SOLVER)
    five = 1 << SOLVER.five
    own = np.array([[0, 0, 0], [five | 1, 3, 1]])
    other = np.array([[five, 0, 1], [3, 7, 0]])  # with points the other card has its z too
    d = np.array([-30, 12])
    x = win_features(SOLVER, own, other, d, values)
    assert x.shape == (2, win_feature_size(SOLVER, points=True))
    fs = feature_size(SOLVER)
    assert_close(x[:, :fs], state_features(SOLVER, *own.T))
    assert_close(x[:, fs : 2 * fs], state_features(SOLVER, *other.T))  # z one-hot included
    e_own, e_other = values.values(own), values.values(other)
    p = d + e_own - e_other
    assert_close(x[:, -6:-3], np.column_stack([e_own, e_other, p]) / 100)
    assert_close(x[:, -1], np.clip(p / 60, -1, 1))
    # a card seen from outside (z = -1): an open five-of-a-kind box is state 0, a filled one
    # weighed by OTHER_Z_WEIGHTS
    seen = card_points(values, np.array([[five, 0, -1], [3, 7, -1]]))
    assert_close(seen, [0.5 * (values[five, 0, 0] + values[five, 0, 1]), values[3, 7, 0]])
    # the search reads them: another points network changes the leaf values
    net = random_win_net(SOLVER, hidden=(8,), seed=1, points=True)
    other_values = LearnedValues(type(_points_net()).random(SOLVER, hidden=(6,), seed=5), SOLVER)
    a = WinSearch(SOLVER, net, values).box_values(own[:1], other[:1, :2], d[:1])
    b = WinSearch(SOLVER, net, other_values).box_values(own[:1], other[:1, :2], d[:1])
    assert np.isfinite(a).any() and not np.allclose(a[np.isfinite(a)], b[np.isfinite(b)])
    with pytest.raises(ConfigError, match="without a points network"):
        WinSearch(SOLVER, net)


def test_with_points_the_search_knows_its_own_five_of_a_kind_state():
    """The leaf of scoring five sixes in the five-of-a-kind box (z 1: the bonus in reach) and of
    scratching it (z 0) differ by more than the points: the network reads the mover's z."""
    from agents.players.search.value import LearnedValues

    values = LearnedValues(_points_net(), SOLVER)
    net = random_win_net(SOLVER, hidden=(8,), seed=1, points=True)
    search = WinSearch(SOLVER, net, values)
    card = np.array([[0, 0, 0]])
    _, nxt = search.entries(card)
    sixes = scorecard_tables().roll_index[(6, 6, 6, 6, 6)]
    kept = np.unravel_index(nxt[0, SOLVER.five, sixes], search.shape)
    assert kept[2] == 1
    v_kept = search.other_value(np.array([[0, 0]]), np.array([[kept[0], kept[1], 1]]), np.array([-50.0]))
    v_gone = search.other_value(np.array([[0, 0]]), np.array([[kept[0], kept[1], 0]]), np.array([-50.0]))
    assert not np.isclose(v_kept, v_gone)


def test_a_win_model_with_points_keeps_its_points_network(tmp_path):
    from agents.models.files import read_arrays
    from agents.players.model import resolve_model_path
    from agents.players.search.agent import load_value_model
    from agents.players.search.value import ValueNet
    from agents.players.search.win import POINTS_PREFIX, read_points_net

    cfg = SearchConfig.from_dict({**TINY, "iterations": 1, "points_model": "pretrained:spiffel-search"})
    result = run(cfg, tmp_path / "run", False, "dice-envs train --config x.yaml")
    card = json.loads(result.card_path.read_text())
    assert card["value"]["features"] == "win-turn-start-v2"
    assert card["value"]["points"]["model"] == "pretrained:spiffel-search"
    shipped, _ = load_value_model(resolve_model_path("pretrained:spiffel-search"), RULES, 1)
    bot = agents.load(f"search:{result.model_path}", game="spiffel", num_players=2)
    kept = bot.search.points.net
    for a, b in zip(kept.weights + kept.biases, shipped.weights + shipped.biases, strict=True):
        assert np.array_equal(a, b)  # the same points network, carried in the win model's file
    engine = ScorecardEngine(RULES, 2, seed=0, num_players=2)
    acts = bot.act_batch(engine.observe(engine.current), engine.action_masks())
    assert engine.action_masks()[np.arange(2), acts].all()
    # a file without its points network is refused, naming what is missing
    arrays = {k: v for k, v in read_arrays(result.model_path).items() if not k.startswith(POINTS_PREFIX)}
    bare = tmp_path / "bare.npz"
    bare.write_bytes(ValueNet.from_arrays(arrays).to_bytes())
    with pytest.raises(ConfigError, match="points_w0"):
        read_points_net(
            bare, {**card, "weights_sha256": hashlib.sha256(bare.read_bytes()).hexdigest()}, SOLVER
        )


@pytest.mark.parametrize(
    ("values", "match_"),
    [
        ({"points_model": "pretrained:no-such-bot"}, "no pretrained model"),
        ({"points_model": "pretrained:dice_poker-search"}, "points_model"),
        ({"points_model": "pretrained:spiffel-search-win"}, "2-player spiffel model"),
        ({"num_players": 1, "reward": "score", "points_model": "pretrained:spiffel-search"}, "reward win"),
    ],
)
def test_a_wrong_points_model_is_refused_before_any_work(values, match_):
    with pytest.raises(ConfigError, match=match_):
        SearchConfig.from_dict({**TINY, **values})


def test_lambda_returns_carry_the_games_back_to_their_first_turns(net):
    n, turns = 3, 2 * SOLVER.k
    v = play_win_games(SOLVER, net, games=n, seed=7).targets.reshape(turns, n)
    half = play_win_games(SOLVER, net, games=n, seed=7, td_lambda=0.5).targets.reshape(turns, n)
    full = play_win_games(SOLVER, net, games=n, seed=7, td_lambda=1.0).targets.reshape(turns, n)
    assert_close(half[-1], v[-1])  # the last turn is searched to the end either way
    assert_close(half[:-1], 0.5 * v[:-1] + 0.5 * (1.0 - half[1:]))  # the same games, other targets
    assert_close(full[0], 1.0 - v[-1])  # λ = 1: the last turn's exact chance, seen by seat 0
    with pytest.raises(ConfigError, match="td_lambda"):
        SearchConfig.from_dict({"name": "x", "td_lambda": 0.5})


NORMAL = {**TINY, "leaf": "normal", "points_model": "pretrained:spiffel-search", "iterations": 1}


def test_the_normal_leaf_is_the_normal_chance_of_the_projected_lead():
    from agents.players.search.value import LearnedValues
    from agents.players.search.win import card_points
    from agents.players.search.win_normal import NormalWinSearch, normal_chance

    values = LearnedValues(_points_net(), SOLVER)
    spread = np.linspace(0.0, 60.0, SOLVER.k + 1)
    search = NormalWinSearch(SOLVER, values, spread)
    other, card, lead = np.array([[3, 4]]), np.array([[FULL ^ 7, 9, 0]]), np.array([-12.0])
    p = lead + card_points(values, np.array([[3, 4, -1]])) - card_points(values, card)
    sd = np.hypot(spread[SOLVER.k - 2], spread[3])
    assert_close(search.other_value(other, card, lead), normal_chance((p + 0.5) / sd))
    assert_close(normal_chance(np.array([0.0, 1.0, -np.inf])), [0.5, 0.8413447460685429, 0.0])
    # the last turn is scored exactly, as in the network search
    own = np.array([[FULL ^ (1 << CHANCE), 0, 0]])
    bv = search.box_values(own, np.array([[FULL, 0]]), np.array([-10]))[0]
    sums = scorecard_tables().rolls.sum(axis=1)
    assert_close(bv[CHANCE], np.where(sums > 10, 1.0, np.where(sums == 10, 0.5, 0.0)))
    with pytest.raises(ConfigError, match="spread"):
        NormalWinSearch(SOLVER, values, spread[:-1])
    with pytest.raises(ConfigError, match="spread"):
        NormalWinSearch(SOLVER, values, -spread)


def test_a_normal_leaf_run_writes_a_model_that_plays(tmp_path):
    from agents.models.files import read_arrays
    from agents.players.search.value import npz_bytes
    from agents.players.search.win_normal import NormalWinSearch, read_spread

    result = run(SearchConfig.from_dict(NORMAL), tmp_path / "run", False, "dice-envs train --config x.yaml")
    card = json.loads(result.card_path.read_text())
    assert (card["reward"], card["value"]["features"], card["games"]) == ("win", "win-normal-v1", 6)
    assert 6 * SOLVER.k <= card["steps"] <= 6 * SOLVER.k * RULES.num_throws  # solitaire self-play
    spread = read_spread(result.model_path, card, SOLVER)
    assert spread[0] == 0.0 and (spread[1:] > 0).all()
    assert_close(card["value"]["spread"], spread, atol=1e-3)
    bot = agents.load(f"search:{result.model_path}", game="spiffel", num_players=2)
    assert isinstance(bot.search, NormalWinSearch)
    engine = ScorecardEngine(RULES, 2, seed=0, num_players=2)
    while not engine.done.all():
        g = np.flatnonzero(~engine.done)
        masks = engine.action_masks(g)
        acts = bot.act_batch(engine.observe(engine.current[g], g), masks)
        assert masks[np.arange(len(g)), acts].all()
        engine.step(acts, g)
    # a file without its spread is refused, naming what is missing
    arrays = {k: v for k, v in read_arrays(result.model_path).items() if k != "spread"}
    bare = tmp_path / "bare.npz"
    bare.write_bytes(npz_bytes(arrays))
    sha = hashlib.sha256(bare.read_bytes()).hexdigest()
    with pytest.raises(ConfigError, match="'spread'"):
        read_spread(bare, {**card, "weights_sha256": sha}, SOLVER)


@pytest.mark.parametrize(
    ("values", "match_"),
    [
        ({"leaf": "gaussian"}, "'network' or 'normal'"),
        ({"points_model": ""}, "points_model"),
    ],
)
def test_normal_leaf_config_errors(values, match_):
    with pytest.raises(ConfigError, match=match_):
        SearchConfig.from_dict({**NORMAL, **values})
