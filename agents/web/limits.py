"""How much solving one room may cause: the exact two-player Farkle table is refused when too large.

The ``win-optimal`` bot plays from the win-probability table of
:mod:`agents.solver.farkle_win`, solved on its first move. The table holds every pair of
banked totals below the target (``(target / 50)²`` pairs), each sweep of its value iteration
solves one turn per pair over turn totals up to the target, so a solve's time grows with about
the cube of the target, and a large ``bank_minimum`` lengthens every turn and slows the
iteration's convergence. The pad's bots and hints share one solver thread (the solvers' caches
are not thread-safe), so one oversized solve would hold up every other room for hours.

A room therefore gets a ``win-optimal`` seat (and a hint may use the table) only when the
table is cheap: a target of at most :data:`MAX_WIN_TARGET` and a bank minimum of at most
:data:`MAX_WIN_BANK_MINIMUM` (a few seconds to solve), or a table already in the solver's disk
cache (solved beforehand, e.g. by ``agents.solver.win_probability``), which loads in moments;
cached tables are used up to a target of :data:`MAX_CACHED_WIN_TARGET` (their size in memory
grows with the square of the target).
"""

from __future__ import annotations

from dice_envs.rules import ConfigError, FarkleRules

__all__ = [
    "MAX_CACHED_WIN_TARGET",
    "MAX_WIN_BANK_MINIMUM",
    "MAX_WIN_TARGET",
    "check_win_solve",
    "win_table_cached",
]

#: Largest target whose win-probability table a room may have solved.
MAX_WIN_TARGET = 2_500
#: Largest bank minimum whose win-probability table a room may have solved.
MAX_WIN_BANK_MINIMUM = 2_000
#: Largest target of a table already in the solver cache that a room may load.
MAX_CACHED_WIN_TARGET = 100_000


def win_table_cached(rules: FarkleRules) -> bool:
    """Whether the win-probability table of ``rules`` is solved already (memo or disk cache)."""
    from agents.solver.farkle_win import is_solved

    return is_solved(rules)


def check_win_solve(rules: FarkleRules) -> None:
    """``ConfigError`` naming the limits when the win-probability table of ``rules`` is too large
    to solve on a request's behalf (and is not already solved)."""
    small = rules.target <= MAX_WIN_TARGET and rules.bank_minimum <= MAX_WIN_BANK_MINIMUM
    if small or (rules.target <= MAX_CACHED_WIN_TARGET and win_table_cached(rules)):
        return
    raise ConfigError(
        f"win-optimal bots and win hints are limited to targets <= {MAX_WIN_TARGET} and bank minimums "
        f"<= {MAX_WIN_BANK_MINIMUM}; got {rules.target}"
        + (f" with bank minimum {rules.bank_minimum}" if rules.bank_minimum > MAX_WIN_BANK_MINIMUM else "")
        + " (a larger table takes minutes to hours to solve and would hold up every room; one solved "
        f"beforehand into the solver cache, e.g. by `python scripts/solve_farkle_win.py --target "
        f"{rules.target} --bank-minimum {rules.bank_minimum}`, is used up to a target of "
        f"{MAX_CACHED_WIN_TARGET})"
    )
