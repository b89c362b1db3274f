"""The docs site builds warning-free, and every Python example in the docs runs and prints what
its page shows.

* :func:`test_docs_build` builds the site with Sphinx under ``-W`` (every warning fails) and
  checks that each game has its generated page and picture, the home page its pictures and the
  README's commands, and that every link of the site resolves to a file of the site.
* :func:`test_docs_examples` runs the ```` ```python ```` blocks of each page under ``docs/``
  (``docs/benchmarks`` excepted) in order, in a fresh interpreter in a fresh folder that links
  the checkout's folders (``agents/``, ``configs/``, ...), so an example reads
  ``agents/pretrained/...`` as in a checkout and writes its outputs (``runs/...``) there, not into
  the checkout. A block opts out with the comment ``<!-- no-run: <reason> -->`` on the line
  directly above its fence.
* Expected output: the ```` ```text ```` block directly under a python block (only blank lines
  between) is what that block prints, as the README shows its examples' output. Every python
  block of ``docs/tutorials`` and ``docs/guide`` has one. The comparison is doctest's, with
  ``...`` matching any text (within a line or across lines) and whitespace runs equal; a number
  printed with ``d`` decimals matches one within ``10**-d`` of it. What depends on the CPU (the
  scores of a model trained for seconds, timings) is shown as ``...``.
"""

from __future__ import annotations

import dataclasses
import doctest
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
#: Printed between two blocks of a page's script, so its output splits into each block's.
BLOCK_END = "--- end of docs block ---"
#: Folders whose every python block must show its output.
SHOWS_OUTPUT = ("tutorials", "guide")
NUMBER = re.compile(r"-?\d+\.\d+")
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


def examples(text: str) -> list[tuple[str, str | None]]:
    """The ```` ```python ```` blocks of Markdown ``text`` that are not marked ``no-run``, each with
    the ```` ```text ```` block directly under it (its expected output) or ``None``.

    >>> page = "```python\\nprint(1)\\n```\\n\\n```text\\n1\\n```\\n"
    >>> examples(page + "<!-- no-run: needs a GPU -->\\n```python\\n2\\n```\\n")
    [('print(1)\\n', '1\\n')]
    """
    found: list[tuple[str, str | None]] = []
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
            found.append(("".join(lines[i + 1 : j]), _output_under(lines, j + 1)))
        i = j + 1
    return found


def _output_under(lines: list[str], k: int) -> str | None:
    """The body of the ```` ```text ```` block that starts at line ``k`` after blank lines, if any."""
    while k < len(lines) and not lines[k].strip():
        k += 1
    m = FENCE.match(lines[k]) if k < len(lines) else None
    if not m or m.group("lang").lower() != "text":
        return None
    end = k + 1
    while end < len(lines) and not lines[end].startswith(m.group("fence")):
        end += 1
    return "".join(lines[k + 1 : end])


def python_blocks(text: str) -> list[str]:
    """The ```` ```python ```` blocks of Markdown ``text`` that are not marked ``no-run``."""
    return [code for code, _ in examples(text)]


def output_matches(want: str, got: str) -> bool:
    """Whether printed ``got`` matches the page's ``want`` (see the module docstring).

    >>> output_matches("mean 12.35 ...\\nend\\n", "mean 12.3456 over 4 games\\nend\\n")
    True
    >>> output_matches("mean 12.35\\n", "mean 12.37\\n")
    False
    """
    wanted = iter(NUMBER.findall(want))

    def shown(printed: re.Match[str]) -> str:  # the page's number when the printed one is within it
        w = next(wanted, None)
        close = w is not None and abs(float(w) - float(printed[0])) <= 1.000001 * 10.0 ** -len(
            w.split(".")[1]
        )
        return w if close else printed[0]

    if len(NUMBER.findall(want)) == len(NUMBER.findall(got)):  # the numbers pair up in order
        got = NUMBER.sub(shown, got)
    checker = doctest.OutputChecker()
    return checker.check_output(want, got, doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)


