"""One rule for ``dice-envs train --resume`` of every trainer: continue from the newest intact
checkpoint, saying which and why the newer ones were skipped; refuse, touching nothing, when none
is intact. Every recipe key is checked before the first iteration; ``eval_every: 0`` and
``checkpoint_every: 0`` mean "only after the last iteration"."""

from __future__ import annotations

import fractions
import hashlib
import io
import shutil
from pathlib import Path

import numpy as np
import pytest

from agents.commands.train import main
from dice_envs.rules import ConfigError

SEARCH = [
    "--config",
    "spiffel-search-quick",
    "--no-progress",
    *("--set", "iterations=2", "--set", "games_per_iteration=8", "--set", "fit_steps=2"),
    *("--set", "batch_size=16", "--set", "hidden=[8]", "--set", "eval_every=1", "--set", "eval_games=4"),
    *("--set", "final_eval_games=4", "--set", "checkpoint_every=1"),
]
PPO = [
    "--config",
    "tiny_ppo",
    "--no-progress",
    *("--set", "eval_freq=0", "--set", "checkpoint_freq=1024", "--set", "tensorboard=false"),
    *("--set", "final_eval_games=2"),
]


def _files(folder: Path) -> dict[str, str]:
    """Every file of ``folder`` with its sha256."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _copy(run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run, tmp_path / "copy"))


@pytest.fixture(scope="module")
def search_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tiny search run: 2 iterations, checkpoints after each."""
    out = tmp_path_factory.mktemp("search") / "run"
    assert main([*SEARCH, "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["iter-0000001.npz", "iter-0000002.npz"]
    return out


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tiny native PPO run: 2,048 steps, checkpoints at 1,024 and 2,048."""
    out = tmp_path_factory.mktemp("ppo") / "run"
    assert main([*PPO, "--set", "total_timesteps=2048", "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / "checkpoints").glob("*.pt")) == [
        "ckpt_000000001024.pt",
        "ckpt_000000002048.pt",
    ]
    return out


@pytest.mark.parametrize("damage", ["garbage", "gone"])
def test_a_search_resume_with_no_intact_checkpoint_is_refused_and_touches_nothing(
    search_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    run = _copy(search_run, tmp_path)
    if damage == "gone":
        shutil.rmtree(run / "checkpoints")
    for ckpt in (run / "checkpoints").glob("*.npz"):
        ckpt.write_bytes(b"garbage")
    before = _files(run)
    assert {"spiffel-search-quick.npz", "spiffel-search-quick.json", "progress.csv"} <= set(before)
    assert main([*SEARCH, "--set", "iterations=3", "--out", str(run), "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"error: --resume: no checkpoint in {run / 'checkpoints'}" in err and "nothing" in err
    if damage == "garbage":
        assert "iter-0000001.npz" in err and "iter-0000002.npz" in err
    assert _files(run) == before  # model, card, progress.csv, config and checkpoints keep their bytes


def _truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:200])  # a zip cut short: BadZipFile


def _no_counters(path: Path) -> None:
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if k != "iteration"}
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path.write_bytes(buf.getvalue())


@pytest.mark.parametrize("damage", [_truncated, _no_counters])
def test_a_search_resume_falls_back_to_the_older_checkpoint_and_says_so(
    search_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage
) -> None:
    run = _copy(search_run, tmp_path)
    ckpts = run / "checkpoints"
    damage(ckpts / "iter-0000002.npz")
    assert main([*SEARCH, "--set", "iterations=3", "--out", str(run), "--resume"]) == 0
    err = capsys.readouterr().err
    assert f"warning: skipping checkpoint {ckpts / 'iter-0000002.npz'}" in err
    assert f"continuing from {ckpts / 'iter-0000001.npz'}" in err and "skipped" in err
    rows = (run / "progress.csv").read_text().splitlines()
    assert [r.split(",")[1] for r in rows[1:]] == ["1", "2", "3"]  # iteration 2 played again, then 3


def _pickled(path: Path) -> None:
    """A checkpoint that holds a pickled object beside its tensors, its .sha256 made to match."""
    import torch

    from agents.training.artifacts import CHECKPOINT_FORMAT

    buf = io.BytesIO()
    torch.save({"format": CHECKPOINT_FORMAT, "version": 1, "steps": 0, "x": fractions.Fraction(1, 3)}, buf)
    path.write_bytes(buf.getvalue())
    path.with_name(path.name + ".sha256").write_text(hashlib.sha256(buf.getvalue()).hexdigest() + "\n")


def test_a_ppo_checkpoint_holding_a_pickled_object_is_skipped_with_a_warning(
    ppo_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(ppo_run, tmp_path)
    ckpts = run / "checkpoints"
    _pickled(ckpts / "ckpt_000000002048.pt")
    assert main([*PPO, "--set", "total_timesteps=3072", "--out", str(run), "--resume"]) == 0
    err = capsys.readouterr().err
    assert f"warning: skipping checkpoint {ckpts / 'ckpt_000000002048.pt'}: it holds pickled objects" in err
    assert f"continuing from {ckpts / 'ckpt_000000001024.pt'}" in err


def test_a_ppo_resume_with_only_pickled_checkpoints_is_refused_and_touches_nothing(
    ppo_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(ppo_run, tmp_path)
    for ckpt in (run / "checkpoints").glob("*.pt"):
        _pickled(ckpt)
    before = _files(run)
    assert main([*PPO, "--set", "total_timesteps=3072", "--out", str(run), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "error: --resume: no checkpoint in" in err and "it holds pickled objects" in err
    assert _files(run) == before


def test_a_self_play_snapshot_holding_a_pickled_object_is_refused(tmp_path: Path) -> None:
    from agents.training.selfplay import load_snapshot

    path = tmp_path / "snapshot_000000001024.pt"
    _pickled(path)
    with pytest.raises(ValueError, match="pickled objects"):
        load_snapshot(path)


@pytest.mark.parametrize(
    ("opponent", "says"),
    [
        ("bogus", "unknown agent spec 'bogus'"),
        ("pretrained:farkle-scratch-ppo", "is a farkle model, not a spiffel one"),  # it loads: no fit
    ],
)
def test_a_bad_win_eval_opponent_is_refused_before_any_iteration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], opponent: str, says: str
) -> None:
    out = tmp_path / "win"
    win = ["--config", "spiffel-search-win", "--no-progress", "--set", "iterations=1"]
    args = [*win, "--set", "games_per_iteration=4", "--set", f"eval_opponent={opponent}", "--out", str(out)]
    assert main(args) == 2
    assert not out.exists()  # no iteration played, nothing written
    err = capsys.readouterr().err
    assert "config 'eval_opponent': " in err and says in err


def test_checkpoint_every_0_leaves_a_final_checkpoint_and_eval_every_0_evaluates_at_the_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "zero"
    zero = [*SEARCH, "--set", "checkpoint_every=0", "--set", "eval_every=0", "--out", str(out)]
    assert main(zero) == 0
    assert [p.name for p in (out / "checkpoints").iterdir()] == ["iter-0000002.npz"]
    evals = [r.split(",")[7] for r in (out / "progress.csv").read_text().splitlines()[1:]]
    assert evals[0] == "" and evals[-1] != ""  # only the last iteration is evaluated
    capsys.readouterr()
    assert main([*zero, "--set", "iterations=3", "--resume"]) == 0
    assert f"continuing from {out / 'checkpoints' / 'iter-0000002.npz'}" in capsys.readouterr().err
    rows = (out / "progress.csv").read_text().splitlines()[1:]
    assert [r.split(",")[1] for r in rows] == ["1", "2", "3"]
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["iter-0000002.npz", "iter-0000003.npz"]


def test_the_rule_refuses_when_no_checkpoint_reads(tmp_path: Path) -> None:
    from agents.training.artifacts import resume_point

    files = [tmp_path / "a", tmp_path / "b"]
    with (
        pytest.warns(UserWarning, match="skipping checkpoint"),
        pytest.raises(ConfigError, match=r"no checkpoint in .* verifies \(b: .*; a: .*\)"),
    ):
        resume_point(tmp_path, files, lambda p: p.read_bytes())
    with pytest.raises(ConfigError, match="to continue from"):
        resume_point(tmp_path, [], lambda p: p.read_bytes())
