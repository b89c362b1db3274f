"""Differential tests of the one scorecard engine: the scalar game (a batch of one), the vector
engine and the solver's transitions, all on the same dice and the same rule functions.

* on scripted dice, the scalar :class:`ScorecardGame` and a one-game :class:`ScorecardEngine`
  must agree at every step on the mask, rewards, cards, bonuses, totals and observations;
* the solver's :meth:`TurnSolver.box_values_one`, evaluated on a random value table ``V``, must be
  ``-inf`` exactly where the game forbids a box and otherwise equal the points the game pays plus
  ``V`` of the state the game moves to (so the solver's points, bonuses, upper totals, five-of-a-kind
  states and forced order are the game's);
* the rule functions of :mod:`dice_envs.engine.scorecard_flow` give on a batch what they give on
  each element alone.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.solver.scorecard import TurnSolver, turn_solver
from dice_envs.encoding import encode
from dice_envs.engine import ScorecardGame
from dice_envs.engine.scorecard_flow import advance_turn, scorecard_flow
from dice_envs.rules import make_rules
from dice_envs.rules.scorecard import N_REROLL_ACTIONS, UPPER_FACES
from dice_envs.vector import ScorecardEngine, ScriptedDice

RULESETS = [
    ("spiffel", {}),
    ("spiffel", {"spiffel_bonus_limit": 2, "upper_bonus_threshold": 64}),
    ("dice_poker", {}),
    ("dice_poker", {"poker_bonus_limit": 1}),
    ("yahtzee", {}),
    ("yahtzee", {"joker_rule": "verhoeff"}),
    ("yahtzee", {"joker": False}),
]


class FacesRng:
    """A numpy Generator stand-in for ``DiceSource``: ``integers`` returns scripted faces."""

    def __init__(self, faces: np.ndarray) -> None:
        self.faces = [int(f) for f in faces]
        self.pos = 0

    def integers(self, low: int, high: int, size: int) -> np.ndarray:
        out = self.faces[self.pos : self.pos + size]
        assert (low, high) == (1, 7) and len(out) == size, "scripted faces ran out"
        self.pos += size
        return np.array(out)


def pair(rules, faces: np.ndarray, num_players: int = 1) -> tuple[ScorecardGame, ScorecardEngine]:
    """A scalar game and a one-game engine that throw the same ``faces``."""
    game = ScorecardGame(rules, num_players=num_players, rng=FacesRng(faces))
    eng = ScorecardEngine(rules, 1, num_players, dice=ScriptedDice(faces[None, :]))
    return game, eng


def assert_same(game: ScorecardGame, eng: ScorecardEngine) -> None:
    """Scalar and vector state agree: dice, cards, bonuses, totals, mask and every seat's view."""
    assert eng.done[0] == game.done and eng.current[0] == game.current_player and eng.round[0] == game.round
    if not game.done:
        assert tuple(eng.dice_faces()[0]) == game.dice and eng.throw[0] == game.throw
    for p, card in enumerate(game.cards):
        assert [None if v < 0 else int(v) for v in eng.cards[0, p]] == list(card.boxes)
        assert eng.bonuses[0, p] == card.five_kind_bonuses and eng.upper_paid[0, p] == card.upper_bonus_paid
        assert eng.upper[0, p] == game.upper_total(p) and eng.totals[0, p] == game.total(p)
    np.testing.assert_array_equal(eng.action_masks()[0], game.action_mask().astype(bool))
    assert game.legal_actions() == np.flatnonzero(game.action_mask()).tolist()
    for seat in range(game.num_players):
        assert eng.observe(seat)[0].tobytes() == encode(game, seat).tobytes()


def solver_state(solver: TurnSolver, game: ScorecardGame) -> tuple[int, int, int]:
    card = game.cards[0]
    mask = sum(1 << i for i, v in enumerate(card.boxes) if v is not None)
    z = solver.z_of(card.boxes[solver.five], card.five_kind_bonuses)
    return mask, min(game.upper_total(0), solver.T), z


