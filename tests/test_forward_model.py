"""The forward model (:mod:`dice_envs.forward`) against the engines.

* every chance node's outcomes are the distinct throws with exact probabilities (counted by
  enumerating all ordered throws, and checked against the engine's dice by sampling);
* the scalar model follows :class:`ScorecardGame` / :class:`FarkleGame` driven with the same
  dice, step by step (cards, totals, dice, throw, seat, rewards; jokers, farkles, hot dice,
  bankruptcy, the bank minimum, the final round and truncation);
* the batched model follows the batched engines driven by :class:`ScriptedDice`, and agrees with
  the scalar model row by row;
* illegal actions raise ``ValueError`` naming the legal ones and change nothing.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dice_envs.engine import FarkleEngine, FarkleGame, ScorecardEngine, ScorecardGame, ScriptedDice
from dice_envs.engine import farkle_turn as turn
from dice_envs.engine.dice import RandomDice
from dice_envs.forward import (
    CHANCE,
    N_OUTCOMES,
    TERMINAL,
    FarkleBatch,
    FarkleState,
    ScorecardBatch,
    ScorecardState,
    forward_state,
    outcome_index,
    throw_outcomes,
)
from dice_envs.rules import FarkleRules, make_rules
from dice_envs.rules.scorecard import N_REROLL_ACTIONS

SCORECARD_GAMES = ("spiffel", "yahtzee", "dice_poker")
COUNTS = {1: 6, 2: 21, 3: 56, 4: 126, 5: 252, 6: 462}
TURN = turn.farkle_turn_tables()


# ---------------------------------------------------------------------------------------------
# chance outcomes


@pytest.mark.parametrize("k", sorted(COUNTS))
def test_outcomes_are_the_distinct_throws_with_exact_probabilities(k: int) -> None:
    faces, probs = throw_outcomes(k)
    assert faces.shape == (COUNTS[k], k) == (N_OUTCOMES[k], k)
    assert math.isclose(float(probs.sum()), 1.0, rel_tol=1e-12)
    assert (np.diff(faces, axis=1) >= 0).all()  # sorted multisets ...
    assert len({tuple(r) for r in faces.tolist()}) == len(faces)  # ... all distinct
    counted = Counter(tuple(sorted(t)) for t in itertools.product(range(1, 7), repeat=k))
    for row, p in zip(faces.tolist(), probs.tolist(), strict=True):
        assert p == pytest.approx(counted[tuple(row)] / 6**k, rel=1e-12)
        assert outcome_index(k, row[::-1]) == faces.tolist().index(row)


@pytest.mark.parametrize("k", sorted(COUNTS))
def test_outcome_probabilities_match_the_engines_dice(k: int) -> None:
    """20,000 throws of the batched engines' dice: chi-square and a per-outcome bound."""
    n = 20_000
    codes = RandomDice(12345).codes(np.arange(n), k)
    lookup = {tuple(r): i for i, r in enumerate(throw_outcomes(k)[0].tolist())}
    index = [lookup[TURN.faces[r]] for r in turn.throw(TURN, k, codes).tolist()]
    observed = np.bincount(index, minlength=COUNTS[k])
    expected = n * throw_outcomes(k)[1]
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    df = COUNTS[k] - 1
    assert chi2 < df + 5 * math.sqrt(2 * df), chi2
    assert (np.abs(observed - expected) <= 5 * np.sqrt(expected) + 1).all()


def test_every_chance_node_sums_to_one() -> None:
    state = ScorecardState.new(make_rules("spiffel"))
    after = state.apply_outcome((2, 2, 3, 5, 6))
    for a in after.legal_actions():
        node = after.afterstate(a)
        outcomes = node.chance_outcomes()
        assert len(outcomes) == (COUNTS[node.dice_to_throw] if node.dice_to_throw else 0)
        if outcomes:
            assert math.fsum(p for _, p in outcomes) == pytest.approx(1.0, abs=1e-12)
            assert node.current_player() == CHANCE
    farkle = FarkleState.new(FarkleRules(bank_minimum=0))
    assert len(farkle.chance_outcomes()) == 462
    s = farkle.apply_outcome((1, 5, 2, 3, 4, 6))  # a straight: set any scoring part aside
    for a in s.legal_actions():
        node = s.afterstate(a)
        assert math.fsum(p for _, p in node.chance_outcomes()) == pytest.approx(1.0, abs=1e-12)
        assert len(node.chance_outcomes()) == COUNTS[node.dice_to_throw]


# ---------------------------------------------------------------------------------------------
# the scalar model against the one-game engines


