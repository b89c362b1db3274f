"""Command-line edges refused before any work, with one ``error:`` line: ``benchmark``'s output path,
opponent specs and seed; and a resumed ``trainer: sb3`` run's monitor file,
which keeps the episodes up to its checkpoint only."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.commands import benchmark
from agents.commands.benchmark import envs

ROOT = Path(__file__).resolve().parents[1]
QUICK = ["envs", "--games", "spiffel", "--sizes", "1", "--sync-envs", "0", "--seconds", "0.01"]


def _one_error(err: str, *parts: str) -> str:
    """``err`` is one ``error: ...`` line holding every one of ``parts`` (no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert all(p in lines[0] for p in parts), err
    return lines[0]


@pytest.fixture
def no_run(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """``dice-envs benchmark envs``'s run replaced by a stand-in that records its calls."""
    calls: list[object] = []

    def fake(args: object) -> dict[str, object]:
        calls.append(args)
        return {"games": {}}

    monkeypatch.setattr(envs, "run", fake)
    return calls


# ----------------------------------------------------------------------------- benchmark --out
def test_benchmark_refuses_an_out_path_under_a_file_before_running(tmp_path: Path, capsys, no_run) -> None:
    blocker = tmp_path / "somefile.txt"
    blocker.write_text("a file, not a folder\n")
    assert benchmark.main([*QUICK, "--out", str(blocker / "x.json")]) == 2
    _one_error(capsys.readouterr().err, str(blocker), "is an existing file")
    assert no_run == [] and blocker.read_text() == "a file, not a folder\n"


def test_benchmark_refuses_a_folder_as_out(tmp_path: Path, capsys, no_run) -> None:
    assert benchmark.main([*QUICK, "--out", str(tmp_path)]) == 2
    _one_error(capsys.readouterr().err, str(tmp_path))
    assert no_run == []


def test_benchmark_writes_to_a_new_out_in_a_new_folder(tmp_path: Path, no_run) -> None:
    out = tmp_path / "new" / "bench.json"
    assert benchmark.main([*QUICK, "--out", str(out)]) == 0
    assert len(no_run) == 1 and out.is_file()


# ----------------------------------------------------------------------------- benchmark --opponents
def test_benchmark_refuses_an_unknown_opponent_before_running(capsys, no_run) -> None:
    assert benchmark.main([*QUICK, "--opponents", "greedy", "bogus"]) == 2
    _one_error(capsys.readouterr().err, "--opponents", "'bogus'", "random, greedy, heuristic")
    assert no_run == []


def test_benchmark_refuses_an_opponent_of_no_selected_game(capsys, no_run) -> None:
    assert benchmark.main([*QUICK, "--opponents", "max-expected"]) == 2
    _one_error(capsys.readouterr().err, "'max-expected'", "spiffel", "known: random")
    assert benchmark.main([*QUICK, "--opponents", "pretrained:farkle"]) == 2
    _one_error(capsys.readouterr().err, "pretrained:farkle", "farkle model")
    assert no_run == []


def test_benchmark_refuses_a_human_opponent(capsys, no_run) -> None:
    assert benchmark.main([*QUICK, "--opponents", "human"]) == 2
    _one_error(capsys.readouterr().err, "'human'", "a person")
    assert no_run == []


def test_benchmark_takes_an_opponent_that_fits_one_of_its_games(no_run) -> None:
    argv = [*QUICK, "--games", "spiffel", "farkle", "--opponents", "max-expected", "heuristic"]
    assert benchmark.main(argv) == 0  # spiffel skips max-expected as before, with a note
    assert len(no_run) == 1


def test_benchmark_skips_an_opponent_for_a_game_it_does_not_play(capsys) -> None:
    argv = [*QUICK, "--games", "spiffel", "farkle", "--opponents", "max-expected"]
    assert benchmark.main(argv) == 0
    out = capsys.readouterr().out
    assert "skipped opponent 'max-expected' for spiffel" in out and "native_1_vs_max-expected" in out


# ----------------------------------------------------------------------------- benchmark engine --seed
def test_benchmark_engine_refuses_a_negative_seed_without_a_traceback() -> None:
    cmd = [
        sys.executable,
        "-m",
        "agents.commands.cli",
        "benchmark",
        "engine",
        "--seed",
        "-1",
        "--seconds",
        "0.01",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1].endswith("error: --seed must be an integer >= 0, got -1")


def test_farkle_regret_refuses_a_negative_seed_by_its_flag(capsys, monkeypatch) -> None:
    pytest.importorskip("numba")
    import importlib.util

    spec = importlib.util.spec_from_file_location("_farkle_regret", ROOT / "scripts" / "farkle_regret.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(script, "farkle_regret", lambda *a, **k: pytest.fail("no game may be played"))
    assert script.main(["--agents", "heuristic", "--opponent", "greedy", "--seed", "-1"]) == 2
    _one_error(capsys.readouterr().err, "--seed must be a non-negative integer, got -1")


# ----------------------------------------------------------------------------- sb3 resume: monitor
def _monitor(path: Path) -> np.ndarray:
    """The episodes ``(r, l, t)`` of an SB3 monitor file."""
    return np.genfromtxt(path, delimiter=",", skip_header=2).reshape(-1, 3)


def test_a_resumed_sb3_run_drops_the_killed_runs_monitor_episodes_past_its_checkpoint(
    tmp_path: Path, one_torch_thread: None
) -> None:
    pytest.importorskip("sb3_contrib")
    from agents.training.config import TrainConfig
    from agents.training.train import train

    cfg = TrainConfig.from_yaml(ROOT / "agents" / "configs" / "train" / "tiny_solitaire.yaml").with_overrides(
        ["total_timesteps=512", "final_eval_games=0", "tensorboard=false"]
    )
    out = tmp_path / "run"
    train(cfg, out=out, resume=False, command="pytest")
    first = _monitor(out / "train_from_0.monitor.csv")
    steps = np.cumsum(first[:, 1])
    assert steps[-1] > 256  # episodes past the checkpoint the resume will start from
    # killed at 512 steps after the checkpoint at 256: the later checkpoints and the model never came
    for path in [*(out / "checkpoints").glob("model_[35]*_steps.zip"), *out.glob("tiny_solitaire.*")]:
        path.unlink()
    head = (out / "train_from_0.monitor.csv").read_text().splitlines()[:2]
    result = train(cfg, out=out, resume=True, command="pytest")
    assert result.resumed_from == out / "checkpoints" / "model_256_steps.zip"
    kept = _monitor(out / "train_from_0.monitor.csv")
    np.testing.assert_array_equal(kept, first[steps <= 256])  # the episodes up to the checkpoint, kept
    assert (out / "train_from_0.monitor.csv").read_text().splitlines()[:2] == head
    resumed = _monitor(out / "train_from_256.monitor.csv")
    assert len(resumed) > 0
    # one curve: cumulative steps of the whole run, across both files, run forward only
    curve = np.concatenate([np.cumsum(kept[:, 1]), 256 + np.cumsum(resumed[:, 1])])
    assert np.all(np.diff(curve) > 0) and curve[len(kept) - 1] <= 256 < curve[len(kept)]


def test_a_second_resume_from_an_earlier_checkpoint_drops_a_later_runs_monitor(
    tmp_path: Path, one_torch_thread: None
) -> None:
    pytest.importorskip("sb3_contrib")
    from agents.training.config import TrainConfig
    from agents.training.train import train

    cfg = TrainConfig.from_yaml(ROOT / "agents" / "configs" / "train" / "tiny_solitaire.yaml").with_overrides(
        ["total_timesteps=512", "final_eval_games=0", "tensorboard=false", "checkpoint_freq=256"]
    )
    out = tmp_path / "run"
    train(cfg, out=out, resume=False, command="pytest")
    saved = tmp_path / "saved"
    shutil.copytree(out, saved)
    # a resumed run that wrote train_from_256 and was killed, then its checkpoints lost but 256's
    (out / "train_from_256.monitor.csv").write_text((out / "train_from_0.monitor.csv").read_text())
    (out / "train_from_384.monitor.csv").write_text((out / "train_from_0.monitor.csv").read_text())
    for path in [*(out / "checkpoints").glob("model_512_steps.zip"), *out.glob("tiny_solitaire.*")]:
        path.unlink()
    train(cfg, out=out, resume=True, command="pytest")
    names = sorted(p.name for p in out.glob("train_from_*.monitor.csv"))
    assert names == ["train_from_0.monitor.csv", "train_from_256.monitor.csv"]  # 384's episodes dropped
    first = _monitor(saved / "train_from_0.monitor.csv")
    np.testing.assert_array_equal(
        _monitor(out / "train_from_0.monitor.csv"), first[np.cumsum(first[:, 1]) <= 256]
    )
