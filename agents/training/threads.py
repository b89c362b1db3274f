"""The torch thread count of a training run on the CPU: chosen for the machine at the start
(:func:`choose_threads`, :func:`fastest_threads`) and kept right while the run goes on
(:class:`ThreadGovernor`).

A torch thread that waits for a core other work holds stalls every small matrix product of the
training loop, so ``torch_threads: 0`` measures rather than assumes that every usable core is free.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import torch

__all__ = [
    "ThreadGovernor",
    "choose_threads",
    "fastest_threads",
    "govern_threads",
    "most_threads_within",
    "thread_governor",
    "usable_cores",
]


def choose_threads(requested: int, device: str) -> int:
    """torch intra-op threads: ``requested``, or (0) chosen for the machine.

    With a GPU one thread feeds it. On the CPU the env steps in the main thread between forward
    passes, so the cores this process may use go to torch, unless other work holds some of them:
    a thread that waits for a busy core stalls every matrix product of the update (measured 2.5×
    slower with one of two cores busy, up to 30× under a multi-threaded neighbour), so the count
    is measured (:func:`fastest_threads`).
    """
    if requested:
        return int(requested)
    if device.startswith("cuda"):
        return 1
    cores = usable_cores()
    threads = fastest_threads(cores)
    if threads < cores:
        print(
            f"torch_threads: {threads} of the {cores} cores this process may use (other work keeps the rest "
            "busy: measured faster); set torch_threads to fix the count",
            file=sys.stderr,
        )
    return threads


def usable_cores() -> int:
    """The cores this process may run on (its affinity; all of the machine's off Linux)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def fastest_threads(cores: int, rounds: int = 5, tolerance: float = 0.1) -> int:
    """The most threads among 1, 2, 4, ... and ``cores`` whose training-shaped work runs within
    ``tolerance`` of the fastest count's: the median of ``rounds`` interleaved timings of a small
    MLP's rollout-sized forwards and one minibatch forward and backward (about 0.3 s on two
    cores). Many small parallel regions are what a busy core stalls, which large products alone
    hide. On an idle machine that is ``cores``; while other processes keep cores busy, fewer. The
    torch thread count and random state are left as they were."""
    counts = sorted({1, cores, *(2**i for i in range(1, cores.bit_length()) if 2**i < cores)})
    if len(counts) == 1:
        return cores
    gen = torch.Generator().manual_seed(0)  # not torch's global generator: the run seeds that
    weights = [
        (torch.rand(i, o, generator=gen) - 0.5).mul_(0.2).requires_grad_()
        for i, o in ((96, 256), (256, 256), (256, 48))
    ]
    obs, batch = torch.rand(512, 96, generator=gen), torch.rand(1024, 96, generator=gen)

    def net(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(torch.tanh(x @ weights[0]) @ weights[1]) @ weights[2]

    def work() -> None:
        with torch.no_grad():
            for _ in range(4):
                net(obs)
        net(batch).square().mean().backward()

    before = torch.get_num_threads()
    times: dict[int, list[float]] = {n: [] for n in counts}
    try:
        for _ in range(rounds):
            for n in counts:
                torch.set_num_threads(n)
                work()  # the first pass at a new count starts its threads
                start = time.perf_counter()
                work()
                times[n].append(time.perf_counter() - start)
    finally:
        torch.set_num_threads(before)
    return most_threads_within({n: sorted(t)[len(t) // 2] for n, t in times.items()}, tolerance)


def most_threads_within(seconds: dict[int, float], tolerance: float) -> int:
    """The most threads whose time in ``seconds`` (thread count -> seconds) is within ``tolerance``
    of the fastest.

    >>> most_threads_within({1: 1.0, 2: 0.6}, 0.1), most_threads_within({1: 1.0, 2: 1.3}, 0.1)
    (2, 1)
    """
    best = min(seconds.values())
    return max(n for n, t in seconds.items() if t <= best * (1.0 + tolerance))


class ThreadGovernor:
    """``torch_threads: 0`` kept right while a run goes on (:func:`choose_threads` picks the count
    at the start only).

    Call :meth:`after_update` with each update's wall seconds. When an update takes more than
    ``slow`` times the fastest one at the current count (other work took cores: each stalled
    thread stalls every product), or every ``recheck`` updates while below ``cores`` (to take the
    cores back once they are free), the count is measured again (``measure``, by default
    :func:`fastest_threads`) and torch set to it. On a machine nobody else uses, nothing changes.
    ``updates`` counts the updates run at each count (for the model card).

    >>> times = iter([1.0, 1.1, 2.5, 1.4, 1.3])
    >>> gov = ThreadGovernor(2, 2, active=True, measure=lambda cores: 1)
    >>> [gov.after_update(next(times)) for _ in range(3)], gov.threads
    ([None, None, 1], 1)
    """

    def __init__(
        self,
        threads: int,
        cores: int,
        *,
        active: bool,
        slow: float = 2.0,
        recheck: int = 20,
        measure: Any = None,
    ) -> None:
        self.threads, self.cores, self.active = int(threads), int(cores), bool(active) and cores > 1
        self.slow, self.recheck = float(slow), int(recheck)
        self.measure = measure if measure is not None else fastest_threads
        self.best: dict[int, float] = {}  # the fastest update seen at each count
        self.since = 0  # updates since the last measurement
        self.updates: dict[int, int] = {}

    def after_update(self, seconds: float) -> int | None:
        """Note an update of ``seconds`` at the current count; the new count when it changed it."""
        n = self.threads
        self.updates[n] = self.updates.get(n, 0) + 1
        self.since += 1
        if not self.active:
            return None
        best = self.best.get(n)
        self.best[n] = seconds if best is None else min(best, seconds)
        slowed = best is not None and seconds > self.slow * best
        if not (slowed or (n < self.cores and self.since >= self.recheck)):
            return None
        self.since = 0
        chosen = int(self.measure(self.cores))
        if chosen == n:
            self.best[n] = seconds  # the machine's new normal at this count: no measuring every update
            return None
        self.threads = chosen
        torch.set_num_threads(chosen)
        return chosen


def thread_governor(requested: int, device: str, threads: int) -> ThreadGovernor:
    """What keeps ``torch_threads: 0`` (``requested``) right during a run of either trainer,
    starting from ``threads``; a fixed count or a GPU: nothing (it only counts updates)."""
    active = requested == 0 and not device.startswith("cuda")
    return ThreadGovernor(threads, usable_cores(), active=active)


def govern_threads(governor: ThreadGovernor, seconds: float, steps: int) -> None:
    """An update's wall ``seconds`` to ``governor``; a line on stderr when it changes the count."""
    before = governor.threads
    changed = governor.after_update(seconds)
    if changed is not None:
        why = "other work keeps cores busy" if changed < before else "the cores are free again"
        print(f"torch_threads: {before} -> {changed} at step {steps} ({why}: measured)", file=sys.stderr)
