"""scripts/solve_farkle_field.py: the record of an N-player equilibrium solve (two seats agree with
the two-player solver), written atomically, never over an earlier record unasked, and bad input
refused before any solve."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
from pathlib import Path

import pytest

from tests.floats import assert_close

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def script(monkeypatch, tmp_path):
    monkeypatch.setenv("DICE_ENVS_CACHE", str(tmp_path / "cache"))
    spec = importlib.util.spec_from_file_location(
        "_script_solve_farkle_field", ROOT / "scripts" / "solve_farkle_field.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _refused(main, argv, capsys, *needles: str) -> None:
    """``main(argv)`` returns 2 with a one-line error naming ``needles`` and prints nothing else."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and err.count("\n") == 1, err
    assert all(n in err for n in needles), err


def test_two_seats_are_recorded_and_agree_with_the_two_player_solver(script, tmp_path, capsys):
    out = tmp_path / "record"
    argv = ["--players", "2", "--targets", "500", "--out", str(out)]
    assert script.main(argv) == 0
    record = json.loads((out / "farkle-multiplayer.json").read_text(encoding="utf-8"))
    [run] = record["runs"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", run["date"])
    assert run["command"] == shlex.join(["python", "scripts/solve_farkle_field.py", *argv])
    assert run["hardware"]["cpu"] and run["hardware"]["cores"] >= 1
    assert run["revision"]["version"] and run["cap"] == 0 and run["tol"] == script.TOL
    [solve] = run["solves"]
    assert (solve["players"], solve["target"], solve["rules"]["target"]) == (2, 500, 500)
    p = solve["win_probability"]
    assert len(p) == 2 and all(0 < q < 1 for q in p)
    assert_close(sum(p), 1.0)
    assert solve["sweeps"] == len(solve["residuals"]) == len(solve["sweep_end_s"]) >= 2
    assert solve["final_residual"] == solve["residuals"][-1] <= script.TOL < solve["residuals"][0]
    assert (
        0 < solve["final_round_s"] <= solve["sweep_end_s"][0] <= solve["sweep_end_s"][-1] <= solve["total_s"]
    )
    assert solve["two_player_check"]["max_abs_difference"] < 1e-9
    page = (out / "farkle-multiplayer.md").read_text(encoding="utf-8")
    assert page.startswith("# ") and run["command"] in page and f"{p[0]:.6f} / {p[1]:.6f}" in page
    assert "wrote" in capsys.readouterr().out

    before = (out / "farkle-multiplayer.json").read_bytes()
    _refused(script.main, argv, capsys, "farkle-multiplayer", "--force")
    assert (out / "farkle-multiplayer.json").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["farkle-multiplayer.json", "farkle-multiplayer.md"]


def test_bad_input_is_refused_before_any_solve(script, tmp_path, capsys):
    out = tmp_path / "record"
    with pytest.raises(SystemExit) as exc:
        script.main(["--players", "5", "--targets", "500", "--out", str(out)])
    assert exc.value.code == 2 and "--players: invalid choice: 5" in capsys.readouterr().err
    _refused(
        script.main, ["--players", "3", "--targets", "0", "--out", str(out)], capsys, "--targets 0", "target"
    )
    _refused(script.main, ["--players", "3", "--targets", "500", "500", "--out", str(out)], capsys, "twice")
    _refused(
        script.main, ["--players", "3", "--targets", "500", "--cap", "30", "--out", str(out)], capsys, "--cap"
    )
    _refused(
        script.main, ["--players", "3", "--targets", "500", "--out", str(out), "--append"], capsys, "--append"
    )
    out.mkdir()
    (out / "farkle-multiplayer.json").write_text("[1, 2]\n", encoding="utf-8")
    _refused(
        script.main,
        ["--players", "3", "--targets", "500", "--out", str(out), "--append"],
        capsys,
        "not a record",
    )
    assert [p.name for p in out.iterdir()] == ["farkle-multiplayer.json"]
