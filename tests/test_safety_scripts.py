"""Results are never lost: outputs checked before any game, written atomically, never overwritten unasked."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dice_envs.io import atomic_open, atomic_write_bytes, atomic_write_text, check_out_dir

ROOT = Path(__file__).resolve().parents[1]
EVALUATE = ROOT / "scripts" / "evaluate.py"
LEADERBOARD = ROOT / "scripts" / "leaderboard.py"


def _main(script: Path):
    return runpy.run_path(str(script))["main"]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------ dice_envs.io
def test_atomic_write_never_leaves_a_torn_file(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    atomic_write_text(target, "old\n")
    with pytest.raises(RuntimeError, match="killed"), atomic_open(target, "w", overwrite=True) as fh:
        fh.write("half of the new")
        raise RuntimeError("killed half-way")
    assert target.read_text() == "old\n" and _snapshot(tmp_path) == {"results.json": b"old\n"}
    atomic_write_bytes(target, b"new", overwrite=True)
    assert target.read_bytes() == b"new"


def test_atomic_write_refuses_to_overwrite_unasked(tmp_path: Path) -> None:
    target = tmp_path / "a.csv"
    target.write_text("mine")
    with pytest.raises(FileExistsError, match=r"a\.csv already exists; pass overwrite=True"):
        atomic_write_text(target, "theirs")
    with pytest.raises(IsADirectoryError, match="is a folder"):
        atomic_write_text(tmp_path, "x", overwrite=True)
    assert _snapshot(tmp_path) == {"a.csv": b"mine"}


def test_check_out_dir(tmp_path: Path) -> None:
    assert check_out_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # checking creates nothing
    (tmp_path / "results.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match=r"already holds results\.json; pass --force.*another --out$"):
        check_out_dir(tmp_path, files=["results.json", "games.csv"])
    with pytest.raises(FileExistsError, match=r"or choose another --runs$"):  # the option that named it
        check_out_dir(tmp_path, files=["results.json"], flag="--runs")
    check_out_dir(tmp_path, force=True, files=["results.json"])
    check_out_dir(tmp_path, files=["games.csv"])  # other files in the folder are not in the way
    with pytest.raises(FileExistsError, match=r"already holds notes\.txt, results\.json"):
        check_out_dir(tmp_path)  # files=None: any file counts
    with pytest.raises(FileExistsError, match=r"notes\.txt is an existing file, not a folder"):
        check_out_dir(tmp_path / "notes.txt")
    with pytest.raises(FileExistsError, match=r"notes\.txt is a file"):
        check_out_dir(tmp_path / "notes.txt" / "sub")


# ------------------------------------------------------------------------------ evaluate.py
def _eval_args(out: Path, *extra: str, games: str = "3") -> list[str]:
    args = ["--game", "farkle", "--agents", "random", "--players", "1", "--games", games, "--seed", "1"]
    return [
        *args,
        "--out",
        str(out),
        "--workers",
        "1",
        "--rules",
        "target=1000",
        "--quiet",
        "--no-plots",
        *extra,
    ]


def test_evaluate_checks_out_before_playing_and_never_overwrites(tmp_path: Path, capsys) -> None:
    main = _main(EVALUATE)
    out = tmp_path / "eval"
    assert main(_eval_args(out)) == 0
    first = _snapshot(out)
    assert set(first) == {"results.json", "games.csv"}
    start = time.perf_counter()
    assert main(_eval_args(out, games="1000000")) == 2  # a million games: refused before the first
    assert time.perf_counter() - start < 10
    err = capsys.readouterr().err
    assert f"output folder {out} already holds games.csv, results.json; pass --force" in err
    assert _snapshot(out) == first
    (out / "notes.txt").write_text("mine")
    assert main(_eval_args(out, "--force", games="4")) == 0
    after = _snapshot(out)
    assert after["notes.txt"] == b"mine" and json.loads(after["results.json"])["total_games"] == 4
    assert sorted(after) == ["games.csv", "notes.txt", "results.json"]  # no temporary file left


def test_evaluate_refuses_an_out_that_is_a_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "taken"
    out.write_text("mine")
    assert _main(EVALUATE)(_eval_args(out)) == 2
    assert f"output folder {out} is an existing file" in capsys.readouterr().err
    assert out.read_text() == "mine"


def test_evaluate_human_without_a_terminal_is_one_line(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(EVALUATE), "--game", "spiffel", "--agents", "human", "--out", str(tmp_path)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.strip() == "error: --agents human needs a terminal (stdin is not a tty)"
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------ leaderboard.py
def test_leaderboard_checks_every_output_first(tmp_path: Path, capsys) -> None:
    main = _main(LEADERBOARD)
    out, runs = tmp_path / "lb.md", tmp_path / "runs"
    args = ["--games", "1000000", "--only", "spiffel", "--out", str(out), "--runs", str(runs), "--quiet"]
    out.write_text("my leaderboard")
    assert main(args) == 2
    assert f"--out {out} already exists; pass --force" in capsys.readouterr().err
    out.unlink()
    (runs / "spiffel-solitaire").mkdir(parents=True)
    (runs / "spiffel-solitaire" / "scores.png").write_bytes(b"my plot")
    assert main(args) == 2
    assert "already holds scores.png; pass --force" in capsys.readouterr().err
    assert main([*args[:-5], "--out", str(tmp_path), "--runs", str(tmp_path / "r2"), "--quiet"]) == 2
    assert "is a folder; give the markdown file" in capsys.readouterr().err
    assert _snapshot(tmp_path) == {"runs/spiffel-solitaire/scores.png": b"my plot"}
