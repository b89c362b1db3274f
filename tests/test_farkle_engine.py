"""Differential tests of the one Farkle turn flow: the scalar game, the vector engine and the
solvers' transitions, driven by the same dice.

The scalar :class:`FarkleGame` draws its faces from a generator stand-in, the batched
:class:`FarkleEngine` replays them with :class:`ScriptedDice`; at every decision both must show
the same legal actions, observations (byte for byte), rewards, banked and turn totals and end
flags, and the solvers' view of every set-aside (the turn solver's option values and bank rule,
the win solver's option groups) must match what the game did. Crafted games pin the edges:
bankruptcy, hot dice, the final round, the bank minimum, ``max_turns``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_vector_engine import FacesRng, biased_faces

from agents.solver.farkle import solve_farkle
from agents.solver.farkle_win import STEP, option_groups
from dice_envs.encoding import encode
from dice_envs.engine import FarkleGame
from dice_envs.engine import farkle_turn as turn
from dice_envs.rules import make_rules
from dice_envs.rules.farkle import BANK_FLAG, NUM_DICE
from dice_envs.vector import FarkleEngine, ScriptedDice


def _group_options() -> dict[int, set[tuple[tuple[int, int], ...]]]:
    """The win solver's option groups, per dice count, as sets of ``(points // STEP, left)``."""
    g_start, _, o_start, o_pts, o_left, _ = option_groups()
    out: dict[int, set[tuple[tuple[int, int], ...]]] = {}
    for n in range(1, NUM_DICE + 1):
        out[n] = {
            tuple(
                zip(
                    o_pts[o_start[k] : o_start[k + 1]].tolist(),
                    o_left[o_start[k] : o_start[k + 1]].tolist(),
                    strict=True,
                )
            )
            for k in range(g_start[n], g_start[n + 1])
        }
    return out


