"""Sphinx configuration of the dice-envs docs: furo theme, Markdown pages (MyST), autodoc API.

Build: ``python -m sphinx -W --keep-going -b html docs docs/_build/html``. The game pages under
``docs/games/`` and their pictures under ``docs/_generated/`` are written by ``_ext/gamepages.py``
at every build, the table of ``gym.make`` keywords by ``_ext/keywords.py`` and the index of the
benchmark records (``docs/benchmarks/index.md``) by ``_ext/benchpages.py`` and the figures of the
multi-player guide (``docs/_generated/farkle-multiplayer.inc``) by ``_ext/fieldfigures.py``.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))

project = "dice-envs"
author = "dice-envs developers"
copyright = "dice-envs developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "gamepages",
    "keywords",
    "benchpages",
    "fieldfigures",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "rule-texts/**",
    "*.txt",
    "Thumbs.db",
    ".DS_Store",
]
nitpicky = False
suppress_warnings: list[str] = []


class _EmptyGlobIsFine(logging.Filter):
    """A toctree glob that matches nothing (a section whose pages are not written yet, such as
    ``guide/*``) is not an error; Sphinx gives that warning no type, so ``suppress_warnings``
    cannot name it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "didn't match any documents" not in str(record.msg)


logging.getLogger("sphinx.sphinx.directives.other").addFilter(_EmptyGlobIsFine())

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Methods that override Gymnasium / PettingZoo ones without a docstring of their own stay out.
autodoc_inherit_docstrings = False
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = "dice-envs"
html_static_path: list[str] = []
html_show_sourcelink = False
