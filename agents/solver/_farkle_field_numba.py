"""The numba inner loop of :mod:`agents.solver.farkle_field` (imported only when a table is solved).

One turn of a seat that maximises one component of a vector of values: the seat's own chance
of winning, while the other components (the other seats' chances) follow its choices.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def turn_tables(obj, tops, tb, B, L, Lf, tol, g_start, g_prob, o_start, o_pts, o_left, farkle_p):
    """Turns of ``m`` states that maximise component ``obj[i]`` of their values.

    ``B[t, i, :]``: the values after banking turn total ``t`` (steps; read from ``tb`` on);
    from ``tops[i]`` on the turn banks. ``L[i, :]`` / ``Lf[i, :]``: the values after a farkle
    (a later throw / the turn's first throw). Returns ``(start, Q, W)``: the turn-start values
    ``(m, K)``, the after-set-aside values ``Q[t, n, i, :]`` (bank or throw ``n`` dice on) and
    the throw values ``W[t, n, i, :]`` (throwing ``n`` dice on from ``t``; defined below
    ``tops[i]``).

    Ties (within ``tol`` of the objective): banking before throwing on; among the selections of
    a throw, the first in :func:`~agents.solver.farkle_win.option_groups` order (fewest points,
    then fewest dice left) unless a later one is better by more than ``tol``.
    """
    rows, m, K = B.shape
    Q = np.zeros((rows, 7, m, K))
    W = np.full((rows, 7, m, K), -1.0)
    start = np.zeros((m, K))
    acc = np.zeros(K)
    for i in range(m):
        c = obj[i]
        top = tops[i]
        for t in range(top, rows):
            for n in range(1, 7):
                for k in range(K):
                    Q[t, n, i, k] = B[t, i, k]
        for t in range(top - 1, -1, -1):
            for n in range(1, 7):
                if t == 0 and n < 6:
                    continue
                for k in range(K):
                    acc[k] = farkle_p[n] * (Lf[i, k] if t == 0 else L[i, k])
                for g in range(g_start[n], g_start[n + 1]):
                    bo = o_start[g]
                    best = Q[t + o_pts[bo], o_left[bo], i, c]
                    for o in range(o_start[g] + 1, o_start[g + 1]):
                        q = Q[t + o_pts[o], o_left[o], i, c]
                        if q > best + tol:
                            best = q
                            bo = o
                    tt = t + o_pts[bo]
                    ll = o_left[bo]
                    for k in range(K):
                        acc[k] += g_prob[g] * Q[tt, ll, i, k]
                for k in range(K):
                    W[t, n, i, k] = acc[k]
                if t == 0:
                    for k in range(K):
                        start[i, k] = acc[k]
                elif t >= tb and B[t, i, c] >= acc[c] - tol:
                    for k in range(K):
                        Q[t, n, i, k] = B[t, i, k]
                else:
                    for k in range(K):
                        Q[t, n, i, k] = acc[k]
    return start, Q, W
