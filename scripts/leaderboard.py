#!/usr/bin/env python
"""``dice-envs leaderboard`` from a source checkout.

The command lives in :mod:`agents.commands.leaderboard`.

Run ``python scripts/leaderboard.py --help`` (or ``dice-envs leaderboard --help`` once installed)
for its options.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.leaderboard import main

if __name__ == "__main__":
    sys.exit(main())
