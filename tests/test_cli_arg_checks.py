"""Bad command-line input is refused before any game, with one ``error:`` line and exit status 2.

Negative seeds, leaderboard numbers, measure_bots inputs, benchmark ranges, and bare digits in a
scorecard game of ``play``.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import agents
from agents.commands import benchmark, evaluate, leaderboard, play
from agents.players.human import HumanAgent
from dice_envs.encoding import encode
from dice_envs.engine import FarkleGame, new_game
from dice_envs.rules import ConfigError, make_rules

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
PRETRAINED = ROOT / "agents" / "pretrained"


def _one_error(err: str, message: str) -> None:
    """``err`` is one ``error: ...`` line holding ``message`` (no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and message in lines[0], err
    assert "Traceback" not in err


def _measure_bots():
    """scripts/measure_bots.py as a module."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        import measure_bots
    finally:
        sys.path.remove(str(SCRIPTS))
    return measure_bots


# --------------------------------------------------------------------------- seeds
SEED_MSG = "--seed must be a non-negative integer, got -1"


def test_evaluate_refuses_a_negative_seed(tmp_path: Path, capsys) -> None:
    out = tmp_path / "ev"
    argv = ["--game", "spiffel", "--agents", "random", "--games", "2", "--seed", "-1", "--out", str(out)]
    assert evaluate.main([*argv, "--workers", "1", "--quiet"]) == 2
    _one_error(capsys.readouterr().err, SEED_MSG)
    assert not out.exists()  # refused before the output folder was touched


def test_play_refuses_a_negative_seed(capsys, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    assert play.main(["--seed", "-1"]) == 2
    _one_error(capsys.readouterr().err, SEED_MSG)


def _play_script(seed: str, typed: str) -> subprocess.CompletedProcess[str]:
    """``scripts/play.py --seed SEED`` with ``typed`` as its keyboard."""
    cmd = [sys.executable, str(SCRIPTS / "play.py"), "--seed", seed]
    return subprocess.run(cmd, input=typed, capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_play_script_refuses_a_negative_seed() -> None:
    out = _play_script("-1", "q\n")
    assert out.returncode == 2
    _one_error(out.stderr, SEED_MSG)


def test_leaderboard_refuses_a_negative_seed(tmp_path: Path, capsys) -> None:
    argv = ["--only", "spiffel", "--games", "2", "--seed", "-1", "--no-exact", "--quiet"]
    assert leaderboard.main([*argv, "--out", str(tmp_path / "b.md"), "--runs", str(tmp_path / "rb")]) == 2
    _one_error(capsys.readouterr().err, SEED_MSG)
    assert list(tmp_path.iterdir()) == []


def test_measure_bots_refuses_negative_seeds(capsys) -> None:
    mb = _measure_bots()
    assert mb.main(["--bots", "farkle", "--games", "4", "--seed", "-1"]) == 2
    _one_error(capsys.readouterr().err, SEED_MSG)
    assert mb.main(["--bots", "farkle", "--games", "4", "--seeds", "1", "-2"]) == 2
    _one_error(capsys.readouterr().err, "--seeds must be a non-negative integer, got -2")


@pytest.mark.parametrize("seed", [-1, "abc", 1.5, True])
def test_agents_load_refuses_a_bad_seed_by_name(seed) -> None:
    with pytest.raises(ConfigError, match=r"seed must be None or a non-negative integer, got"):
        agents.load("random", game="spiffel", seed=seed)
    with pytest.raises(ValueError, match="seed"):  # ConfigError is a ValueError
        agents.load("heuristic", game="farkle", num_players=2, seed=seed)


def test_agents_load_still_takes_good_seeds() -> None:
    import numpy as np

    assert agents.load("random", game="spiffel", seed=None) is not None
    assert agents.load("random", game="spiffel", seed=np.uint32(7)) is not None
    assert agents.load("heuristic", game="farkle", num_players=2, seed=0) is not None


# --------------------------------------------------------------------------- leaderboard
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--only", "spiffel", "--games", "0"], "--games must be a positive integer, got 0"),
        (
            ["--only", "spiffel", "--games", "2", "--workers", "0"],
            "--workers must be a positive integer, got 0",
        ),
        (
            ["--only", "farkle", "--games", "3", "--tournament-games", "0"],
            "--tournament-games must be a positive integer, got 0",
        ),
        (
            ["--only", "farkle", "--games", "3", "--farkle-solitaire-games", "-2"],
            "--farkle-solitaire-games must be a positive integer, got -2",
        ),
    ],
)
def test_leaderboard_checks_every_number_before_any_game(tmp_path: Path, capsys, args, message) -> None:
    out, runs = tmp_path / "f.md", tmp_path / "rf"
    assert leaderboard.main([*args, "--no-exact", "--quiet", "--out", str(out), "--runs", str(runs)]) == 2
    _one_error(capsys.readouterr().err, message)
    assert not runs.exists() and not out.exists()  # no game was played, nothing written


def test_leaderboard_only_needs_a_game(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        leaderboard.main(["--only", "--out", str(tmp_path / "x.md"), "--runs", str(tmp_path / "r")])
    assert exc.value.code == 2
    assert "--only: expected at least one argument" in capsys.readouterr().err
    assert not (tmp_path / "x.md").exists()


def test_leaderboard_script_gives_one_error_line_and_status_2(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPTS / "leaderboard.py"), "--only", "spiffel", "--games", "0", "--no-exact",
         "--out", str(tmp_path / "a.md"), "--runs", str(tmp_path / "ra")],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 2
    _one_error(out.stderr, "--games must be a positive integer, got 0")


# --------------------------------------------------------------------------- measure_bots
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bots", "farkle", "--games", "0"], "--games must be a positive integer, got 0"),
        (["--bots", "farkle", "--games", "-5"], "--games must be a positive integer, got -5"),
        (
            ["--bots", "spiffel", "farkle", "--games", "4", "--opponents", "bogus"],
            "--opponents 'bogus' for farkle: unknown agent spec 'bogus'",
        ),
        (
            ["--bots", "spiffel", "farkle", "--games", "4", "--opponents", "threshold:x"],
            "threshold spec needs an integer",
        ),
        (
            ["--bots", "farkle", "--games", "4", "--opponents"],
            "farkle is a multi-player bot: give --opponents",
        ),
        (["--bots", "nobot", "--games", "4"], "no bot "),
    ],
)
def test_measure_bots_checks_its_inputs_before_any_game(capsys, monkeypatch, args, message) -> None:
    mb = _measure_bots()
    monkeypatch.setattr(mb, "measure", lambda *a, **k: pytest.fail("a bot was measured"))
    assert mb.main(args) == 2
    _one_error(capsys.readouterr().err, message)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("outdir", None, "is a folder"),
        ("notes.txt", "notes\n", "must be a .json file path"),
        ("nodir/x.json", None, "the folder"),
        ("bad.json", "not json", "is not a figures file of measure_bots.py (JSONDecodeError"),
        ("list.json", "[1, 2, 3]", "is not a figures file of measure_bots.py (it holds a JSON list)"),
        ("other.json", '{"important": 1}', "is not a figures file of measure_bots.py (entries 'important')"),
    ],
)
def test_measure_bots_refuses_an_out_it_did_not_write(
    tmp_path: Path, capsys, monkeypatch, name, content, message
) -> None:
    mb = _measure_bots()
    monkeypatch.setattr(mb, "measure", lambda *a, **k: pytest.fail("a bot was measured"))
    out = tmp_path / name
    if name == "outdir":
        out.mkdir()
    elif content is not None:
        out.write_text(content)
    before = out.read_text() if out.is_file() else None
    assert mb.main(["--bots", "farkle", "--games", "4", "--opponents", "random", "--out", str(out)]) == 2
    _one_error(capsys.readouterr().err, message)
    assert (out.read_text() if out.is_file() else None) == before  # untouched


def test_measure_bots_recognises_its_own_figures(tmp_path: Path) -> None:
    mb = _measure_bots()
    shipped = PRETRAINED / "measurements.json"
    if shipped.is_file():
        assert mb.read_figures(shipped) == json.loads(shipped.read_text())
    mine = {
        "farkle": {"bot": "farkle", "game": "farkle", "num_players": 2, "games": 4, "seed": 1, "vs": {}},
        "spiffel": {"bot": "spiffel", "game": "spiffel", "num_players": 1, "games": 4, "mean_score": 1.0},
    }
    out = tmp_path / "m.json"
    out.write_text(json.dumps(mine))
    assert mb.read_figures(out) == mine
    assert mb.read_figures(tmp_path / "new.json") == {}
    out.write_text(json.dumps({"farkle": {**mine["farkle"], "bot": "other"}}))  # filed under another name
    with pytest.raises(ConfigError, match="not a figures file"):
        mb.read_figures(out)


# --------------------------------------------------------------------------- benchmark
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["envs", "--sizes", "0"], "--sizes must be an integer >= 1, got 0"),
        (["envs", "--sizes", "4", "-4"], "--sizes must be an integer >= 1, got -4"),
        (["envs", "--seconds", "-1"], "--seconds must be a number of seconds > 0, got -1.0"),
        (["envs", "--seconds", "0"], "--seconds must be a number of seconds > 0, got 0.0"),
        (["envs", "--seconds", "nan"], "--seconds must be a number of seconds > 0, got nan"),
        (["envs", "--sync-envs", "-3"], "--sync-envs must be an integer >= 0, got -3"),
        (["envs", "--threads", "-2"], "--threads must be an integer >= 1, got -2"),
        (["envs", "--threads", "0"], "--threads must be an integer >= 1, got 0"),
        (["envs", "--scalar-opponents", "0"], "--scalar-opponents must be an integer >= 1, got 0"),
        (["envs", "--scalar-opponents", "8"], "--scalar-opponents must be at most 7, got 8"),
        (["training", "--loop-envs", "0"], "--loop-envs must be an integer >= 1, got 0"),
        (["training", "--threads", "0"], "--threads must be an integer >= 1, got 0"),
        (["engine", "--seconds", "0"], "--seconds must be a number of seconds > 0, got 0.0"),
        (["engine", "--players", "9"], "--players must be an integer in 1-8, got 9"),
        (["engine", "--seed", "-1"], "--seed must be an integer >= 0, got -1"),
        (["recipe", "--train-steps", "0"], "--train-steps must be an integer >= 1, got 0"),
        (["envs", "--loop-envs", "8"], "unrecognized arguments: --loop-envs"),  # a training option
    ],
)
def test_benchmark_range_checks(capsys, args, message) -> None:
    name, rest = args[0], args[1:]
    with pytest.raises(SystemExit) as exc:
        benchmark.parse_args([name, "--games", "spiffel", *rest] if name != "recipe" else args)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_benchmark_command_refuses_negative_threads_with_status_2() -> None:
    argv = ["-m", "agents.commands.cli", "benchmark", "envs", "--games", "spiffel", "--threads", "-2"]
    out = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2
    assert "--threads must be an integer >= 1, got -2" in out.stderr and "Traceback" not in out.stderr
    assert "usage: dice-envs benchmark envs" in out.stderr


def test_benchmark_accepts_good_numbers() -> None:
    args = benchmark.parse_args(
        ["envs", "--sizes", "1", "64", "--sync-envs", "0", "--seconds", "0.5", "--threads", "1"]
    )
    assert args.sizes == [1, 64] and args.sync_envs == 0 and args.seconds == 0.5 and args.threads == 1


# --------------------------------------------------------------------------- bare digits in play
def _ask(text: str, game: str, seed: int = 0):
    rules = make_rules(game)
    g = new_game(rules, seed=seed)
    out = io.StringIO()
    human = HumanAgent(rules, input=io.StringIO(text), output=out)
    action = human.act(encode(g, 0), g.action_mask())
    return g, action, out.getvalue()


@pytest.mark.parametrize("game", ["spiffel", "dice_poker", "yahtzee"])
def test_bare_digits_are_ambiguous_in_a_scorecard_game(game: str) -> None:
    g, action, said = _ask("5\n6 6 5\n13\nk 4 4\n", game)
    assert "'5' is ambiguous: type `k 5` to hold the fives" in said
    assert "`s 5` / `s fives` to score" in said
    assert "'6 6 5' is not a command: type `k 6 6 5` to hold those faces" in said
    assert f"`s 13` / `s {g.categories[12]}` to score" in said
    assert g.describe_action(action) == "re-throw dice [0, 1, 4] (hold [4, 4])"  # only k 4 4 acted


def test_odd_digit_strings_are_explained_not_crashed_on() -> None:
    g, action, said = _ask("\u00b2\n" + "9" * 5000 + "\n0\ns 1\n", "spiffel")
    assert "no box '\u00b2'" in said and "is neither dice to hold nor a box number (1-13)" in said
    assert g.categories[action - 32] == "ones"


def test_bare_digits_on_the_last_throw_only_hint_the_box() -> None:
    rules = make_rules("spiffel")
    g = new_game(rules, seed=0)
    g.apply(1)
    g.apply(1)  # third throw: no throws left
    out = io.StringIO()
    human = HumanAgent(rules, input=io.StringIO("5\ns 5\n"), output=out)
    action = human.act(encode(g, 0), g.action_mask())
    assert "'5' is not a command: type `s 5` / `s fives` to score" in out.getvalue()
    assert g.categories[action - 32] == "fives"


def test_bare_digits_still_set_dice_aside_in_farkle() -> None:
    g = FarkleGame(make_rules("farkle"), seed=0, opening=(1, 2, 3, 4, 5, 6))
    human = HumanAgent(g.rules, input=io.StringIO("1 5\n"), output=io.StringIO())
    assert g.describe_action(human.act(encode(g, 0), g.action_mask())) == "set aside [1, 5] then throw on"


def test_play_script_does_not_score_a_bare_digit() -> None:
    out = _play_script("1", "66\n5\nq\n")
    assert out.returncode == 0, out.stderr
    assert "'5' is ambiguous" in out.stdout
    assert "score fives" not in out.stdout and "bye" in out.stdout