def assert_solver_transitions(solver: TurnSolver, V: np.ndarray, game: ScorecardGame) -> None:
    """The solver's value of every box for the current throw is the game's transition."""
    values = solver.box_values_one(V, *solver_state(solver, game))[:, game.roll]
    legal = set(game.legal_boxes())
    for b in range(solver.k):
        if b not in legal:
            assert values[b] == -np.inf, f"box {game.categories[b]} is not legal"
            continue
        after = game.clone()
        gained = after.apply(N_REROLL_ACTIONS + b)[0]
        expected = gained + V[solver_state(solver, after)]
        assert values[b] == pytest.approx(expected, abs=1e-9), game.categories[b]


_V: dict = {}


def random_values(rules) -> np.ndarray:
    """A random value table of the solver's shape: any table exposes every transition."""
    if rules not in _V:
        s = turn_solver(rules)
        _V[rules] = np.random.default_rng(0).random((1 << s.k, s.U, s.Z)) * 100
    return _V[rules]


def choose(game: ScorecardGame, rng: np.random.Generator) -> int:
    """Chase the most common face, fill its upper box with three or more, else a random legal box,
    so bonuses, jokers and forced orders all happen."""
    legal = np.array(game.legal_actions())
    boxes = legal[legal >= N_REROLL_ACTIONS]
    face = max(range(1, 7), key=game.dice.count)
    chase = sum(1 << i for i, f in enumerate(game.dice) if f != face)
    if chase in legal and rng.random() < 0.8:
        return chase
    name = next(b for b, f in UPPER_FACES.items() if f == face)
    upper = N_REROLL_ACTIONS + game.categories.index(name)
    if upper in boxes and game.dice.count(face) >= 3 and rng.random() < 0.8:
        return upper
    return int(rng.choice(boxes if boxes.size and rng.random() < 0.7 else legal))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ruleset=st.sampled_from(RULESETS), seed=st.integers(0, 2**31), players=st.sampled_from([1, 1, 2]))
def test_scalar_vector_and_solver_agree_on_the_same_dice(ruleset, seed, players):
    rules = make_rules(ruleset[0], **ruleset[1])
    rng = np.random.default_rng(seed)
    # lopsided dice (many five-of-a-kinds, jokers) or near-fair ones (upper bonuses)
    probs = rng.dirichlet(np.full(6, 0.4 if seed % 2 else 20.0))
    faces = rng.choice(6, size=60 * rules.num_boxes * players, p=probs) + 1
    game, eng = pair(rules, faces, players)
    solver, V = turn_solver(rules), random_values(rules)
    while not game.done:
        assert_same(game, eng)
        if players == 1:
            assert_solver_transitions(solver, V, game)
        action = choose(game, rng)
        assert eng.step(np.array([action]))[0].tolist() == game.apply(action)
    assert_same(game, eng)


@settings(max_examples=14, deadline=None)
@given(ruleset=st.sampled_from(RULESETS), seed=st.integers(0, 2**31))
def test_the_solver_values_a_batch_of_states_as_each_state_alone(ruleset, seed):
    """``box_values_of`` on a batch (the optimal agent's and ``solve``'s path) gives each state
    bit for bit what it gives that state alone (``box_values_one``, checked against the game
    above), ``-inf`` on its filled boxes; half the states have the five-of-a-kind box filled."""
    rules = make_rules(ruleset[0], **ruleset[1])
    solver, V = turn_solver(rules), random_values(rules)
    rng = np.random.default_rng(seed)
    full = (1 << solver.k) - 1
    masks = [int(m) | (1 << solver.five if rng.random() < 0.5 else 0) for m in rng.integers(0, full, 40)]
    states = [(m, int(rng.choice(solver.ucols(m))), int(rng.choice(solver.zcols(m)))) for m in masks]
    states = [state for state in states if state[0] != full]
    batch = solver.box_values_of(V, np.array(states))
    assert batch.shape == (len(states), solver.k, 252)
    for (mask, u, z), got in zip(states, batch, strict=True):
        # exact: on one machine a state's values must not depend on its neighbours in the batch
        assert np.array_equal(got, solver.box_values_one(V, mask, u, z)), (mask, u, z)
        filled = [b for b in range(solver.k) if mask >> b & 1]
        assert np.isneginf(got[filled]).all() and np.isfinite(np.delete(got, filled, axis=0)).any()


