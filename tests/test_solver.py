"""The exact solvers: literature values, internal consistency, and simulation against the engine.

Solves share one on-disk cache per test session (``DICE_ENVS_CACHE``; a directory shared by the
pytest-xdist workers, whose lock makes one worker solve while the other waits). A value of
``DICE_ENVS_CACHE`` set before the run is respected, so a developer can keep a warm cache.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from floats import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.players.farkle import MaxExpectedAgent
from agents.players.scorecard import OptimalAgent
from agents.solver import expected_score, expected_turn_points, farkle_solution, scorecard_solution
from agents.solver.cache import cache_key, cached_array
from agents.solver.scorecard import TurnSolver
from dice_envs.encoding import FarkleView, ScorecardView
from dice_envs.engine import FarkleGame, ScorecardGame, new_game
from dice_envs.forward import throw_outcomes
from dice_envs.rules import ConfigError, make_rules
from dice_envs.rules.scorecard import UPPER_FACES
from dice_envs.tables import scorecard_tables


# ------------------------------------------------------------------------- literature values
def test_official_yahtzee_optimum_matches_literature() -> None:
    assert expected_score("yahtzee") == pytest.approx(254.5877, abs=5e-4)


@pytest.mark.parametrize("game", ["spiffel", "dice_poker", "yahtzee"])
def test_known_optima_are_the_solvers(game: str) -> None:
    """The shipped optima of the default rules (learning-curve lines) are what a solve gives."""
    from agents.solver.scorecard import KNOWN_OPTIMA, known_optimum, solve_scorecard

    rules = make_rules(game)
    assert known_optimum(rules) == KNOWN_OPTIMA[game]  # exact: the shipped constant itself
    assert_close(solve_scorecard(rules).expected_score(), KNOWN_OPTIMA[game], rtol=1e-12)
    assert known_optimum(make_rules(game, upper_bonus=0)) is None  # other rules: solve them


def test_yahtzee_without_bonus_and_joker_matches_literature() -> None:
    assert expected_score("yahtzee", yahtzee_bonus=0, joker=False) == pytest.approx(245.8708, abs=5e-4)


def test_farkle_turn_value_is_stable_and_rule_dependent() -> None:
    base = expected_turn_points("farkle")
    assert 500 < base < 700
    # A lower bank minimum only adds options, a higher one removes them.
    assert (
        expected_turn_points("farkle", bank_minimum=0)
        > base
        > expected_turn_points("farkle", bank_minimum=1000)
    )
    # The bankruptcy rule and the target do not enter a single turn's expectation.
    assert expected_turn_points("farkle", bankruptcy=False, target=3000) == base  # exact: one solve, reused


def test_solver_rejects_wrong_game() -> None:
    with pytest.raises(ConfigError, match="scorecard"):
        expected_score("farkle")
    with pytest.raises(ConfigError, match="farkle"):
        expected_turn_points("spiffel")
    with pytest.raises(ConfigError, match="upper_bonus_treshold"):
        expected_score("spiffel", upper_bonus_treshold=60)


# ------------------------------------------------------------------------- consistency
@settings(max_examples=60)
@given(st.sampled_from(["yahtzee", "spiffel"]), st.integers(0, 2**13 - 2), st.data())
def test_single_state_plan_agrees_with_the_table(game: str, mask: int, data: st.DataObject) -> None:
    """The per-turn planner (agent path) reproduces the bulk solver's value of every state."""
    sol = scorecard_solution(game)
    core = sol.solver
    u = int(data.draw(st.sampled_from(list(core.ucols(mask)))))
    z = int(data.draw(st.sampled_from(list(core.zcols(mask)))))
    one = core.box_values_one(sol.values, mask, u, z)
    filled = [b for b in range(core.k) if mask >> b & 1]
    assert np.all(np.isneginf(one[filled])) and np.all(np.delete(one, filled, axis=0).max(axis=0) > -np.inf)
    (plan,) = core.turn_plans(one[None])
    assert plan.value == pytest.approx(sol.values[mask, u, z], abs=1e-9)


