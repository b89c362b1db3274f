"""Packaging: the ``dice-envs`` command line from a wheel installed outside the repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agents.commands.cli
import dice_envs

ROOT = Path(__file__).resolve().parent.parent
#: Subcommands whose help needs no optional extra (train's module imports the training pipeline).
#: serve's help needs no web extra: starlette is imported only to serve; benchmark's subcommands
#: import their measurements only when they run.
OWN_COMMANDS = ["evaluate", "play", "solve", "leaderboard", "serve", "benchmark"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A wheel of a copy of the sources, installed with --target into a folder outside the repo."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    for pkg in ("dice_envs", "agents"):  # symlinks=False: agents/configs -> ../configs is copied
        shutil.copytree(ROOT / pkg, src / pkg, ignore=ignore)
    dist = tmp / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)], check=True
    )
    wheels = list(dist.glob("dice_envs-*.whl"))
    assert len(wheels) == 1, wheels
    target = tmp / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheels[0])], check=True)
    env = {**os.environ, "PYTHONPATH": str(target), "PYTHONDONTWRITEBYTECODE": "1"}
    return target, env


def run(installed: tuple[Path, dict[str, str]], *args: str) -> subprocess.CompletedProcess:
    target, env = installed
    return subprocess.run(
        [str(target / "bin" / "dice-envs"), *args],
        cwd=target.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_installed_wheel_is_used_and_ships_data(installed: tuple[Path, dict[str, str]]) -> None:
    target, env = installed
    code = (
        "import agents, dice_envs, agents.players.model as l, agents.training.recipes as c;"
        "print(agents.__file__); print(dice_envs.__version__); print(l.pretrained_names());"
        "print(c.find_config('configs/train/quickstart.yaml')); print(c.available_configs('rules'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=target.parent, env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0].startswith(str(target)), out  # not the checkout
    assert out[1] == dice_envs.__version__ != "0+unknown"
    assert "spiffel" in out[2] and "farkle" in out[2]
    assert out[3].startswith(str(target)) and out[3].endswith("quickstart.yaml")
    assert out[4] == "['dice_poker', 'farkle', 'spiffel', 'yahtzee']"
    assert (target / f"dice_envs-{dice_envs.__version__}.dist-info" / "licenses" / "LICENSE").is_file()
    pad = sorted(p.name for p in (ROOT / "agents" / "web" / "static").iterdir())
    assert pad == ["app.js", "index.html", "style.css"]
    assert all((target / "agents" / "web" / "static" / name).is_file() for name in pad)  # the game pad


def test_dice_envs_help_lists_every_command(installed: tuple[Path, dict[str, str]]) -> None:
    res = run(installed, "--help")
    assert res.returncode == 0, res.stderr
    for name in agents.commands.cli.COMMANDS:
        assert f"  {name} " in res.stdout
    assert run(installed, "--version").stdout.strip() == f"dice-envs {dice_envs.__version__}"
    bad = run(installed, "trian")
    assert bad.returncode == 2 and "unknown command 'trian'" in bad.stderr and "train" in bad.stderr


@pytest.mark.parametrize("name", OWN_COMMANDS)
def test_subcommand_help_from_the_wheel(installed: tuple[Path, dict[str, str]], name: str) -> None:
    res = run(installed, name, "--help")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"usage: dice-envs {name}")


def test_python_m_dice_envs_finds_the_cli(installed: tuple[Path, dict[str, str]]) -> None:
    target, env = installed
    res = subprocess.run(
        [sys.executable, "-m", "dice_envs", "solve", "--help"],
        cwd=target.parent,
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("usage: dice-envs solve")


def test_a_command_runs_from_the_wheel(installed: tuple[Path, dict[str, str]]) -> None:
    res = run(
        installed,
        "evaluate",
        "--game",
        "spiffel",
        "--agents",
        "greedy",
        "--games",
        "3",
        "--workers",
        "1",
        "--out",
        "ev",
        "--no-plots",
        "--no-optimum",
    )
    assert res.returncode == 0, res.stderr
    assert "greedy" in res.stdout
    assert (installed[0].parent / "ev" / "results.json").is_file()


def test_dice_envs_does_not_import_agents_textually() -> None:
    hits = []
    for path in (ROOT / "dice_envs").rglob("*.py"):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if "import agents" in line or "from agents" in line:
                hits.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not hits, hits  # the env layer finds agents through entry points only


def test_train_help_examples_are_lines_a_shell_takes() -> None:
    from agents.commands.train import parser

    lines = [line.strip() for line in parser().format_help().splitlines()]
    examples = [line for line in lines if line.startswith("dice-envs train --config")]
    assert len(examples) >= 4 and all("   " not in line for line in examples)
    continued = [line for line in examples if line.endswith(" \\")]
    assert continued and lines[lines.index(continued[0]) + 1].startswith("--total-timesteps")
