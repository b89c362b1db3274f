"""``dice-envs benchmark`` (agents.commands.benchmark): every subcommand runs end to end, writes its
figures once, and its help names the command as it is typed."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import agents.commands.cli
from agents.commands import benchmark

needs_sb3 = pytest.mark.skipif(importlib.util.find_spec("sb3_contrib") is None, reason="needs sb3-contrib")


@needs_sb3
def test_training_loop_comparison_writes_its_figures_and_never_overwrites(tmp_path: Path, capsys) -> None:
    main = benchmark.main
    out = tmp_path / "bench.json"
    tiny = ["training", "--games", "farkle", "--loop-envs", "32", "--loop-steps", "8"]
    tiny += ["--loop-batch", "64", "--loop-updates", "1", "--net-arch", "16", "--threads", "1"]
    tiny += ["--gym"]
    assert main([*tiny, "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    train = res["games"]["farkle"]["train"]
    assert train["ppo"]["steps"] == 32 * 8 and train["sb3-native"]["steps"] == 32 * 8
    assert train["sb3-gym"]["steps"] == 32 * 8
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


@needs_sb3
def test_warmup_runs_untimed_updates_of_each_loop_before_its_timed_run(tmp_path: Path, monkeypatch) -> None:
    from agents.commands.benchmark import training as bench_training

    calls: list[tuple[str, int]] = []
    original = bench_training.bench_loop

    def recording(game, trainer, args, threads):
        calls.append((trainer, args.loop_updates))
        return original(game, trainer, args, threads)

    monkeypatch.setattr(bench_training, "bench_loop", recording)
    tiny = ["training", "--games", "spiffel", "--loop-envs", "16", "--loop-steps", "4"]
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
    assert benchmark.parse_args(["training", "--device", "cuda"]).warmup == 1
    assert benchmark.parse_args(["training", "--device", "cuda", "--warmup", "0"]).warmup == 0


def test_help_names_the_command_as_it_is_typed(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        benchmark.main(["--help"])  # prog is set by the command itself, not taken from sys.argv
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: dice-envs benchmark ")
    examples = [line.strip() for line in text.split("examples:", 1)[1].splitlines() if line.strip()]
    commands = [line for line in examples if not line.startswith("Run ")]
    assert len(commands) >= 5
    assert all(line.removeprefix("taskset -c 0 ").startswith("dice-envs benchmark ") for line in commands)
    for name in ("engine", "envs", "training", "recipe"):
        assert f"dice-envs benchmark {name} " in text
        assert agents.commands.cli.main(["benchmark", name, "--help"]) == 0
        assert capsys.readouterr().out.startswith(f"usage: dice-envs benchmark {name} ")
    assert agents.commands.cli.main(["benchmark"]) == 2  # a benchmark must be named
    assert "required: BENCHMARK" in capsys.readouterr().err


def test_engine_figures(tmp_path: Path, capsys) -> None:
    out = tmp_path / "engine.json"
    argv = ["engine", "--games", "spiffel", "farkle", "--players", "2", "--seconds", "0.05"]
    assert benchmark.main([*argv, "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["benchmark"] == "engine" and res["settings"]["players"] == 2
    for game in ("spiffel", "farkle"):
        r = res["games"][game]
        assert r["game"] == game and r["players"] == 2 and r["steps"] > 0 and r["games"] > 0
        assert r["steps_per_s"] == pytest.approx(r["steps"] / r["seconds"], rel=0.01)
        assert r["steps_per_game"] == pytest.approx(r["steps"] / r["games"], rel=0.01)
    printed = capsys.readouterr().out
    assert "steps/cpu-s" in printed and "farkle" in printed and f"wrote {out}" in printed


def test_env_figures_and_their_speedups(tmp_path: Path) -> None:
    out = tmp_path / "envs.json"
    argv = ["envs", "--games", "farkle", "--sizes", "1", "8", "--sync-envs", "2", "--seconds", "0.05"]
    argv += ["--scalar-opponents", "1", "--opponents", "random", "--threads", "1", "--out", str(out)]
    assert benchmark.main(argv) == 0
    r = json.loads(out.read_text())["games"]["farkle"]
    rows = ["scalar", "scalar_vs_1_random", "sync_2", "native_1", "native_8", "native_8_vs_random"]
    assert [k for k in r if not k.endswith("_cpu")] == rows
    assert r["scalar"]["episodes"] >= 0 and "episodes" in r["scalar_vs_1_random"]
    for row in rows:
        assert r["native_8"]["steps"] % 8 == 0
        assert r["speedup_vs_scalar_cpu"][row] == pytest.approx(
            r[row]["steps_per_cpu_s"] / r["scalar"]["steps_per_cpu_s"]
        )
        assert r["env_speedup_vs_scalar_cpu"][row] == pytest.approx(
            r[row]["env_steps_per_cpu_s"] / r["scalar"]["env_steps_per_cpu_s"]
        )


def test_recipe_times_each_backend(tmp_path: Path, capsys) -> None:
    out = tmp_path / "recipe.json"
    argv = ["recipe", "--config", "quickstart-ppo", "--backends", "native", "dummy"]
    argv += ["--set", "n_envs=16", "--set", "n_steps=4", "--set", "batch_size=32", "--set", "torch_threads=1"]
    argv += ["--rollout-steps", "64", "--train-steps", "64", "--out", str(out)]
    assert benchmark.main(argv) == 0
    backends = json.loads(out.read_text())["backends"]
    assert list(backends) == ["native", "dummy"]
    for r in backends.values():
        assert r["game"] == "spiffel" and r["n_envs"] == 16
        assert r["rollout_steps_per_s"] > 0 and r["training_steps_per_s"] > 0
    assert benchmark.main(["recipe", "--config", "no-such-recipe"]) == 2
    assert "no-such-recipe" in capsys.readouterr().err


def test_out_is_checked_before_anything_runs(tmp_path: Path, monkeypatch, capsys) -> None:
    from agents.commands.benchmark import engine

    def never(args):
        raise AssertionError("ran despite a bad --out")

    monkeypatch.setattr(engine, "run", never)
    taken = tmp_path / "taken.json"
    taken.write_text("{}")
    assert benchmark.main(["engine", "--out", str(taken)]) == 2
    assert "exists" in capsys.readouterr().err and taken.read_text() == "{}"
    assert benchmark.main(["engine", "--out", str(taken / "x.json")]) == 2  # its folder is a file
    assert "error: " in capsys.readouterr().err
