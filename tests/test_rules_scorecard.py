"""The scorecard state machine (Spiffel, Dice Poker, Yahtzee) driven through injected dice.

Dice are injected with ``game.dice_source.inject`` and brought into play by re-throwing all five
dice, so every path (bonuses, jokers, forced order, upper bonus, errors) is reached on purpose.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from dice_envs.engine import ScorecardGame, new_game
from dice_envs.rules import DicePokerRules, FarkleRules, SpiffelRules, YahtzeeRules, make_rules
from dice_envs.rules.config import ConfigError
from dice_envs.rules.scorecard import N_REROLL_ACTIONS, box_score

ALL = ScorecardGame.reroll_action([0, 1, 2, 3, 4])  # re-throw all five dice


def throw(game: ScorecardGame, dice: Sequence[int]) -> None:
    """Make the current dice ``dice`` by re-throwing all five (uses one throw)."""
    game.dice_source.clear()
    game.dice_source.inject(*dice)
    assert game.apply(ALL) == [0] * game.num_players
    assert game.dice == tuple(sorted(dice))


def enter(game: ScorecardGame, dice: Sequence[int], box: str) -> list[int]:
    """Throw ``dice`` and enter them in ``box``; return the per-seat rewards."""
    throw(game, dice)
    return game.apply(game.box_action(box))


def box(game: ScorecardGame, name: str, player: int = 0) -> int | None:
    return game.cards[player].boxes[game.categories.index(name)]


def legal_box_names(game: ScorecardGame) -> list[str]:
    return [game.categories[b] for b in game.legal_boxes()]


def state(game: ScorecardGame) -> tuple:
    """Everything observable about a game, for before/after comparisons."""
    return (
        game.summary(),
        game.dice,
        game.throw,
        game.round,
        game.current_player,
        game.done,
        list(game.history),
        [(list(c.boxes), c.five_kind_bonuses, c.upper_bonus_paid) for c in game.cards],
        game.dice_source.rng.bit_generator.state,
        game.dice_source.pending,
    )


# --------------------------------------------------------------------------- basic flow
@pytest.mark.parametrize("name", ["spiffel", "dice_poker", "yahtzee"])
def test_turn_structure_and_action_space(name: str) -> None:
    game = new_game(name, num_players=2, seed=5)
    k = len(game.categories)
    assert game.n_actions == N_REROLL_ACTIONS + k == make_rules(name).n_actions
    assert game.throw == 1 and game.throws_left == 2 and len(game.dice) == 5
    assert list(game.dice) == sorted(game.dice)
    legal = game.legal_actions()
    assert 0 not in legal
    assert [a for a in legal if a >= N_REROLL_ACTIONS] == [N_REROLL_ACTIONS + b for b in range(k)]
    assert np.array_equal(np.flatnonzero(game.action_mask()), legal)
    assert game.action_mask().dtype == np.int8
    game.apply(ALL)
    game.apply(ALL)
    assert game.throw == 3 and game.throws_left == 0
    # after the last throw only scoring is legal
    assert all(a >= N_REROLL_ACTIONS for a in game.legal_actions())
    rewards = game.apply(game.box_action("chance"))
    assert rewards == [sum(game.history[-1].throws[-1]), 0]
    assert len(game.history[-1].throws) == 3
    assert game.current_player == 1 and game.throw == 1 and game.round == 0


def test_num_throws_parameter() -> None:
    game = new_game(make_rules("spiffel", num_throws=1), seed=0)
    assert all(a >= N_REROLL_ACTIONS for a in game.legal_actions())
    game = new_game(make_rules("spiffel", num_throws=4), seed=0)
    for _ in range(3):
        game.apply(ALL)
    assert game.throw == 4 and all(a >= N_REROLL_ACTIONS for a in game.legal_actions())


def test_reroll_keeps_the_unselected_dice() -> None:
    game = new_game("spiffel", seed=1)
    throw(game, [1, 2, 3, 4, 6])
    game.dice_source.inject(5)
    game.apply(ScorecardGame.reroll_action([4]))  # re-throw the 6
    assert game.dice == (1, 2, 3, 4, 5)


def test_only_the_smallest_mask_of_a_multiset_is_legal() -> None:
    game = new_game("spiffel", seed=1)
    throw(game, [2, 2, 2, 5, 5])
    rerolls = [a for a in game.legal_actions() if a < N_REROLL_ACTIONS]
    # multisets: 0-3 twos x 0-2 fives, minus the empty one
    assert len(rerolls) == 4 * 3 - 1
    assert 0b00001 in rerolls and 0b00010 not in rerolls and 0b01000 in rerolls and 0b10000 not in rerolls
    with pytest.raises(ValueError, match="legal actions"):
        game.apply(0b00010)


def test_full_game_rounds_and_order() -> None:
    game = new_game("dice_poker", num_players=3, seed=2)
    seats = []
    while not game.done:
        seats.append(game.current_player)
        game.apply(max(game.legal_actions()))  # always score in the last open box
    assert seats == [0, 1, 2] * 15
    assert game.round == 15 and game.legal_actions() == []
    assert game.joker_status() == (False, False) and game.legal_boxes() == []
    assert not game.action_mask().any()
    assert all(v is not None for c in game.cards for v in c.boxes)
    with pytest.raises(ValueError, match="game is over"):
        game.apply(N_REROLL_ACTIONS)


# --------------------------------------------------------------------------- upper bonus
def _fill_upper(game: ScorecardGame, counts: dict[int, int]) -> list[int]:
    """Enter ``counts[face]`` dice of each face in its upper box; return the rewards (solitaire)."""
    names = ["ones", "twos", "threes", "fours", "fives", "sixes"]
    gained = []
    for face, n in counts.items():
        other = 2 if face == 1 else 1
        gained.append(enter(game, [face] * n + [other] * (5 - n), names[face - 1])[0])
    return gained


@pytest.mark.parametrize(("name", "threshold"), [("spiffel", 63), ("yahtzee", 63), ("dice_poker", 64)])
def test_upper_bonus_threshold(name: str, threshold: int) -> None:
    assert make_rules(name).upper_bonus_threshold == threshold
    # three of each face = 63
    game = new_game(name, seed=0)
    gained = _fill_upper(game, {1: 3, 2: 3, 3: 3, 4: 3, 5: 3, 6: 3})
    assert game.upper_total(0) == 63
    expect_bonus = 35 if threshold <= 63 else 0
    assert game.upper_bonus(0) == expect_bonus
    assert gained == [3, 6, 9, 12, 15, 18 + expect_bonus]
    assert game.total(0) == 63 + expect_bonus
    # 62 never earns it
    game = new_game(name, seed=0)
    _fill_upper(game, {1: 2, 2: 3, 3: 3, 4: 3, 5: 3, 6: 3})
    assert game.upper_total(0) == 62 and game.upper_bonus(0) == 0 and game.total(0) == 62
    # 64 always does, and only once
    game = new_game(name, seed=0)
    gained = _fill_upper(game, {1: 4, 2: 3, 3: 3, 4: 3, 5: 3, 6: 3})
    assert game.upper_total(0) == 64 and game.upper_bonus(0) == 35
    assert sum(gained) == 64 + 35
    assert sum(e.upper_bonus for e in game.history) == 35


def test_upper_bonus_paid_at_the_crossing_and_only_once() -> None:
    game = new_game("spiffel", seed=0)
    assert enter(game, [6, 6, 6, 6, 6], "sixes") == [30]
    assert enter(game, [5, 5, 5, 5, 1], "fives") == [20]
    assert enter(game, [4, 4, 4, 1, 1], "fours") == [12]  # upper 62: no bonus yet
    assert game.upper_bonus(0) == 0
    assert enter(game, [3, 1, 1, 1, 1], "threes") == [3 + 35]  # upper 65
    assert game.history[-1].upper_bonus == 35
    assert enter(game, [2, 2, 1, 1, 1], "twos") == [4]  # paid once
    assert enter(game, [1, 1, 1, 1, 1], "chance") == [5]
    assert game.upper_bonus(0) == 35 and game.total(0) == 69 + 35 + 5


def test_upper_bonus_threshold_parameter() -> None:
    game = new_game(make_rules("spiffel", upper_bonus_threshold=30, upper_bonus=7), seed=0)
    assert enter(game, [6, 6, 6, 6, 1], "sixes") == [24]
    assert enter(game, [5, 1, 1, 1, 1], "fives") == [5]
    assert enter(game, [1, 2, 2, 2, 2], "ones") == [1 + 7]
    assert enter(game, [6, 6, 6, 6, 6], "chance") == [30]
    assert game.total(0) == 30 + 7 + 30


# --------------------------------------------------------------------------- Spiffel bonus / joker
def test_spiffel_second_spiffel_bonus_once_and_free_joker() -> None:
    game = new_game("spiffel", seed=0)
    throw(game, [3, 3, 3, 3, 3])
    assert game.joker_status() == (False, False)  # spiffel box still open: no bonus, no joker
    assert game.box_points(game.categories.index("full_house")) == 0
    assert game.apply(game.box_action("spiffel")) == [50]

    throw(game, [4, 4, 4, 4, 4])  # second Spiffel
    assert game.joker_status() == (True, True)
    # free joker: any open box is legal
    assert legal_box_names(game) == [b for b in game.categories if b != "spiffel"]
    points = {b: game.box_points(game.categories.index(b)) for b in legal_box_names(game)}
    assert points["full_house"] == 25 and points["small_straight"] == 30
    assert points["large_straight"] == 40
    assert points["fours"] == 20 and points["ones"] == 0 and points["chance"] == 20
    assert points["three_of_a_kind"] == 20 and points["four_of_a_kind"] == 20
    assert game.apply(game.box_action("large_straight")) == [40 + 100]
    ev = game.history[-1]
    assert (ev.box, ev.points, ev.five_kind_bonus, ev.joker) == ("large_straight", 40, 100, True)

    throw(game, [2, 2, 2, 2, 2])  # third Spiffel: no bonus, no joker
    assert game.joker_status() == (False, False)
    assert game.box_points(game.categories.index("full_house")) == 0
    assert game.apply(game.box_action("full_house")) == [0]
    assert game.history[-1].joker is False and game.history[-1].five_kind_bonus == 0
    assert game.five_kind_bonus_points(0) == 100
    assert game.total(0) == 50 + 40 + 0 + 100


def test_spiffel_joker_may_go_in_an_upper_box_of_another_face() -> None:
    game = new_game("spiffel", seed=0)
    enter(game, [6, 6, 6, 6, 6], "spiffel")
    assert enter(game, [6, 6, 6, 6, 6], "twos") == [0 + 100]
    assert game.total(0) == 150


def test_spiffel_struck_spiffel_box_gives_no_bonus_or_joker() -> None:
    game = new_game("spiffel", seed=0)
    assert enter(game, [1, 2, 3, 4, 6], "spiffel") == [0]
    assert box(game, "spiffel") == 0
    throw(game, [5, 5, 5, 5, 5])
    assert game.joker_status() == (False, False)
    assert game.box_points(game.categories.index("small_straight")) == 0
    assert game.apply(game.box_action("small_straight")) == [0]
    assert game.five_kind_bonus_points(0) == 0


def test_spiffel_unlimited_bonus_parameter() -> None:
    game = new_game(make_rules("spiffel", spiffel_bonus_limit=None), seed=0)
    enter(game, [1, 1, 1, 1, 1], "spiffel")
    for face, target in [(2, "full_house"), (3, "small_straight"), (4, "threes")]:
        throw(game, [face] * 5)
        assert game.joker_status() == (True, True)
        game.apply(game.box_action(target))
    assert game.cards[0].five_kind_bonuses == 3
    assert game.total(0) == 50 + 25 + 30 + 0 + 300


def test_spiffel_joker_switched_off_keeps_the_bonus() -> None:
    game = new_game(make_rules("spiffel", joker=False, spiffel_bonus=70), seed=0)
    enter(game, [1, 1, 1, 1, 1], "spiffel")
    throw(game, [2, 2, 2, 2, 2])
    assert game.joker_status() == (True, False)
    assert game.apply(game.box_action("full_house")) == [0 + 70]


def test_spiffel_bonus_limit_zero_pays_nothing() -> None:
    game = new_game(make_rules("spiffel", spiffel_bonus_limit=0), seed=0)
    enter(game, [1, 1, 1, 1, 1], "spiffel")
    throw(game, [2, 2, 2, 2, 2])
    assert game.joker_status() == (False, False)


# --------------------------------------------------------------------------- Dice Poker forced joker
def test_dice_poker_forced_joker_order_and_unlimited_bonus() -> None:
    game = new_game("dice_poker", seed=0)
    assert enter(game, [3, 3, 3, 3, 3], "poker") == [50]

    # 1. the upper box of the face is open: it is the only legal box
    throw(game, [4, 4, 4, 4, 4])
    assert game.joker_status() == (True, True)
    assert legal_box_names(game) == ["fours"]
    assert [a for a in game.legal_actions() if a < N_REROLL_ACTIONS]  # re-throwing is still allowed
    with pytest.raises(ValueError, match="legal actions"):
        game.apply(game.box_action("chance"))
    assert game.apply(game.box_action("fours")) == [20 + 100]

    # 2. upper box filled: only the open lower (right-side) boxes, with joker scoring
    throw(game, [4, 4, 4, 4, 4])
    lower_open = ["pair", "two_pairs", "three_of_a_kind", "four_of_a_kind", "full_house",
                  "small_straight", "large_straight", "chance"]  # fmt: skip
    assert legal_box_names(game) == lower_open
    assert game.apply(game.box_action("full_house")) == [25 + 100]
    throw(game, [6, 6, 6, 6, 6])
    assert legal_box_names(game) == ["sixes"]
    assert game.apply(game.box_action("sixes")) == [30 + 100]
    throw(game, [6, 6, 6, 6, 6])
    assert game.apply(game.box_action("large_straight")) == [40 + 100]

    # fill every other lower box
    for name in ["pair", "two_pairs", "three_of_a_kind", "four_of_a_kind", "small_straight", "chance"]:
        enter(game, [1, 2, 2, 3, 6], name)
    # 3. upper box and every lower box filled: 0 in an open upper box
    throw(game, [6, 6, 6, 6, 6])
    assert legal_box_names(game) == ["ones", "twos", "threes", "fives"]
    assert game.apply(game.box_action("ones")) == [0 + 100]
    assert game.cards[0].five_kind_bonuses == 5
    assert game.five_kind_bonus_points(0) == 500
    assert all(e.joker for e in game.history if e.five_kind_bonus)


def test_dice_poker_struck_poker_box_gives_no_bonus_or_joker() -> None:
    game = new_game("dice_poker", seed=0)
    enter(game, [1, 2, 3, 4, 6], "poker")
    throw(game, [4, 4, 4, 4, 4])
    assert game.joker_status() == (False, False)
    assert legal_box_names(game) == [b for b in game.categories if b != "poker"]
    assert game.apply(game.box_action("full_house")) == [0]


def test_dice_poker_first_poker_is_not_forced() -> None:
    game = new_game("dice_poker", seed=0)
    throw(game, [2, 2, 2, 2, 2])
    assert game.joker_status() == (False, False)
    assert legal_box_names(game) == list(game.categories)
    assert game.apply(game.box_action("twos")) == [10]


def test_dice_poker_bonus_limit_parameter() -> None:
    game = new_game(make_rules("dice_poker", poker_bonus_limit=1), seed=0)
    enter(game, [3, 3, 3, 3, 3], "poker")
    assert enter(game, [4, 4, 4, 4, 4], "fours") == [120]
    throw(game, [5, 5, 5, 5, 5])
    assert game.joker_status() == (False, False)
    assert len(legal_box_names(game)) == 13  # no forced order without the joker


# --------------------------------------------------------------------------- Yahtzee forced joker
def test_yahtzee_joker_forced_when_box_holds_zero_without_bonus() -> None:
    game = new_game("yahtzee", seed=0)
    enter(game, [1, 2, 3, 4, 6], "yahtzee")
    throw(game, [5, 5, 5, 5, 5])
    assert game.joker_status() == (False, True)
    assert legal_box_names(game) == ["fives"]
    assert game.apply(game.box_action("fives")) == [25]
    throw(game, [5, 5, 5, 5, 5])
    assert legal_box_names(game) == [
        "three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight", "chance",
    ]  # fmt: skip
    assert game.apply(game.box_action("small_straight")) == [30]
    assert game.five_kind_bonus_points(0) == 0


def test_yahtzee_joker_with_fifty_pays_unlimited_bonus() -> None:
    game = new_game("yahtzee", seed=0)
    enter(game, [2, 2, 2, 2, 2], "yahtzee")
    assert enter(game, [3, 3, 3, 3, 3], "threes") == [15 + 100]
    assert enter(game, [3, 3, 3, 3, 3], "full_house") == [25 + 100]
    assert enter(game, [2, 2, 2, 2, 2], "twos") == [10 + 100]
    assert game.cards[0].five_kind_bonuses == 3
    assert game.total(0) == 50 + 15 + 25 + 10 + 300


def test_yahtzee_joker_off_means_free_choice() -> None:
    game = new_game(make_rules("yahtzee", joker=False), seed=0)
    enter(game, [2, 2, 2, 2, 2], "yahtzee")
    throw(game, [3, 3, 3, 3, 3])
    assert game.joker_status() == (True, False)
    assert len(legal_box_names(game)) == 12
    assert game.apply(game.box_action("full_house")) == [100]


# --------------------------------------------------------------------------- totals and winners
def test_grand_total_is_upper_plus_bonus_plus_lower_plus_five_kind_bonuses() -> None:
    game = new_game("spiffel", seed=0)
    enter(game, [6, 6, 6, 6, 6], "spiffel")
    enter(game, [6, 6, 6, 6, 6], "sixes")  # joker: 30 + 100
    enter(game, [5, 5, 5, 5, 1], "fives")
    enter(game, [4, 4, 4, 1, 1], "fours")  # upper 62
    enter(game, [3, 1, 1, 1, 1], "threes")  # upper 65 -> bonus
    enter(game, [2, 2, 3, 3, 3], "full_house")
    upper, lower = game.upper_total(0), game.lower_total(0)
    assert (upper, lower) == (65, 75)
    assert (
        game.total(0)
        == upper + 35 + lower + 100
        == sum(e.points + e.upper_bonus + e.five_kind_bonus for e in game.history)
    )
    assert game.totals() == [game.total(0)]


def test_rewards_are_indexed_by_seat_and_ties_share_the_win() -> None:
    game = new_game("spiffel", num_players=2, seed=0)
    for _ in range(13):
        for seat in (0, 1):
            assert game.current_player == seat
            throw(game, [1, 2, 3, 4, 6])
            open_ = game.legal_boxes()
            rewards = game.apply(N_REROLL_ACTIONS + open_[0])
            assert rewards[1 - seat] == 0
    assert game.done and game.totals()[0] == game.totals()[1]
    assert game.winners() == [0, 1]
    assert game.summary()["winners"] == [0, 1]


def test_winner_is_the_highest_total() -> None:
    game = new_game("dice_poker", num_players=3, seed=0)
    while not game.done:
        dice = [6, 6, 6, 6, 5] if game.current_player == 1 else [1, 1, 2, 2, 3]
        throw(game, dice)
        game.apply(N_REROLL_ACTIONS + game.legal_boxes()[0])
    totals = game.totals()
    assert totals[1] > max(totals[0], totals[2]) and game.winners() == [1]


# --------------------------------------------------------------------------- illegal actions
@pytest.mark.parametrize("name", ["spiffel", "dice_poker", "yahtzee"])
def test_illegal_actions_raise_naming_legal_actions_and_keep_the_state(name: str) -> None:
    game = new_game(name, num_players=2, seed=11)
    throw(game, [2, 2, 5, 5, 6])
    enter(game, [2, 2, 5, 5, 6], "chance")  # seat 0 -> chance filled for seat 0
    throw(game, [3, 3, 3, 1, 1])
    game.apply(game.box_action("chance"))
    throw(game, [2, 2, 5, 5, 6])
    legal = game.legal_actions()
    bad = [
        0,
        0b00010,  # not the smallest mask of its multiset
        game.box_action("chance"),  # already filled
        game.n_actions,
        -1,
        999,
        True,
        32.0,
        "33",
        None,
        np.int64(0),
    ]
    for action in bad:
        before = state(game)
        with pytest.raises(ValueError, match="legal actions") as err:
            game.apply(action)
        assert str(legal) in str(err.value)
        assert state(game) == before
    # after the last throw a re-throw is illegal too
    game.apply(ALL)
    before = state(game)
    with pytest.raises(ValueError, match="legal actions"):
        game.apply(1)
    assert state(game) == before
    # numpy integers are accepted as actions
    game.apply(np.int64(game.box_action("ones")))


def test_box_and_reroll_helpers_reject_bad_input() -> None:
    game = new_game("spiffel", seed=0)
    with pytest.raises(ValueError, match="boxes: ones"):
        game.box_action("poker")
    with pytest.raises(ValueError, match="0-4"):
        ScorecardGame.reroll_action([5])
    assert "score chance" in game.describe_action(game.box_action("chance"))
    assert "never legal" in game.describe_action(0)


def test_engine_rejects_wrong_rules_and_player_counts() -> None:
    with pytest.raises(ConfigError, match="ScorecardRules"):
        ScorecardGame(FarkleRules())
    for n in (0, 9, 2.0):
        with pytest.raises(ConfigError, match="num_players"):
            ScorecardGame(SpiffelRules(), num_players=n)  # type: ignore[arg-type]


def test_history_records_each_scoring_event() -> None:
    game = new_game(YahtzeeRules(), seed=3)
    enter(game, [1, 1, 1, 2, 2], "full_house")
    ev = game.history[-1]
    assert (ev.player, ev.round, ev.box, ev.points, ev.upper_bonus, ev.five_kind_bonus, ev.joker) == (
        0, 0, "full_house", 25, 0, 0, False,
    )  # fmt: skip
    assert ev.throws[-1] == (1, 1, 1, 2, 2) and len(ev.throws) == 2
    assert ev.points == box_score("full_house", ev.throws[-1])


def test_clone_is_independent_and_replays_identically() -> None:
    game = new_game(DicePokerRules(), num_players=2, seed=9)
    game.apply(ALL)
    twin = game.clone()
    snapshot = state(twin)
    while not game.done:
        game.apply(game.legal_actions()[-1])
    assert state(twin) == snapshot
    while not twin.done:
        twin.apply(twin.legal_actions()[-1])
    assert twin.history == game.history and twin.totals() == game.totals()
