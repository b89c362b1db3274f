#!/usr/bin/env python
"""Check the wheel, the thing a user installs, as a user gets it.

::

    python scripts/check_wheel.py build OUT   # build the wheel into OUT from a copy of the tracked
                                              # files; check that it holds every tracked file of
                                              # the packages; print its path
    python scripts/check_wheel.py installed   # in a venv holding only the wheel (and its extras), run
                                              # from a folder outside the checkout: every shipped bot
                                              # plays a game; dice-envs --version; gym.make and
                                              # PettingZoo episodes

``build`` needs setuptools and wheel (the ``[dev]`` extra) and git; ``.ci/run`` runs both steps
(the second in a fresh venv, from ``/tmp``). ``installed`` refuses to run on a source checkout
(``--allow-checkout`` lets it, for a quick try of the script itself). Exit status 0 when every
check passed, else 1 with the failures on stderr.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The folders of the packages the wheel ships (pyproject's packages.find include).
PACKAGES = ("agents", "dice_envs")


def tracked_files(root: Path = ROOT) -> list[str]:
    """The files of ``root`` that git tracks or would add (not ignored), as they are in the work tree
    (paths relative to ``root``): a clean clone's files, plus the changes a commit would take."""
    cmd = ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    out = subprocess.run(cmd, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p and os.path.lexists(root / p)]


def expected_in_wheel(root: Path = ROOT) -> set[str]:
    """Every tracked file of a package, as the wheel names it: a tracked link to a folder (e.g.
    ``agents/configs`` → ``configs``) stands for the tracked files under its target."""
    files = tracked_files(root)
    want = set()
    for path in files:
        if path.split("/", 1)[0] not in PACKAGES or "__pycache__" in path:
            continue
        full = root / path
        if full.is_symlink() and full.is_dir():
            target = os.path.relpath(full.resolve(), root)
            want |= {path + f[len(target) :] for f in files if f.startswith(target + "/")}
        else:
            want.add(path)
    return want


def build(out: Path, root: Path = ROOT) -> Path:
    """Build the wheel from a copy of the tracked files (as from a clean clone) into ``out``;
    ``SystemExit`` naming every package file the wheel lacks."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dice-envs-src-") as tmp:
        src = Path(tmp)
        for path in tracked_files(root):
            dest = src / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            if (root / path).is_symlink():
                dest.symlink_to(os.readlink(root / path))
            else:
                shutil.copy2(root / path, dest)
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        subprocess.run([*cmd, "-w", str(out), str(src)], check=True)
    wheels = sorted(out.glob("dice_envs-*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        raise SystemExit(f"no dice_envs wheel was built in {out}")
    names = set(zipfile.ZipFile(wheels[-1]).namelist())
    missing = sorted(expected_in_wheel(root) - names)
    if missing:
        raise SystemExit(
            f"{wheels[-1].name} lacks {len(missing)} tracked package file(s) "
            f"(add them to [tool.setuptools.package-data] in pyproject.toml): {', '.join(missing)}"
        )
    return wheels[-1]


def _episode_checks() -> list[str]:
    """One ``gym.make`` episode (against an opponent found by entry point) and one PettingZoo game."""
    import gymnasium as gym
    import numpy as np

    from dice_envs.multiagent import farkle_v1

    env = gym.make("dice_envs/Farkle-v1", opponents=["heuristic"], target=2000)
    obs, info = env.reset(seed=0)
    rng, done = np.random.default_rng(0), False
    while not done:
        obs, _, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
        done = terminated or truncated
    lines = [f"gym.make('dice_envs/Farkle-v1') vs heuristic: final scores {info['final_scores']}"]
    aec = farkle_v1.env(num_players=2, target=2000)
    aec.reset(seed=0)
    for _ in aec.agent_iter():
        obs, _, termination, truncation, info = aec.last()
        aec.step(None if termination or truncation else rng.choice(np.flatnonzero(obs["action_mask"])))
    return [*lines, f"PettingZoo farkle_v1: final scores {info['final_scores']}"]


def check_installed(allow_checkout: bool = False) -> list[str]:
    """Run the installed package's checks; returns the failures (each a sentence)."""
    from importlib.metadata import version

    import agents
    import dice_envs
    from agents.commands.leaderboard import NOT_CARDS
    from agents.evaluation import play_game
    from agents.models.card import read_card
    from agents.players.model import PRETRAINED_DIR
    from dice_envs.rules import make_rules

    failures = []
    where = Path(agents.__file__).resolve()
    if not allow_checkout and (ROOT in where.parents or "site-packages" not in where.parts):
        failures.append(f"agents was imported from {where}, not from an installed wheel")
    want = f"dice-envs {dice_envs.__version__}"
    if not allow_checkout and version("dice-envs") != dice_envs.__version__:
        failures.append(f"the installed metadata says {version('dice-envs')}, the package {want}")
    exe = Path(sys.executable).parent / "dice-envs"
    cli = [str(exe)] if exe.exists() else [sys.executable, "-m", "dice_envs"]
    got = subprocess.run([*cli, "--version"], capture_output=True, text=True).stdout.strip()
    if got != want or agents.__version__ != dice_envs.__version__:
        failures.append(f"dice-envs --version printed {got!r}, expected {want!r}")
    print(got)
    cards = [p for p in sorted(PRETRAINED_DIR.glob("*.json")) if p.name not in NOT_CARDS]
    if not cards:
        failures.append(f"no model cards in {PRETRAINED_DIR}")
    for card_file in cards:
        spec = f"pretrained:{card_file.stem}"
        try:
            card = read_card(card_file)
            rules, seats = make_rules(card["game"], **card["rules"]), int(card["num_players"])
            bot = agents.load(spec, game=rules, num_players=seats, seed=0)
            others = [agents.load("random", game=rules, num_players=seats, seed=s) for s in range(1, seats)]
            final = play_game(rules, [bot, *others], seed=0)
            print(f"{spec}: one {card['game']} game, final scores {final.totals()}")
        except Exception as exc:
            failures.append(f"{spec}: {type(exc).__name__}: {exc}")
    try:
        print("\n".join(_episode_checks()))
    except Exception as exc:
        failures.append(f"env episodes: {type(exc).__name__}: {exc}")
    return failures


def main(argv: list[str] | None = None) -> int:
    """Entry point; see the module docstring."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("build", help="build and list the wheel").add_argument("out", type=Path)
    run = sub.add_parser("installed", help="check the installed package from outside the checkout")
    run.add_argument("--allow-checkout", action="store_true", help="also run on a source checkout")
    args = parser.parse_args(argv)
    if args.step == "build":
        print(build(args.out))
        return 0
    failures = check_installed(args.allow_checkout)
    for failure in failures:
        print(f"check_wheel: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
