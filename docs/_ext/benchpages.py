"""Sphinx extension: the benchmark records under ``docs/benchmarks/`` on the site.

On ``builder-inited`` it writes ``docs/benchmarks/index.md`` (a build output, git-ignored): one
section per dated folder, newest first, with the folder's Markdown pages (rendered as pages of
the site) and every other file of it (``.json``, ``.txt``, ...) as a download link, so each file a
page cites is on the site. A folder's ``machine.txt`` opens its section with its first line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gamepages import _write

#: The page, relative to the docs folder.
INDEX = Path("benchmarks") / "index.md"


def index_page(folder: Path) -> str:
    """The Markdown index of the benchmark records in ``folder`` (``docs/benchmarks``)."""
    parts = [
        "# Benchmark records\n",
        "The dated records behind the figures of the docs: each folder holds what one machine "
        "measured on one day, the commands that measured it and their raw outputs.\n",
    ]
    pages = []
    for run in sorted((p for p in folder.iterdir() if p.is_dir()), reverse=True):
        files = sorted(p for p in run.iterdir() if p.is_file())
        parts.append(f"## {run.name}\n")
        machine = run / "machine.txt"
        if machine.is_file():
            first = machine.read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
            parts.append(f"{first}\n")
        for path in files:
            if path.suffix == ".md":
                pages.append(f"{run.name}/{path.stem}")
                parts.append(f"- {{doc}}`{run.name}/{path.stem}` (`{path.name}`)")
            else:
                parts.append(f"- {{download}}`{path.name} <{run.name}/{path.name}>`")
        parts.append("")
    parts.append("```{toctree}\n:hidden:\n\n" + "\n".join(pages) + "\n```\n")
    return "\n".join(parts)


def generate(app: Any) -> None:
    src = Path(app.srcdir)
    _write(src / INDEX, index_page(src / INDEX.parent))


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
