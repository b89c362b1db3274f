"""Exact N-player Farkle (:mod:`agents.solver.farkle_field`): the equilibrium and best responses
agree with the two-player solver, the three-player equilibrium with play, bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.players.field_optimal import TARGET_LIMITS, equilibrium_agent
from agents.players.win_optimal import WinOptimalAgent
from agents.solver import farkle_field
from agents.solver.farkle_field import best_response, equilibrium, exploitability
from agents.solver.farkle_win import solve_farkle_win
from dice_envs.encoding import encode
from dice_envs.engine import new_game
from dice_envs.rules import ConfigError, FarkleRules

pytest.importorskip("numba")

SMALL = FarkleRules(target=300)


@pytest.fixture(scope="module")
def three() -> object:
    return equilibrium(SMALL, 3, cap=0)


def test_two_player_equilibrium_is_the_two_player_solver() -> None:
    two = solve_farkle_win(SMALL, cap=0, use_cache=False)
    eq = equilibrium(SMALL, 2, cap=0)
    assert np.abs(eq.values[0, ..., 0] - two.S0).max() < 1e-9
    assert np.abs(eq.values[1, ..., 1] - two.S1).max() < 1e-9
    assert eq.win_probability(0) == pytest.approx(two.win_probability(), abs=1e-9)


def test_best_response_to_win_optimal_is_win_optimal_s_table() -> None:
    two = solve_farkle_win(SMALL, cap=0, use_cache=False)
    br = best_response(SMALL, [WinOptimalAgent(SMALL, 2, cap=0, solution=two)], seat=1, cap=0)
    assert np.abs(br.values[1, ..., 0] - two.S1).max() < 1e-9
    assert br.log[-1]["residual"] <= 1e-12


def test_a_best_response_beats_what_the_equilibrium_leaves_a_weak_field() -> None:
    br = best_response(SMALL, [agents.load("greedy", SMALL, 2)], seat=1, cap=0)
    eq = equilibrium(SMALL, 2, cap=0)
    assert br.win_probability() > eq.win_probability(1) + 0.01


def test_the_final_round_skips_only_what_cannot_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """A best response's final round leaves out the positions its seat has lost already and the
    ends the field's agents never reach: the values are those of the full computation, bit for bit."""
    cheap = FarkleRules(target=50, bank_minimum=50)
    greedy = agents.load("greedy", cheap, 3)

    def model() -> farkle_field._Model:  # a fresh one each time: final-round values are memoised
        return farkle_field._Model(cheap, 3, 0, [None, greedy, greedy], 1, [0, -1, -1])

    totals = np.array([[s0, 0, 0] for s0 in range(1, 12)])  # seat 0 has reached the target
    fast = model().final_values(1, totals)
    lost = model().lost(2, np.array([[3, 5, 0], [5, 3, 0], [5, 5, 0]]))
    assert lost.tolist() == [True, False, False]
    monkeypatch.setattr(
        farkle_field, "_support", lambda dist: np.ones((len(dist[0]), dist[0].shape[1] + 2), bool)
    )
    monkeypatch.setattr(farkle_field._Model, "lost", lambda self, m, totals: np.zeros(len(totals), bool))
    full = model().final_values(1, totals)
    assert np.array_equal(fast, full) and 0.0 < full.min() < full.max() < 1.0


def test_three_player_values_are_chances_that_sum_to_one(three: object) -> None:
    v = three.values  # type: ignore[attr-defined]
    assert v.shape == (3, 6, 6, 6, 3)
    assert np.allclose(v.sum(axis=-1), 1.0, atol=1e-9)
    assert v.min() >= -1e-12 and v.max() <= 1 + 1e-12
    assert three.log[-1]["residual"] <= 1e-12  # type: ignore[attr-defined]


def test_three_win_optimal_seats_win_as_the_equilibrium_says(three: object) -> None:
    bot = agents.load("win-optimal", SMALL, 3, solution=three)  # the solve above, shared
    games, wins = 1500, np.zeros(3)
    for seed in range(games):
        g = new_game(SMALL, 3, seed=seed)
        while not g.done:
            p = g.current_player
            g.apply(bot.act(encode(g, p), g.action_mask()))
        top = np.array(g.banked) == max(g.banked)
        wins += top / top.sum()
    expected = np.array([three.win_probability(s) for s in range(3)])  # type: ignore[attr-defined]
    se = np.sqrt(expected * (1 - expected) / games)
    assert (np.abs(wins / games - expected) < 4 * se).all(), (wins / games, expected)


def test_exploitability_sums_the_seats_best_responses() -> None:
    cheap = FarkleRules(target=300, bank_minimum=50)  # short turns: a fourth of SMALL's solve
    ex = exploitability(cheap, 2, lambda seat: agents.load("greedy", cheap, 2), cap=0)
    by_seat = [best_response(cheap, [agents.load("greedy", cheap, 2)], seat, cap=0) for seat in (0, 1)]
    assert ex.best_response == pytest.approx([br.win_probability() for br in by_seat], abs=1e-12)
    assert ex.nash_conv == pytest.approx(sum(ex.best_response) - 1.0)
    assert ex.exploitability > 0.01


