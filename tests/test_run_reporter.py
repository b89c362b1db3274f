"""A training run's log sinks (agents.training.artifacts.RunReporter): progress.csv, TensorBoard
scalars and the progress bar, fresh and resumed."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tensorboard")

from agents.training.artifacts import ProgressLog, RunReporter

FIELDS = ["steps", "train_return", "loss"]


def _reporter(out: Path, steps: int = 0, resumed: bool = False, **kw: bool) -> RunReporter:
    opts = {"tensorboard": True, "progress_bar": True} | kw
    return RunReporter(out, FIELDS, steps=steps, resumed=resumed, total_timesteps=4096, **opts)


def _scalars(tb_dir: Path, tag: str) -> list[tuple[int, float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tb_dir))
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def test_rows_reach_the_csv_tensorboard_and_the_bar(tmp_path: Path) -> None:
    rep = _reporter(tmp_path)
    for steps in (1024, 2048, 3072):
        rep.report({"steps": steps, "train_return": steps / 128, "loss": 0.5}, 1024)
    assert rep.bar.n == 3072 and rep.bar.total == 4096
    rep.close()
    rows = ProgressLog.read(tmp_path / "progress.csv")
    assert [int(r["steps"]) for r in rows] == [1024, 2048, 3072]
    assert _scalars(tmp_path / "tb", "train/train_return") == [(1024, 8.0), (2048, 16.0), (3072, 24.0)]
    assert [s for s, _ in _scalars(tmp_path / "tb", "train/loss")] == [1024, 2048, 3072]


def test_a_resumed_reporter_drops_the_rows_past_its_checkpoint(tmp_path: Path) -> None:
    rep = _reporter(tmp_path, progress_bar=False)
    for steps in (1024, 2048, 3072):
        rep.report({"steps": steps, "train_return": 1.0, "loss": 0.5}, 1024)
    rep.close()
    rep = _reporter(tmp_path, steps=2048, resumed=True)  # the checkpoint at 2048 steps
    assert rep.bar.n == 2048
    rep.report({"steps": 3072, "train_return": 2.0, "loss": 0.25}, 1024)
    rep.close()
    rows = ProgressLog.read(tmp_path / "progress.csv")
    assert [(int(r["steps"]), float(r["train_return"])) for r in rows] == [
        (1024, 1.0),
        (2048, 1.0),
        (3072, 2.0),
    ]
    # TensorBoard too: the row logged at the checkpoint's step stays, the later one is replaced
    assert _scalars(tmp_path / "tb", "train/train_return") == [(1024, 1.0), (2048, 1.0), (3072, 2.0)]


def test_sinks_switched_off_write_only_the_csv(tmp_path: Path) -> None:
    rep = _reporter(tmp_path, tensorboard=False, progress_bar=False)
    rep.report({"steps": 1024, "train_return": 1.0, "loss": 0.5}, 1024)
    rep.close()
    assert rep.bar is None and rep.writer is None
    assert not (tmp_path / "tb").exists()
    assert len(ProgressLog.read(tmp_path / "progress.csv")) == 1
