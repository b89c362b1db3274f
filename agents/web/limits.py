"""How much solving a room or a client may cause: tables too large to solve are refused, and each
client has a few solves at a time.

The ``win-optimal`` bot plays from the win-probability table of :mod:`agents.solver.farkle_win`,
whose solve time grows with about the cube of the target (and with ``bank_minimum``); the pad's
solves share one thread, so one oversized solve would hold up every room. A ``win-optimal`` seat
(or a hint from the table) is allowed only for a target of at most :data:`MAX_WIN_TARGET` and a
bank minimum of at most :data:`MAX_WIN_BANK_MINIMUM` (seconds to solve), or for a table already
in the solver's disk cache up to a target of :data:`MAX_CACHED_WIN_TARGET`. Solves wait their
turn in the :class:`SolveQueue`.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from agents.web.protocol import PadError
from dice_envs.rules import ConfigError, FarkleRules

__all__ = [
    "MAX_CACHED_WIN_TARGET",
    "MAX_SOLVES_PER_CLIENT",
    "MAX_WIN_BANK_MINIMUM",
    "MAX_WIN_TARGET",
    "SolveQueue",
    "check_win_solve",
]

#: Largest target whose win-probability table a room may have solved.
MAX_WIN_TARGET = 2_500
#: Largest bank minimum whose win-probability table a room may have solved.
MAX_WIN_BANK_MINIMUM = 2_000
#: Largest target of a table already in the solver cache that a room may load.
MAX_CACHED_WIN_TARGET = 100_000
#: Solves one client may have queued or running at once (one solving, one waiting).
MAX_SOLVES_PER_CLIENT = 2


def check_win_solve(rules: FarkleRules) -> None:
    """``ConfigError`` naming the limits when the win-probability table of ``rules`` is too large
    to solve on a request's behalf (and is not already solved)."""
    from agents.solver.farkle_win import is_solved  # in the memo or the disk cache

    small = rules.target <= MAX_WIN_TARGET and rules.bank_minimum <= MAX_WIN_BANK_MINIMUM
    if small or (rules.target <= MAX_CACHED_WIN_TARGET and is_solved(rules)):
        return
    raise ConfigError(
        f"win-optimal bots and win hints are limited to targets <= {MAX_WIN_TARGET} and bank minimums "
        f"<= {MAX_WIN_BANK_MINIMUM}; got {rules.target}"
        + (f" with bank minimum {rules.bank_minimum}" if rules.bank_minimum > MAX_WIN_BANK_MINIMUM else "")
        + " (a larger table takes minutes to hours to solve and would hold up every room; one solved "
        f"beforehand into the solver cache, e.g. by `python scripts/solve_farkle_win.py --target "
        f"{rules.target} --bank-minimum {rules.bank_minimum}`, is used up to a target of "
        f"{MAX_CACHED_WIN_TARGET})"
    )


class SolveQueue:
    """Solves on a thread of their own, one at a time, at most ``per_client`` per client at once.

    :meth:`submit` queues ``fn`` (a solve) for ``client`` under ``key`` (what it solves): a solve
    of the same key already queued or running is shared instead, and a client that has
    ``per_client`` solves queued or running is refused with a 429 :class:`PadError`. A solve
    whose asker stopped waiting goes on (its table is kept for the next ask) and counts until done.
    """

    def __init__(self, per_client: int = MAX_SOLVES_PER_CLIENT) -> None:
        if per_client < 1:
            raise ValueError(f"per_client must be at least 1, got {per_client}")
        self.per_client = per_client
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="pad-solver")
        self._jobs: dict[Hashable, Future[Any]] = {}
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def submit(self, client: str, key: Hashable, fn: Callable[[], Any]) -> Future[Any]:
        """The future of ``fn()`` solved for ``client`` (the shared one when ``key`` is queued)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                return job
            if self._counts[client] >= self.per_client:
                raise PadError(
                    429,
                    f"the solver is busy with {self.per_client} solves of yours; "
                    "try again in a few seconds, when one is done",
                )
            self._counts[client] += 1
            job = self._jobs[key] = self._pool.submit(fn)
        job.add_done_callback(lambda _: self._done(client, key))
        return job

    def _done(self, client: str, key: Hashable) -> None:
        with self._lock:
            self._jobs.pop(key, None)
            self._counts[client] -= 1
            if self._counts[client] <= 0:
                del self._counts[client]

    def shutdown(self) -> None:
        """Drop the queued solves (a running one ends in its thread)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