def test_bad_input_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="seat must be 0 to 1"):
        best_response(SMALL, [agents.load("greedy", SMALL, 2)], seat=2)
    with pytest.raises(ConfigError, match="cap must be"):
        equilibrium(SMALL, 2, cap=25)
    with pytest.raises(ConfigError, match="players must be 2 to 8"):
        equilibrium(SMALL, 1)
    with pytest.raises(
        ConfigError, match=r"best-response is solved at reduced targets only; got 3 seats with target 10000"
    ):
        agents.load("best-response:heuristic", FarkleRules(), 3)
    with pytest.raises(ConfigError, match="equilibrium is solved at reduced targets only"):
        equilibrium_agent(SMALL, 4)
    with pytest.raises(ConfigError, match="not a person"):
        agents.load("best-response:human", SMALL, 2)
    with pytest.raises(ConfigError, match="unknown agent spec 'nope'"):
        agents.load("best-response:nope", SMALL, 2)
    assert TARGET_LIMITS["best-response"][2] >= SMALL.target
    assert (
        agents.load("win-optimal", FarkleRules(), 3)._field is None
    )  # the approximation: too large to solve


def test_a_solved_agent_decides_a_batch_as_row_by_row(three: object) -> None:
    from dice_envs.engine.farkle import FarkleEngine

    batch, rows = equilibrium_agent(SMALL, 3, solution=three), equilibrium_agent(SMALL, 3, solution=three)
    eng, seen = FarkleEngine(SMALL, 64, 3, seed=3), 0
    while not eng.done.all():
        live = np.flatnonzero(~eng.done)
        obs, masks = eng.observe(eng.current[live], live), eng.action_masks()[live]
        chosen = batch.act_batch(obs, masks)
        assert chosen.tolist() == [rows.act(o, m) for o, m in zip(obs, masks, strict=True)]
        actions = np.zeros(64, dtype=np.int64)
        actions[live] = chosen
        eng.step(actions)
        seen += len(live)
    assert seen > 500


class _Mixes:
    """Plays ``agent``'s choice with probability 1, as a mixing agent (``action_probabilities``)."""

    def __init__(self, agent: object) -> None:
        self.agent = agent

    def action_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        chosen = self.agent.act_batch(observations, masks)
        return np.eye(masks.shape[1])[chosen]


def test_a_mixing_agent_is_read_as_its_mixed_strategy() -> None:
    rules = FarkleRules(target=300, bank_minimum=50)
    greedy = [agents.load("greedy", rules, 2)]
    plain = best_response(rules, greedy, seat=1)
    mixed = best_response(rules, [_Mixes(a) for a in greedy], seat=1)
    assert np.abs(plain.values - mixed.values).max() < 1e-12
    # random, read as uniform over the legal actions: every turn of it ends somewhere, exactly once
    model = farkle_field._Model(rules, 2, 0, [None, agents.load("random", rules, 2)], 1, [0, -1])
    totals = np.array([[0, 0], [2, 4], [5, 1]])
    tops = model.tops(totals, 1)
    pb, pf, pbust = model.field_turns(1, totals, tops, int(tops.max()) + model.pad + 1)
    assert np.allclose(pb.sum(axis=1) + pf + pbust, 1.0, atol=1e-12)
    assert (pf > 0).all() and (pbust > 0).all()


class _ReadsAll:
    """``agent``'s play, declared to read every total (the solver then reads it per position)."""

    totals_read = "all"

    def __init__(self, agent: object) -> None:
        self.agent = agent

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.agent.act_batch(observations, masks)


def test_an_agent_that_reads_its_own_and_the_highest_total_is_solved_as_if_read_in_full() -> None:
    cheap = FarkleRules(target=50, bank_minimum=50)
    heuristic = agents.load("heuristic", cheap, 3, seed=0)
    assert heuristic.totals_read == "own-and-highest"
    totals = np.array([[s0, 0, 0] for s0 in range(1, 12)])  # seat 0 has reached the target
    keyed = farkle_field._Model(cheap, 3, 0, [None, heuristic, heuristic], 1, [0, -1, -1])
    full = farkle_field._Model(cheap, 3, 0, [None, *[_ReadsAll(heuristic)] * 2], 1, [0, -1, -1])
    values = keyed.final_values(1, totals)
    assert np.abs(values - full.final_values(1, totals)).max() < 1e-12
    assert 0.0 < values.min() < values.max() < 1.0
    # the last seat's turns were read once per pair of totals, not once per position
    assert 0 < len(keyed._dists[2]) < len(keyed._final[2]) / 10 and not full._dists


BUILT_INS = ["greedy", "threshold:400", "heuristic", "max-expected", "random", "win-optimal"]


