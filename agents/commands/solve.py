"""``dice-envs solve GAME [--param value ...]``: the exact solvers (same as ``python -m agents.solver``)."""

from __future__ import annotations

from agents.solver.__main__ import main as _solver_main

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Solve a game and print its value; see ``dice-envs solve --help``."""
    return _solver_main(argv, prog="dice-envs solve")