class Twin:
    """``len(faces)`` games played in both engines on the same dice, compared at every step."""

    def __init__(self, rules, num_players: int, faces: np.ndarray) -> None:
        self.rules, self.num_players = rules, num_players
        self.eng = FarkleEngine(rules, len(faces), num_players, dice=ScriptedDice(faces))
        self.games = [FarkleGame(rules, num_players=num_players, rng=FacesRng(row)) for row in faces]
        self.solution = solve_farkle(rules.bank_minimum)
        self.groups = _group_options()
        self.check()

    def check(self) -> None:
        """Both engines in the same state: masks, totals, flags and every seat's observation."""
        eng, t = self.eng, turn.farkle_turn_tables()
        masks = eng.action_masks()
        for i, g in enumerate(self.games):
            np.testing.assert_array_equal(masks[i], g.action_mask().astype(bool), err_msg=f"game {i}")
            assert eng.dice_faces([i])[0] == g.dice
            assert int(eng.turn_total[i]) == g.turn_total and bool(eng.first_throw[i]) == g.first_throw
            assert eng.banked[i].tolist() == g.banked and eng.turns[i].tolist() == g.turns
            assert (bool(eng.done[i]), bool(eng.truncated[i])) == (g.done, g.truncated)
            fr = int(eng.final_round_by[i])
            assert (None if fr < 0 else fr) == g.final_round_by
            if not g.done:
                assert int(eng.current[i]) == g.current_player
                self._check_solvers(g, t)
        for seat in range(self.num_players):
            obs = eng.observe(seat)
            for i, g in enumerate(self.games):
                assert obs[i].tobytes() == encode(g, seat).tobytes(), f"game {i} seat {seat}"

    def _check_solvers(self, g: FarkleGame, t) -> None:
        """The solvers read the same options from the rules: points, dice thrown next, bank rule."""
        throw = t.roll_index[g.dice]
        legal = set(g.legal_actions())
        opts = set()
        for mask in range(1, 1 << len(g.dice)):
            pts = g.selection_points(mask)
            if mask not in legal:
                assert mask + BANK_FLAG not in legal
                continue
            left = int(t.next_dice[throw, mask])
            assert left == (len(g.dice) - bin(mask).count("1") or NUM_DICE)
            opts.add((pts // STEP, left))
            bank_value = self.solution.option_value(g.turn_total + pts, left, True)
            assert (mask + BANK_FLAG in legal) == np.isfinite(bank_value)
        assert tuple(sorted(opts)) in self.groups[len(g.dice)]

    def step(self, actions: list[int]) -> None:
        """Apply one action per live game (``actions`` indexed by game) in both engines."""
        live = np.flatnonzero(~self.eng.done)
        rewards = self.eng.step(np.array([actions[i] for i in live], dtype=np.int64), live)
        for j, i in enumerate(live):
            assert rewards[j].tolist() == self.games[i].apply(actions[i]), f"game {i} rewards"
        self.check()

    def play_random(self, rng: np.random.Generator, bank_bias: float = 0.3) -> None:
        """Random legal actions (banking with probability ``bank_bias`` when allowed) to the end."""
        while not self.eng.done.all():
            acts = [0] * len(self.games)
            for i, g in enumerate(self.games):
                if g.done:
                    continue
                legal = np.array(g.legal_actions())
                banks = legal[legal >= BANK_FLAG]
                pool = banks if banks.size and rng.random() < bank_bias else legal
                acts[i] = int(rng.choice(pool))
            self.step(acts)


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(
    target=st.sampled_from([300, 1000, 2500, 10_000]),
    bank_minimum=st.sampled_from([0, 300, 349, 350, 351, 400, 1000]),
    bankruptcy=st.booleans(),
    max_turns=st.sampled_from([None, 1, 3, 8]),
    players=st.integers(1, 3),
    bank_bias=st.sampled_from([0.1, 0.5, 0.9]),
    seed=st.integers(0, 2**16),
)
def test_scalar_engine_and_solvers_agree(
    target, bank_minimum, bankruptcy, max_turns, players, bank_bias, seed
):
    if max_turns is None and target > 1000:
        max_turns = 30  # keep each example short
    rules = make_rules(
        "farkle", target=target, bank_minimum=bank_minimum, bankruptcy=bankruptcy, max_turns=max_turns
    )
    rng = np.random.default_rng(seed)
    twin = Twin(rules, players, biased_faces(rng, 6, 4000 * players))
    twin.play_random(rng, bank_bias)
    if max_turns is not None:
        for g in twin.games:
            assert g.truncated == (g.final_round_by is None)


def _twin(faces, players=1, **params) -> Twin:
    return Twin(make_rules("farkle", **params), players, np.array([faces], dtype=np.int64))


def _act(twin: Twin, positions, bank: bool) -> list[int]:
    g = twin.games[0]
    reward = twin.eng.step(np.array([g.action(positions, bank)]), np.array([0]))[0].tolist()
    assert twin.games[0].apply(g.action(positions, bank)) == reward
    twin.check()
    return reward


PAD = [1, 2, 3, 4, 6, 6] * 20  # what the games throw after the scripted part (never read to the end)


def test_bankruptcy_on_a_first_throw_farkle():
    # turn 1: 1-1-1 + 5 banked (1050); turn 2 opens with 2-2-3-3-4-6 (a farkle): bankrupt
    faces = [1, 1, 1, 5, 2, 3, 2, 2, 3, 4, 4, 6, 1, 1, 1, 1, 1, 1, *PAD]
    for bankruptcy in (True, False):
        twin = _twin(faces, bankruptcy=bankruptcy)
        assert _act(twin, [0, 1, 2, 5], bank=True) == ([0] if bankruptcy else [1050])
        g = twin.games[0]
        assert g.banked == ([0] if bankruptcy else [1050]) and g.turns == [2]
        assert [e.kind for e in g.history][-3:] == (
            ["farkle", "bankrupt", "throw"] if bankruptcy else ["throw", "farkle", "throw"]
        )


def test_a_later_farkle_loses_only_the_turn_total():
    # 1050 banked; turn 2: a 1 set aside from 1-2-3-4-6-6, the five dice thrown on farkle
    faces = [1, 1, 1, 5, 2, 3, 1, 2, 3, 4, 6, 6, 2, 3, 4, 6, 6, *PAD]
    twin = _twin(faces)
    _act(twin, [0, 1, 2, 5], bank=True)
    assert _act(twin, [0], bank=False) == [0]
    g = twin.games[0]
    assert g.banked == [1050] and g.turns == [2] and g.history[-2].points == -100


def test_hot_dice_throw_six_again():
    faces = [1, 1, 1, 5, 5, 5, 2, 3, 4, 6, 6, 1, *PAD]
    twin = _twin(faces)
    _act(twin, range(6), bank=False)  # two triples (2500), all six set aside: six dice again
    g = twin.games[0]
    assert len(g.dice) == NUM_DICE and g.turn_total == 2500 and not g.first_throw
    assert _act(twin, [0], bank=True) == [2600]


@pytest.mark.parametrize(("bank_minimum", "legal"), [(349, True), (350, False), (351, False)])
def test_bank_minimum_edge(bank_minimum, legal):
    # 1-5-5 (200), then 1-5 of 1-5-2 (150): a turn total of exactly 350
    faces = [1, 5, 5, 2, 3, 4, 1, 5, 2, *PAD]
    twin = _twin(faces, bank_minimum=bank_minimum)
    _act(twin, [0, 4, 5], bank=False)
    g = twin.games[0]
    assert g.dice == (1, 2, 5)
    assert (g.action([0, 2], bank=True) in g.legal_actions()) is legal
    assert g.action([0], bank=True) not in g.legal_actions()  # 300


def test_final_round_gives_the_other_seats_their_turn():
    faces = [1, 1, 1, 1, 2, 3, 5, 5, 5, 2, 3, 4, 1, 2, 3, 4, 6, 6, *PAD]
    twin = _twin(faces, players=2, target=2000)
    assert _act(twin, [0, 1, 2, 3], bank=True) == [2000, 0]  # seat 0 reaches the target
    g = twin.games[0]
    assert g.final_round_by == 0 and not g.done and g.current_player == 1
    assert _act(twin, [3, 4, 5], bank=True) == [0, 500]  # seat 1's last turn
    assert g.done and not g.truncated and g.winners() == [0]


def test_max_turns_truncates_after_the_last_seat():
    faces = [1, 2, 3, 4, 6, 6, 5, 5, 5, 2, 3, 4, 5, 2, 3, 4, 6, 6, *PAD]
    twin = _twin(faces, players=2, max_turns=1, bank_minimum=0)
    _act(twin, [0], bank=True)
    assert not twin.games[0].done
    _act(twin, [3], bank=True)
    g = twin.games[0]
    assert g.done and g.truncated and g.turns == [1, 1] and g.final_round_by is None


def test_rule_functions_on_scalars_and_arrays_agree():
    t = turn.farkle_turn_tables()
    rng = np.random.default_rng(0)
    throws = rng.integers(0, t.no_throw + 1, 300)
    totals = rng.integers(0, 60, 300) * 50
    for bm in (0, 350, 351, 7999, 8000):
        batch = turn.legal_masks(t, throws, totals, bm)
        for k in range(0, 300, 7):
            one = turn.legal_masks(t, int(throws[k]), int(totals[k]), bm)
            np.testing.assert_array_equal(batch[k], one)
            pts = t.points[throws[k]]
            np.testing.assert_array_equal(one[BANK_FLAG:], (pts > 0) & turn.may_bank(totals[k] + pts, bm))
    args = (
        np.array([0, 1, 1]),
        np.array([10_000, 9_950, 9_000]),
        np.array([3, 3, 100]),
        np.array([-1, -1, -1]),
    )
    fr, done, trunc, nxt = turn.end_turn(*args, 2, 10_000, 100)
    assert (
        fr.tolist() == [0, -1, -1]
        and done.tolist() == [False, False, True]
        and trunc.tolist() == [False, False, True]
    )
    assert nxt.tolist() == [1, 0, 1]
    assert [turn.end_turn(*(int(a[i]) for a in args), 2, 10_000, 100) for i in range(3)] == [
        (0, False, False, 1),
        (-1, False, False, 0),
        (-1, True, True, 1),
    ]
    assert turn.farkle_banked(np.array([500, 500]), np.array([True, False]), True).tolist() == [0, 500]
    assert turn.farkle_banked(500, True, False) == 500


def test_win_solver_reads_the_final_round_of_end_turn():
    """The two-seat win solver's model of a game's end (its docstring) is :func:`end_turn`'s: seat 0
    reaching the target gives seat 1 one last turn; seat 1 reaching it ends the game at once."""
    target = 1000
    assert turn.end_turn(0, target, 5, -1, 2, target, None) == (0, False, False, 1)
    assert turn.end_turn(1, target - 50, 5, 0, 2, target, None) == (0, True, False, 1)
    assert turn.end_turn(1, target, 5, -1, 2, target, None) == (1, True, False, 1)
    assert turn.end_turn(1, target - 50, 5, -1, 2, target, None) == (-1, False, False, 0)


def test_game_copies_share_the_tables_and_replay_the_same_dice():
    import pickle

    g = FarkleGame(make_rules("farkle"), num_players=2, seed=3)
    c = g.clone()
    assert c._t is g._t and c.dice == g.dice and c.history == g.history
    a = g.legal_actions()[0]
    assert c.apply(a) == g.apply(a) and c.dice == g.dice
    p = pickle.loads(pickle.dumps(g))
    assert len(pickle.dumps(g)) < 20_000 and p.dice == g.dice and p.summary() == g.summary()
    with pytest.raises(ValueError, match="legal actions"):
        g.apply(BANK_FLAG - 1 if BANK_FLAG - 1 not in g.legal_actions() else 0)