def _scorecard_same(state: ScorecardState, game: ScorecardGame) -> None:
    g = state.game
    assert (g._cards == game._cards).all()
    assert (g._bonuses == game._bonuses).all() and (g._paid == game._paid).all()
    assert (g._upper == game._upper).all() and g.totals() == game.totals()
    assert (g.dice, g.throw, g.current_player, g.round, g.done) == (
        game.dice,
        game.throw,
        game.current_player,
        game.round,
        game.done,
    )
    assert state.legal_actions() == game.legal_actions()
    assert not state.is_chance_node()
    assert state.returns() == [float(t) for t in game.totals()]


def _scorecard_faces(rng: random.Random, game: ScorecardGame, action: int) -> list[int]:
    """The dice the game throws after ``action``: often a five of a kind (jokers, bonuses)."""
    if action >= N_REROLL_ACTIONS:
        k, kept = 5, []
    else:
        k = bin(action).count("1")
        kept = [game.dice[i] for i in range(5) if not action >> i & 1]
    if rng.random() < 0.4 and len(set(kept)) <= 1:
        return [kept[0] if kept else rng.randint(1, 6)] * k
    return [rng.randint(1, 6) for _ in range(k)]


def _play_scorecard(name: str, num_players: int, seed: int) -> Counter[str]:
    """A whole game of the engine and the model with the same dice; what happened."""
    rng = random.Random(seed)
    game = ScorecardGame(make_rules(name), num_players=num_players, seed=seed)
    state = forward_state(game)
    assert isinstance(state, ScorecardState)
    _scorecard_same(state, game)
    seen: Counter[str] = Counter()
    while not game.done:
        legal = game.legal_actions()
        boxes = [a for a in legal if a >= N_REROLL_ACTIONS]
        a = rng.choice(boxes if boxes and rng.random() < 0.4 else legal)
        faces = _scorecard_faces(rng, game, a)
        before = len(game.history)
        game.dice_source.clear()
        game.dice_source.inject(*faces)
        rewards = game.apply(a)
        after = state.afterstate(a)
        got = after.rewards()
        if after.is_terminal():
            assert game.done and not after.chance_outcomes() and not after.legal_actions()
            assert after.current_player() == TERMINAL
            state = after
        else:
            assert after.is_chance_node() and after.dice_to_throw == len(faces)
            if a < N_REROLL_ACTIONS:
                assert after.kept == tuple(d for i, d in enumerate(state.game.dice) if not a >> i & 1)
            state = after.apply_outcome(faces)
            assert state.rewards() == [0] * num_players
        assert got == rewards
        _scorecard_same(state, game)
        if len(game.history) > before:
            event = game.history[-1]
            seen["joker"] += event.joker
            seen["bonus"] += event.five_kind_bonus > 0
            seen["upper"] += event.upper_bonus > 0
    assert state.is_terminal() and state.returns() == [float(t) for t in game.totals()]
    return seen


@pytest.mark.parametrize("name", SCORECARD_GAMES)
def test_scorecard_model_follows_the_game(name: str) -> None:
    seen: Counter[str] = Counter()
    for seed in range(4):
        seen += _play_scorecard(name, 1 + seed % 3, seed)
    assert seen["joker"] > 0 and seen["bonus"] > 0, seen  # five of a kind forced often enough


@settings(max_examples=12)
@given(name=st.sampled_from(SCORECARD_GAMES), players=st.integers(1, 3), seed=st.integers(0, 2**31))
def test_scorecard_model_follows_the_game_property(name: str, players: int, seed: int) -> None:
    _play_scorecard(name, players, seed)


def _farkle_same(state: FarkleState, game: FarkleGame) -> None:
    g = state.game
    assert (g.banked, g.turns, g.current_player, g.done, g.truncated) == (
        game.banked,
        game.turns,
        game.current_player,
        game.done,
        game.truncated,
    )
    assert (g.final_round_by, g.dice) == (game.final_round_by, game.dice)
    if not game.done:
        assert (g.turn_total, g.first_throw) == (game.turn_total, game.first_throw)
    assert state.legal_actions() == game.legal_actions()
    assert not state.is_chance_node()
    assert state.returns() == [float(b) for b in game.banked]


def _farkle_faces(rng: random.Random, k: int) -> tuple[int, ...]:
    """A throw of ``k`` dice: a farkle a quarter of the time, else uniform."""
    faces, _ = throw_outcomes(k)
    farkles = [tuple(r) for r in faces.tolist() if TURN.farkle[TURN.roll_index[tuple(r)]]]
    if farkles and rng.random() < 0.25:
        return rng.choice(farkles)
    return tuple(rng.randint(1, 6) for _ in range(k))


