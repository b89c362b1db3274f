#!/usr/bin/env python
"""``dice-envs evaluate`` from a source checkout.

The command lives in :mod:`agents.commands.evaluate`.

Run ``python scripts/evaluate.py --help`` (or ``dice-envs evaluate --help`` once installed)
for its options.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.evaluate import main

if __name__ == "__main__":
    sys.exit(main())