def mirror(game: ScorecardGame, faces: np.ndarray) -> ScorecardEngine:
    """A one-game engine in the state of ``game`` (set by hand), throwing ``faces`` from now on."""
    eng = ScorecardEngine(game.rules, 1, game.num_players, dice=ScriptedDice(faces[None, :]))
    for p, card in enumerate(game.cards):
        eng.cards[0, p] = [-1 if v is None else v for v in card.boxes]
        eng.upper[0, p], eng.totals[0, p] = game.upper_total(p), game.total(p)
        eng.bonuses[0, p], eng.upper_paid[0, p] = card.five_kind_bonuses, card.upper_bonus_paid
    eng.current[0], eng.round[0], eng.throw[0] = game.current_player, game.round, game.throw
    eng.roll[0] = game.roll
    return eng


def staged(game_name: str, dice: tuple[int, ...], filled: dict[str, int], bonuses: int = 0, **params):
    """A solitaire game of ``game_name`` on its last throw of ``dice`` with boxes ``filled``,
    its engine mirror and the solver check of every box."""
    rules = make_rules(game_name, **params)
    faces = np.full(40, 2)
    game = ScorecardGame(rules, rng=FacesRng(faces))
    card = game.cards[0]
    for name, points in filled.items():
        card.boxes[rules.categories.index(name)] = points
    card.five_kind_bonuses = bonuses
    card.upper_bonus_paid = game.upper_total(0) >= rules.upper_bonus_threshold
    game.dice, game.throw, game.round = dice, rules.num_throws, len(filled)
    eng = mirror(game, faces)
    assert_same(game, eng)
    assert_solver_transitions(turn_solver(rules), random_values(rules), game)
    return game, eng


def enter(game: ScorecardGame, eng: ScorecardEngine, box: str) -> int:
    """Enter ``box`` in both; they must pay the same and end in the same state."""
    a = game.box_action(box)
    got = eng.step(np.array([a]))[0].tolist()
    assert got == game.apply(a)
    assert_same(game, eng)
    return got[0]


def test_dice_poker_forced_joker_order():
    rules = make_rules("dice_poker")
    game, _ = staged("dice_poker", (6,) * 5, {"poker": 50})
    assert game.joker_status() == (True, True)
    assert game.legal_boxes() == [rules.categories.index("sixes")]  # the face's upper box first
    game, eng = staged("dice_poker", (6,) * 5, {"poker": 50, "sixes": 24})
    lower = [i for i, b in enumerate(rules.categories) if b not in UPPER_FACES and b != "poker"]
    assert game.legal_boxes() == lower  # then any open right-side box, at joker points
    assert enter(game, eng, "full_house") == 25 + 100
    right = {b: 0 for b in rules.categories if b not in UPPER_FACES}
    game, eng = staged("dice_poker", (6,) * 5, {**right, "poker": 50, "sixes": 24})
    assert game.legal_boxes() == [0, 1, 2, 3, 4]  # else 0 in an open upper box
    assert enter(game, eng, "twos") == 0 + 100


def test_yahtzee_joker_with_a_zero_in_the_yahtzee_box():
    game, eng = staged("yahtzee", (3,) * 5, {"yahtzee": 0, "threes": 9})
    assert game.joker_status() == (False, True)  # official: the joker without a bonus
    assert enter(game, eng, "large_straight") == 40
    game, _ = staged("yahtzee", (3,) * 5, {"yahtzee": 0}, joker_rule="verhoeff")
    assert game.joker_status() == (False, False)  # Verhoeff: only once the threes are filled
    game, eng = staged("yahtzee", (3,) * 5, {"yahtzee": 0, "threes": 9}, joker_rule="verhoeff")
    assert game.joker_status() == (False, True) and enter(game, eng, "small_straight") == 30


