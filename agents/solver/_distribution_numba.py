"""The numba inner loop of :mod:`agents.solver.distribution` (imported only when a distribution
is computed)."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def carry(dist, first, last, src, dst, points, prob, out):  # pragma: no cover - compiled
    """Add row ``src[t]`` of ``dist`` (nonzero from column ``first`` to ``last`` of that row),
    weighted by ``prob[t]`` and shifted right by ``points[t]``, into row ``dst[t]`` of ``out``,
    for every ``t``."""
    for t in range(len(src)):
        s, d, shift, p = src[t], dst[t], points[t], prob[t]
        for k in range(first[s], last[s] + 1):
            out[d, shift + k] += p * dist[s, k]
