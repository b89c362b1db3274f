"""Property-based tests (hypothesis): invariants of random legal play for every game.

A policy seeded by hypothesis plays whole games; most of its re-throws chase the most common
face (some of them with injected dice that hit it) and it likes to put a five of a kind in the
five-of-a-kind box, so bonuses and jokers occur often. At every step the test also offers an
action outside the mask and checks that it is refused with the state unchanged.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dice_envs.engine import FarkleGame, ScorecardGame, new_game
from dice_envs.rules import make_rules
from dice_envs.rules.farkle import BANK_FLAG
from dice_envs.rules.farkle import score as farkle_score
from dice_envs.rules.scorecard import N_REROLL_ACTIONS, UPPER_FACES, box_score

SCORECARD_GAMES = ["spiffel", "dice_poker", "yahtzee"]


def scorecard_rules(draw: st.DrawFn) -> object:
    game = draw(st.sampled_from(SCORECARD_GAMES))
    params: dict[str, object] = {}
    if draw(st.booleans()):
        box = make_rules(game).five_kind_box  # type: ignore[attr-defined]
        params[f"{box}_bonus_limit"] = draw(st.sampled_from([None, 0, 1, 2]))
        params["joker"] = draw(st.booleans())
        params["num_throws"] = draw(st.integers(1, 4))
        params["upper_bonus_threshold"] = draw(st.integers(0, 105))
    return make_rules(game, **params)


@st.composite
def scorecard_setup(draw: st.DrawFn) -> tuple[object, int, int, int, float]:
    return (
        scorecard_rules(draw),
        draw(st.integers(1, 8)),
        draw(st.integers(0, 2**32 - 1)),
        draw(st.integers(0, 2**32 - 1)),
        draw(st.sampled_from([0.0, 0.1, 0.3])),
    )


def _scorecard_state(g: ScorecardGame) -> tuple:
    return (
        g.dice,
        g.throw,
        g.round,
        g.current_player,
        len(g.history),
        [(tuple(c.boxes), c.five_kind_bonuses, c.upper_bonus_paid) for c in g.cards],
        str(g.dice_source.rng.bit_generator.state),
    )


def _chase_mode(dice: tuple[int, ...]) -> int:
    mode = Counter(dice).most_common(1)[0][0]
    return sum(1 << i for i, d in enumerate(dice) if d != mode)


def play_scorecard(
    g: ScorecardGame, rng: np.random.Generator, check: bool = True, loaded: float = 0.0
) -> list[int]:
    """Random legal play to the end; return the summed rewards per seat.

    With probability ``loaded`` a re-throw chasing the most common face is made to hit it (the
    faces are injected), so five-of-a-kinds and their bonuses and jokers are frequent.
    """
    gained = [0] * g.num_players
    while not g.done:
        legal = g.legal_actions()
        if check:
            mask = g.action_mask()
            assert mask.shape == (g.n_actions,)
            assert np.flatnonzero(mask).tolist() == legal
            rerolls = [a for a in legal if a < N_REROLL_ACTIONS]
            kept = [tuple(sorted(g.dice[i] for i in range(5) if a >> i & 1)) for a in rerolls]
            assert len(set(kept)) == len(kept)  # no two re-throw actions select the same multiset
            assert all(a >= N_REROLL_ACTIONS for a in legal) == (g.throw >= g.rules.num_throws)  # type: ignore[attr-defined]
            illegal = [a for a in range(-1, g.n_actions + 1) if a not in legal]
            bad = illegal[int(rng.integers(len(illegal)))]
            before = _scorecard_state(g)
            try:
                g.apply(bad)
            except ValueError as err:
                assert "legal actions" in str(err)
            else:
                raise AssertionError(f"illegal action {bad} was accepted")
            assert _scorecard_state(g) == before
        chase = _chase_mode(g.dice)
        five_box = g.box_action(g.rules.five_kind_box)
        if five_box in legal and g.dice[0] == g.dice[4] and rng.random() < 0.8:
            action = five_box
        elif chase and chase in legal and rng.random() < 0.9:
            action = chase
            if rng.random() < loaded:
                g.dice_source.inject(*[Counter(g.dice).most_common(1)[0][0]] * bin(chase).count("1"))
        else:
            # keep the five-of-a-kind box open for a five of a kind, most of the time
            pool = [a for a in legal if a != five_box] if rng.random() < 0.9 else legal
            pool = pool or legal
            action = pool[int(rng.integers(len(pool)))]
        seat = g.current_player
        rewards = g.apply(action)
        assert all(r == 0 for p, r in enumerate(rewards) if p != seat)
        gained = [a + b for a, b in zip(gained, rewards, strict=True)]
    return gained


@settings(max_examples=150)
@given(scorecard_setup())
def test_random_scorecard_games_keep_every_invariant(setup: tuple) -> None:
    rules, n, seed, policy_seed, loaded = setup
    g = new_game(rules, num_players=n, seed=seed)  # type: ignore[arg-type]
    gained = play_scorecard(g, np.random.default_rng(policy_seed), loaded=loaded)
    k = len(g.categories)
    assert g.done and g.legal_actions() == []
    assert len(g.history) == k * n
    for p in range(n):
        events = [e for e in g.history if e.player == p]
        assert sorted(e.box for e in events) == sorted(g.categories)  # every box exactly once
        assert [e.round for e in events] == list(range(k))
        card = g.cards[p]
        assert all(v is not None for v in card.boxes)
        upper = sum(v for b, v in zip(g.categories, card.boxes, strict=True) if b in UPPER_FACES)
        lower = sum(v for b, v in zip(g.categories, card.boxes, strict=True) if b not in UPPER_FACES)
        assert upper == g.upper_total(p) and lower == g.lower_total(p)
        upper_bonus = rules.upper_bonus if upper >= rules.upper_bonus_threshold else 0  # type: ignore[attr-defined]
        assert g.upper_bonus(p) == upper_bonus
        bonuses = sum(1 for e in events if e.five_kind_bonus)
        assert card.five_kind_bonuses == bonuses
        limit = rules.five_kind_bonus_limit  # type: ignore[attr-defined]
        assert limit is None or bonuses <= limit
        total = upper + upper_bonus + lower + bonuses * rules.five_kind_bonus  # type: ignore[attr-defined]
        assert g.total(p) == total == gained[p]
        for e in events:
            last = e.throws[-1]
            assert len(e.throws) <= rules.num_throws  # type: ignore[attr-defined]
            assert e.points == box_score(e.box, last, joker=e.joker)
            if e.five_kind_bonus:  # only a five of a kind thrown while the box holds 50
                assert last[0] == last[4] and e.box != rules.five_kind_box  # type: ignore[attr-defined]
            if e.joker:
                assert last[0] == last[4] and rules.joker  # type: ignore[attr-defined]
    assert g.winners() == [p for p in range(n) if g.total(p) == max(g.totals())]


@settings(max_examples=30)
@given(scorecard_setup())
def test_same_seed_replays_and_clone_is_independent(setup: tuple) -> None:
    rules, n, seed, policy_seed, _ = setup
    n = min(n, 3)
    a = new_game(rules, num_players=n, seed=seed)  # type: ignore[arg-type]
    b = new_game(rules, num_players=n, seed=seed)  # type: ignore[arg-type]
    play_scorecard(a, np.random.default_rng(policy_seed), check=False)
    play_scorecard(b, np.random.default_rng(policy_seed), check=False)
    assert a.history == b.history and a.totals() == b.totals()

    c = new_game(rules, num_players=n, seed=seed)  # type: ignore[arg-type]
    rng = np.random.default_rng(policy_seed)
    for _ in range(int(rng.integers(0, 20))):
        if c.done:
            break
        legal = c.legal_actions()
        c.apply(legal[int(rng.integers(len(legal)))])
    twin = c.clone()
    snapshot = _scorecard_state(twin)
    rng_state = rng.bit_generator.state
    play_scorecard(c, rng, check=False)
    assert _scorecard_state(twin) == snapshot  # playing the original left the clone alone
    rng.bit_generator.state = rng_state
    play_scorecard(twin, rng, check=False)
    assert twin.history == c.history  # and the clone replays the same game


# --------------------------------------------------------------------------- Farkle
@st.composite
def farkle_setup(draw: st.DrawFn) -> tuple[object, int, int, int]:
    rules = make_rules(
        "farkle",
        target=draw(st.sampled_from([1000, 3000, 10_000])),
        bank_minimum=draw(st.sampled_from([0, 350, 1000])),
        bankruptcy=draw(st.booleans()),
        max_turns=draw(st.integers(1, 25)),
    )
    return rules, draw(st.integers(1, 8)), draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 2**32 - 1))


def _farkle_state(g: FarkleGame) -> tuple:
    return (
        g.dice,
        g.turn_total,
        g.first_throw,
        g.current_player,
        tuple(g.banked),
        tuple(g.turns),
        len(g.history),
        str(g.dice_source.rng.bit_generator.state),
    )


def play_farkle(g: FarkleGame, rng: np.random.Generator, check: bool = True) -> list[int]:
    gained = [0] * g.num_players
    while not g.done:
        legal = g.legal_actions()
        assert legal, "a running game always awaits a decision"
        if check:
            assert np.flatnonzero(g.action_mask()).tolist() == legal
            throws = [a for a in legal if a < BANK_FLAG]
            sets = [tuple(g.dice[i] for i in range(len(g.dice)) if a >> i & 1) for a in throws]
            assert len(set(sets)) == len(sets)
            assert all(farkle_score(s) > 0 for s in sets)
            banks = [a - BANK_FLAG for a in legal if a >= BANK_FLAG]
            assert banks == [a for a in throws if g.turn_total + g.selection_points(a) > g.rules.bank_minimum]
            illegal = [a for a in range(-1, g.n_actions + 1) if a not in legal]
            before = _farkle_state(g)
            bad = illegal[int(rng.integers(len(illegal)))]
            try:
                g.apply(bad)
            except ValueError as err:
                assert "legal actions" in str(err)
            else:
                raise AssertionError(f"illegal action {bad} was accepted")
            assert _farkle_state(g) == before
        # bank more often than uniformly so games reach the target
        banks_legal = [a for a in legal if a >= BANK_FLAG]
        pool = banks_legal if banks_legal and rng.random() < 0.6 else legal
        rewards = g.apply(pool[int(rng.integers(len(pool)))])
        gained = [a + b for a, b in zip(gained, rewards, strict=True)]
    return gained


@settings(max_examples=150)
@given(farkle_setup())
def test_random_farkle_games_keep_every_invariant(setup: tuple) -> None:
    rules, n, seed, policy_seed = setup
    g = new_game(rules, num_players=n, seed=seed)  # type: ignore[arg-type]
    gained = play_farkle(g, np.random.default_rng(policy_seed))
    assert g.done and g.legal_actions() == []
    assert gained == g.banked  # rewards sum to the banked totals
    assert max(g.turns) <= rules.max_turns  # type: ignore[attr-defined]
    assert all(t >= 0 for t in g.banked)
    assert g.turns == [g.turns[0]] * n  # the last round is always finished
    if g.truncated:
        assert g.turns[0] == rules.max_turns and g.final_round_by is None  # type: ignore[attr-defined]
    else:
        assert g.final_round_by is not None
        assert g.banked[g.final_round_by] >= rules.target  # type: ignore[attr-defined]
    # the banked totals are the sum of banks minus bankruptcies
    for p in range(n):
        moves = sum(e.points for e in g.history if e.player == p and e.kind in ("bank", "bankrupt"))
        assert moves == g.banked[p]
        if not rules.bankruptcy:  # type: ignore[attr-defined]
            assert not any(e.kind == "bankrupt" for e in g.history)
    best = max(g.banked)
    assert g.winners() == [p for p in range(n) if g.banked[p] == best]


@settings(max_examples=30)
@given(farkle_setup())
def test_farkle_same_seed_replays_and_clone_is_independent(setup: tuple) -> None:
    rules, n, seed, policy_seed = setup
    a = new_game(rules, num_players=n, seed=seed)  # type: ignore[arg-type]
    b = new_game(rules, num_players=n, seed=seed)  # type: ignore[arg-type]
    play_farkle(a, np.random.default_rng(policy_seed), check=False)
    play_farkle(b, np.random.default_rng(policy_seed), check=False)
    assert a.history == b.history and a.banked == b.banked and a.truncated == b.truncated

    c = new_game(rules, num_players=n, seed=seed)  # type: ignore[arg-type]
    rng = np.random.default_rng(policy_seed)
    twin = c.clone()
    snapshot = _farkle_state(twin)
    rng_state = rng.bit_generator.state
    play_farkle(c, rng, check=False)
    assert _farkle_state(twin) == snapshot
    rng.bit_generator.state = rng_state
    play_farkle(twin, rng, check=False)
    assert twin.history == c.history
