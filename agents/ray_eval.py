"""Tournaments on Ray: the tasks of :func:`agents.evaluation.evaluate` spread over a cluster.

:func:`run_tasks` runs the very ``_Task`` objects the local process pool runs (same batches,
same seeds derived per pairing and deal, agents reseeded before every task), each as one Ray
task, so ``evaluate(..., backend="ray")`` gives records equal to the local pool's, bit for bit,
for any cluster size. Needs the ``[ray]`` extra (only ``ray`` itself; RLlib is not imported).

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


def _remote_run(task: Any) -> list[Any]:
    from .evaluation.tournament import _init_worker, _run_task

    _init_worker()
    return _run_task(task)


def run_tasks(
    tasks: Sequence[Any],
    address: str | None = None,
    workers: int | None = None,
    on_done: Callable[[int, list[Any]], None] | None = None,
) -> Iterator[tuple[int, list[Any]]]:
    """Run ``tasks`` (``agents.evaluation.tournament._Task``) as Ray tasks; yield ``(index, records)``
    as they end.

    ``workers``: CPUs of a local Ray this call starts (default: all); ignored on a cluster.
    A Ray this call started is shut down at the end.
    """
    import ray

    started = ensure_ray(address, workers)
    try:
        remote = ray.remote(num_cpus=1)(_remote_run)
        refs = {remote.remote(t): i for i, t in enumerate(tasks)}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                records = ray.get(ref)
                yield refs[ref], records
    finally:
        if started:
            ray.shutdown()
