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
    # the bound: the same run's matrix products alone, for farkle's nets (obs -> 16 -> actions / 1)
    import gymnasium as gym
    from gymnasium.spaces.utils import flatdim

    from agents.commands.bench_training import matmul_flops_per_step

    spaces = gym.make("dice_envs/Farkle-v0")
    n_in, n_act = flatdim(spaces.observation_space), int(spaces.action_space.n)
    bound = train["matmul-bound"]
    assert bound["steps"] == 32 * 8
    macs = n_in * 16 * 2 + 16 * n_act + 16  # first layers of both nets, the two heads
    fwd, grads = 2 * macs, 2 * macs + 2 * (16 * n_act + 16)  # weight grads + input grads past layer 1
    assert bound["flops_per_step"] == matmul_flops_per_step([n_in, 16, n_act], [n_in, 16, 1], 4)
    assert bound["flops_per_step"] == fwd + 4 * (fwd + grads)
    assert bound["gflops_per_s"] == pytest.approx(bound["flops_per_step"] * bound["steps_per_s"] / 1e9)
    assert train["ppo_share_of_matmul_bound"] == pytest.approx(
        train["ppo"]["steps_per_s"] / bound["steps_per_s"]
    )
    assert train["matmul_bound_vs_sb3_gym"] == pytest.approx(
        bound["steps_per_s"] / train["sb3-gym"]["steps_per_s"]
    )
    printed = capsys.readouterr().out
    assert "matrix products alone" in printed
    assert "the most any trainer could gain over MaskablePPO (DummyVecEnv of Gymnasium envs)" in printed
    assert "native PPO / MaskablePPO (native env)" in printed
    assert "native PPO / MaskablePPO (DummyVecEnv of Gymnasium envs)" in printed
    before = out.read_bytes()
    assert main([*tiny, "--out", str(out)]) == 2  # results are never overwritten
    assert "exists" in capsys.readouterr().err and out.read_bytes() == before


def test_warmup_runs_untimed_updates_of_each_loop_before_its_timed_run(tmp_path: Path, monkeypatch) -> None:
    from agents.commands import bench_training, benchmark

    calls: list[tuple[str, int]] = []
    original = bench_training.bench_loop

    def recording(game, trainer, args, threads):
        calls.append((trainer, args.loop_updates))
        return original(game, trainer, args, threads)

    monkeypatch.setattr(bench_training, "bench_loop", recording)
    tiny = ["--games", "spiffel", "--only-train", "--loop-envs", "16", "--loop-steps", "4"]
    tiny += ["--loop-batch", "32", "--loop-updates", "2", "--net-arch", "8", "--threads", "1"]
    out = tmp_path / "bench.json"
    assert benchmark.main([*tiny, "--warmup", "1", "--out", str(out)]) == 0
    assert calls == [("ppo", 1), ("ppo", 2), ("sb3-native", 1), ("sb3-native", 2)]
    train = json.loads(out.read_text())["games"]["spiffel"]["train"]
    # only the timed run counts: 2 updates of 16 games x 4 steps
    assert train["ppo"]["steps"] == 2 * 16 * 4 and train["ppo"]["warmup_updates"] == 1
    assert train["sb3-native"]["steps"] == 2 * 16 * 4
    calls.clear()
    assert benchmark.main([*tiny, "--out", str(tmp_path / "cpu.json")]) == 0  # a CPU: none by default
    assert calls == [("ppo", 2), ("sb3-native", 2)]
    assert benchmark.parse_args(["--device", "cuda"]).warmup == 1
    assert benchmark.parse_args(["--device", "cuda", "--warmup", "0"]).warmup == 0