def _engine_value(game: ScorecardGame, memo: dict) -> float:
    """Expected future points by brute-force expectimax over the engine itself (one throw a turn)."""
    if game.done:
        return 0.0
    card = game.cards[0]
    five = card.boxes[game._five]
    key = (
        tuple(v is None for v in card.boxes),
        game.upper_total(0),
        card.upper_bonus_paid,
        five,
        card.five_kind_bonuses,
    )
    if key not in memo:
        tables = scorecard_tables()
        total = 0.0
        for roll, prob in zip(tables.roll_index, throw_outcomes(5)[1], strict=True):
            here = game.clone()
            here.dice = roll
            best = -math.inf
            for action in here.legal_actions():
                after = here.clone()
                gained = after.apply(action)[0]
                best = max(best, gained + _engine_value(after, memo))
            total += prob * best
        memo[key] = total
    return memo[key]


@settings(max_examples=12)
@given(
    game=st.sampled_from(["spiffel", "dice_poker", "yahtzee"]),
    threshold=st.sampled_from([0, 7, 30, 63]),
    bonus=st.sampled_from([0, 10, 100]),
    limit=st.sampled_from([None, 0, 1, 2]),
    joker=st.booleans(),
    data=st.data(),
)
def test_solver_transitions_match_the_engine_under_any_rules(
    game, threshold, bonus, limit, joker, data
) -> None:
    """End games (two open boxes, one throw a turn) solved by the solver and by brute force over the
    engine agree, for any upper bonus / five-of-a-kind bonus / limit / joker parameters."""
    rules_cls = make_rules(game)
    five = rules_cls.five_kind_box
    rules = make_rules(
        game,
        num_throws=1,
        upper_bonus_threshold=threshold,
        **{f"{five}_bonus": bonus, f"{five}_bonus_limit": limit, "joker": joker},
    )
    cats = rules.categories
    k = len(cats)
    open_boxes = data.draw(st.lists(st.integers(0, k - 1), min_size=2, max_size=2, unique=True))
    g = new_game(rules, seed=0)
    card = g.cards[0]
    for b, name in enumerate(cats):
        if b in open_boxes:
            continue
        if name in UPPER_FACES:
            card.boxes[b] = UPPER_FACES[name] * data.draw(st.integers(0, 5))
        elif name == five:
            card.boxes[b] = data.draw(st.sampled_from([0, 50]))
        else:
            card.boxes[b] = 0
    if card.boxes[cats.index(five)] == 50:
        card.five_kind_bonuses = data.draw(st.integers(0, 3 if limit is None else limit))
    card.upper_bonus_paid = g.upper_total(0) >= threshold
    g.round = k - 2
    core = TurnSolver(rules)
    mask = sum(1 << b for b in range(k) if b not in open_boxes)
    values = core.solve(start_mask=mask)
    u = min(g.upper_total(0), threshold)
    z = core.z_of(card.boxes[cats.index(five)], card.five_kind_bonuses)
    assert values[mask, u, z] == pytest.approx(_engine_value(g, {}), abs=1e-9)


def test_threshold_zero_pays_the_bonus_with_the_first_box() -> None:
    """Threshold 0: the engine pays the bonus with the first box, so the game is the bonus-free
    game plus a certain bonus (and these tables are small: the capped upper total is always 0)."""
    game = new_game(make_rules("yahtzee", upper_bonus_threshold=0), seed=0)
    game.apply(game.box_action("chance"))
    assert game.upper_bonus(0) == 35
    no_bonus = expected_score("yahtzee", upper_bonus_threshold=0, upper_bonus=0)
    assert expected_score("yahtzee", upper_bonus_threshold=0) == pytest.approx(no_bonus + 35, abs=1e-9)
    # the real bonus (at 63) is worth something, but less than a certain one
    assert no_bonus < expected_score("yahtzee") < no_bonus + 35


