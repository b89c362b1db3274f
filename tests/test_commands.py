"""The command lines agree: --rules everywhere, help on every flag, typos answered; play.py's words."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path

import pytest

from agents.commands import datasets, evaluate, leaderboard, play, review, solve
from agents.players.human import HumanAgent
from dice_envs.encoding import encode
from dice_envs.engine import new_game
from dice_envs.rules import make_rules

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "datasets": datasets.main,
    "evaluate": evaluate.main,
    "play": play.main,
    "review": review.main,
    "solve": solve.main,
    "leaderboard": leaderboard.main,
}


class _Captured(Exception):
    pass


def parser_of(main, monkeypatch) -> argparse.ArgumentParser:
    """The parser a command's ``main`` builds (captured when it parses)."""
    seen: list[argparse.ArgumentParser] = []

    def capture(self, args=None, namespace=None):
        seen.append(self)
        raise _Captured

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", capture)
    with pytest.raises(_Captured):
        main([])
    return seen[0]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_flag_has_help(name: str, monkeypatch) -> None:
    parser = parser_of(COMMANDS[name], monkeypatch)
    missing = [
        a.option_strings or a.dest
        for a in parser._actions
        if a.help is None and not isinstance(a, argparse._HelpAction)
    ]
    assert not missing, f"{name}: flags without help: {missing}"


@pytest.mark.parametrize("name", ["datasets", "evaluate", "play", "solve"])
def test_rule_parameters_use_the_same_flag(name: str, monkeypatch) -> None:
    parser = parser_of(COMMANDS[name], monkeypatch)
    rules = [a for a in parser._actions if "--rules" in a.option_strings]
    assert rules and rules[0].nargs == "*" and rules[0].metavar == "KEY=VALUE"


def _run(script: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), *args],
        input=stdin, capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip


def test_unknown_agent_is_answered_with_the_known_ones(tmp_path) -> None:
    out = _run("evaluate.py", "--game", "farkle", "--agents", "randm", "--out", str(tmp_path / "e"))
    assert out.returncode == 2
    assert (
        "unknown agent spec 'randm' for farkle; known: random, greedy, heuristic, max-expected" in out.stderr
    )
    assert not (tmp_path / "e").exists()


def test_solve_takes_rules_like_every_command(capsys) -> None:
    assert solve.main(["farkle", "--rules", "target=5000", "bank_minimum=300"]) == 0
    assert "'bank_minimum': 300" in capsys.readouterr().out


def _human(text: str, rules, game):
    out = io.StringIO()
    human = HumanAgent(rules, input=io.StringIO(text), output=out)
    action = human.act(encode(game, 0), game.action_mask())
    return action, out.getvalue()


def test_short_forms_ambiguous_prefixes_and_box_scores() -> None:
    rules = make_rules("spiffel")
    g = new_game(rules, seed=0)  # dice (2, 2, 4, 4, 6)
    action, said = _human("k44\n", rules, g)
    assert g.describe_action(action) == "re-throw dice [0, 1, 4] (hold [4, 4])"
    action, _ = _human("r26\n", rules, g)
    assert g.describe_action(action) == "re-throw dice [0, 4] (hold [2, 4, 4])"
    assert "would score: ones 0, twos 4, threes 0, fours 8, fives 0, sixes 6" in said
    assert "upper section: 0 of 63 for the bonus of 35 (63 to go)" in said
    action, said = _human("f\nfu\n", rules, g)
    assert "'f' could be: fours, fives, four_of_a_kind, full_house" in said
    assert g.categories[action - 32] == "full_house"


def test_play_farkle_in_plain_english_with_final_round_and_results() -> None:
    out = _run(
        "play.py", "--game", "farkle", "--opponents", "threshold:300", "--rules", "target=1000",
        "bank_minimum=0", "--seed", "2", stdin="b\n" * 60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "P2 is threshold:300" in text
    assert "== turn 1: you (human), banked 0 ==" in text and "== turn 1: P2 (threshold:300)" in text
    assert "you bank " in text and "P2 banks " in text
    assert "farkled: " in text and "scores nothing" in text
    assert "*** final round: " in text and "reached 1000" in text
    table = text.split("final results", 1)[1]
    assert "place" in table and "threshold:300" in table and "winner" in table


def test_play_spiffel_announces_the_final_round_and_results() -> None:
    out = _run("play.py", "--game", "spiffel", "--opponents", "greedy", "--seed", "3",
               stdin="".join(f"s {b}\n" for b in range(1, 14)))  # fmt: skip
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "== round 1 of 13: you (human) ==" in text and "== round 13 of 13: P2 (greedy) ==" in text
    assert text.count("*** final round (13 of 13) ***") == 1
    results = text.split("final results", 1)[1]
    assert "upper bonus" in results and "greedy" in results and "winner" in results
