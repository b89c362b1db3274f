"""Game records (write, read, refuse bad files) and the review of every decision against the exact solvers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.commands import review as review_cmd
from agents.evaluation.gamerecord import (
    RecordError,
    parse_records,
    play_logged,
    read_records,
    record_text,
    write_records,
)
from agents.evaluation.regret import scorecard_regret
from agents.evaluation.review import FARKLE_KINDS, SCORECARD_KINDS, agent_games, review
from agents.registry import load
from dice_envs.rules import make_rules

ROOT = Path(__file__).resolve().parents[1]
FARKLE_SMALL = make_rules("farkle", target=400)


def test_review_of_a_recorded_heuristic_game_sums_to_its_regret(tmp_path, capsys) -> None:
    record, out = tmp_path / "h.jsonl", tmp_path / "review.json"
    assert (
        review_cmd.main(["--agent", "heuristic", "--games", "3", "--seed", "4", "--record", str(record)]) == 0
    )
    assert review_cmd.main([str(record), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "per decision" in text and "the 5 worst decisions" in text
    rows = json.loads(out.read_text())["rows"]
    per_game = [sum(r["loss"] for r in rows if r["game"] == g) for g in range(3)]
    expected = scorecard_regret("heuristic", "spiffel", games=3, seed=4).per_game
    assert per_game == pytest.approx(expected, abs=1e-9)
    assert len(rows) == sum(len(log.decisions) for log in read_records(record))


def test_record_round_trip_and_play_writes_one(tmp_path) -> None:
    logs = agent_games("threshold:300", FARKLE_SMALL, games=3, seed=2, opponent="random")
    path = write_records(tmp_path / "f.jsonl", logs)
    assert read_records(path) == logs
    with pytest.raises(FileExistsError):
        write_records(path, logs)  # never overwritten unasked
    lines = [f"s {b}" for b in range(1, 14)]
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "play.py"), "--game", "spiffel", "--seed", "3",
         "--record", str(tmp_path / "me.jsonl")],
        input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (log,) = read_records(tmp_path / "me.jsonl")
    assert log.seats == ("human",) and len(log.decisions) == 13 and log.scores is not None
    assert [d.action - 32 for d in log.decisions] == list(range(13))  # s 1 ... s 13: boxes in order


def test_evaluate_records_the_games_it_played(tmp_path) -> None:
    from agents.commands import evaluate

    path = tmp_path / "ev.jsonl"
    args = ["--game", "spiffel", "--agents", "heuristic", "random", "--games", "2", "--workers", "1"]
    args += [
        "--out",
        str(tmp_path / "out"),
        "--record-games",
        str(path),
        "--quiet",
        "--no-plots",
        "--no-exact",
    ]
    assert evaluate.main(args) == 0
    logs = read_records(path)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [log.seats for log in logs] == [("heuristic",)] * 2 + [("random",)] * 2
    for spec, mine in (("heuristic", logs[:2]), ("random", logs[2:])):
        mean = sum(log.scores[0] for log in mine) / 2
        assert mean == pytest.approx(results["agents"][spec]["mean_score"])
    assert all(log.dice == "runner" for log in logs)
    assert evaluate.main(args) == 2  # the record exists: not overwritten without --force


def test_review_of_a_two_player_scorecard_record_says_no_exact_reference(tmp_path, capsys) -> None:
    rules = make_rules("spiffel")
    seats = [load(s, game=rules, num_players=2, seed=0) for s in ("heuristic", "greedy")]
    path = write_records(tmp_path / "two.jsonl", [play_logged(rules, seats, ["heuristic", "greedy"], 1)])
    assert review_cmd.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert "no exact reference for 2-player spiffel" in err and "does not guess" in err


def _good_text() -> str:
    return record_text(agent_games("heuristic", "spiffel", games=1, seed=0))


def _edit(line: int, **changes: object) -> str:
    lines = _good_text().splitlines()
    obj = json.loads(lines[line])
    for k, v in changes.items():
        if isinstance(v, dict) and isinstance(obj.get(k), dict):
            obj[k] = {**obj[k], **v}
        else:
            obj[k] = v
    lines[line] = json.dumps(obj)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (lambda: "", "is empty"),
        (lambda: "{not json\n", "line 1: not JSON"),
        (lambda: "[1, 2]\n", "line 1: a line must be a JSON object"),
        (lambda: '{"format": "something else", "version": 1}\n', "not a game record"),
        (lambda: _edit(0, version=2), "record version 2 is not supported; this dice-envs reads version 1"),
        (lambda: _edit(1, game="chess"), "line 2: unknown game 'chess'"),
        (lambda: _edit(1, rules={"num_throws": 99}), "line 2: bad rules"),
        (lambda: _edit(1, seats=[]), "'seats' must be 1 to 8 agent specs"),
        (lambda: _edit(1, dice="loaded"), "'dice' must be one of new_game, runner"),
        (lambda: _edit(2, type="move"), "line 3: unknown line type 'move'; allowed: game, decision, result"),
        (lambda: _edit(2, state={"roll": "x"}), "state field 'roll' must look like"),
        (lambda: _edit(2, state={"roll": 10**9}), "line 3: the engine refuses the state"),
        (lambda: _edit(2, state={"current": 3}), "state field 'current' must be a seat 0 to 0, got 3"),
        (lambda: _edit(2, state={"extra": 1}), "a spiffel state has the fields"),
        (lambda: _edit(2, action=999), "line 3: action 999 is not legal there; legal: ["),
        (lambda: _edit(2, seat=1), "'seat' is 1, but in its state seat 0 is to move"),
        (lambda: _edit(2, action=True), "field 'action' must be int"),
        (lambda: "\n".join(_good_text().splitlines()[:-1]) + "\n", "game 0 has no result line"),
        (lambda: '{"format": "dice-envs game record", "version": 1}\n', "the record holds no game"),
    ],
)
def test_bad_record_files_get_clear_errors(text, message, tmp_path, capsys) -> None:
    with pytest.raises(RecordError) as exc:
        parse_records(text(), "bad.jsonl")
    assert message in str(exc.value)
    path = tmp_path / "bad.jsonl"
    path.write_text(text())
    assert review_cmd.main([str(path)]) == 2
    assert message in capsys.readouterr().err


def test_the_kinds_of_mistakes_follow_their_rules() -> None:
    rv = review(agent_games("random", "spiffel", games=7, seed=0))
    seen = set()
    for r in rv.rows:
        if r.loss == 0:
            assert r.kind is None
            continue
        seen.add(r.kind)
        rolled, rolled_best = r.choice.startswith("hold"), r.best.startswith("hold")
        if rolled != rolled_best or rolled:
            assert (
                r.kind == SCORECARD_KINDS[0 if rolled else 1] if rolled != rolled_best else SCORECARD_KINDS[2]
            )
        elif len(set(r.dice)) == 1:
            assert r.kind == "joker wasted"
        else:
            assert r.kind in ("upper bonus given up", "wrong box")
    assert set(SCORECARD_KINDS) - {"joker wasted"} <= seen
    farkle = review(agent_games("random", FARKLE_SMALL, games=6, seed=0))
    for r in farkle.rows:
        if r.loss > 0:
            bank, bank_best = r.choice.endswith("bank"), r.best.endswith("bank")
            want = 0 if bank and not bank_best else 1 if bank_best and not bank else 2
            assert r.kind == FARKLE_KINDS[want]
    assert farkle.summary()["wrong_decisions"] > 0
