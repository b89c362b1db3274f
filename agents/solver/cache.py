"""On-disk cache of solver tables, shared by processes.

Tables live in ``$DICE_ENVS_CACHE`` when that variable is set, else in the user cache directory
(``platformdirs.user_cache_dir("dice-envs")``, falling back to ``~/.cache/dice-envs``). A file is
keyed by the game, the rule parameters and :data:`SOLVER_VERSION`, so changing any of them
recomputes it. Beside each table ``KEY.npy`` lies its record ``KEY.json`` (key, solver version,
rules, shape, dtype, SHA-256): a table is used only when it matches its record, else it is
rebuilt with a :class:`CacheWarning`. Writes are atomic and a lock file makes parallel processes
(e.g. pytest-xdist workers) wait for one solve instead of repeating it; a lock no live solver
can hold (content that is not a pid, a dead process, too old) is broken with a warning, and no
solve waits longer than ``_MAX_WAIT_S``.

A solve says what it does on stderr (the first use of a rule set can take minutes): what it
computes, a live line with the time spent while it runs on a terminal (tqdm when installed; a
solver may add a note with :func:`progress_note`), and where the result was cached and how big
it is. :func:`cached_tables` lists the cache (``dice-envs solve --list``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dice_envs.io import atomic_open, atomic_write_text

__all__ = [
    "SOLVER_VERSION",
    "CacheWarning",
    "cache_dir",
    "cache_key",
    "cached_array",
    "cached_array_is_sound",
    "cached_tables",
    "progress_note",
    "single_thread_blas",
]

#: Bump when the solver's tables change meaning; old files are then ignored.
SOLVER_VERSION = 1
_STALE_LOCK_S = 3600.0
#: The longest a solve waits for another process's lock before it solves without it.
_MAX_WAIT_S = 1800.0


@contextlib.contextmanager
def single_thread_blas() -> Iterator[None]:
    """Run numpy's OpenBLAS on one thread inside the block (best effort; a no-op elsewhere).

    The solver's many small matrix products gain nothing from threads, and on a busy machine
    (parallel test workers, other jobs) threaded BLAS slows them down several times.
    """
    pairs = [("scipy_openblas", "64_"), ("scipy_openblas", ""), ("openblas", "64_"), ("openblas", "")]
    names = [(f"{p}_get_num_threads{s}", f"{p}_set_num_threads{s}") for p, s in pairs]
    try:
        import ctypes

        with open("/proc/self/maps") as fh:
            paths = sorted({line.split()[-1] for line in fh if "openblas" in line.lower() and "/" in line})
        libs = (ctypes.CDLL(p) for p in paths)
        found = ((getattr(c, get, None), getattr(c, set_, None)) for c in libs for get, set_ in names)
        lib = next((pair for pair in found if None not in pair), None)
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


class CacheWarning(UserWarning):
    """A cache file or lock that was not usable and was rebuilt or broken (the message says why)."""


def _lock_holder(path: Path) -> tuple[int | None, str | None]:
    """``(pid, host)`` written in a lock file; ``(None, None)`` when its content is not a lock's."""
    try:
        parts = path.read_text(encoding="ascii", errors="strict")[:200].split()
    except (OSError, UnicodeDecodeError):
        return None, None
    if not parts or not parts[0].isdigit() or len(parts) > 2:
        return None, None
    return int(parts[0]), parts[1] if len(parts) > 1 else None


