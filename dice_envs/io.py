"""Writing results so that none are ever lost: atomic writes and output-folder checks.

Every file the project writes for a user goes through :func:`atomic_write_bytes` /
:func:`atomic_write_text` (a temporary file, fsync, ``os.replace``), so a killed process leaves the
old file or the new one, never a torn one. :func:`check_out_dir` checks an output folder before
any work starts; :func:`fresh_folder` picks a default one that holds no earlier run.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> atomic_write_text(d / "a.txt", "hello\\n").read_text()
'hello\\n'
>>> atomic_write_text(d / "a.txt", "again")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
FileExistsError: ... already exists; pass overwrite=True (scripts: --force) to replace it
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

__all__ = [
    "atomic_open",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_out_dir",
    "fresh_folder",
    "occupied",
]


@contextlib.contextmanager
def atomic_open(
    path: str | Path, mode: str = "w", *, overwrite: bool = False, **kwargs: object
) -> Iterator[IO]:
    """Open a temporary file beside ``path``; on a clean exit it replaces ``path`` atomically.

    ``mode`` is ``"w"`` (text; ``kwargs`` go to :func:`open`, e.g. ``newline=""``) or ``"wb"``.
    On an exception the temporary file is removed and ``path`` is left as it was. With
    ``overwrite=False`` an existing ``path`` raises :class:`FileExistsError` before anything is
    written.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open mode must be 'w' or 'wb', got {mode!r}")
    target = Path(path)
    if not overwrite and target.exists():
        raise FileExistsError(
            f"{target} already exists; pass overwrite=True (scripts: --force) to replace it"
        )
    if target.is_dir():
        raise IsADirectoryError(f"{target} is a folder, not a file")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:  # type: ignore[call-overload]
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        if not overwrite and target.exists():  # appeared while we wrote
            raise FileExistsError(
                f"{target} already exists; pass overwrite=True (scripts: --force) to replace it"
            )
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: str | Path, data: bytes, *, overwrite: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file, fsync, ``os.replace``); return the path."""
    with atomic_open(path, "wb", overwrite=overwrite) as fh:
        fh.write(data)
    return Path(path)


def atomic_write_text(
    path: str | Path, text: str, *, overwrite: bool = False, encoding: str = "utf-8"
) -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_write_bytes`); return the path."""
    return atomic_write_bytes(path, text.encode(encoding), overwrite=overwrite)


def check_out_dir(
    path: str | Path, force: bool = False, files: Iterable[str] | None = None, flag: str = "--out"
) -> Path:
    """Check an output folder before any work starts; return it as a :class:`~pathlib.Path`.

    :class:`FileExistsError` when it is a file, or (without ``force``) holds ``files`` (``None``:
    any file; the message names ``flag``); :class:`PermissionError` when it cannot be created or
    written. Creates nothing.
    """
    out = Path(path).expanduser()
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"output folder {out} is an existing file, not a folder")
    if out.is_dir():
        names = sorted(p.name for p in out.iterdir())
        clash = names if files is None else sorted(set(files) & set(names))
        if clash and not force:
            shown = ", ".join(clash[:5]) + (", ..." if len(clash) > 5 else "")
            raise FileExistsError(
                f"output folder {out} already holds {shown}; "
                f"pass --force to overwrite, or choose another {flag}"
            )
        if not _can_create_in(out):
            raise PermissionError(f"output folder {out} is not writable")
        return out
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise FileExistsError(f"cannot create output folder {out}: {parent} is a file")
    if not _can_create_in(parent):
        raise PermissionError(f"cannot create output folder {out}: {parent} is not writable")
    return out


def _can_create_in(folder: Path) -> bool:
    """Whether a file can be created in ``folder``, found by creating (and dropping) one: permission
    bits do not tell for root, nor on a read-only file system."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def occupied(path: str | Path) -> bool:
    """Anything at ``path``: a file, or a folder with something in it."""
    p = Path(path)
    return p.exists() and (not p.is_dir() or any(p.iterdir()))


def fresh_folder(base: str | Path) -> Path:
    """``base`` when nothing is there (or an empty folder), else the first of ``base-2``,
    ``base-3``, ... with nothing there: the default output folder of a command, never an earlier
    run's (``dice-envs train``'s ``runs/<name>``, ``dice-envs evaluate``'s ``runs/eval-<game>``).
    Creates nothing."""
    base = Path(base)
    if not occupied(base):
        return base
    n = 2
    while occupied(base.with_name(f"{base.name}-{n}")):
        n += 1
    return base.with_name(f"{base.name}-{n}")
