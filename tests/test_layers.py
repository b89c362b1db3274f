"""The house rules of the code base, checked on the source (see docs/architecture.md).

* every import points down the layers: a module imports only modules of its own layer or of the
  layers below it (``dice_envs`` never imports ``agents``, the rules never import an env, ...);
* no source file is longer than 500 lines.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Layers from the bottom up; a module of layer i may import layers 0..i only. A module is placed by
#: the longest prefix of its dotted name listed here.
LAYERS: list[tuple[str, ...]] = [
    ("dice_envs.rules",),  # rule configs, dice, the scoring functions
    ("dice_envs.tables", "dice_envs.layouts"),  # tables derived from the scoring; observation layouts
    ("dice_envs.engine",),  # the game flow on arrays: batched engines and one-game machines
    ("dice_envs.encoding", "dice_envs.render", "dice_envs.render_rgb"),  # views of a game
    ("dice_envs",),  # options, opponent registry, PettingZoo / Gymnasium / vector envs, wrappers, io
    ("agents.base",),  # the agent protocol
    ("agents.solver",),  # the exact solvers (on the engine's rule functions and the tables)
    ("agents.models",),  # model cards, safe model files, activations, network heads, seat views
    ("agents.players",),  # who sits in a seat: built-in players, a person, a model, search players
    ("agents", "agents.registry"),  # load(spec): specs to players
    ("agents.evaluation",),  # the game runner, stats, ratings, tournaments (on a pool or Ray), regret
    ("agents.training",),  # the trainers and what they write (the search learner too)
    ("agents.ray",),  # sweeps on Ray Tune, RLlib training
    ("agents.commands",),  # the dice-envs command line
    ("agents.web",),  # the browser game pad (seats agents)
    ("scripts",),
]
MAX_LINES = 500


def _layer(module: str) -> int:
    best, rank = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    return rank


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    return _imports_of(path.read_text(), module, path.name == "__init__.py")


def _imports_of(text: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """``(line, dotted target)`` of every import in ``text`` (relative imports resolved)."""
    tree = ast.parse(text)
    package = module if is_package else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append((node.lineno, target))
            # ``from . import x`` / ``from dice_envs import tables`` name modules too
            out += [
                (node.lineno, f"{target}.{a.name}") for a in node.names if _layer(f"{target}.{a.name}") >= 0
            ]
    return out


def _sources() -> list[Path]:
    files = subprocess.run(
        ["git", "ls-files", "dice_envs", "agents", "scripts", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.split()
    return [ROOT / f for f in files if (ROOT / f).is_file()]


def test_every_import_points_down_the_layers() -> None:
    bad = []
    for path in _sources():
        if path.suffix != ".py" or path.parts[len(ROOT.parts)] == "tests":
            continue
        module = _module_name(path)
        own = _layer(module)
        for line, target in _imports(path, module):
            rank = _layer(target)
            if rank > own:
                bad.append(
                    f"{path.relative_to(ROOT)}:{line}: {module} (layer {own}) imports {target} (layer {rank})"
                )
    assert not bad, "\n".join(bad)


def test_dice_envs_never_imports_agents() -> None:
    bad = [
        f"{p.relative_to(ROOT)}:{line}: {t}"
        for p in _sources()
        if p.suffix == ".py" and _module_name(p).startswith("dice_envs")
        for line, t in _imports(p, _module_name(p))
        if t == "agents" or t.startswith("agents.")
    ]
    assert not bad, bad


@pytest.mark.parametrize("suffix", [".py", ".js"])
def test_no_source_file_is_over_500_lines(suffix: str) -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in _sources()
        if p.suffix == suffix and (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long


def test_the_layer_check_sees_an_upward_import() -> None:
    """The checker itself: upward and relative imports are found (so the tests above can fail)."""
    assert (
        _layer("dice_envs.rules.scorecard")
        < _layer("dice_envs.engine.scorecard")
        < _layer("dice_envs.encoding")
    )
    assert (
        _layer("dice_envs.encoding")
        < _layer("dice_envs.envs.base")
        < _layer("agents.registry")
        < _layer("agents.web")
    )
    found = _imports_of("from agents import load\nfrom ..envs import base\n", "dice_envs.rules.probe", False)
    assert [t for _, t in found] == ["agents", "agents.load", "dice_envs.envs", "dice_envs.envs.base"]
