"""On-disk cache of solver tables, shared by processes.

Tables live in ``$DICE_ENVS_CACHE`` when that variable is set, else in the user cache directory
(``platformdirs.user_cache_dir("dice-envs")``, falling back to ``~/.cache/dice-envs``). A file is
keyed by the game, the rule parameters and :data:`SOLVER_VERSION`, so changing any of them
recomputes it. Writes are atomic and a lock file makes parallel processes (e.g. pytest-xdist
workers) wait for one solve instead of repeating it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SOLVER_VERSION", "cache_dir", "cache_key", "cached_array", "single_thread_blas"]

#: Bump when the solver's tables change meaning; old files are then ignored.
SOLVER_VERSION = 1
_STALE_LOCK_S = 3600.0


@contextlib.contextmanager
def single_thread_blas() -> Iterator[None]:
    """Run numpy's OpenBLAS on one thread inside the block (best effort; a no-op elsewhere).

    The solver's many small matrix products gain nothing from threads, and on a busy machine
    (parallel test workers, other jobs) threaded BLAS slows them down several times.
    """
    lib = None
    try:
        import ctypes

        with open("/proc/self/maps") as fh:
            paths = sorted({line.split()[-1] for line in fh if "openblas" in line.lower() and "/" in line})
        for p in paths:
            cand = ctypes.CDLL(p)
            for prefix in ("scipy_openblas", "openblas"):
                for suffix in ("64_", ""):
                    getter = getattr(cand, f"{prefix}_get_num_threads{suffix}", None)
                    setter = getattr(cand, f"{prefix}_set_num_threads{suffix}", None)
                    if getter is not None and setter is not None:
                        lib = (getter, setter)
                        break
                if lib:
                    break
            if lib:
                break
    except (OSError, ImportError):
        lib = None
    if lib is None:
        yield
        return
    getter, setter = lib
    before = int(getter())
    setter(1)
    try:
        yield
    finally:
        setter(before)


def cache_dir() -> Path:
    """The directory holding cached solver tables (created on demand)."""
    env = os.environ.get("DICE_ENVS_CACHE")
    if env:
        return Path(env).expanduser()
    try:
        import platformdirs

        return Path(platformdirs.user_cache_dir("dice-envs"))
    except ImportError:  # pragma: no cover - platformdirs is an optional dependency
        return Path.home() / ".cache" / "dice-envs"


def cache_key(kind: str, game: str, params: dict[str, Any]) -> str:
    """A file stem naming ``kind`` tables of ``game`` under ``params`` and the solver version."""
    blob = json.dumps({"kind": kind, "game": game, "params": params, "v": SOLVER_VERSION}, sort_keys=True)
    return f"{kind}-{game}-v{SOLVER_VERSION}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}"


@contextlib.contextmanager
def _lock(path: Path, poll_s: float = 0.25) -> Iterator[None]:
    """Hold ``path`` as an exclusive lock file (waiting while another live process holds it)."""
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                age = time.time() - path.stat().st_mtime
                pid = int(path.read_text() or 0)
            except (OSError, ValueError):
                time.sleep(poll_s)
                continue
            if age > _STALE_LOCK_S or (pid and not _alive(pid)):
                with contextlib.suppress(OSError):
                    path.unlink()
            else:
                time.sleep(poll_s)
            continue
        with os.fdopen(fd, "w") as fh:
            fh.write(str(os.getpid()))
        break
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's live process
        return True
    return True


def cached_array(
    key: str, compute: Callable[[], np.ndarray], meta: dict[str, Any] | None = None
) -> tuple[np.ndarray, bool]:
    """Load the array cached under ``key``, or compute and store it; return ``(array, loaded)``.

    An unwritable cache directory is not an error: the array is then computed and not stored.
    """
    directory = cache_dir()
    path = directory / f"{key}.npy"
    if path.is_file():
        with contextlib.suppress(OSError, ValueError):
            return np.load(path), True
    try:
        directory.mkdir(parents=True, exist_ok=True)
        lock = _lock(directory / f"{key}.lock")
        lock.__enter__()
    except OSError:
        return compute(), False
    try:
        if path.is_file():  # another process finished while we waited
            with contextlib.suppress(OSError, ValueError):
                return np.load(path), True
        array = compute()
        with contextlib.suppress(OSError):
            fd, tmp = tempfile.mkstemp(dir=directory, suffix=".npy.tmp")
            with os.fdopen(fd, "wb") as fh:
                np.save(fh, array)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
            if meta is not None:
                (directory / f"{key}.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
        return array, False
    finally:
        lock.__exit__(None, None, None)
