"""Which code this is: :data:`__version__` and, in a git checkout, the commit (:func:`code_revision`).

pyproject.toml's ``version`` is the one source of the version. Run from a source checkout (the
folder above this package holds dice-envs's pyproject.toml) it is read there, so an editable
install whose metadata predates a version change still tells the truth; an installed wheel reads
its distribution's metadata.
"""

from __future__ import annotations

import re
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["__version__", "code_revision"]

#: The folder above the package: a source checkout's root, or site-packages for an installation.
_ROOT = Path(__file__).resolve().parents[1]


def _version() -> str:
    try:
        text = (_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        text = ""
    project = re.search(r"^\[project\]$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if project and re.search(r'^name = "dice-envs"$', project.group(1), re.M):
        found = re.search(r'^version = "([^"]+)"$', project.group(1), re.M)
        if found:
            return found.group(1)
    try:
        return version("dice-envs")
    except PackageNotFoundError:  # neither a checkout nor an installation
        return "0+unknown"


__version__: str = _version()


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(_ROOT), *args], capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def code_revision() -> dict[str, str | bool]:
    """``{"version": __version__}``, plus ``git_commit`` (``git rev-parse HEAD``) and ``git_dirty``
    (tracked files changed since that commit) when this code runs from a git checkout.

    >>> code_revision()["version"] == __version__
    True
    """
    info: dict[str, str | bool] = {"version": __version__}
    if not (_ROOT / ".git").exists() or not (_ROOT / "pyproject.toml").is_file():
        return info  # an installation: site-packages is no checkout, even inside one
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    if commit and status is not None:
        info["git_commit"] = commit
        info["git_dirty"] = bool(status)
    return info