def _play_farkle(rules: FarkleRules, num_players: int, seed: int, steps: int = 400) -> Counter[str]:
    rng = random.Random(seed)
    game = FarkleGame(rules, num_players=num_players, seed=seed)
    state = FarkleState.from_game(game)
    _farkle_same(state, game)
    seen: Counter[str] = Counter()
    for _ in range(steps):
        if game.done:
            break
        legal = game.legal_actions()
        on = [a for a in legal if a < 64]
        a = rng.choice(on if on and rng.random() < 0.7 else legal)
        node = state.afterstate(a)
        rewards = node.rewards()
        if node.is_chance_node() and a < 64 and node.dice_to_throw == 6:
            seen["hot dice"] += 1
        thrown: list[int] = []
        while node.is_chance_node():
            faces = _farkle_faces(rng, node.dice_to_throw)
            thrown.extend(faces)
            first = node.game.first_throw
            node = node.apply_outcome(faces)
            rewards = [x + y for x, y in zip(rewards, node.rewards(), strict=True)]
            if node.is_chance_node() or (node.is_terminal() and TURN.farkle[node.game.throw_index]):
                seen["farkle"] += 1
                seen["bankrupt"] += first and min(node.rewards()) < 0
        game.dice_source.clear()
        game.dice_source.inject(*thrown)
        assert game.apply(a) == rewards
        assert game.dice_source.pending == 0
        state = node
        _farkle_same(state, game)
        seen["final round"] += game.final_round_by is not None
        seen["truncated"] += game.truncated
    return seen


def test_farkle_model_follows_the_game() -> None:
    seen: Counter[str] = Counter()
    configs = [
        (FarkleRules(), 2),
        (FarkleRules(target=1500, max_turns=40), 3),
        (FarkleRules(target=800, bank_minimum=0, bankruptcy=False), 1),
        (FarkleRules(target=100_000, max_turns=4, bank_minimum=300), 2),
    ]
    for seed, (rules, players) in enumerate(configs * 2):
        seen += _play_farkle(rules, players, seed)
    for what in ("farkle", "hot dice", "bankrupt", "final round", "truncated"):
        assert seen[what] > 0, (what, seen)


@settings(max_examples=10)
@given(
    seed=st.integers(0, 2**31),
    players=st.integers(1, 3),
    bank_minimum=st.sampled_from([0, 300, 350]),
    bankruptcy=st.booleans(),
)
def test_farkle_model_follows_the_game_property(
    seed: int, players: int, bank_minimum: int, bankruptcy: bool
) -> None:
    rules = FarkleRules(target=2000, bank_minimum=bank_minimum, bankruptcy=bankruptcy, max_turns=30)
    _play_farkle(rules, players, seed, steps=150)


def test_bank_minimum_is_the_engines() -> None:
    state = FarkleState.new(FarkleRules(bank_minimum=350)).apply_outcome((5, 2, 3, 4, 6, 6))
    assert state.game.turn_total == 0
    bank = [a for a in state.legal_actions() if a >= 64]
    assert not bank  # 50 points cannot be banked under a minimum of 350
    with pytest.raises(ValueError, match="legal actions"):
        state.afterstate(FarkleGame.action([3], True))  # the 5, then bank
    cheap = FarkleState.new(FarkleRules(bank_minimum=0)).apply_outcome((5, 2, 3, 4, 6, 6))
    assert cheap.legal_actions() == [8, 72]  # the 5 (sorted die 3), then throw on or bank


def test_terminal_state_has_no_moves() -> None:
    state = ScorecardState.new(make_rules("dice_poker"))
    while not state.is_terminal():
        state = (
            state.apply_outcome((1, 2, 3, 4, 6))
            if state.is_chance_node()
            else state.afterstate(max(state.legal_actions()))
        )
    assert state.chance_outcomes() == [] and state.legal_actions() == []
    assert state.current_player() == TERMINAL and state.children() == []
    with pytest.raises(ValueError, match="over"):
        state.afterstate(N_REROLL_ACTIONS)


# ---------------------------------------------------------------------------------------------
# illegal actions


