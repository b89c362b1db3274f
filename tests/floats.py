"""Comparing floats that come from products and reductions.

A solver value, an expected score, a probability summed over throws, a regret or a rating is the
result of a matrix product or a sum. numpy hands those to BLAS kernels and SIMD loops chosen for
the CPU at run time (OpenBLAS picks Haswell, SkylakeX, Zen ... kernels; numpy picks its SIMD
width), and the order of the additions, so the last bits of the result, depend on that choice:
the Yahtzee optimum is 254.5877287344957 with one kernel and 254.58772873449573 with another.

So such a value is compared with :func:`assert_close`, never with ``==``. Bit-exact comparisons
stay where bits are the contract: the same computation twice on the same machine (determinism:
the same seed gives the same game, agent and model), or values exact by construction (integers,
counts, table entries derived from integer scoring). ``tests/test_float_compares.py`` finds an
``==`` on such a value that carries neither.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Relative tolerance for values that differ only by the order of floating-point additions: a
#: product or a sum of n terms moves by at most about n ulps between kernels, far below this.
RTOL = 1e-9
#: Absolute tolerance, for values near zero (a regret of 0, a difference of two equal values).
ATOL = 1e-9


def assert_close(
    actual: Any, expected: Any, *, rtol: float = RTOL, atol: float = ATOL, msg: str = ""
) -> None:
    """Assert that ``actual`` equals ``expected`` up to the rounding of another CPU's kernels.

    Works for scalars, sequences and arrays (shapes must match; infinities must match exactly).

    >>> assert_close(254.5877287344957, 254.58772873449573)
    >>> assert_close([0.0, 1.0], [1e-12, 1.0])
    """
    np.testing.assert_allclose(
        np.asarray(actual, dtype=float), np.asarray(expected, dtype=float), rtol=rtol, atol=atol, err_msg=msg
    )
