"""Solver caches are verified on load and rebuilt with a warning when bad; locks never hang a solve."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from agents.solver.cache import CacheWarning, _lock, cache_key, cached_array
from agents.solver.scorecard import TurnSolver, _table_shape
from dice_envs.rules import make_rules

META = {"game": "spiffel", "rules": {"a": 1}}


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("DICE_ENVS_CACHE", str(tmp_path))
    return tmp_path


class Counter:
    def __init__(self, value: np.ndarray) -> None:
        self.value, self.calls = value, 0

    def __call__(self) -> np.ndarray:
        self.calls += 1
        return self.value.copy()


def _fill(cache: Path, key: str, value: np.ndarray) -> Counter:
    compute = Counter(value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean first solve warns about nothing
        array, loaded = cached_array(key, compute, META, shape=value.shape, dtype=value.dtype)
    assert not loaded and compute.calls == 1 and np.array_equal(array, value)
    return compute


def _load_clean(key: str, compute: Counter, value: np.ndarray) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        array, loaded = cached_array(key, compute, META, shape=value.shape, dtype=value.dtype)
    assert loaded and np.array_equal(array, value)


def test_record_holds_checksum_shape_and_rules(cache: Path) -> None:
    key = cache_key("t", "spiffel", {"a": 1})
    value = np.linspace(0.0, 1.0, 12).reshape(3, 4)
    compute = _fill(cache, key, value)
    record = json.loads((cache / f"{key}.json").read_text())
    assert record["shape"] == [3, 4] and record["dtype"] == "<f8" and len(record["sha256"]) == 64
    assert record["meta"] == META and record["key"] == key
    _load_clean(key, compute, value)
    assert compute.calls == 1
    assert sorted(p.name for p in cache.iterdir()) == [f"{key}.json", f"{key}.npy"]


def _flip_bit(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x10  # inside the table, past the header: still a valid .npy file
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (_flip_bit, r"its sha256 [0-9a-f]{16}\.\.\. differs from the recorded"),
        (lambda p: p.write_bytes(b""), "its sha256"),
        (lambda p: p.write_bytes(p.read_bytes()[:100]), "its sha256"),
        (lambda p: p.unlink(), "it cannot be read"),
        (lambda p: p.with_suffix(".json").unlink(), r"its record .*\.json is missing"),
        (lambda p: p.with_suffix(".json").write_text("{garbage"), r"its record .*\.json is unreadable"),
        (
            lambda p: p.with_suffix(".json").write_text('{"game": "spiffel"}'),
            r"its record .* has no checksum",
        ),
    ],
    ids=[
        "flipped-bit",
        "empty",
        "truncated",
        "npy-missing",
        "record-missing",
        "record-garbage",
        "old-record",
    ],
)
def test_bad_file_is_rebuilt_with_a_warning(cache: Path, damage, reason: str) -> None:
    key = cache_key("t", "spiffel", {"a": 1})
    value = np.arange(40.0)
    compute = _fill(cache, key, value)
    damage(cache / f"{key}.npy")
    with pytest.warns(CacheWarning, match=rf"solver cache .*{key}\.npy not used: {reason}"):
        array, loaded = cached_array(key, compute, META, shape=value.shape, dtype=value.dtype)
    assert not loaded and compute.calls == 2 and np.array_equal(array, value)  # never the bad table
    _load_clean(key, compute, value)  # the rebuilt file is sound again
    assert compute.calls == 2


def _rewrite(cache: Path, key: str, array: np.ndarray, record_changes: dict) -> None:
    """Replace the table by ``array`` with a consistent checksum (only shape/dtype/rules differ)."""
    import hashlib

    path = cache / f"{key}.npy"
    np.save(path, array)
    record = json.loads(path.with_suffix(".json").read_text())
    record.update(sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    record.update(record_changes)
    path.with_suffix(".json").write_text(json.dumps(record))


@pytest.mark.parametrize(
    ("array", "changes", "reason"),
    [
        (np.arange(39.0), {"shape": [39]}, r"it holds shape \(39,\) float64, expected \(40,\) float64"),
        (
            np.arange(40, dtype=np.float32),
            {"dtype": "<f4"},
            r"holds shape \(40,\) float32, expected \(40,\) float64",
        ),
        (np.arange(40.0), {"meta": {"game": "spiffel", "rules": {"a": 2}}}, "its record holds other rules"),
        (np.arange(40.0), {"key": "other"}, "its record is for 'other'"),
    ],
    ids=["shape", "dtype", "rules", "key"],
)
def test_sound_file_of_the_wrong_table_is_rebuilt(cache: Path, array, changes, reason: str) -> None:
    key = cache_key("t", "spiffel", {"a": 1})
    value = np.arange(40.0)
    compute = _fill(cache, key, value)
    _rewrite(cache, key, array, changes)
    with pytest.warns(CacheWarning, match=reason):
        got, loaded = cached_array(key, compute, META, shape=value.shape, dtype=value.dtype)
    assert not loaded and np.array_equal(got, value) and compute.calls == 2


def test_pickled_object_array_is_never_loaded(cache: Path) -> None:
    key = cache_key("t", "spiffel", {"a": 1})
    value = np.arange(4.0)
    compute = _fill(cache, key, value)
    _rewrite(cache, key, np.array([{"x": 1}], dtype=object), {"shape": [1], "dtype": "|O"})
    with pytest.warns(CacheWarning, match="not a numpy array file"):
        got, loaded = cached_array(key, compute, META)
    assert not loaded and np.array_equal(got, value)


def test_solver_table_shape_is_the_solvers() -> None:
    for game, kw in (("spiffel", {}), ("dice_poker", {}), ("yahtzee", {"yahtzee_bonus_limit": 2})):
        rules = make_rules(game, **kw)
        core = TurnSolver(rules)
        assert _table_shape(rules) == (1 << core.k, core.U, core.Z)


# ------------------------------------------------------------------------------ locks
@pytest.mark.parametrize(
    ("content", "age_s", "reason"),
    [
        ("garbage \x00\xff lock", 60, "its content is not a solver's pid"),
        ("", 60, "its content is not a solver's pid"),
        ("99999999", 1, "its process 99999999 is not running"),
        (f"{os.getpid()}", 7200, "it is 7200 s old"),
    ],
    ids=["garbage", "empty", "dead-pid", "stale"],
)
def test_unholdable_lock_is_broken_with_a_message(
    cache: Path, content: str, age_s: float, reason: str
) -> None:
    key = cache_key("t", "spiffel", {"a": 1})
    lock = cache / f"{key}.lock"
    lock.write_bytes(content.encode("utf-8", "surrogateescape"))
    then = time.time() - age_s
    os.utime(lock, (then, then))
    start = time.monotonic()
    with pytest.warns(CacheWarning, match=rf"breaking solver cache lock .*{key}\.lock: {reason}"):
        array, loaded = cached_array(key, Counter(np.ones(3)), META)
    assert time.monotonic() - start < 10 and not loaded and np.array_equal(array, np.ones(3))
    assert not lock.exists()


def test_lock_of_a_reused_pid_is_broken(cache: Path) -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to tell when a process started")
    lock = cache / "x.lock"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lock.write_text(str(proc.pid))  # written 'before' the process started
        then = time.time() - 120
        os.utime(lock, (then, then))
        with (
            pytest.warns(CacheWarning, match=f"process id {proc.pid} now belongs to a process started after"),
            _lock(lock, poll_s=0.05) as held,
        ):
            assert held
    finally:
        proc.kill()
        proc.wait()


def test_live_lock_is_waited_for_but_not_forever(cache: Path) -> None:
    lock = cache / "x.lock"
    lock.write_text(f"{os.getpid()}")  # a live holder (this very process)
    start = time.monotonic()
    warned = pytest.warns(CacheWarning, match=r"still held after 0 s; solving without it")
    with warned, _lock(lock, poll_s=0.05, max_wait_s=0.3) as held:
        assert not held
    assert 0.3 <= time.monotonic() - start < 5
    assert lock.read_text() == f"{os.getpid()}"  # someone else's lock is left alone


def test_lock_is_taken_and_released(cache: Path) -> None:
    lock = cache / "x.lock"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with _lock(lock) as held:
            assert held and lock.read_text().split()[0] == str(os.getpid())
    assert not lock.exists()