def test_illegal_actions_raise_and_change_nothing() -> None:
    game = ScorecardGame(make_rules("yahtzee"), seed=3)
    state = ScorecardState.from_game(game)
    snapshot = (state.game._cards.copy(), state.game.dice, state.game.throw, state.game.totals())
    for bad in (0, 999, -1, "x", True, 1.0):
        with pytest.raises(ValueError, match=r"legal actions: \[") as err:
            state.afterstate(bad)  # type: ignore[arg-type]
        assert str(state.legal_actions()) in str(err.value)
        with pytest.raises(ValueError, match="legal actions"):
            state.apply_action(bad)  # type: ignore[arg-type]
    after = (state.game._cards, state.game.dice, state.game.throw, state.game.totals())
    assert (after[0] == snapshot[0]).all() and after[1:] == snapshot[1:]
    assert not state.is_chance_node() and state.legal_actions() == game.legal_actions()
    node = state.afterstate(31)
    with pytest.raises(ValueError, match="chance node"):
        node.afterstate(N_REROLL_ACTIONS)
    with pytest.raises(ValueError, match="not a throw of 5 dice"):
        node.apply_outcome((1, 2, 3))
    with pytest.raises(ValueError, match=r"0\.\.251"):
        node.apply_action(252)
    assert node.is_chance_node() and node.dice_to_throw == 5
    with pytest.raises(ValueError, match="not a chance node"):
        state.apply_outcome((1, 2, 3, 4, 5))

    farkle = FarkleState.new(FarkleRules()).apply_outcome((2, 2, 3, 3, 4, 6))
    assert farkle.is_chance_node()  # a farkle on the opening throw: the next turn's dice pending
    farkle = farkle.apply_outcome((1, 2, 3, 4, 6, 6))
    with pytest.raises(ValueError, match=r"legal actions: \[1\]"):
        farkle.afterstate(FarkleGame.action([1], False))
    assert farkle.legal_actions() == [1] and farkle.game.turn_total == 0

    batch = ScorecardBatch.from_states([state, state])
    before = batch.copy()
    with pytest.raises(ValueError, match=r"row 1: illegal action 0 .* legal actions: \["):
        batch.afterstates([31, 0])
    for name in batch._fields:
        assert (getattr(batch, name) == getattr(before, name)).all()
    with pytest.raises(ValueError, match="not chance nodes"):
        batch.apply_outcomes([0, 0])
    fb = FarkleBatch.from_states([farkle])
    with pytest.raises(ValueError, match=r"legal actions: \[1\]"):
        fb.afterstates([65])


# ---------------------------------------------------------------------------------------------
# the batched model against the batched engines, and against the scalar model


def _same_rows(batch: ScorecardBatch | FarkleBatch, engine: ScorecardEngine | FarkleEngine) -> None:
    names = batch._fields[: 10 if isinstance(batch, ScorecardBatch) else 9]
    for name in names:
        np.testing.assert_array_equal(getattr(batch, name), getattr(engine, name), err_msg=name)
    assert not batch.is_chance_node().any()
    np.testing.assert_array_equal(batch.action_masks(), engine.action_masks())


def _same_as_scalar(batch: ScorecardBatch | FarkleBatch, states: list) -> None:
    other = type(batch).from_states(states)
    for name in batch._fields:
        np.testing.assert_array_equal(getattr(batch, name), getattr(other, name), err_msg=name)
    for i in range(0, len(states), 7):
        row = batch.state(i)
        assert row.legal_actions() == states[i].legal_actions()
        assert row.returns() == states[i].returns() and row.dice_to_throw == states[i].dice_to_throw


def _drive(batch, engine, states, faces: np.ndarray, rng: np.random.Generator, steps: int):
    """Step the engine, the batched model and the scalar states with the same actions and dice."""
    n = engine.num_games
    used = engine.dice.pos.copy()  # the opening throws are made
    for _ in range(steps):
        live = np.flatnonzero(~engine.done)
        if not live.size:
            break
        masks = engine.action_masks(live)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        rewards = engine.step(actions, live)
        values = np.zeros(n, dtype=np.int64)
        values[live] = actions
        total = np.zeros_like(batch.last_rewards)
        batch = batch.apply_actions(values)
        total += batch.last_rewards
        for i in live.tolist():
            states[i].apply_action(int(values[i]))
        _same_as_scalar(batch, states)
        while batch.is_chance_node().any():  # the same faces as the engine, in order
            ch = np.flatnonzero(batch.is_chance_node())
            k = batch.to_throw[ch]
            values[:] = 0
            for i, kk in zip(ch.tolist(), k.tolist(), strict=True):
                values[i] = outcome_index(kk, faces[i, used[i] : used[i] + kk].tolist())
                used[i] += kk
                states[i].apply_action(int(values[i]))
            batch = batch.put(ch, batch.take(ch).apply_outcomes(values[ch]))  # decisions wait
            total[ch] += batch.last_rewards[ch]
            _same_as_scalar(batch, states)
        np.testing.assert_array_equal(total[live], rewards)
        np.testing.assert_array_equal(used, engine.dice.pos)
        _same_rows(batch, engine)
    return batch


