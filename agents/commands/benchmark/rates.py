"""What every benchmark of :mod:`agents.commands.benchmark` shares: rates, threads, the machine.

A *rate* is steps per wall second and per CPU second of this process (``process_time``, the
fairer figure on a shared machine), optionally also per CPU second spent inside the env alone.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Any

__all__ = ["EnvClock", "available_cores", "cpu_name", "load_average", "machine", "rate", "set_torch_threads"]


def rate(steps: int, wall: float, cpu: float, env_cpu: float | None = None) -> dict[str, float]:
    """``steps`` over ``wall`` seconds and ``cpu`` seconds (and ``env_cpu``: the env's own share).

    >>> rate(100, 2.0, 4.0)
    {'steps': 100, 'wall_s': 2.0, 'steps_per_s': 50.0, 'steps_per_cpu_s': 25.0}
    """
    out = {
        "steps": steps,
        "wall_s": wall,
        "steps_per_s": steps / wall,
        "steps_per_cpu_s": steps / max(cpu, 1e-9),
    }
    if env_cpu is not None:
        out["env_steps_per_cpu_s"] = steps / max(env_cpu, 1e-9)
    return out


class EnvClock:
    """Adds up the CPU time spent inside the calls it makes (an env's ``step`` / ``reset``), so
    that a rate can leave out the time the benchmark spends choosing actions."""

    def __init__(self) -> None:
        self.cpu = 0.0

    def __call__(self, fn: Any, *args: Any) -> Any:
        t = time.process_time()
        out = fn(*args)
        self.cpu += time.process_time() - t
        return out


def available_cores() -> int:
    """The cores this process may run on (its affinity), or 1 where the OS does not say."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else what :mod:`platform` knows)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def set_torch_threads(threads: int | None) -> int:
    """Set torch's threads to ``threads`` (default: every available core) if torch is installed;
    return the count. numpy's BLAS pool is sized when numpy loads (``OMP_NUM_THREADS``, or the
    affinity ``taskset`` gives), before any command runs, so it is not changed here."""
    n = threads or available_cores()
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is an optional extra
        return n
    torch.set_num_threads(n)
    return n


def machine(threads: int | None = None) -> dict[str, Any]:
    """The machine a run measured: versions, cores, affinity and the load average at the start."""
    import numpy as np

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.machine(),
        "processor": platform.processor(),
        "cpus": os.cpu_count(),
        "affinity": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "load_average_start": load_average(),
        "threads": threads,
    }


def load_average() -> tuple[float, float, float] | None:
    """The load average now (``None`` where the OS has none)."""
    return os.getloadavg() if hasattr(os, "getloadavg") else None
