"""The numba inner loops of :mod:`agents.solver.farkle_win` (imported only when a table is solved).

Each function is documented where it is defined; all state sizes and meanings are those of
:mod:`agents.solver.farkle_win`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_jit = njit(cache=True, nogil=True)


@_jit
def throw_value(t, n, Q, L, g_start, g_prob, o_start, o_pts, o_left, farkle_p):
    """Value of throwing ``n`` dice at turn total ``t`` given after-set-aside values ``Q``."""
    v = farkle_p[n] * L
    for g in range(g_start[n], g_start[n + 1]):
        best = -1.0
        for o in range(o_start[g], o_start[g + 1]):
            q = Q[t + o_pts[o], o_left[o]]
            if q > best:
                best = q
        v += g_prob[g] * best
    return v


@_jit
def final_turn(D, tb, g_start, g_prob, o_start, o_pts, o_left, farkle_p):
    """``F[d]``: chance (ties half) that seat 1 ends its last turn above a lead of ``d``."""
    F = np.zeros(D + 1)
    Q = np.zeros((D + tb + 2 + 170, 7))
    for d in range(1, D + 1):
        top = max(d + 1, tb)  # from here on banking is legal and wins
        for t in range(top, top + 161):
            for n in range(1, 7):
                Q[t, n] = 1.0
        for t in range(top - 1, 0, -1):
            for n in range(1, 7):
                w = throw_value(t, n, Q, 0.0, g_start, g_prob, o_start, o_pts, o_left, farkle_p)
                if t >= tb and t == d and w < 0.5:
                    w = 0.5
                Q[t, n] = w
        F[d] = throw_value(0, 6, Q, 0.0, g_start, g_prob, o_start, o_pts, o_left, farkle_p)
    return F


@_jit
def _throw_values(t, n, Q, loss, acc, best, g_start, g_prob, o_start, o_pts, o_left, farkle_p):
    """``acc[i]``: value of throwing ``n`` dice at turn total ``t`` in turn ``i`` (the last axis of
    the after-set-aside values ``Q``), a farkle being worth ``loss[i]``; ``best`` is scratch."""
    fp = farkle_p[n]
    for i in range(acc.shape[0]):
        acc[i] = fp * loss[i]
    for g in range(g_start[n], g_start[n + 1]):
        for i in range(acc.shape[0]):
            best[i] = -1.0
        for o in range(o_start[g], o_start[g + 1]):
            tt = t + o_pts[o]
            ll = o_left[o]
            for i in range(acc.shape[0]):
                q = Q[tt, ll, i]
                best[i] = q if q > best[i] else best[i]
        gp = g_prob[g]
        for i in range(acc.shape[0]):
            acc[i] += gp * best[i]


@_jit
def diag_turn(tops, B, L, Lf, Q, acc, best, g_start, g_prob, o_start, o_pts, o_left, farkle_p):
    """Turns of ``m`` states at once (the last axis). ``B[t, i]``: value of banking turn total
    ``t`` (-1 where not allowed); from ``tops[i]`` on the turn is settled at ``B``. Fills
    ``Q[t, n, i]`` (after-set-aside values) and returns the turn-start values."""
    m = tops.shape[0]
    T = 0
    for i in range(m):
        if tops[i] > T:
            T = tops[i]
    for t in range(T, T + 161):
        for n in range(1, 7):
            for i in range(m):
                Q[t, n, i] = B[t, i]
    for t in range(T - 1, 0, -1):
        for n in range(1, 7):
            _throw_values(t, n, Q, L, acc, best, g_start, g_prob, o_start, o_pts, o_left, farkle_p)
            for i in range(m):
                if t >= tops[i]:
                    Q[t, n, i] = B[t, i]
                else:
                    b = B[t, i]
                    Q[t, n, i] = acc[i] if acc[i] > b else b
    _throw_values(0, 6, Q, Lf, acc, best, g_start, g_prob, o_start, o_pts, o_left, farkle_p)
    return acc.copy()


@_jit
def fill0(A, Bs, X, U, tb, S1, F, bankrupt, tops, B, L, Lf):
    """Banking values of seat 0's turns at the pairs ``(A[i], Bs[i])``."""
    m = A.shape[0]
    T = 0
    for i in range(m):
        tops[i] = U - A[i]
        T = max(T, tops[i])
    for i in range(m):
        a, b = A[i], Bs[i]
        L[i] = 1.0 - S1[a, b]
        Lf[i] = 1.0 - S1[0, b] if bankrupt else L[i]
        for t in range(T + 161):
            u = a + t
            if t < tb:
                B[t, i] = -1.0
            elif u >= X:
                B[t, i] = 1.0 - F[u - b]
            else:
                B[t, i] = 1.0 - S1[u, b]
    return T


