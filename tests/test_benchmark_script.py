"""scripts/benchmark.py (agents.commands.benchmark): the training-loop comparison runs end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")


def test_training_loop_comparison_writes_its_figures_and_never_overwrites(tmp_path: Path, capsys) -> None:
    from agents.commands.benchmark import main

    out = tmp_path / "bench.json"
    tiny = ["--games", "farkle", "--only-train", "--loop-envs", "32", "--loop-steps", "8"]
    tiny += ["--loop-batch", "64", "--loop-updates", "1", "--net-arch", "16", "--threads", "1"]
    tiny += ["--bf16", "--gym"]
    assert main([*tiny, "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    train = res["games"]["farkle"]["train"]
    assert train["ppo"]["steps"] == 32 * 8 and train["sb3-native"]["steps"] == 32 * 8
    assert train["ppo-bf16"]["steps"] == 32 * 8 and train["sb3-gym"]["steps"] == 32 * 8
    assert train["ppo_speedup_vs_sb3_gym"] == pytest.approx(
        train["ppo"]["steps_per_s"] / train["sb3-gym"]["steps_per_s"]
    )
    assert train["ppo_speedup_vs_sb3_native"] == pytest.approx(
        train["ppo"]["steps_per_s"] / train["sb3-native"]["steps_per_s"]
    )
    printed = capsys.readouterr().out
    assert "native PPO / MaskablePPO (native env)" in printed
    assert "native PPO / MaskablePPO (DummyVecEnv of Gymnasium envs)" in printed
    before = out.read_bytes()
    assert main([*tiny, "--out", str(out)]) == 2  # results are never overwritten
    assert "exists" in capsys.readouterr().err and out.read_bytes() == before
