"""The docs site builds warning-free, and every Python example in the docs runs.

* :func:`test_docs_build` builds the site with Sphinx under ``-W`` (every warning fails) and
  checks that each game has its generated page and picture.
* :func:`test_docs_examples` runs the ```` ```python ```` blocks of each page under ``docs/``
  (``docs/benchmarks`` excepted) in order, in a fresh interpreter in a fresh folder that links
  the checkout's folders (``agents/``, ``configs/``, ...), so an example reads
  ``agents/pretrained/...`` as in a checkout and writes its outputs (``runs/...``) there, not into
  the checkout. A block opts out with the comment ``<!-- no-run: <reason> -->`` on the line
  directly above its fence.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NO_RUN = re.compile(r"<!--\s*no-run:\s*\S.*-->")
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<lang>[^\s`]*)")
EXAMPLE_TIMEOUT_S = 300
#: What the examples' folder links from the checkout (what an example may read by a relative path).
CHECKOUT_LINKS = (
    "agents",
    "configs",
    "docs",
    "scripts",
    "tests",
    "pyproject.toml",
    "README.md",
    "CHANGELOG.md",
)


def python_blocks(text: str) -> list[str]:
    """The ```` ```python ```` blocks of Markdown ``text`` that are not marked ``no-run``.

    >>> page = "```python\\nprint(1)\\n```\\n<!-- no-run: needs a GPU -->\\n```python\\n2\\n```\\n"
    >>> python_blocks(page)
    ['print(1)\\n']
    """
    blocks: list[str] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group("fence"), m.group("lang").lower()
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        skipped = i > 0 and NO_RUN.search(lines[i - 1]) is not None
        if lang in ("python", "py", "python3") and not skipped:
            blocks.append("".join(lines[i + 1 : j]))
        i = j + 1
    return blocks


def doc_pages() -> list[Path]:
    """The hand-written Markdown pages of the docs that hold examples to run."""
    skip = {"benchmarks", "games", "_build", "_generated"}  # the game pages are built: see below
    pages = sorted(p for p in DOCS.rglob("*.md") if not skip & set(p.relative_to(DOCS).parts))
    return [p for p in pages if python_blocks(p.read_text(encoding="utf-8"))]


def run_examples(text: str, where: str, tmp_path: Path) -> None:
    """Run the blocks of ``text`` in order, as one script, in a fresh interpreter in ``tmp_path``."""
    script = "\n\n".join(python_blocks(text))
    for name in CHECKOUT_LINKS:
        if (ROOT / name).exists() and not (tmp_path / name).exists():
            (tmp_path / name).symlink_to(ROOT / name)
    path = tmp_path / "example.py"
    path.write_text(script, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=EXAMPLE_TIMEOUT_S,
    )
    assert proc.returncode == 0, f"the examples of {where} failed:\n{proc.stderr[-4000:]}"


def test_docs_build(tmp_path: Path) -> None:
    if importlib.util.find_spec("sphinx") is None:
        pytest.skip("sphinx is not installed (pip install -e '.[docs]')")
    from dice_envs.games import GAME_SPECS

    out = tmp_path / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"sphinx failed:\n{proc.stdout}\n{proc.stderr}"
    assert (out / "index.html").is_file()
    assert (out / "api" / "index.html").is_file()
    for name in GAME_SPECS:
        page = out / "games" / f"{name}.html"
        assert page.is_file(), f"no page for {name}"
        assert (out / "_images" / f"{name}.png").is_file(), f"no picture for {name}"
        assert f"{name}.png" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_docs_examples(page: Path, tmp_path: Path) -> None:
    run_examples(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)), tmp_path)


def test_game_page_examples(tmp_path: Path) -> None:
    """The examples of the game pages, as the docs build writes them."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import gamepages
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    from dice_envs.games import GAME_SPECS

    for spec in GAME_SPECS.values():
        page = gamepages.game_page(spec, f"{spec.name}.png")
        assert python_blocks(page), f"the page of {spec.name} has no example"
        run_examples(page, f"the page of {spec.name}", tmp_path)
