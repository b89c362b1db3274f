"""``dice-envs train`` never loses a run or a user's files: where it writes, what ``--resume`` may
do, and refusals that come before the first step (and leave nothing behind)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.commands.train import main
from agents.training.config import TrainConfig, load_config
from agents.training.train import output_folder
from dice_envs.rules import ConfigError

TINY = ["--config", "tiny_ppo", "--no-progress"]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tiny run (4,096 steps, checkpoints at 2,048 and 4,096)."""
    out = tmp_path_factory.mktemp("train") / "run"
    assert main([*TINY, "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / "checkpoints").glob("*.pt")) == [
        "ckpt_000000002048.pt",
        "ckpt_000000004096.pt",
    ]
    return out


def _copy(run: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "copy"
    shutil.copytree(run, dst)
    return dst


def test_resume_refuses_to_start_over_when_no_checkpoint_verifies(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(finished_run, tmp_path)
    for ckpt in (run / "checkpoints").glob("*.pt"):
        ckpt.write_bytes(b"damaged")
    before = _snapshot(run)
    assert main([*TINY, "--out", str(run), "--resume", "--total-timesteps", "8192"]) == 2
    err = capsys.readouterr().err
    assert "no checkpoint in" in err and "verifies" in err and "ckpt_000000004096.pt" in err
    assert _snapshot(run) == before  # the model, card, progress and the damaged files all kept


def test_resume_refuses_a_finished_model_without_checkpoints(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(finished_run, tmp_path)
    shutil.rmtree(run / "checkpoints")
    before = _snapshot(run)
    assert main([*TINY, "--out", str(run), "--resume", "--total-timesteps", "8192"]) == 2
    assert "no checkpoint in" in capsys.readouterr().err
    assert _snapshot(run) == before


def test_refused_resume_of_a_finished_run_keeps_its_config(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(finished_run, tmp_path)
    before = _snapshot(run)
    assert main([*TINY, "--out", str(run), "--resume", "--total-timesteps", "2048"]) == 2
    assert "is finished (4096 steps" in capsys.readouterr().err
    assert _snapshot(run) == before  # config.json still says 4096


def test_resume_before_the_first_checkpoint_is_refused(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run killed before its first checkpoint has nothing to continue from: a resume never
    starts over in the run's folder."""
    run = tmp_path / "killed"
    run.mkdir()
    shutil.copy(finished_run / "config.json", run / "config.json")
    before = _snapshot(run)
    assert main([*TINY, "--out", str(run), "--resume", "--total-timesteps", "2048"]) == 2
    assert "to continue from" in capsys.readouterr().err
    assert _snapshot(run) == before


def test_out_must_be_a_new_or_empty_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    for name in ("progress.csv", "config.json", "tiny_ppo.json"):
        (mine / name).write_text("precious\n")
    assert main([*TINY, "--out", str(mine)]) == 2
    err = capsys.readouterr().err
    assert "is not empty (config.json, progress.csv, tiny_ppo.json)" in err and "nothing was touched" in err
    assert _snapshot(mine) == {n: b"precious\n" for n in ("config.json", "progress.csv", "tiny_ppo.json")}
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    assert main([*TINY, "--out", str(a_file)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert a_file.read_text() == "mine\n"


def test_default_folder_skips_anything_occupied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = TrainConfig.from_dict({"name": "demo"})
    assert output_folder(cfg, None, resume=False) == Path("runs/demo")
    Path("runs/demo").mkdir(parents=True)
    assert output_folder(cfg, None, resume=False) == Path("runs/demo")  # empty: free
    Path("runs/demo/notes.txt").write_text("a user's file\n")
    assert output_folder(cfg, None, resume=False) == Path("runs/demo-2")
    Path("runs/demo-2").write_text("a file, not a folder\n")
    assert output_folder(cfg, None, resume=False) == Path("runs/demo-3")


def test_a_start_refused_before_training_leaves_nothing(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = finished_run / "tiny_ppo.zip"
    out = tmp_path / "ws"
    args = [*TINY, "--set", "warm_start=model", "--set", f"init_model={model}", "--set", "net_arch=[64]"]
    assert main([*args, "--out", str(out)]) == 2
    assert "does not fit the config (net_arch" in capsys.readouterr().err
    assert not out.exists()
    empty = tmp_path / "empty"  # a folder the user made stays, empty as it was
    empty.mkdir()
    assert main([*args, "--out", str(empty)]) == 2
    assert empty.is_dir() and not any(empty.iterdir())


def test_unknown_final_eval_opponent_is_refused_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bad"
    assert main([*TINY, "--set", "final_eval_opponents=[random, bogus]", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "config 'final_eval_opponents': unknown agent spec 'bogus' for spiffel; known: random" in err
    assert not out.exists()
    # a list this run does not use (no self-play: no pool) is checked all the same
    assert main([*TINY, "--set", "num_players=2", "--set", "pool_builtin=[randm]", "--out", str(out)]) == 2
    assert "config 'pool_builtin': unknown agent spec 'randm'" in capsys.readouterr().err
    assert not out.exists()


def test_shipped_recipes_are_found_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert not Path("configs").exists()
    assert load_config("tiny_ppo").name == "tiny_ppo"
    assert load_config("configs/train/quickstart-ppo.yaml").name == "quickstart-ppo"
    assert load_config("quickstart-ppo.yaml").name == "quickstart-ppo"
    with pytest.raises(
        ConfigError, match=r"training config file not found: nope \(shipped train configs: .*quickstart"
    ):
        load_config("nope")


def test_recipe_files_with_a_key_twice_or_no_keys_are_refused(tmp_path: Path) -> None:
    dup = tmp_path / "dup.yaml"
    dup.write_text("game: spiffel\nn_envs: 64\nn_envs: 128\n")
    with pytest.raises(
        ConfigError, match=r"dup.yaml: not valid YAML \(line 3, column 1\): key 'n_envs' is given twice"
    ):
        load_config(dup)
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n")
    with pytest.raises(ConfigError, match="holds no config keys"):
        load_config(empty)


@pytest.mark.parametrize("checkpointed", [True, False])
def test_ctrl_c_names_the_run_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], checkpointed: bool
) -> None:
    """Ctrl-C during training: exit status 130 and one line saying how to continue (or that there
    is nothing to resume yet), not a KeyboardInterrupt traceback."""
    import agents.training.train as training

    def interrupted(cfg, out, resume, command):  # what a Ctrl-C after (or before) a checkpoint leaves
        if checkpointed:
            (out / "checkpoints").mkdir(parents=True)
            (out / "checkpoints" / "ckpt_000000002048.pt").write_bytes(b"")
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "train", interrupted)
    out = tmp_path / "run"
    assert main([*TINY, "--out", str(out)]) == 130
    err = capsys.readouterr().err.strip()
    if checkpointed:
        assert err == (
            f"interrupted: {out} keeps the checkpoints written so far; continue the run with the same "
            f"command and --resume --out {out}"
        )
    else:
        assert err == f"interrupted before the first checkpoint: nothing in {out} to resume"
