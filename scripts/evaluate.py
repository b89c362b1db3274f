#!/usr/bin/env python
"""``dice-envs evaluate`` in a source checkout: :mod:`agents.commands.evaluate` (see ``--help``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.evaluate import main

if __name__ == "__main__":
    sys.exit(main())
