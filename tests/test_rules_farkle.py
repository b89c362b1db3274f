"""The Farkle state machine driven through injected dice (``opening=`` and ``dice_source.inject``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from dice_envs.engine import FarkleGame, new_game
from dice_envs.rules import FarkleRules, SpiffelRules, make_rules
from dice_envs.rules.config import ConfigError
from dice_envs.rules.farkle import BANK_FLAG, N_ACTIONS

FARKLE_6 = (2, 2, 3, 4, 6, 6)  # nothing scores: no 1, no 5, no triple, not three pairs


def game_with(opening: Sequence[int], *later: int, num_players: int = 1, **params: object) -> FarkleGame:
    """A game whose first throw is ``opening`` and whose next throws take the ``later`` faces."""
    g = FarkleGame(make_rules("farkle", **params), num_players=num_players, seed=0, opening=opening)  # type: ignore[arg-type]
    g.dice_source.inject(*later)
    return g


def select(game: FarkleGame, faces: Sequence[int], bank: bool = False) -> int:
    """The action setting aside ``faces`` (leftmost matching dice, i.e. the canonical mask)."""
    used: set[int] = set()
    for f in faces:
        i = next(i for i, d in enumerate(game.dice) if d == f and i not in used)
        used.add(i)
    return FarkleGame.action(sorted(used), bank=bank)


def state(game: FarkleGame) -> tuple:
    return (
        game.summary(),
        game.dice,
        game.turn_total,
        game.first_throw,
        game.current_player,
        list(game.banked),
        list(game.turns),
        game.final_round_by,
        list(game.history),
        game.dice_source.rng.bit_generator.state,
        game.dice_source.pending,
    )


def kinds(game: FarkleGame) -> list[str]:
    return [e.kind for e in game.history]


# --------------------------------------------------------------------------- actions and banking
def test_action_space_and_opening() -> None:
    g = game_with([5, 1, 2, 3, 4, 6])
    assert g.dice == (1, 2, 3, 4, 5, 6) and g.first_throw and g.turn_total == 0
    assert g.n_actions == N_ACTIONS == 128 == FarkleRules().n_actions
    legal = g.legal_actions()
    assert np.array_equal(np.flatnonzero(g.action_mask()), legal)
    # throw-on selections: 1, 5, 1+5 and the straight; banking only the straight (2000 > 350)
    assert [a for a in legal if a < BANK_FLAG] == [0b000001, 0b010000, 0b010001, 0b111111]
    assert [a for a in legal if a >= BANK_FLAG] == [0b111111 + BANK_FLAG]


def test_bank_only_when_turn_total_exceeds_350() -> None:
    g = game_with([3, 3, 3, 5, 2, 4])  # 3-3-3 + 5 = 350 exactly
    assert g.dice == (2, 3, 3, 3, 4, 5)
    assert select(g, [3, 3, 3, 5]) in g.legal_actions()
    assert select(g, [3, 3, 3, 5], bank=True) not in g.legal_actions()
    with pytest.raises(ValueError, match="legal actions"):
        g.apply(select(g, [3, 3, 3, 5], bank=True))

    g = game_with([3, 3, 3, 1, 2, 4])  # 3-3-3 + 1 = 400
    assert select(g, [3, 3, 3, 1], bank=True) in g.legal_actions()
    assert select(g, [3, 3, 3], bank=True) not in g.legal_actions()  # 300
    assert g.apply(select(g, [3, 3, 3, 1], bank=True)) == [400]
    assert g.banked == [400] and g.turns == [1] and kinds(g)[-2:] == ["bank", "throw"]


def test_turn_total_accumulates_over_throws_before_banking() -> None:
    g = game_with([3, 3, 3, 5, 2, 4], 1, 6)  # 350 set aside, then 1-6 thrown with two dice
    assert g.apply(select(g, [3, 3, 3, 5])) == [0]
    assert g.dice == (1, 6) and g.turn_total == 350 and not g.first_throw
    assert g.legal_actions() == [0b01, 0b01 + BANK_FLAG]
    assert g.apply(0b01 + BANK_FLAG) == [450]
    assert g.banked == [450]


def test_bank_minimum_parameter() -> None:
    g = game_with([5, 2, 2, 3, 4, 6], bank_minimum=0)
    assert select(g, [5], bank=True) in g.legal_actions()
    assert g.apply(select(g, [5], bank=True)) == [50]
    g = game_with([1, 1, 1, 2, 3, 4], bank_minimum=1000)
    assert select(g, [1, 1, 1], bank=True) not in g.legal_actions()


def test_non_scoring_and_non_canonical_selections_are_illegal() -> None:
    g = game_with([1, 1, 2, 3, 4, 6])
    legal = g.legal_actions()
    assert FarkleGame.action([2], bank=False) not in legal  # the 2 alone
    assert FarkleGame.action([0, 2], bank=False) not in legal  # 1 + 2: a non-scoring die
    assert FarkleGame.action([1], bank=False) not in legal  # second 1 without the first
    assert FarkleGame.action([0], bank=False) in legal
    assert FarkleGame.action([0, 1], bank=False) in legal


# --------------------------------------------------------------------------- hot dice and farkles
def test_hot_dice_throws_all_six_again() -> None:
    g = game_with([1, 1, 1, 5, 5, 5], 2, 2, 2, 3, 4, 6)
    assert g.selection_points(0b111111) == 2500  # two triples
    assert g.apply(0b111111) == [0]
    assert g.dice == (2, 2, 2, 3, 4, 6) and g.dice_left == 6
    assert g.turn_total == 2500 and not g.first_throw
    assert g.apply(select(g, [2, 2, 2], bank=True)) == [2700]


def test_farkle_loses_the_turn_total_and_passes_the_turn() -> None:
    g = game_with([1, 2, 2, 3, 4, 6], 2, 3, 4, 6, 6, num_players=2)
    assert g.apply(select(g, [1])) == [0, 0]  # 100 set aside, then 2 3 4 6 6: farkle
    farkle_events = [e for e in g.history if e.kind == "farkle"]
    assert farkle_events[0].player == 0 and farkle_events[0].points == -100
    assert g.banked == [0, 0] and g.current_player == 1 and g.turns == [1, 0]
    assert g.turn_total == 0 and g.first_throw and g.dice_left == 6


def test_bankruptcy_wipes_the_bank_on_a_first_throw_farkle() -> None:
    g = game_with([1, 1, 1, 2, 3, 4], *FARKLE_6, num_players=1)
    # banking 1000 opens the next turn, whose first throw farkles: the bank drops to 0, so the
    # change of banked total over this call is 0
    assert g.apply(select(g, [1, 1, 1], bank=True)) == [0]
    assert g.banked == [0] and g.turns == [2]
    assert kinds(g)[:6] == ["throw", "set_aside", "bank", "throw", "farkle", "bankrupt"]
    ev = g.history[5]
    assert (ev.player, ev.points, ev.dice) == (0, -1000, FARKLE_6)


def test_bankruptcy_reward_lands_on_the_right_seat() -> None:
    # seat 0 banks 1000; seat 1 banks 500; seat 0's next first throw farkles -> bankrupt
    g = game_with([1, 1, 1, 2, 3, 4], 5, 5, 5, 2, 3, 4, *FARKLE_6, 1, 2, 3, 4, 6, 6, num_players=2)
    assert g.apply(select(g, [1, 1, 1], bank=True)) == [1000, 0]
    assert g.current_player == 1 and g.dice == (2, 3, 4, 5, 5, 5)
    rewards = g.apply(select(g, [5, 5, 5], bank=True))
    assert rewards == [-1000, 500]
    assert g.banked == [0, 500] and "bankrupt" in kinds(g)
    ev = next(e for e in g.history if e.kind == "bankrupt")
    assert (ev.player, ev.points, ev.dice) == (0, -1000, FARKLE_6)
    assert g.current_player == 1 and g.turns == [2, 1] and g.dice == (1, 2, 3, 4, 6, 6)


def test_no_bankruptcy_when_switched_off() -> None:
    g = game_with([1, 1, 1, 2, 3, 4], 5, 5, 5, 2, 3, 4, *FARKLE_6, num_players=2, bankruptcy=False)
    g.apply(select(g, [1, 1, 1], bank=True))
    assert g.apply(select(g, [5, 5, 5], bank=True)) == [0, 500]
    assert g.banked == [1000, 500] and "bankrupt" not in kinds(g) and "farkle" in kinds(g)


def test_farkle_on_a_later_throw_keeps_the_bank() -> None:
    g = game_with([1, 1, 1, 2, 3, 4], 1, 2, 2, 3, 4, 6, 2, 2, 3, 4, 6, 1, 2, 3, 4, 6, 6, num_players=1)
    g.apply(select(g, [1, 1, 1], bank=True))
    assert g.dice == (1, 2, 2, 3, 4, 6)
    rewards = g.apply(select(g, [1]))  # second throw: 2 2 3 4 6 -> farkle, not the first throw
    assert rewards == [0]
    assert g.banked == [1000] and "bankrupt" not in kinds(g)
    assert [e.points for e in g.history if e.kind == "farkle"] == [-100]
    assert g.turns == [2] and g.dice == (1, 2, 3, 4, 6, 6) and g.first_throw


def test_farkle_after_hot_dice_is_not_a_first_throw() -> None:
    g = game_with([1, 1, 1, 2, 3, 4], 1, 1, 1, 5, 5, 5, *FARKLE_6, 1, 2, 3, 4, 6, 6, num_players=1)
    g.apply(select(g, [1, 1, 1], bank=True))
    assert g.apply(0b111111) == [0]  # hot dice (2500), then the six re-thrown dice farkle
    assert g.banked == [1000] and "bankrupt" not in kinds(g)
    assert [e.points for e in g.history if e.kind == "farkle"] == [-2500]
    assert g.turns == [2] and g.dice == (1, 2, 3, 4, 6, 6)


# --------------------------------------------------------------------------- end of game
def test_target_finishes_the_round_then_ends() -> None:
    # seat 1 of 3 reaches the target; seat 2 still plays; seat 0 does not get another turn
    g = game_with(
        [5, 2, 2, 3, 4, 6],
        *[2, 2, 3, 4, 6],
        *[1, 1, 1, 1, 2, 3],
        *[5, 2, 2, 3, 4, 6],
        num_players=3,
        target=1000,
    )
    assert g.apply(select(g, [5])) == [0, 0, 0]  # seat 0 farkles its second throw
    assert g.current_player == 1 and g.turns == [1, 0, 0] and g.dice == (1, 1, 1, 1, 2, 3)
    assert g.apply(select(g, [1, 1, 1, 1], bank=True)) == [0, 2000, 0]
    assert g.final_round_by == 1 and not g.done
    assert g.current_player == 2 and g.dice == (2, 2, 3, 4, 5, 6)
    assert g.apply(select(g, [5], bank=False)) == [0, 0, 0]  # then random dice: farkle or not
    while not g.done:
        assert g.current_player == 2
        acts = g.legal_actions()
        g.apply(acts[-1] if acts[-1] >= BANK_FLAG else acts[0])
    assert g.turns == [1, 1, 1] and g.winners() == [1] and not g.truncated
    assert g.legal_actions() == []
    with pytest.raises(ValueError, match="game is over"):
        g.apply(1)


def test_solitaire_ends_on_reaching_the_target() -> None:
    g = game_with([1, 1, 1, 1, 1, 5], target=4000)
    assert g.apply(0b111111 + BANK_FLAG) == [4050]
    assert g.done and not g.truncated and g.winners() == [0]


def test_last_seat_reaching_target_ends_at_once_and_ties_share() -> None:
    g = game_with([1, 1, 1, 2, 3, 4], 1, 1, 1, 2, 3, 4, num_players=2, target=1000)
    g.apply(select(g, [1, 1, 1], bank=True))
    assert not g.done and g.final_round_by == 0 and g.current_player == 1
    g.apply(select(g, [1, 1, 1], bank=True))
    assert g.done and g.banked == [1000, 1000] and g.winners() == [0, 1]
    assert g.summary()["winners"] == [0, 1]


def test_max_turns_truncates() -> None:
    g = FarkleGame(make_rules("farkle", max_turns=3), num_players=2, seed=4)
    while not g.done:
        g.apply(g.legal_actions()[0])  # never bank
    assert g.truncated and g.turns == [3, 3] and g.banked == [0, 0]
    assert g.summary()["truncated"] is True
    unlimited = make_rules("farkle", max_turns=None)
    assert unlimited.max_turns is None


# --------------------------------------------------------------------------- errors and state
def test_illegal_actions_raise_naming_legal_actions_and_keep_the_state() -> None:
    g = game_with([1, 2, 2, 3, 4, 6], num_players=2)
    legal = g.legal_actions()
    for action in [0, 2, BANK_FLAG + 1, N_ACTIONS, -1, 1000, True, 1.0, "1", None, np.int32(2)]:
        before = state(g)
        with pytest.raises(ValueError, match="legal actions") as err:
            g.apply(action)
        assert str(legal) in str(err.value)
        assert state(g) == before
    assert g.apply(np.int64(1)) == [0, 0]


def test_engine_rejects_bad_construction() -> None:
    with pytest.raises(ConfigError, match="FarkleRules"):
        FarkleGame(SpiffelRules())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="num_players"):
        FarkleGame(FarkleRules(), num_players=0)
    with pytest.raises(ValueError, match="expected 6 dice"):
        FarkleGame(FarkleRules(), opening=(1, 2, 3))
    with pytest.raises(ValueError, match="0-5"):
        FarkleGame.action([6], bank=False)


def test_same_seed_same_game_and_clone_independence() -> None:
    def play(g: FarkleGame, rng: np.random.Generator) -> None:
        while not g.done:
            acts = g.legal_actions()
            g.apply(acts[int(rng.integers(len(acts)))])

    a, b = new_game("farkle", 3, seed=21), new_game("farkle", 3, seed=21)
    play(a, np.random.default_rng(1))
    play(b, np.random.default_rng(1))
    assert a.history == b.history and a.banked == b.banked
    c = new_game("farkle", 2, seed=5)
    twin = c.clone()
    snap = state(twin)
    play(c, np.random.default_rng(2))
    assert state(twin) == snap
    play(twin, np.random.default_rng(2))
    assert twin.history == c.history