def _started_after(pid: int, when: float) -> bool:
    """True when process ``pid`` started after time ``when`` (Linux ``/proc``; else False)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[19])
        boot = next(
            float(x.split()[1]) for x in Path("/proc/stat").read_text().splitlines() if x.startswith("btime")
        )
        return boot + ticks / os.sysconf("SC_CLK_TCK") > when + 1.0
    except (OSError, ValueError, IndexError, StopIteration):
        return False


def _why_stale(path: Path, stale_s: float, grace_s: float) -> str | None:
    """Why the lock at ``path`` cannot be held by a live solver, or ``None`` if it may be."""
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None  # gone already: the next try takes it
    age = time.time() - mtime
    pid, host = _lock_holder(path)
    if pid is None:  # a holder writes its pid right after creating the file
        return f"its content is not a solver's pid (age {age:.0f} s)" if age > grace_s else None
    if age > stale_s:
        return f"it is {age:.0f} s old (more than {stale_s:.0f} s)"
    if host is not None and host != socket.gethostname():
        return None  # another machine's process: only its age tells
    if pid <= 0 or not _alive(pid):
        return f"its process {pid} is not running"
    if _started_after(pid, mtime):
        return f"its process id {pid} now belongs to a process started after the lock was written"
    return None


@contextlib.contextmanager
def _lock(
    path: Path, poll_s: float = 0.25, stale_s: float | None = None, max_wait_s: float | None = None
) -> Iterator[bool]:
    """Hold ``path`` as an exclusive lock file, waiting while a live process holds it.

    A lock that cannot be held by a live solver (content that is not a pid, a dead process, older
    than ``stale_s``) is broken with a :class:`CacheWarning`. The wait never lasts forever: after
    ``max_wait_s`` the block runs without the lock (yielding ``False``; writes stay atomic).
    """
    stale_s = _STALE_LOCK_S if stale_s is None else stale_s
    max_wait_s = _MAX_WAIT_S if max_wait_s is None else max_wait_s
    start = time.monotonic()
    held = False
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            why = _why_stale(path, stale_s, grace_s=min(5.0, stale_s))
            if why is not None:
                warnings.warn(f"breaking solver cache lock {path}: {why}", CacheWarning, stacklevel=3)
                with contextlib.suppress(OSError):
                    path.unlink()
                continue
            if time.monotonic() - start > max_wait_s:
                warnings.warn(
                    f"solver cache lock {path} still held after {max_wait_s:.0f} s; solving without it",
                    CacheWarning,
                    stacklevel=3,
                )
                break
            time.sleep(poll_s)
            continue
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{os.getpid()} {socket.gethostname()}")
        held = True
        break
    try:
        yield held
    finally:
        if held:
            with contextlib.suppress(OSError):
                path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's live process
        return True
    except (OverflowError, OSError):
        return False
    return True


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _verified(
    path: Path, key: str, meta: dict[str, Any] | None, shape: tuple[int, ...] | None, dtype: Any
) -> tuple[np.ndarray | None, str | None]:
    """The cached array if its file is sound, else ``(None, why)``; ``(None, None)``: no file."""
    side = path.with_suffix(".json")
    if not path.exists() and not side.exists():
        return None, None
    try:
        info = json.loads(side.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, f"its record {side.name} is missing"
    except (OSError, ValueError) as exc:
        return None, f"its record {side.name} is unreadable ({exc})"
    if not isinstance(info, dict):
        return None, f"its record {side.name} is not an object"
    if "sha256" not in info:
        return None, f"its record {side.name} has no checksum (written by an older version)"
    if info.get("key") != key or info.get("solver_version") != SOLVER_VERSION:
        return None, f"its record is for {info.get('key')!r} (solver version {info.get('solver_version')!r})"
    if meta is not None and info.get("meta") != json.loads(json.dumps(meta)):
        return None, f"its record holds other rules ({info.get('meta')!r}, expected {meta!r})"
    try:
        digest = _sha256(path)
    except OSError as exc:
        return None, f"it cannot be read ({exc})"
    if digest != info.get("sha256"):
        return (
            None,
            f"its sha256 {digest[:16]}... differs from the recorded {str(info.get('sha256'))[:16]}...",
        )
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        return None, f"it is not a numpy array file ({exc})"
    want_shape = tuple(info.get("shape") or ()) if shape is None else tuple(shape)
    want_dtype = np.dtype(info.get("dtype") if dtype is None else dtype)
    if array.shape != want_shape or array.dtype != want_dtype or tuple(info.get("shape") or ()) != want_shape:
        return None, f"it holds shape {array.shape} {array.dtype}, expected {want_shape} {want_dtype}"
    return array, None


def _store(path: Path, key: str, array: np.ndarray, meta: dict[str, Any] | None) -> None:
    """Write the array and its record atomically (the record last: it vouches for the array)."""
    with atomic_open(path, "wb", overwrite=True) as fh:
        np.save(fh, array, allow_pickle=False)
    record = {
        "key": key,
        "solver_version": SOLVER_VERSION,
        "shape": list(array.shape),
        "dtype": array.dtype.str,
        "sha256": _sha256(path),
        "meta": meta,
    }
    atomic_write_text(path.with_suffix(".json"), json.dumps(record, indent=1, sort_keys=True), overwrite=True)


def _parts(key: str) -> tuple[str, str]:
    """``(kind, game)`` of a :func:`cache_key` stem (``(key, "")`` for any other name)."""
    parts = key.rsplit("-", 3)
    ok = len(parts) == 4 and parts[2].startswith("v") and parts[2][1:].isdigit()
    return (parts[0], parts[1]) if ok else (key, "")


def _rules_text(game: str, meta: dict[str, Any] | None) -> str:
    """The rule parameters in ``meta`` that differ from ``game``'s defaults, as ``k=v, ...``."""
    from dice_envs.rules import ConfigError, make_rules

    rules = (meta or {}).get("rules", meta or {})
    if not isinstance(rules, dict):
        return ""
    try:
        defaults = json.loads(json.dumps(make_rules(game).to_dict()))
    except (ConfigError, TypeError, ValueError):
        return ""
    changed = [f"{k}={v}" for k, v in rules.items() if k in defaults and defaults[k] != v]
    return ", ".join(changed) or "default rules"


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def _announce(message: str) -> None:
    """One line on stderr (through tqdm when installed, so that a progress bar on screen, e.g. an
    evaluation's, is cleared first and drawn again after it)."""
    try:
        from tqdm import tqdm
    except ImportError:
        print(f"dice-envs: {message}", file=sys.stderr, flush=True)
    else:
        tqdm.write(f"dice-envs: {message}", file=sys.stderr)


