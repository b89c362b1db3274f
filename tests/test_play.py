"""scripts/play.py driven through a scripted terminal session, and the human agent's parser."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.players.human import HumanAgent, HumanQuit
from dice_envs.encoding import encode
from dice_envs.engine import FarkleGame
from dice_envs.rules import make_rules

ROOT = Path(__file__).resolve().parents[1]
PLAY = ROOT / "scripts" / "play.py"


def run_play(args: list[str], stdin: str, tmp_path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    return subprocess.run(
        [sys.executable, str(PLAY), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )


def test_whole_spiffel_game_with_wrong_inputs(tmp_path) -> None:
    lines = ["hello", "k 9", "k 1 2 3 4 5 6", "?"]  # unknown box, bad face, too many dice, help
    lines += ["s 1", "s 1"]  # the second "s 1" (round 2) hits a filled box
    lines += [f"s {b}" for b in range(2, 14)]
    out = run_play(
        ["--game", "spiffel", "--opponents", "greedy", "--seed", "3"], "\n".join(lines) + "\n", tmp_path
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "no box 'hello'" in text
    assert "faces are digits 1-6" in text
    assert "do not hold" in text
    assert "commands:" in text
    assert "ones is already filled" in text
    assert "game over" in text and "winner(s)" in text
    assert text.count("== round") == 26  # 13 rounds for each of the two players
    assert "P2 is greedy" in text and "P2: " in text  # the opponent's moves are shown


def test_hint_and_rethrows_in_yahtzee(tmp_path) -> None:
    lines = ["r", "k"] + [f"s {b}" for b in range(1, 14)]
    out = run_play(["--game", "yahtzee", "--hint", "--seed", "1"], "\n".join(lines) + "\n", tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("hint:") >= 13
    assert "throw 3 of 3" in out.stdout
    assert "game over" in out.stdout


def test_whole_farkle_game(tmp_path) -> None:
    lines = ["x", "1 2 3 4 5 6 6"] + ["b"] * 60
    out = run_play(
        [
            "--game",
            "farkle",
            "--opponents",
            "threshold:300",
            "--rule",
            "target=500",
            "--rule",
            "bank_minimum=0",
            "--seed",
            "2",
        ],
        "\n".join(lines) + "\n",
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "unknown command 'x'" in out.stdout
    assert "game over" in out.stdout and "banked" in out.stdout


def test_end_of_input_exits_cleanly(tmp_path) -> None:
    out = run_play(["--game", "dice_poker", "--opponents", "random"], "k 6\n", tmp_path)
    assert out.returncode == 0 and "bye" in out.stdout and "Traceback" not in out.stderr


def test_bad_arguments_are_explained(tmp_path) -> None:
    out = run_play(["--game", "spiffel", "--opponents", "grandmaster"], "", tmp_path)
    assert out.returncode == 2 and "unknown agent spec 'grandmaster'" in out.stderr
    out = run_play(["--game", "farkle", "--rule", "target=lots"], "", tmp_path)
    assert out.returncode == 2 and "target" in out.stderr


def _farkle_human(text: str, opening, **rules):
    g = FarkleGame(make_rules("farkle", **rules), seed=0, opening=opening)
    out = io.StringIO()
    human = HumanAgent(g.rules, input=io.StringIO(text), output=out)
    return g, human, out


def test_human_farkle_commands() -> None:
    g, human, out = _farkle_human("2 3\nb 1\n1 5\n", (1, 2, 3, 4, 5, 6))
    a = human.act(encode(g, 0), g.action_mask())
    assert g.describe_action(a) == "set aside [1, 5] then throw on"
    said = out.getvalue()
    assert "does not score" in said and "banking needs a turn total over 350; this makes 100" in said
    g, human, _ = _farkle_human("b\n", (1, 1, 1, 1, 5, 2))
    assert human.act(encode(g, 0), g.action_mask()) == g.action([0, 1, 2, 3, 5], bank=True)  # best: 2050
    g, human, _ = _farkle_human("", (1, 1, 1, 1, 5, 2))
    with pytest.raises(HumanQuit):
        human.act(encode(g, 0), g.action_mask())
