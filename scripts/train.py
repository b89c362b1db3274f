#!/usr/bin/env python
"""Train an agent on a dice-envs game: see :mod:`agents.commands.train` (``dice-envs train``).

python scripts/train.py --config configs/train/quickstart.yaml
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.train import main

if __name__ == "__main__":
    raise SystemExit(main())
