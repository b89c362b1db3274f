"""Observation encodings: size, dtype, bounds, and encode -> decode recovering the game facts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dice_envs.encoding import (
    ENCODING_VERSION,
    FarkleView,
    ScorecardView,
    decode,
    encode,
    encoding_id,
    observation_bounds,
    observation_size,
)
from dice_envs.engine import FarkleGame, ScorecardGame, new_game
from dice_envs.layouts import layout
from dice_envs.rules import GAMES, make_rules

#: Generous bound of every feature in random play (grand totals / 400, banked / target, ...).
BOUND = 50.0


def advance(game: ScorecardGame | FarkleGame, steps: int, rng: np.random.Generator) -> None:
    for _ in range(steps):
        if game.done:
            return
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])


def check_scorecard(game: ScorecardGame, seat: int) -> np.ndarray:
    rules, n = game.rules, game.num_players
    obs = encode(game, seat)
    view = decode(obs, rules, n)
    assert isinstance(view, ScorecardView)
    active = not game.done and game.current_player == seat
    card = game.cards[seat]
    assert view.dice == (game.dice if active else ())
    assert view.throw == (game.throw if active else 0)
    assert view.throws_left == (game.throws_left if active else 0)
    assert view.boxes == tuple(card.boxes)
    assert view.upper_total == game.upper_total(seat)
    assert view.upper_bonus_paid == card.upper_bonus_paid
    assert view.five_kind_bonuses == card.five_kind_bonuses
    assert view.five_kind_50 == (card.boxes[game.categories.index(rules.five_kind_box)] == 50)
    assert (view.bonus_due, view.joker) == (game.joker_status() if active else (False, False))
    assert view.round == game.round
    assert view.total == game.total(seat)
    assert view.others_totals == tuple(game.total((seat + i) % n) for i in range(1, n))
    # the potential points of the current dice in every box (documented layout)
    k, t = len(game.categories), rules.num_throws  # type: ignore[attr-defined]
    o = 36 + t + 2 * k + 8
    expect = [game.box_points(b) / 50 for b in range(k)] if active else [0.0] * k
    assert np.allclose(obs[o : o + k], expect)
    assert np.all(obs >= 0.0)
    return obs


def check_farkle(game: FarkleGame, seat: int) -> np.ndarray:
    rules, n = game.rules, game.num_players
    obs = encode(game, seat)
    view = decode(obs, rules, n)
    assert isinstance(view, FarkleView)
    active = not game.done and game.current_player == seat
    assert view.dice == (game.dice if active else ())
    assert view.turn_total == (game.turn_total if active else 0)
    assert view.first_throw == (game.first_throw if active else False)
    assert view.banked == game.banked[seat]
    assert view.turns == game.turns[seat]
    assert view.final_round == (game.final_round_by is not None)
    assert view.others_banked == tuple(game.banked[(seat + i) % n] for i in range(1, n))
    lead = 48 + n - 1  # (best other - own) / target may be negative; every other field is >= 0
    others = [game.banked[(seat + i) % n] for i in range(1, n)]
    assert obs[lead] == pytest.approx((max(others) - game.banked[seat]) / rules.target if others else 0.0)
    rest = np.delete(obs, lead)
    assert np.all(rest >= 0.0)
    return obs


def check(game: ScorecardGame | FarkleGame) -> list[np.ndarray]:
    out = []
    for seat in range(game.num_players):
        obs = (check_farkle if isinstance(game, FarkleGame) else check_scorecard)(game, seat)  # type: ignore[arg-type]
        assert obs.dtype == np.float32
        assert obs.shape == (observation_size(game.rules, game.num_players),)
        assert np.all(np.isfinite(obs)) and np.all(np.abs(obs) <= BOUND)
        out.append(obs)
    return out


@settings(max_examples=80)
@given(
    game_name=st.sampled_from(list(GAMES)),
    n=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    steps=st.integers(0, 400),
)
def test_encode_decode_round_trip_on_random_states(game_name: str, n: int, seed: int, steps: int) -> None:
    params = {"max_turns": 30} if game_name == "farkle" else {}
    game = new_game(make_rules(game_name, **params), num_players=n, seed=seed)
    advance(game, steps, np.random.default_rng(seed))
    check(game)


@pytest.mark.parametrize("game_name", list(GAMES))
def test_every_state_of_whole_games_round_trips(game_name: str) -> None:
    for n in (1, 3):
        game = new_game(
            make_rules(game_name, **({"max_turns": 15} if game_name == "farkle" else {})), n, seed=n
        )
        rng = np.random.default_rng(n)
        while not game.done:
            check(game)
            advance(game, 1, rng)
        check(game)  # the final state too


def test_joker_state_is_encoded() -> None:
    game = new_game("spiffel", seed=0)
    for dice, box in [([3, 3, 3, 3, 3], "spiffel"), ([4, 4, 4, 4, 4], None)]:
        game.dice_source.clear()
        game.dice_source.inject(*dice)
        game.apply(31)
        if box:
            game.apply(game.box_action(box))
    view = decode(encode(game, 0), game.rules, 1)
    assert isinstance(view, ScorecardView)
    assert view.five_kind_50 and view.bonus_due and view.joker and view.dice == (4, 4, 4, 4, 4)
    check(game)


@pytest.mark.parametrize("game_name", list(GAMES))
def test_observation_size(game_name: str) -> None:
    rules = make_rules(game_name)
    for n in range(1, 9):
        game = new_game(rules, num_players=n, seed=0)
        assert encode(game, 0).shape == (observation_size(rules, n),)
        if game_name == "farkle":
            assert observation_size(rules, n) == observation_size(rules, 1) + 2 * (n - 1)
        else:
            k = len(rules.categories)  # type: ignore[attr-defined]
            assert observation_size(rules, n) == observation_size(rules, 1) + (n - 1) * (k + 2)
    assert (
        observation_size(make_rules("spiffel", num_throws=4), 1)
        == observation_size(make_rules("spiffel"), 1) + 1
    )


def test_every_farkle_feature_is_used() -> None:
    """Over many states every non-dice slot of the Farkle layout takes a non-zero value.

    (Some one-hot dice slots are rare by construction, e.g. a 6 as the lowest of six sorted dice.)
    """
    n = 3
    rules = make_rules("farkle", max_turns=30, target=3000)
    lay = layout(rules, n)
    seen = np.zeros(lay.size, dtype=bool)
    for seed in range(6):
        game = new_game(rules, n, seed=seed)
        rng = np.random.default_rng(seed)
        while not game.done:
            for obs in check(game):
                seen |= obs != 0
            legal = game.legal_actions()
            pool = [a for a in legal if a >= 64] or legal
            game.apply(pool[int(rng.integers(len(pool)))])
    assert [f.name for f in lay.fields if f.name != "dice" and not seen[f.slice].all()] == []


@given(st.integers(1, 8), st.integers(0, 7), st.integers(0, 40))
def test_the_seat_field_names_the_seat_observed(n: int, seat: int, moves: int) -> None:
    """``seat`` is the one-hot of the seat whose observation it is (every seat, whoever is to move),
    in the scalar encoding, the batched engine and :func:`decode`."""
    from dice_envs.engine import FarkleEngine

    rules = make_rules("farkle", target=2000)
    seat %= n
    game, rng = new_game(rules, n, seed=moves), np.random.default_rng(moves)
    for _ in range(moves):
        if game.done:
            break
        game.apply(int(rng.choice(game.legal_actions())))
    obs = encode(game, seat)
    lay = layout(rules, n)
    assert obs[lay.slice("seat")].tolist() == [float(i == seat) for i in range(n)]
    assert decode(obs, rules, n).seat == seat
    engine = FarkleEngine(rules, num_games=3, num_players=n, seed=0)
    assert (engine.observe(seat)[:, lay.slice("seat")].argmax(axis=1) == seat).all()


def test_decode_rejects_a_wrong_shape() -> None:
    rules = make_rules("dice_poker")
    with pytest.raises(ValueError, match="expected"):
        decode(np.zeros(observation_size(rules, 2) + 1, dtype=np.float32), rules, 2)
    with pytest.raises(ValueError, match="farkle"):
        decode(np.zeros(3, dtype=np.float32), make_rules("farkle"), 1)


def test_encoding_ids() -> None:
    for name in ("spiffel", "dice_poker", "yahtzee"):
        assert encoding_id(make_rules(name)) == f"scorecard-v{ENCODING_VERSION['scorecard']}"
    assert encoding_id(make_rules("farkle")) == f"farkle-v{ENCODING_VERSION['farkle']}"


@pytest.mark.parametrize("game_name", ["spiffel", "dice_poker", "yahtzee", "farkle"])
@pytest.mark.parametrize("n", [1, 3])
def test_observations_lie_within_the_published_bounds(game_name: str, n: int) -> None:
    """Random play under bonus-friendly rules never leaves observation_bounds (which are tight for
    the dice block: some observation reaches the upper bound 1 there)."""
    params = {"farkle": {"target": 3000, "max_turns": 40}}.get(game_name, {"upper_bonus_threshold": 10})
    rules = make_rules(game_name, **params)
    low, high = observation_bounds(rules, n)
    assert low.dtype == high.dtype == np.float32 and np.all(low <= high)
    peak = np.zeros_like(low)
    for seed in range(4):
        game = new_game(rules, n, seed=seed)
        rng = np.random.default_rng(seed)
        while not game.done:
            for p in range(n):
                obs = encode(game, p)
                assert np.all(obs >= low) and np.all(obs <= high), np.flatnonzero((obs < low) | (obs > high))
                peak = np.maximum(peak, obs)
            legal = game.legal_actions()
            game.apply(legal[int(rng.integers(len(legal)))])
    assert peak[:30].max() == 1.0
