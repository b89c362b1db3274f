"""One transition source: the batched engines' two halves against their step, the forward model and
the one-game machines, on random games of every ruleset with 1 to 3 seats.

Each example drives, with the same actions and the same dice:

* a batched engine by :meth:`step` (its :class:`ScriptedDice` give the faces);
* a second engine by hand, through the public halves ``apply_decisions`` and ``apply_throws``
  (each throw given as an outcome index of :func:`dice_envs.forward.throw_outcomes`);
* a :mod:`dice_envs.forward` batch and one scalar forward state per game;
* one one-game machine per game (:meth:`to_game`, then ``apply`` with the faces injected),

and checks after every step that all of them hold the same state and paid the same rewards.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dice_envs.engine import ScriptedDice, make_engine
from dice_envs.engine import farkle as farkle_engine
from dice_envs.engine import scorecard as scorecard_engine
from dice_envs.engine.dice import face_codes, outcome_code_table
from dice_envs.forward import FarkleBatch, FarkleState, ScorecardBatch, ScorecardState, outcome_index
from dice_envs.rules import make_rules

GAMES = ("spiffel", "dice_poker", "yahtzee", "farkle")
FAMILY = {
    "farkle": (farkle_engine, FarkleBatch, FarkleState),
    "scorecard": (scorecard_engine, ScorecardBatch, ScorecardState),
}


def _rules(name: str):  # a short Farkle game, so final rounds and ends come within the steps
    return make_rules("farkle", target=1500, max_turns=12) if name == "farkle" else make_rules(name)


def _faces(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    faces = rng.integers(1, 7, size=(n, 4000))
    if name != "farkle":  # every other game: five of a kind again and again (jokers, bonuses)
        faces[::2, :800] = faces[::2, :1]
    return faces


def _same(a: object, b: object, fields: tuple[str, ...], rows: np.ndarray, what: str) -> None:
    """Rows ``rows`` of the state arrays ``fields`` of ``a`` and ``b`` are equal."""
    for name in fields:
        left, right = np.asarray(getattr(a, name))[rows], np.asarray(getattr(b, name))[rows]
        np.testing.assert_array_equal(left, right, err_msg=f"{what}: {name}")


def _same_game(engine, game, i: int) -> None:
    """The one-game machine holds row ``i`` of the engine."""
    for name, value in game.row().items():
        np.testing.assert_array_equal(value, getattr(engine, name)[i], err_msg=f"game {i}: {name}")


def _throw_by_hand(module, halves, batch, states, faces, used) -> tuple:
    """Throw every pending die of ``halves``, the batch and the states from ``faces`` (outcome
    indices of the faces the engine's dice stream gives next); the batch's rewards summed."""
    total = batch.last_rewards.copy()
    while (halves.to_throw > 0).any():
        ch = np.flatnonzero(halves.to_throw > 0)
        k = halves.to_throw[ch]
        idx = np.array(
            [
                outcome_index(int(kk), faces[i, used[i] : used[i] + kk].tolist())
                for i, kk in zip(ch, k, strict=True)
            ]
        )
        used[ch] += k
        module.apply_throws(halves, ch, outcome_code_table()[k, idx])
        batch = batch.put(ch, batch.take(ch).apply_outcomes(idx))
        total[ch] += batch.last_rewards[ch]
        for i, j in zip(ch.tolist(), idx.tolist(), strict=True):
            states[i].apply_action(j)
    return batch, total


def _play(name: str, players: int, seed: int, n: int = 4, steps: int = 120) -> None:
    rng = np.random.default_rng(seed)
    rules, faces = _rules(name), _faces(name, n, rng)
    engine = make_engine(rules, n, players, dice=ScriptedDice(faces))
    halves = make_engine(rules, n, players, dice=ScriptedDice(faces))  # stepped by hand below
    module, batch_class, state_class = FAMILY[engine.family]
    fields = module.STATE_FIELDS
    batch = batch_class.from_engine(engine)
    states = [state_class.from_engine(engine, i) for i in range(n)]
    games = [engine.to_game(i) for i in range(n)]
    used = engine.dice.pos.copy()
    for _ in range(steps):
        live = np.flatnonzero(~engine.done)
        if not live.size:
            break
        masks = engine.action_masks(live)
        np.testing.assert_array_equal(batch.action_masks()[live], masks)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        before = engine.dice.pos.copy()
        rewards = engine.step(actions, live)

        halves.last_rewards[live] = 0
        module.apply_decisions(halves, live, actions)
        batch = batch.put(live, batch.take(live).afterstates(actions))
        for i, a in zip(live.tolist(), actions.tolist(), strict=True):
            states[i].apply_action(a)
        batch, total = _throw_by_hand(module, halves, batch, states, faces, used)

        np.testing.assert_array_equal(used, engine.dice.pos)
        _same(engine, halves, fields, np.arange(n), "engine step vs its halves")
        _same(engine, batch, fields[:-1], np.arange(n), "engine vs forward batch")
        np.testing.assert_array_equal(total[live], rewards)
        _same(batch, batch_class.from_states(states), fields, np.arange(n), "forward batch vs states")
        for j, i in enumerate(live.tolist()):
            game = games[i]
            game.dice_source.clear()
            game.dice_source.inject(*faces[i, before[i] : engine.dice.pos[i]].tolist())
            assert game.apply(int(actions[j])) == rewards[j].tolist()
            _same_game(engine, game, i)
            assert states[i].legal_actions() == (game.legal_actions() if not game.done else [])


@settings(max_examples=24, deadline=None)
@given(name=st.sampled_from(GAMES), players=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_halves_step_forward_and_one_game_machine_agree(name: str, players: int, seed: int) -> None:
    _play(name, players, seed)


@pytest.mark.parametrize("name", GAMES)
def test_every_ruleset_agrees_with_three_seats(name: str) -> None:
    _play(name, 3, seed=len(name))


@pytest.mark.parametrize("name", ["yahtzee", "farkle"])
def test_a_forward_model_that_leaves_the_engine_fails(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above sees a forward model that parts from the engine: here one whose
    decisions give seat 0 a point more than the engine's."""
    _, batch_class, _ = FAMILY["farkle" if name == "farkle" else "scorecard"]
    real = batch_class._engine.apply_decisions

    def a_point_more(s, g: np.ndarray, actions: np.ndarray) -> None:
        real(s, g, actions)
        s.totals[g, 0] += 1

    _play(name, 2, seed=0, steps=3)  # as it is: the same
    parted = types.SimpleNamespace(**vars(batch_class._engine))  # the engine keeps the real halves
    parted.apply_decisions = a_point_more
    monkeypatch.setattr(batch_class, "_engine", parted)
    with pytest.raises(AssertionError, match=r"engine vs forward batch: (totals|banked)"):
        _play(name, 2, seed=0, steps=3)


def test_a_throw_by_faces_or_by_outcome_is_the_same() -> None:
    """``apply_throws`` takes face codes: the code of faces in any order and the outcome's code
    give the same state."""
    engine = make_engine("yahtzee", 2, 1, seed=3)
    other = make_engine("yahtzee", 2, 1, seed=3)
    g = np.arange(2)
    for e in (engine, other):
        scorecard_engine.apply_decisions(e, g, np.array([31, 31]))  # re-throw all five
    faces = np.array([[6, 1, 6, 2, 6], [5, 5, 4, 4, 4]])
    scorecard_engine.apply_throws(engine, g, face_codes(faces))
    idx = [outcome_index(5, f) for f in faces.tolist()]
    scorecard_engine.apply_throws(other, g, outcome_code_table()[5, idx])
    _same(engine, other, scorecard_engine.STATE_FIELDS, g, "faces vs outcome")
    assert engine.dice_faces().tolist() == [[1, 2, 6, 6, 6], [4, 4, 4, 5, 5]]
    assert engine.throw.tolist() == [2, 2] and not engine.to_throw.any()