_BAR: list[Any] = []  # the progress line of the running solve (tqdm), when on a terminal


def progress_note(text: str) -> None:
    """Show ``text`` (e.g. ``"sweep 12, residual 3e-07"``) on the running solve's progress line;
    a no-op when there is none (not a terminal, no tqdm, no solve)."""
    for bar in _BAR:
        bar.set_postfix_str(text, refresh=False)


@contextlib.contextmanager
def _progress_line(desc: str) -> Iterator[None]:
    """On a terminal with tqdm: a line showing the time spent, refreshed twice a second."""
    try:
        from tqdm import tqdm

        on_tty = sys.stderr.isatty()
    except (ImportError, AttributeError, ValueError):
        on_tty = False
    if not on_tty:
        yield
        return
    bar = tqdm(total=None, desc=desc, bar_format="{desc}: {elapsed}{postfix}", file=sys.stderr, leave=False)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.5):
            bar.refresh()

    ticker = threading.Thread(target=tick, daemon=True)
    _BAR.append(bar)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
        _BAR.remove(bar)
        bar.close()


def _announced(key: str, meta: dict[str, Any] | None, compute: Callable[[], np.ndarray], where: str) -> Any:
    """``compute()``, announced on stderr (what is solved and ``where`` it goes) with a progress line."""
    kind, game = _parts(key)
    what = f"{kind} tables of {game} ({_rules_text(game, meta)})" if game else f"{kind} tables"
    _announce(f"solving the {what}: first use, {where}")
    with _progress_line(f"dice-envs: solving {kind}"):
        return compute()


def cached_tables() -> list[dict[str, Any]]:
    """Every table file in :func:`cache_dir`, by name: ``file``, ``kind``, ``game``, ``rules`` (those
    differing from the game's defaults; ``"?"`` without a readable record), ``bytes``, ``size``
    (the same, readable) and ``modified`` (local time, ``YYYY-MM-DD HH:MM``)."""
    directory = cache_dir()
    rows = []
    for path in sorted(directory.glob("*.npy")) if directory.is_dir() else []:
        kind, game = _parts(path.stem)
        try:
            meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8")).get("meta")
            rules = _rules_text(game, meta if isinstance(meta, dict) else None)
        except (OSError, ValueError, AttributeError):
            rules = "?"
        stat = path.stat()
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(stat.st_mtime))
        rows.append(
            {
                "file": path.name,
                "kind": kind,
                "game": game,
                "rules": rules,
                "bytes": stat.st_size,
                "size": _size(stat.st_size),
                "modified": when,
            }
        )
    return rows


def cached_array_is_sound(key: str, meta: dict[str, Any] | None = None) -> bool:
    """Whether :func:`cached_array` would load ``key`` (with ``meta``) instead of computing it."""
    array, _ = _verified(cache_dir() / f"{key}.npy", key, meta, None, None)
    return array is not None


def cached_array(
    key: str,
    compute: Callable[[], np.ndarray],
    meta: dict[str, Any] | None = None,
    *,
    shape: tuple[int, ...] | None = None,
    dtype: Any = None,
) -> tuple[np.ndarray, bool]:
    """Load the array cached under ``key``, or compute and store it; return ``(array, loaded)``.

    A cached file is used only when it is sound: its record (``key.json``) names this key, the
    solver version and ``meta`` (the rules), its SHA-256 matches, and it holds ``shape`` /
    ``dtype`` (when given; else the recorded ones). Anything else (an empty, truncated,
    wrong-shape or flipped-bit file) is rebuilt with a :class:`CacheWarning` naming the reason.
    An unwritable cache directory is not an error: the array is then computed and not stored.
    """
    directory = cache_dir()
    path = directory / f"{key}.npy"
    array, why = _verified(path, key, meta, shape, dtype)
    if array is not None:
        return array, True
    try:
        directory.mkdir(parents=True, exist_ok=True)
        lock = _lock(directory / f"{key}.lock")
        lock.__enter__()
    except OSError as exc:
        if why is not None:
            warnings.warn(f"solver cache {path} not used: {why}; solving again", CacheWarning, stacklevel=2)
        return _announced(key, meta, compute, f"not cached ({directory} is not writable: {exc})"), False
    try:
        array, why2 = _verified(path, key, meta, shape, dtype)  # another process may have finished
        if array is not None:
            return array, True
        why = why2 or why
        if why is not None:
            warnings.warn(f"solver cache {path} not used: {why}; solving again", CacheWarning, stacklevel=2)
        start = time.perf_counter()
        array = _announced(key, meta, compute, f"to be cached in {directory}")
        took = f"solved in {time.perf_counter() - start:.1f} s"
        try:
            _store(path, key, array, meta)
        except OSError as exc:
            _announce(f"{took}; not cached ({exc})")
        else:
            size = _size(path.stat().st_size)
            _announce(f"{took}; cached {path} ({size}); 'dice-envs solve --list' lists the cache")
        return array, False
    finally:
        lock.__exit__(None, None, None)
