"""Text rendering: the scorecard game pad and the Farkle table, and the envs' render modes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401 - registers the ids
from dice_envs.engine import FarkleGame, ScorecardGame
from dice_envs.multiagent import farkle_v1, spiffel_v0
from dice_envs.render import format_dice, render_farkle, render_scorecard, render_text
from dice_envs.rules import FarkleRules, SpiffelRules


def row(text: str, label: str) -> list[str]:
    """The cells of the row starting with ``label``."""
    for line in text.splitlines():
        if line[:18].strip() == label:  # labels fill an 18-character column
            return line[18:].split()
    raise AssertionError(f"no row {label!r} in\n{text}")


def test_format_dice_marks_held_faces_once():
    assert format_dice((1, 1, 1, 5, 6), held=(1, 1)) == "[1] [1] 1 5 6"
    assert format_dice((2, 4), held=None) == "2 4"


def test_scorecard_pad_through_the_env():
    env = spiffel_v0.raw_env(num_players=2, render_mode="ansi")
    env.reset(seed=0)
    g = env.game
    g.dice_source.clear()
    g.dice_source.inject(6, 6, 6, 6, 6)
    env.step(31)  # re-throw all five
    text = env.render()
    assert "dice: 6 6 6 6 6   throw 2/3" in text and "[" not in text.splitlines()[-1]
    assert text.splitlines()[0] == "spiffel - round 1/13, player_0 to move"
    g.dice_source.inject(2, 3, 4, 5, 6)  # player_1's opening throw
    env.step(g.box_action("spiffel"))
    g.dice_source.inject(1, 1, 2, 3, 4)  # player_0's second opening throw
    env.step(g.box_action("ones"))  # player_1 strikes out "ones"
    g.dice_source.inject(1, 5, 6)
    env.step(ScorecardGame.reroll_action([2, 3, 4]))  # player_0 keeps 1 1
    text = env.render()
    assert row(text, "spiffel") == ["50", "."]
    assert row(text, "ones") == [".", "XXX"]
    assert row(text, "grand total") == ["50", "0"]
    assert row(text, "") == ["player_0*", "player_1"]
    assert "dice: [1] [1] 1 5 6   throw 2/3" in text
    assert text == render_text(env.game, held=(1, 1))


def test_scorecard_bonus_rows():
    g = ScorecardGame(SpiffelRules(upper_bonus_threshold=30), num_players=1, seed=0)
    g.dice_source.clear()
    g.dice_source.inject(6, 6, 6, 6, 6, 6, 6, 6, 6, 6)
    g.apply(31)
    g.apply(g.box_action("spiffel"))
    text = render_scorecard(g)
    assert "bonus due" in text and "joker" in text
    g.apply(g.box_action("sixes"))  # second Spiffel: 30 + upper bonus 35 + Spiffel bonus 100
    text = render_scorecard(g, names=["me"])
    assert row(text, "sixes") == ["30"]
    assert row(text, "upper total") == ["30"]
    assert row(text, "bonus (>=30)") == ["35"]
    assert row(text, "spiffel bonus") == ["100"]
    assert row(text, "grand total") == [str(g.total(0))] == ["215"]


def test_scorecard_game_over():
    env = spiffel_v0.raw_env(num_players=1, render_mode="ansi")
    env.reset(seed=2)
    while env.agents and not env.terminations["player_0"]:
        env.step(int(np.flatnonzero(env.observe("player_0")["action_mask"])[-1]))
    text = env.render()
    assert "game over" in text and "winners: player_0" in text and "." not in row(text, "chance")


def test_farkle_table():
    g = FarkleGame(FarkleRules(), num_players=2, seed=0, opening=(1, 1, 1, 2, 3, 5))
    g.dice_source.inject(5, 2, 3)
    g.apply(FarkleGame.action([0, 1, 2], bank=False))  # set aside 1 1 1, throw three
    text = render_farkle(g)
    assert "turn total: 1000" in text and "set aside: 1 1 1" in text
    assert "throw: 2 3 5   (3 dice)" in text and "player_0 to move" in text
    g.dice_source.inject(1, 4)
    g.apply(FarkleGame.action([2], bank=False))  # set aside the 5
    text = render_farkle(g)
    assert "turn total: 1050" in text and "set aside: 1 1 1 | 5" in text and "throw: 1 4" in text
    g.apply(FarkleGame.action([0], bank=True))  # bank 1150
    text = render_farkle(g)
    lines = text.splitlines()
    assert lines[1].split() == ["player_0", "1150", "turns", "1"]
    assert lines[2].split()[:2] == ["player_1*", "0"]
    assert "set aside: -" in text and "turn total: 0" in text


def test_human_mode_prints_after_every_move(capsys):
    env = farkle_v1.raw_env(num_players=2, render_mode="human")
    env.reset(seed=1)
    first = capsys.readouterr().out
    assert "farkle - target 10000" in first
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert "turn total" in capsys.readouterr().out or env.game.done
    assert env.render() is None


def test_render_without_mode_warns():
    env = spiffel_v0.raw_env(num_players=1)
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render"):
        assert env.render() is None


@pytest.mark.parametrize("env_id", ["dice_envs/Yahtzee-v0", "dice_envs/Farkle-v1"])
def test_gym_env_render_ansi(env_id):
    env = gym.make(env_id, render_mode="ansi", opponents=["random"])
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and text == render_text(env.unwrapped.game)
    assert "player_1" in text
