"""Differential tests: the batched engines against the scalar rules engines, with the same dice.

Every game of a batch gets its own biased dice (so five-of-a-kinds, jokers, bonuses, hot dice
and bankruptcies happen often); the batched engine replays them with :class:`ScriptedDice`, the
scalar engine draws them from a generator stand-in that returns the same faces. At every step
both must agree on the action mask, the per-seat rewards, the totals, the end of the game and
(for a sample of games) the observation of every seat, byte for byte.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dice_envs.encoding import encode
from dice_envs.engine import FarkleGame, ScorecardGame
from dice_envs.forward import throw_outcomes
from dice_envs.rules import ConfigError, make_rules
from dice_envs.tables import farkle_tables, farkle_turn_tables, scorecard_tables
from dice_envs.vector import FarkleEngine, RandomDice, ScorecardEngine, ScriptedDice, make_engine


class FacesRng:
    """Stands in for a numpy Generator in ``DiceSource``: ``integers`` returns scripted faces."""

    def __init__(self, faces: np.ndarray) -> None:
        self.faces = [int(f) for f in faces]
        self.pos = 0

    def integers(self, low: int, high: int, size: int) -> np.ndarray:
        assert (low, high) == (1, 7)
        out = self.faces[self.pos : self.pos + size]
        assert len(out) == size, "scripted faces ran out"
        self.pos += size
        return np.array(out)


def biased_faces(rng: np.random.Generator, games: int, length: int) -> np.ndarray:
    """Per game a face distribution: from Dirichlet(0.5) for even games (many repeated faces:
    five-of-a-kinds, jokers), from Dirichlet(20) (near fair) for odd ones (upper bonuses)."""
    probs = np.where(
        (np.arange(games) % 2 == 0)[:, None],
        rng.dirichlet(np.full(6, 0.5), size=games),
        rng.dirichlet(np.full(6, 20.0), size=games),
    )
    return np.array([rng.choice(6, size=length, p=p) + 1 for p in probs])


def choose(game, mask, rng):
    """Mostly a simple strategy (chase the most common face; three or more of a face go up top,
    else the best-scoring box),
    so upper bonuses, five-of-a-kind bonuses and jokers all happen; otherwise random."""
    legal = np.flatnonzero(mask)
    boxes = legal[legal >= 32] if isinstance(game, ScorecardGame) else legal[:0]
    if boxes.size and rng.random() < 0.9:
        face = max(range(1, 7), key=game.dice.count)
        chase = sum(1 << i for i, f in enumerate(game.dice) if f != face)
        if chase and mask[chase] and rng.random() < 0.85:  # keep the most common face
            return chase
        upper = 32 + game.categories.index(("ones", "twos", "threes", "fours", "fives", "sixes")[face - 1])
        if game.dice.count(face) >= 3 and upper in boxes and game.dice.count(face) < 5:
            return upper
        return boxes[np.argmax([game.box_points(int(a) - 32) for a in boxes])]
    return rng.choice(legal)


def run_differential(game, num_players, num_games, seed, obs_every=3, **params):
    """Play random legal games in both engines; assert they agree. Returns the scalar games."""
    rules = make_rules(game, **params)
    rng = np.random.default_rng(seed)
    faces = biased_faces(rng, num_games, 2500 * num_players)
    eng = make_engine(rules, num_games, num_players, dice=ScriptedDice(faces))
    cls = FarkleGame if game == "farkle" else ScorecardGame
    games = [cls(rules, num_players=num_players, rng=FacesRng(faces[i])) for i in range(num_games)]
    watched = np.arange(0, num_games, obs_every)
    while True:
        assert [g.done for g in games] == eng.done.tolist()
        live = np.flatnonzero(~eng.done)
        if not live.size:
            break
        masks = eng.action_masks(live)
        actions = np.empty(live.size, dtype=np.int64)
        for j, i in enumerate(live):
            scalar_mask = games[i].action_mask().astype(bool)
            np.testing.assert_array_equal(masks[j], scalar_mask, err_msg=f"game {i} mask")
            actions[j] = choose(games[i], scalar_mask, rng)
        w = np.intersect1d(live, watched)
        for seat in range(num_players):
            obs = eng.observe(seat, w)
            for j, i in enumerate(w):
                assert obs[j].tobytes() == encode(games[i], seat).tobytes(), f"game {i} seat {seat}"
        rewards = eng.step(actions, live)
        for j, i in enumerate(live):
            assert rewards[j].tolist() == games[i].apply(int(actions[j])), f"game {i} rewards"
        assert eng.totals[live].tolist() == [games[i].totals() for i in live]
    assert eng.truncated.tolist() == [bool(getattr(g, "truncated", False)) for g in games]
    for seat in range(num_players):  # final observations of every game
        obs = eng.observe(seat)
        assert all(obs[i].tobytes() == encode(games[i], seat).tobytes() for i in range(num_games))
    return games


def scorecard_events(games):
    events = [e for g in games for e in g.history]
    return {
        "upper_bonus": any(e.upper_bonus for e in events),
        "five_kind_bonus": any(e.five_kind_bonus for e in events),
        "joker": any(e.joker for e in events),
        "strike_out": any(e.points == 0 for e in events),
    }


@pytest.mark.parametrize(
    ("game", "num_players", "num_games", "params"),
    [
        ("spiffel", 1, 700, {}),
        ("spiffel", 2, 150, {}),
        ("spiffel", 1, 200, {"spiffel_bonus_limit": None, "upper_bonus_threshold": 40}),
        ("dice_poker", 1, 600, {}),
        ("dice_poker", 3, 100, {}),
        ("yahtzee", 1, 600, {}),
        ("yahtzee", 2, 150, {}),
        ("yahtzee", 1, 150, {"joker": False, "num_throws": 2}),
        ("yahtzee", 1, 600, {"joker_rule": "verhoeff"}),
        ("yahtzee", 2, 150, {"joker_rule": "verhoeff"}),
    ],
)
def test_scorecard_engine_matches_scalar(game, num_players, num_games, params):
    games = run_differential(game, num_players, num_games, seed=num_games + num_players, **params)
    seen = scorecard_events(games)
    assert seen["upper_bonus"] and seen["strike_out"] and seen["five_kind_bonus"]
    assert seen["joker"] == bool(params.get("joker", True))


def farkle_events(games):
    events = [e for g in games for e in g.history]
    kinds = {e.kind for e in events}
    hot = any(
        a.kind == "set_aside"
        and b.kind == "throw"
        and len(b.dice) == 6
        and a.player == b.player
        and len(a.dice) == len(prev.dice)
        for g in games
        for prev, a, b in zip(g.history, g.history[1:], g.history[2:], strict=False)
        if prev.kind == "throw"
    )
    return kinds, hot


@pytest.mark.parametrize(
    ("num_players", "num_games", "params"),
    [
        (1, 500, {"max_turns": 12}),
        (2, 200, {"target": 3000, "max_turns": 20}),
        (3, 120, {"bankruptcy": False, "bank_minimum": 0, "max_turns": 8}),
        (1, 150, {"target": 1000, "bank_minimum": 1000, "max_turns": 30}),
    ],
)
def test_farkle_engine_matches_scalar(num_players, num_games, params):
    games = run_differential("farkle", num_players, num_games, seed=7 * num_games, **params)
    kinds, hot = farkle_events(games)
    assert {"set_aside", "bank", "farkle"} <= kinds
    assert hot, "no hot dice were thrown"
    if params.get("bankruptcy", True) and params.get("target", 10_000) > 5000:
        assert "bankrupt" in kinds
    assert any(g.truncated for g in games)
    if params.get("target", 10_000) <= 3000:
        assert any(g.done and not g.truncated for g in games)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    game=st.sampled_from(["spiffel", "dice_poker", "yahtzee"]),
    threshold=st.integers(0, 105),
    limit=st.one_of(st.none(), st.integers(0, 3)),
    joker=st.booleans(),
    throws=st.integers(1, 4),
    players=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_scorecard_rule_parameters_property(game, threshold, limit, joker, throws, players, seed):
    """Any rule configuration: the batched engine follows the scalar one."""
    params = {
        "upper_bonus_threshold": threshold,
        f"{make_rules(game).five_kind_box}_bonus_limit": limit,
        "joker": joker,
        "num_throws": throws,
    }
    run_differential(game, players, 12, seed=seed, obs_every=2, **params)


@settings(max_examples=8, deadline=None)
@given(
    target=st.integers(50, 5000),
    minimum=st.integers(0, 2000),
    bankruptcy=st.booleans(),
    max_turns=st.one_of(st.none(), st.integers(1, 12)),
    players=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_farkle_rule_parameters_property(target, minimum, bankruptcy, max_turns, players, seed):
    params = {"target": target, "bank_minimum": minimum, "bankruptcy": bankruptcy, "max_turns": max_turns}
    if max_turns is None and minimum > 1000:
        params["max_turns"] = 10  # keep random play short
    run_differential("farkle", players, 10, seed=seed, obs_every=2, **params)


def test_tables_follow_the_scalar_tables():
    ct = bt = scorecard_tables()
    rng = np.random.default_rng(0)
    for _ in range(300):
        faces = rng.integers(1, 7, size=5)
        code = int(((faces - 1) * 6 ** np.arange(5)).sum())
        assert tuple(ct.rolls[bt.code_roll[code]]) == tuple(sorted(faces))
        roll, mask = int(rng.integers(252)), int(rng.integers(1, 32))
        c = int(ct.reroll_count[mask])
        fresh = int(((faces[:c] - 1) * 6 ** np.arange(c)).sum())
        kept = [int(ct.rolls[roll, i]) for i in range(5) if not mask >> i & 1]
        assert tuple(ct.rolls[bt.code_roll[bt.kept_code[roll, mask] + fresh]]) == tuple(
            sorted(kept + faces[:c].tolist())
        )
    ft, fb = farkle_tables(), farkle_turn_tables()
    assert fb.no_throw == sum(len(ft.rolls[n]) for n in range(1, 7))
    for n in range(1, 7):
        for ri, r in enumerate(ft.rolls[n]):
            i = int(fb.code_roll[fb.code_offset[n] + int(((np.array(r) - 1) * 6 ** np.arange(n)).sum())])
            assert fb.n_dice[i] == n and fb.faces[i] == r
            np.testing.assert_array_equal(fb.points[i], ft.points[n][ri])
            assert fb.farkle[i] == ft.farkle[n][ri]


def test_random_dice_are_fair():
    """Opening throws drawn through the code tables follow the exact throw probabilities."""
    eng = ScorecardEngine(make_rules("spiffel"), 200_000, seed=3)
    freq = np.bincount(eng.roll, minlength=252) / eng.num_games
    p = throw_outcomes(5)[1]
    chi2 = float((eng.num_games * (freq - p) ** 2 / p).sum())
    assert chi2 < 340, chi2  # 251 degrees of freedom: p(chi2 > 340) < 2e-4
    fe = FarkleEngine(make_rules("farkle", bankruptcy=False), 200_000, seed=4)
    six = fe.dice.codes(np.arange(200_000), 6)
    t = farkle_turn_tables()
    rate = t.farkle[t.code_roll[t.code_offset[6] + six]]
    assert abs(rate.mean() - 0.023148) < 0.0015
    del fe


def test_same_seed_same_games_and_scripted_dice_errors():
    def play(seed):
        eng = make_engine("dice_poker", 64, 2, seed=seed)
        rng = np.random.default_rng(0)
        for _ in range(60):
            m = eng.action_masks()
            live = ~eng.done
            a = np.argmax(rng.random(m.shape) * m, axis=1)
            eng.step(a[live], np.flatnonzero(live))
        return eng.totals.copy(), eng.cards.copy()

    t1, c1 = play(5)
    t2, c2 = play(5)
    t3, _ = play(6)
    np.testing.assert_array_equal(t1, t2)
    np.testing.assert_array_equal(c1, c2)
    assert not np.array_equal(t1, t3)
    eng = make_engine("spiffel", 2, dice=ScriptedDice([[1, 2, 3, 4, 5, 6], [6, 6, 6, 6, 6, 6]]))
    with pytest.raises(ValueError, match="scripted dice of game 0 ran out after 6 faces"):
        eng.step(np.array([31, 31]))
    with pytest.raises(ValueError, match="faces 1-6"):
        ScriptedDice([[0, 1]])


def test_engine_errors_and_to_game():
    with pytest.raises(ConfigError, match="ScorecardRules"):
        ScorecardEngine(make_rules("farkle"), 4)
    with pytest.raises(ConfigError, match="FarkleRules"):
        FarkleEngine(make_rules("spiffel"), 4)
    with pytest.raises(ConfigError, match="num_players"):
        make_engine("yahtzee", 4, num_players=9)
    eng = make_engine("farkle", 3, 2, dice=RandomDice(1))
    g = eng.to_game(1)
    assert g.action_mask().astype(bool).tolist() == eng.action_masks([1])[0].tolist()
    assert encode(g, 1).tobytes() == eng.observe(1, [1])[0].tobytes()