def test_cache_is_reused_and_keyed_by_rules(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DICE_ENVS_CACHE", str(tmp_path))
    calls = []

    def compute() -> np.ndarray:
        calls.append(1)
        return np.arange(4.0)

    k1 = cache_key("t", "spiffel", {"a": 1})
    assert k1 != cache_key("t", "spiffel", {"a": 2}) and k1 != cache_key("t", "yahtzee", {"a": 1})
    a, loaded = cached_array(k1, compute)
    b, loaded2 = cached_array(k1, compute)
    assert not loaded and loaded2 and len(calls) == 1
    assert np.array_equal(a, b)
    assert (tmp_path / f"{k1}.npy").is_file() and not (tmp_path / f"{k1}.lock").exists()


# ------------------------------------------------------------------------- simulation
def _scorecard_view(g: ScorecardGame) -> ScorecardView:
    """The decoded observation of the current player, read off the engine (fast test path)."""
    p = g.current_player
    card = g.cards[p]
    bonus_due, joker = g.joker_status()
    return ScorecardView(
        dice=g.dice,
        throw=g.throw,
        throws_left=g.rules.num_throws - g.throw,
        boxes=tuple(card.boxes),
        upper_total=g.upper_total(p),
        upper_bonus_paid=card.upper_bonus_paid,
        five_kind_bonuses=card.five_kind_bonuses,
        five_kind_50=card.boxes[g._five] == 50,
        bonus_due=bonus_due,
        joker=joker,
        round=g.round,
        total=g.total(p),
        others_totals=(),
    )


def _optimal_mean(game: str, n_games: int, seed: int) -> tuple[float, float]:
    """Mean and standard error of ``n_games`` solitaire games of ``optimal``, played batched
    through the vector engine (the engine and the one-game machine agree move for move: the
    differential tests)."""
    from agents.evaluation import evaluate

    found = evaluate(game, ["optimal"], games=n_games, players=1, seed=seed, workers=1, optimum=False)
    row = found.summary()["agents"]["optimal"]
    return float(row["mean_score"]), float(row["std"]) / math.sqrt(n_games)


@pytest.mark.slow
@pytest.mark.parametrize("game", ["spiffel", "dice_poker", "yahtzee"])
def test_optimal_agent_achieves_expected_score(game: str) -> None:
    """10,000 solitaire games of the optimal agent: within 3 SE of the optimum."""
    value = expected_score(game)
    mean, se = _optimal_mean(game, 10_000, seed=1000)
    assert abs(mean - value) < 3 * se, (game, mean, value, se)


def test_optimal_agent_act_path_matches_decide_path() -> None:
    """Acting from the encoded observation gives the same actions as the fast test path."""
    from dice_envs.encoding import encode

    for game in ("spiffel", "yahtzee"):
        rules = make_rules(game)
        agent = OptimalAgent(rules)
        for seed in range(3):
            g = new_game(rules, seed=seed)
            while not g.done:
                a = agent.act(encode(g, 0), g.action_mask())
                assert a == agent.decide(_scorecard_view(g), np.array(g.legal_actions()))
                g.apply(a)


def _farkle_view(g: FarkleGame) -> FarkleView:
    p = g.current_player
    return FarkleView(g.dice, g.turn_total, g.first_throw, g.banked[p], g.turns[p], False, (), p)


@pytest.mark.slow
def test_max_expected_agent_achieves_expected_turn_points() -> None:
    """Many single turns of the max-expected agent: mean within 3 SE of the exact expectation."""
    rules = make_rules("farkle", bankruptcy=False, target=1_000_000, max_turns=None)
    agent = MaxExpectedAgent(rules)
    n_turns = 50_000
    points = np.zeros(n_turns)
    done_turns, seed = 0, 7
    while done_turns < n_turns:  # a game ends at the target (about 1,700 turns): start another
        g = new_game(rules, seed=seed)
        seed += 1
        while not g.done and done_turns + g.turns[0] < n_turns:
            turn, before = done_turns + g.turns[0], g.banked[0]
            g.apply(agent.decide(_farkle_view(g), np.array(g.legal_actions())))
            points[turn] += g.banked[0] - before
        done_turns += g.turns[0]
    value = expected_turn_points("farkle")
    se = points.std(ddof=1) / math.sqrt(n_turns)
    assert abs(points.mean() - value) < 3 * se, (points.mean(), value, se)


def test_max_expected_policy_prefers_the_better_of_bank_and_throw() -> None:
    sol = farkle_solution("farkle")
    # With six fresh dice and a small total, throwing on is worth more than banking.
    assert sol.continue_value(400, 6) > 400
    # With one die left and a big total, banking is worth more.
    assert sol.continue_value(2000, 1) < 2000
    # Banking is not allowed at or below the bank minimum.
    assert sol.option_value(350, 3, bank=True) == -math.inf  # exact: -inf marks an illegal option