@_jit
def fill1(A, Bs, X, tb, S0, bankrupt, tops, B, L, Lf):
    """Banking values of seat 1's turns at the pairs ``(A[i], Bs[i])``."""
    m = A.shape[0]
    T = 0
    for i in range(m):
        tops[i] = max(X - Bs[i], tb)
        T = max(T, tops[i])
    for i in range(m):
        a, b = A[i], Bs[i]
        L[i] = 1.0 - S0[a, b]
        Lf[i] = 1.0 - S0[a, 0] if bankrupt else L[i]
        for t in range(T + 161):
            v = b + t
            if t < tb:
                B[t, i] = -1.0
            elif v >= X:
                B[t, i] = 1.0
            else:
                B[t, i] = 1.0 - S0[a, v]
    return T


@_jit
def sweep(S0, S1, X, U, tb, F, bankrupt, g_start, g_prob, o_start, o_pts, o_left, farkle_p):
    """One Gauss-Seidel sweep over all score pairs in decreasing ``a + b`` (in place); the
    pairs of one sum do not depend on each other, so each sum is one batch."""
    rows = U + tb + 2 * 161 + 2
    Qbuf = np.zeros(rows * 7 * X)
    Bbuf = np.zeros(rows * X)
    tops = np.zeros(X, dtype=np.int64)
    L = np.zeros(X)
    Lf = np.zeros(X)
    acc = np.zeros(X)
    best = np.zeros(X)
    for s in range(2 * X - 2, -1, -1):
        lo = max(0, s - X + 1)
        hi = min(X - 1, s)
        m = hi - lo + 1
        A = np.arange(lo, hi + 1)
        Bs = s - A
        Qm = Qbuf[: rows * 7 * m].reshape(rows, 7, m)
        Bm = Bbuf[: rows * m].reshape(rows, m)
        for seat in range(2):
            if seat == 0:
                fill0(A, Bs, X, U, tb, S1, F, bankrupt, tops[:m], Bm, L[:m], Lf[:m])
            else:
                fill1(A, Bs, X, tb, S0, bankrupt, tops[:m], Bm, L[:m], Lf[:m])
            g = (g_start, g_prob, o_start, o_pts, o_left, farkle_p)
            v = diag_turn(tops[:m], Bm, L[:m], Lf[:m], Qm, acc[:m], best[:m], *g)
            S = S0 if seat == 0 else S1
            for i in range(m):
                S[A[i], Bs[i]] = v[i]


@_jit
def throw_tables(tops, Q, L, W, g_start, g_prob, o_start, o_pts, o_left, farkle_p):
    """``W[t, n, i]``: value of throwing ``n`` dice on from turn total ``t`` (1 <= t < ``tops[i]``) in
    each of ``m`` turns given their after-set-aside values ``Q[t, n, i]``; -1 from ``tops[i]`` on
    (the turn is settled there)."""
    m = tops.shape[0]
    rows = Q.shape[0]
    best = np.empty(m)
    acc = np.empty(m)
    for t in range(rows):
        for n in range(7):
            for i in range(m):
                W[t, n, i] = -1.0
    T = 0
    for i in range(m):
        T = max(T, tops[i])
    for t in range(1, T):
        for n in range(1, 7):
            _throw_values(t, n, Q, L, acc, best, g_start, g_prob, o_start, o_pts, o_left, farkle_p)
            for i in range(m):
                if t < tops[i]:
                    W[t, n, i] = acc[i]