@pytest.mark.parametrize("spec", BUILT_INS)
def test_built_in_agents_read_no_total_but_their_own_and_the_highest(spec: str) -> None:
    from dice_envs.engine import farkle_turn as turn
    from dice_envs.engine.farkle import FarkleEngine
    from dice_envs.forward import farkle_throws

    rules, n, seats = FarkleRules(target=1500), 4000, 4
    agent = agents.load(spec, rules, seats, seed=0)
    assert agent.totals_read == "own-and-highest"
    rng = np.random.default_rng(7)
    throws = np.concatenate([farkle_throws(k)[0] for k in range(1, 7)])
    throws = throws[~turn.is_farkle(turn.farkle_turn_tables(), throws)]
    eng = FarkleEngine(rules, n, seats, seed=0)
    eng.current[:], eng.roll[:] = 2, rng.choice(throws, n)
    eng.turn_total[:] = rng.integers(0, 12, n) * 50
    eng.first_throw[:] = eng.turn_total == 0
    eng.banked[:] = rng.integers(0, 40, (n, seats)) * 50
    masks = eng.action_masks()

    def play() -> np.ndarray:
        obs = eng.observe(2)
        if spec == "random":
            return agent.action_probabilities(obs, masks)
        return agent.act_batch(obs, masks)

    before = play()
    others = eng.banked[:, [0, 1, 3]]
    top = others.max(axis=1, keepdims=True)
    # move the highest other total to another seat, and lower the rest anywhere below it
    shuffled = np.where(rng.random(others.shape) < 0.5, rng.integers(0, 40, others.shape) * 50, others)
    shuffled = np.minimum(rng.permuted(shuffled, axis=1), top)
    shuffled[np.arange(n), rng.integers(0, 3, n)] = top[:, 0]
    eng.banked[:, [0, 1, 3]] = shuffled
    assert (eng.banked[:, [0, 1, 3]] != others).any(axis=1).mean() > 0.5
    np.testing.assert_array_equal(play(), before)


def test_a_best_response_to_the_equilibrium_gains_nothing() -> None:
    """The equilibrium's tables read as a field (``totals_read = "finished-top"``: its final round
    keyed on the seats still to play and the finished top) leave the last seat nothing to gain."""
    cheap = FarkleRules(target=50, bank_minimum=50)
    eq = equilibrium(cheap, 3)
    field = [WinOptimalAgent(cheap, 3, solution=eq) for _ in range(2)]  # as agents.load builds it
    assert field[0].totals_read == "finished-top"
    br = best_response(cheap, field, seat=2)
    assert br.win_probability() == pytest.approx(eq.win_probability(2), abs=1e-9)
    assert 0.1 < br.win_probability() < 0.9


@pytest.mark.parametrize("spec", ["win-optimal", "pretrained:farkle-search-3p"])
def test_tables_of_maximising_seats_read_the_finished_seats_by_their_top(spec: str, three: object) -> None:
    """In the final round the equilibrium's and a search bot's play reads the finished seats only
    by their highest total and how many hold it: moving and lowering the others keeps every action."""
    from dice_envs.engine import farkle_turn as turn
    from dice_envs.engine.farkle import FarkleEngine
    from dice_envs.forward import farkle_throws

    agent = (
        WinOptimalAgent(SMALL, 3, solution=three) if spec == "win-optimal" else agents.load(spec, SMALL, 3)
    )
    assert agent.totals_read == "finished-top"
    n, rng = 3000, np.random.default_rng(11)
    throws = np.concatenate([farkle_throws(k)[0] for k in range(1, 7)])
    throws = throws[~turn.is_farkle(turn.farkle_turn_tables(), throws)]
    eng = FarkleEngine(SMALL, n, 3, seed=0)
    eng.current[:], eng.roll[:], eng.final_round_by[:] = 2, rng.choice(throws, n), 0
    eng.turn_total[:] = rng.integers(0, 12, n) * 50
    eng.first_throw[:] = eng.turn_total == 0
    done = rng.integers(0, 16, (n, 2)) * 50  # seats 0 and 1 have had their last turn
    done[:, 0] = np.maximum(done[:, 0], SMALL.target)
    eng.banked[:] = np.column_stack([done, rng.integers(0, 6, n) * 50])
    masks = eng.action_masks()
    before = agent.act_batch(eng.observe(2), masks)
    top = done.max(axis=1)
    # the top to the other finished seat, the other total lowered (a tie stays a tie)
    low = np.where(done[:, 0] == done[:, 1], top, rng.integers(0, 16, n) * 50 % (top + 50))
    low = np.minimum(low, top - 50 * (done[:, 0] != done[:, 1]))
    eng.banked[:, :2] = np.column_stack([low, top])
    assert (eng.banked[:, :2] != done).any(axis=1).mean() > 0.5
    np.testing.assert_array_equal(agent.act_batch(eng.observe(2), masks), before)