@pytest.mark.parametrize("name", SCORECARD_GAMES)
def test_scorecard_batch_follows_the_engine(name: str) -> None:
    n, rng = 24, np.random.default_rng(5)
    faces = rng.integers(1, 7, size=(n, 1200))
    faces[::3, :400] = faces[::3, :1][:, [0]]  # every third game: five of a kind again and again
    engine = ScorecardEngine(make_rules(name), n, num_players=2, dice=ScriptedDice(faces))
    batch = ScorecardBatch.from_engine(engine)
    states = [ScorecardState.from_engine(engine, i) for i in range(n)]
    _same_rows(batch, engine)
    _drive(batch, engine, states, faces, rng, steps=200)
    assert engine.done.all() and (engine.bonuses > 0).any()


def test_farkle_batch_follows_the_engine() -> None:
    n, rng = 24, np.random.default_rng(9)
    faces = rng.integers(1, 7, size=(n, 4000))
    rules = FarkleRules(target=1000, max_turns=25, bank_minimum=300)
    engine = FarkleEngine(rules, n, num_players=2, dice=ScriptedDice(faces))
    batch = FarkleBatch.from_engine(engine)
    states = [FarkleState.from_engine(engine, i) for i in range(n)]
    _same_rows(batch, engine)
    _drive(batch, engine, states, faces, rng, steps=150)
    assert engine.done.any() and (engine.final_round_by >= 0).any()


def test_batch_children_expand_every_outcome() -> None:
    state = ScorecardState.new(make_rules("spiffel")).apply_outcome((1, 3, 3, 5, 6))
    actions = state.legal_actions()
    batch = ScorecardBatch.from_states([state] * len(actions)).afterstates(actions)
    children, parent, probs = batch.children()
    assert len(children) == int(N_OUTCOMES[batch.to_throw].sum())
    assert np.bincount(parent, weights=probs) == pytest.approx(np.ones(len(actions)), abs=1e-12)
    j = int(np.flatnonzero(parent == 3)[10])  # one child, against the scalar model's
    scalar_children = state.afterstate(actions[3]).children()
    k = j - int(np.flatnonzero(parent == 3)[0])
    assert children.state(j).game.dice == scalar_children[k][0].game.dice
    assert probs[j] == pytest.approx(scalar_children[k][1], rel=1e-12)
    farkle = FarkleBatch.from_states([FarkleState.new(FarkleRules())] * 2)
    kids, parent, probs = farkle.children()
    assert len(kids) == 2 * 462 and math.isclose(float(probs.sum()), 2.0)
    # a farkle on the opening throw is again a chance node; the rest are decisions
    assert kids.is_chance_node().sum() == 2 * sum(
        TURN.farkle[TURN.roll_index[tuple(r)]] for r in throw_outcomes(6)[0].tolist()
    )


@pytest.mark.parametrize("name", SCORECARD_GAMES)
def test_expectimax_matches_the_keep_tables(name: str) -> None:
    """A one-throw expectimax on the model equals the same sum over ``keep_outcomes``."""
    from dice_envs.forward import keep_outcomes
    from dice_envs.tables import score_tables, scorecard_tables

    rules = make_rules(name)
    tables, best = scorecard_tables(), score_tables(type(rules)).normal.max(axis=1)
    rng = random.Random(name)
    for _ in range(2):
        faces = tuple(sorted(rng.randint(1, 6) for _ in range(5)))
        s = ScorecardState.new(rules).apply_outcome(faces)
        holds = [a for a in s.legal_actions() if a < N_REROLL_ACTIONS]
        batch = ScorecardBatch.from_states([s] * len(holds)).afterstates(holds)
        kids, parent, probs = batch.children()
        leaf = best[kids.roll]  # a fresh card: no joker, every box open
        model = np.bincount(parent, weights=probs * leaf, minlength=len(holds))
        r = tables.roll_index[faces]
        exact = [keep_outcomes()[tables.reroll_keep[r, a]] @ best for a in holds]
        np.testing.assert_allclose(model, exact, rtol=1e-12)
        one = s.afterstate(holds[-1])
        scalar = sum(p * max(c.game.box_points(b) for b in c.game.legal_boxes()) for c, p in one.children())
        assert scalar == pytest.approx(exact[-1], rel=1e-12)