def test_spiffel_bonus_limit_and_free_joker():
    game, eng = staged("spiffel", (4,) * 5, {"spiffel": 50})
    assert game.joker_status() == (True, True) and len(game.legal_boxes()) == 12  # free order
    assert enter(game, eng, "full_house") == 25 + 100
    game, eng = staged("spiffel", (4,) * 5, {"spiffel": 50}, bonuses=1)  # the limit of 1 is used up
    assert game.joker_status() == (False, False)
    assert enter(game, eng, "full_house") == 0
    game, eng = staged("spiffel", (4,) * 5, {"spiffel": 50}, bonuses=1, spiffel_bonus_limit=2)
    assert game.joker_status() == (True, True) and enter(game, eng, "fours") == 20 + 100


@pytest.mark.parametrize(("ones", "spiffel_bonus", "poker_bonus"), [(4, 35, 0), (5, 35, 35)])
def test_upper_bonus_threshold_edge(ones, spiffel_bonus, poker_bonus):
    """Upper totals of 63 and 64: Spiffel pays at 63 or more, Dice Poker only above 63."""
    upper = {"ones": ones, "twos": 6, "threes": 9, "fours": 12, "fives": 20}  # 51 or 52
    for game_name, bonus in (("spiffel", spiffel_bonus), ("dice_poker", poker_bonus)):
        game, eng = staged(game_name, (1, 2, 3, 6, 6), upper)
        assert enter(game, eng, "sixes") == 12 + bonus
        assert game.upper_total(0) == 51 + ones - 4 + 12 and game.history[-1].upper_bonus == bonus


# ---------------------------------------------------------------------- rule functions on batches
@settings(max_examples=30, deadline=None)
@given(ruleset=st.sampled_from(RULESETS), seed=st.integers(0, 2**31))
def test_rule_functions_on_a_batch_are_the_elementwise_ones(ruleset, seed):
    rules = make_rules(ruleset[0], **ruleset[1])
    f = scorecard_flow(rules)
    rng = np.random.default_rng(seed)
    n, k = 16, rules.num_boxes
    five_kind_rolls = np.flatnonzero(f.five_kind)
    roll = np.where(rng.random(n) < 0.5, rng.choice(five_kind_rolls, n), rng.integers(0, f.rows, n))
    cards = np.where(rng.random((n, k)) < 0.5, rng.integers(0, 30, (n, k)), -1)
    cards[:, f.five] = rng.choice([-1, 0, 50], n)
    bonuses, throw = rng.integers(0, 3, n), rng.integers(1, f.num_throws + 1, n)
    paid, upper = rng.random(n) < 0.3, rng.integers(40, 90, n)
    due, joker = f.joker_status(roll, cards[:, f.five], bonuses, cards)
    boxes = f.legal_boxes(cards < 0, roll, joker)
    mask = f.action_mask(roll, throw, boxes)
    entry = f.enter(roll, np.argmax(boxes | (np.arange(k) == 0), axis=1), joker, due, upper, paid)
    nxt, rnd, over = advance_turn(np.arange(n) % 3, np.arange(n) % k, 3, k)
    for i in range(n):
        r, c = int(roll[i]), cards[i]
        d1, j1 = f.joker_status(r, int(c[f.five]), int(bonuses[i]), c)
        assert (bool(d1), bool(j1)) == (bool(due[i]), bool(joker[i]))
        np.testing.assert_array_equal(f.legal_boxes(c < 0, r, bool(j1)), boxes[i])
        np.testing.assert_array_equal(f.action_mask(r, int(throw[i]), boxes[i]), mask[i])
        b = int(np.argmax(boxes[i] | (np.arange(k) == 0)))
        one = f.enter(r, b, bool(j1), bool(d1), int(upper[i]), bool(paid[i]))
        assert [int(x) for x in one] == [int(x[i]) for x in entry]
        assert advance_turn(i % 3, i % k, 3, k) == (nxt[i], rnd[i], over[i])
    assert not f.action_mask(f.no_roll, 0, np.zeros(k, dtype=bool)).any()  # a finished game
