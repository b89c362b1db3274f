"""The release: the wheel holds every package file, one version everywhere, a citation, cards that
name the code that trained them."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

import agents
import dice_envs
from agents.models.card import make_card, read_card
from agents.players.model import PRETRAINED_DIR
from dice_envs.rules import make_rules

ROOT = Path(__file__).resolve().parents[1]
IS_CHECKOUT = (ROOT / ".git").exists() and shutil.which("git") is not None


def _check_wheel():
    spec = importlib.util.spec_from_file_location("check_wheel", ROOT / "scripts" / "check_wheel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pyproject_version() -> str:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


@pytest.mark.skipif(not IS_CHECKOUT, reason="builds from the files git tracks")
def test_wheel_holds_every_shipped_bot_config_and_package_file(tmp_path):
    pytest.importorskip("setuptools")
    pytest.importorskip("wheel")
    check = _check_wheel()
    wheel = check.build(tmp_path)  # SystemExit naming the missing files if any
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"agents/pretrained/{p.name}" for p in PRETRAINED_DIR.iterdir() if p.is_file()}
    assert {n for n in shipped if n.endswith(".npz")} >= {
        f"agents/pretrained/{s}.npz"
        for s in ("spiffel-search", "spiffel-search-quick", "spiffel-search-win", "yahtzee-search")
    }
    assert shipped <= names
    configs = {
        f"agents/configs/{p.relative_to(ROOT / 'configs')}" for p in (ROOT / "configs").rglob("*.yaml")
    }
    assert configs <= names and "agents/web/static/index.html" in names
    assert wheel.name == f"dice_envs-{_pyproject_version()}-py3-none-any.whl"


@pytest.mark.skipif(not IS_CHECKOUT, reason="lists the files git tracks")
def test_the_wheel_check_counts_a_linked_folder_as_its_files():
    want = _check_wheel().expected_in_wheel(ROOT)
    assert "agents/configs/train/quickstart.yaml" in want and "agents/configs" not in want
    assert "agents/pretrained/spiffel-search.npz" in want and "dice_envs/py.typed" in want


def _newest_dated_section() -> tuple[str, str]:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    found = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", text, re.M)
    assert found, "CHANGELOG.md has no dated release section (## [X.Y.Z] - YYYY-MM-DD)"
    return found[0]


def test_one_version_in_pyproject_cli_citation_and_changelog():
    version = _pyproject_version()
    cli = subprocess.run(
        [sys.executable, "-m", "dice_envs", "--version"], capture_output=True, text=True, cwd=ROOT
    )
    assert cli.stdout.strip() == f"dice-envs {version}", cli.stderr
    assert dice_envs.__version__ == agents.__version__ == version
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    released, date = _newest_dated_section()
    assert (citation["version"], str(citation["date-released"])) == (version, date) == (released, date)


def test_citation_file_is_cff_1_2_0():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert isinstance(cff["message"], str) and isinstance(cff["title"], str)
    assert cff["authors"] and all({"name"} <= set(a) or {"family-names"} <= set(a) for a in cff["authors"])
    dt.date.fromisoformat(str(cff["date-released"]))
    assert cff.get("license") == "MIT" == _pyproject_license()


def _pyproject_license() -> str:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]


def test_no_placeholder_urls():
    tomllib = pytest.importorskip("tomllib")
    urls = list(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("urls", {}).values())
    citation = ROOT / "CITATION.cff"
    cff = yaml.safe_load(citation.read_text(encoding="utf-8")) if citation.is_file() else {}
    urls += [v for k, v in cff.items() if k.startswith("url") or k.startswith("repository")]
    fake = re.compile(r"//([^/]*\.)?(example\.(com|org|net)|[^/]*\.invalid|localhost)(/|$)")
    assert [u for u in urls if fake.search(u)] == []


def test_cards_record_the_package_version_and_the_commit(monkeypatch, tmp_path):
    card = make_card(make_rules("spiffel"), 1, provenance=True)
    revision = card["code_revision"]
    assert revision["version"] == dice_envs.__version__
    if IS_CHECKOUT:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
        assert revision["git_commit"] == head.stdout.strip() and isinstance(revision["git_dirty"], bool)
    assert "code_revision" not in make_card(make_rules("spiffel"), 1)  # only a training run's card
    from dice_envs import version

    monkeypatch.setattr(version, "_ROOT", tmp_path)  # as installed: no checkout, no commit
    assert version.code_revision() == {"version": dice_envs.__version__}


def test_a_trained_card_names_its_code_and_old_cards_still_load(tmp_path):
    from agents.training.search.config import SearchConfig
    from agents.training.search.learner import run

    tiny = {"iterations": 1, "games_per_iteration": 4, "fit_steps": 1, "batch_size": 8, "eval_every": 1}
    cfg = SearchConfig.from_dict(
        {"name": "tiny", **tiny, "eval_games": 2, "final_eval_games": 2, "hidden": [4], "progress_bar": False}
    )
    run(cfg, tmp_path, False, "test")
    card = json.loads((tmp_path / "tiny.json").read_text())
    assert card["code_revision"]["version"] == dice_envs.__version__
    for path in PRETRAINED_DIR.glob("*.json"):  # cards written before code_revision existed
        if path.name != "measurements.json":
            read_card(path)
