"""scripts/solve_farkle_win.py and scripts/farkle_regret.py: every input checked before the work
(one-line errors, no traceback, nothing written), opponents that fit the rules, atomic --out."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from agents.registry import check_fit
from dice_envs.rules import ConfigError, make_rules

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--target", "400", "--bank-minimum", "100"]  # solved in about a second


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"_script_{name}", ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def solve_script(monkeypatch, tmp_path):
    monkeypatch.setenv("DICE_ENVS_CACHE", str(tmp_path / "cache"))
    return _script("solve_farkle_win")


def _refused(main, argv, capsys, *needles: str) -> str:
    """``main(argv)`` returns 2 with a one-line error naming ``needles`` and prints nothing else."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and all(n in err for n in needles), err
    return err


def test_check_fit_refuses_unknown_specs_and_models_for_other_rules():
    small = make_rules("farkle", target=1000)
    for ok in ("heuristic", "threshold:300", "win-optimal", "pretrained:farkle"):
        check_fit(ok, make_rules("farkle"), 2)
    with pytest.raises(ConfigError, match="unknown agent spec 'randm'"):
        check_fit("randm", small, 2)
    for spec in ("pretrained:farkle", "planner:pretrained:farkle"):
        with pytest.raises(
            ConfigError, match=r"^pretrained:farkle does not fit these rules \(target: the game"
        ):
            check_fit(spec, small, 2)
    with pytest.raises(ConfigError, match="pretrained:spiffel is a spiffel model, not a farkle one"):
        check_fit("pretrained:spiffel", small, 2)


def test_solve_refuses_bad_inputs_before_solving(solve_script, monkeypatch, capsys, tmp_path):
    def no_solve(*args, **kwargs):
        raise AssertionError("solved before the inputs were checked")

    monkeypatch.setattr(solve_script, "solve_farkle_win", no_solve)
    main = solve_script.main
    unfit = ["--target", "1000", "--bankruptcy", "false", "--matches", "5"]
    _refused(
        main,
        [*unfit, "--opponents", "heuristic", "pretrained:farkle"],
        capsys,
        "error: --opponents: pretrained:farkle does not fit these rules (target: the game plays 1000, "
        "the model was trained for 10000, bankruptcy: the game plays False, the model was trained for True)",
    )
    _refused(main, ["--opponents", "randm", "--matches", "5"], capsys, "unknown agent spec 'randm'")
    _refused(main, [*TINY, "--matches", "-1"], capsys, "--matches must be 0 or more")
    runs = tmp_path / "runs"
    runs.mkdir()
    for force in ([], ["--force"]):
        _refused(main, ["--out", str(runs), *force], capsys, f"--out {runs} is a folder")
    blocker = tmp_path / "afile"
    blocker.write_text("mine")
    _refused(main, ["--out", str(blocker / "f.json"), "--force"], capsys, "afile is an existing file")
    _refused(main, ["--out", str(blocker)], capsys, f"--out {blocker} exists; pass --force to overwrite it")
    assert blocker.read_text() == "mine" and list(runs.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "runs"]  # no temporary file left


def test_solve_plays_only_the_default_opponents_that_fit_the_rules(solve_script, capsys):
    assert solve_script.main([*TINY, "--matches", "2"]) == 0
    printed = capsys.readouterr().out
    assert "left out of the default opponents, as they do not fit these rules: pretrained:farkle" in printed
    assert [line.split()[2] for line in printed.splitlines() if line.startswith("win-optimal vs ")] == [
        "max-expected",
        "heuristic",
        "threshold:400",
    ]


def test_solve_writes_out_atomically_with_the_normal_file_mode(solve_script, capsys, tmp_path):
    out = tmp_path / "new" / "figures.json"  # a missing folder is made
    assert solve_script.main([*TINY, "--out", str(out)]) == 0
    assert json.loads(out.read_text())["rules"]["target"] == 400
    assert out.stat().st_mode & 0o777 == 0o644  # the project's atomic write, not mkstemp's 0600
    capsys.readouterr()
    _refused(solve_script.main, [*TINY, "--out", str(out)], capsys, "exists; pass --force")
    assert solve_script.main([*TINY, "--check-cap", "--out", str(out), "--force"]) == 0
    assert "cap_doubling_max_change" in json.loads(out.read_text())
    assert [p.name for p in out.parent.iterdir()] == ["figures.json"]  # no temporary file left


def test_farkle_regret_checks_agents_and_out_before_any_game(monkeypatch, capsys, tmp_path):
    script = _script("farkle_regret")

    def no_games(*args, **kwargs):
        raise AssertionError("played before the inputs were checked")

    monkeypatch.setattr(script, "farkle_regret", no_games)
    small = ["--games", "5", "--rules", "target=1000"]
    runs = tmp_path / "runs"
    runs.mkdir()
    for force in ([], ["--force"]):
        _refused(
            script.main, [*small, "--agents", "heuristic", "--out", str(runs), *force], capsys, "is a folder"
        )
    _refused(
        script.main,
        [*small, "--agents", "pretrained:farkle"],
        capsys,
        "--agents: pretrained:farkle does not fit",
    )
    _refused(script.main, [*small, "--opponent", "randm"], capsys, "--opponent: unknown agent spec 'randm'")
    assert list(runs.iterdir()) == [] and [p.name for p in tmp_path.iterdir()] == ["runs"]


def test_farkle_regret_default_agents_leave_out_models_for_other_rules(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("DICE_ENVS_CACHE", str(tmp_path))
    script = _script("farkle_regret")
    played = []
    real = script.farkle_regret
    monkeypatch.setattr(
        script, "farkle_regret", lambda spec, *a, **k: played.append(spec) or real(spec, *a, **k)
    )
    assert script.main(["--games", "2", "--rules", "target=400", "bank_minimum=100"]) == 0
    assert played == ["max-expected", "heuristic"]
    assert "do not fit these rules: pretrained:farkle, pretrained:farkle-scratch" in capsys.readouterr().out
