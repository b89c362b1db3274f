"""``python -m dice_envs``: the ``dice-envs`` command line.

The command line lives in the ``agents`` layer, above the environments; this module finds it
through the ``dice-envs`` console-script entry point of the installed distribution, so
``dice_envs`` itself never imports the layer above it.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run ``dice-envs`` with ``argv`` (default ``sys.argv[1:]``); 2 if the command line is absent."""
    found = [ep for ep in entry_points(group="console_scripts") if ep.name == "dice-envs"]
    if not found:
        print(
            "python -m dice_envs: the dice-envs command line is not installed (it is the 'agents' package "
            "of the dice-envs distribution): pip install dice-envs, or pip install -e . in a checkout",
            file=sys.stderr,
        )
        return 2
    return int(found[0].load()(argv) or 0)


if __name__ == "__main__":
    sys.exit(main())
