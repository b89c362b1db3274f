#!/usr/bin/env python
"""Throughput of the envs and of the training loops: see :mod:`agents.commands.benchmark`.

Thread counts must be set before numpy loads, so ``--threads N`` is applied here first.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if "--threads" in sys.argv[1:-1]:
    _n = sys.argv[sys.argv.index("--threads") + 1]
    if _n.isdigit() and int(_n) >= 1:  # anything else is refused by the parser below
        for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[_var] = _n

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.benchmark import main

if __name__ == "__main__":
    raise SystemExit(main())