def doc_pages() -> list[Path]:
    """The hand-written Markdown pages of the docs that hold examples to run."""
    skip = {"benchmarks", "games", "_build", "_generated"}  # the game pages are built: see below
    pages = sorted(p for p in DOCS.rglob("*.md") if not skip & set(p.relative_to(DOCS).parts))
    return [p for p in pages if python_blocks(p.read_text(encoding="utf-8"))]


def run_examples(text: str, where: str, tmp_path: Path) -> None:
    """Run the blocks of ``text`` in order, as one script, in a fresh interpreter in ``tmp_path``,
    and compare each block's output with the text block under it."""
    blocks = examples(text)
    end = f"\n\nprint({BLOCK_END!r}, flush=True)\n\n"
    script = end.join(code for code, _ in blocks) + end
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
    printed = proc.stdout.split(BLOCK_END + "\n")
    for n, ((code, want), got) in enumerate(zip(blocks, printed[: len(blocks)], strict=True), start=1):
        if want is not None:
            assert output_matches(want, got), (
                f"block {n} of {where} printed\n{got}\nwhere the page shows\n{want}\n(the block:\n{code})"
            )


def test_docs_build(tmp_path: Path) -> None:
    if importlib.util.find_spec("sphinx") is None:
        pytest.skip("sphinx is not installed (pip install -e '.[docs]')")
    from dice_envs.games import GAME_SPECS
    from dice_envs.options import EnvOptions

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
    home = (out / "index.html").read_text(encoding="utf-8")
    for name in GAME_SPECS:
        page = out / "games" / f"{name}.html"
        assert page.is_file(), f"no page for {name}"
        assert (out / "_images" / f"{name}.png").is_file(), f"no picture for {name}"
        assert f"{name}.png" in page.read_text(encoding="utf-8")
        assert f"_images/{name}.png" in home, f"the home page shows no picture of {name}"
    keywords = (out / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="gym-keywords"' in keywords
    for field in dataclasses.fields(EnvOptions):  # the table's rows, one per field
        assert f'<span class="pre">{field.name}</span></code></p></td>' in keywords, field.name
    assert "api/index.html#gym-keywords" in (out / "games" / "spiffel.html").read_text(encoding="utf-8")
    records = (out / "benchmarks" / "index.html").read_text(encoding="utf-8")
    for path in sorted((DOCS / "benchmarks").glob("*/*")):
        name = path.relative_to(DOCS / "benchmarks").with_suffix(
            ".html" if path.suffix == ".md" else path.suffix
        )
        assert (out / "benchmarks" / name).is_file() or path.name in records, f"{path} is not on the site"
    assert not broken_links(out), f"links to no file of the site: {broken_links(out)[:20]}"


def broken_links(out: Path) -> list[str]:
    """The local ``href`` / ``src`` of the built site's pages that name no file of it."""
    broken = []
    for page in out.rglob("*.html"):
        for link in re.findall(r'(?:href|src)="([^"#?]+)', page.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", link) and not (page.parent / link).exists():
                broken.append(f"{page.relative_to(out)}: {link}")
    return broken


def quick_start_commands(text: str) -> list[str]:
    """The command lines of the first bash block after the heading ``## Quick start``."""
    body = text.split("\n## Quick start\n", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_the_home_page_has_the_readme_quick_start() -> None:
    """The home page shows the README's two quick-start commands, as the README gives them."""
    readme = quick_start_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(readme) == 2, readme
    assert quick_start_commands((DOCS / "index.md").read_text(encoding="utf-8")) == readme
    home = (DOCS / "index.md").read_text(encoding="utf-8")
    assert (
        "\n## At a glance\n" in home and "<!-- figures:headline -->" in home and "<!-- /figures -->" in home
    )


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_docs_examples(page: Path, tmp_path: Path) -> None:
    if page.relative_to(DOCS).parts[0] in SHOWS_OUTPUT:
        bare = [code for code, want in examples(page.read_text(encoding="utf-8")) if want is None]
        assert not bare, (
            f"{page.relative_to(ROOT)}: python blocks with no ```text block of their output:\n"
            + ("\n".join(code.splitlines()[0] for code in bare))
        )
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
