"""Tournaments on Ray: the tasks of :func:`agents.evaluation.evaluate` spread over a cluster.

:func:`run_tasks` runs the very tasks the local process pool runs (same batches, same seeds
derived per pairing and deal, agents reseeded before every task), each as one Ray task, with the
task runner and worker set-up the tournament hands it, so ``evaluate(..., backend="ray")`` gives
records equal to the local pool's, bit for bit, for any cluster size. This module knows nothing
of tournaments: it only needs the runner to be a module-level function (Ray ships it to the
workers by reference). Needs the ``[ray]`` extra (only ``ray`` itself; RLlib is not imported).

``address``: ``None`` joins the cluster of ``RAY_ADDRESS`` when set, else starts a local Ray
(with ``workers`` CPUs); ``"auto"`` or ``"ray://host:10001"`` / ``"host:6379"`` join that
cluster. Every node must have this project installed (``pip install dice-envs``) — or submit
the whole run with ``ray job submit --working-dir . -- python scripts/evaluate.py ...``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["ensure_ray", "run_tasks"]


def ensure_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect to (or start) Ray unless this process already is; True if this call started it."""
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the installation
        from dice_envs.rules import ConfigError

        raise ConfigError("the ray backend needs the Ray extra: pip install 'dice-envs[ray]'") from exc
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if address is None and not os.environ.get("RAY_ADDRESS"):
        kwargs["num_cpus"] = num_cpus
    else:
        kwargs["address"] = address
    ray.init(**kwargs)
    return True


def _remote_run(run: Callable[[Any], Any], init: Callable[[], None] | None, task: Any) -> Any:
    if init is not None:
        init()
    return run(task)


def run_tasks(
    tasks: Sequence[Any],
    run: Callable[[Any], Any],
    *,
    init: Callable[[], None] | None = None,
    address: str | None = None,
    workers: int | None = None,
) -> Iterator[tuple[int, Any]]:
    """Run every task as one Ray task, which calls ``init()`` (when given: a worker's set-up, like a
    process pool's initializer) and then ``run(task)``; yield ``(index, result)`` as they end.

    ``run`` and ``init`` must be module-level functions. ``workers``: CPUs of a local Ray this
    call starts (default: all); ignored on a cluster. A Ray this call started is shut down at the
    end.
    """
    import ray

    started = ensure_ray(address, workers)
    try:
        remote = ray.remote(num_cpus=1)(_remote_run)
        refs = {remote.remote(run, init, t): i for i, t in enumerate(tasks)}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                yield refs[ref], ray.get(ref)
    finally:
        if started:
            ray.shutdown()
