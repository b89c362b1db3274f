"""The N-seat Farkle section of ``dice-envs leaderboard``, opt-in with ``--field-target T``.

At ``--field-seats N`` seats (default 3) and the default rules at target ``T`` (a reduced target
the exact solver covers, :data:`agents.players.field_optimal.TARGET_LIMITS`), every Farkle agent
is ranked by the chance of winning its decisions give away against ``win-optimal`` (the N-seat
equilibrium, :mod:`agents.evaluation.field_regret`; the seats it is solved for,
``--regret-games`` games per agent), and with ``--exploitability`` also by its exact exploitability
(:mod:`agents.evaluation.exploitability`; costly: an agent that keeps rolling takes minutes even
at two seats). The figures go to ``--runs DIR/farkle-<N>p/`` (``field_regret.json``,
``exploitability.json``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from agents.commands import leaderboard_tables as tables
from agents.evaluation.exploitability import EXPLOITABILITY_FILE, agent_exploitability, check_exploitability
from agents.players.field_optimal import TARGET_LIMITS, check_target
from dice_envs.rules import ConfigError, FarkleRules, make_rules

__all__ = ["FIELD_FILES", "FIELD_REGRET_FILE", "add_options", "check_options", "field_folder", "section"]

#: The file of the equity lost against the N-seat equilibrium.
FIELD_REGRET_FILE = "field_regret.json"
#: Every file the section writes.
FIELD_FILES = (FIELD_REGRET_FILE, EXPLOITABILITY_FILE)

PoolMap = Callable[[Any, list[str], "int | None", "str | None"], dict[str, Any]]


def add_options(ap: argparse.ArgumentParser) -> None:
    """The section's options."""
    ap.add_argument(
        "--field-target",
        type=int,
        default=None,
        metavar="T",
        help="add an N-seat Farkle section at this reduced target: equity lost against the exact "
        "N-seat win-optimal (three seats and more); off by default",
    )
    ap.add_argument(
        "--field-seats", type=int, default=3, metavar="N", help="seats of the N-seat section (default 3)"
    )
    ap.add_argument(
        "--exploitability",
        action="store_true",
        help="the N-seat section also ranks every agent by its exact exploitability (costly)",
    )


def field_rules(args: argparse.Namespace) -> FarkleRules:
    """The rules of the section: the default Farkle rules at ``--field-target``."""
    return make_rules("farkle", target=args.field_target)


def check_options(args: argparse.Namespace) -> None:
    """Refuse (``ConfigError`` naming the flag and what is allowed) a section that cannot be solved."""
    if args.field_target is None:
        if args.exploitability:
            raise ConfigError("--exploitability is measured in the N-seat section: give --field-target T")
        return
    if "farkle" not in args.only:
        raise ConfigError("--field-target measures farkle agents: include farkle in --only")
    rules, seats = field_rules(args), args.field_seats
    if not _equity(seats) and not args.exploitability:
        solved = ", ".join(str(n) for n in sorted(TARGET_LIMITS["equilibrium"]))
        raise ConfigError(
            f"--field-seats {seats}: the equity table needs the N-seat equilibrium, solved for "
            f"{solved} seats (two seats have theirs at the default target); add --exploitability "
            "for the exploitability alone"
        )
    if _equity(seats):
        check_target("equilibrium", rules, seats)
    if args.exploitability:
        check_exploitability(rules, seats)


def _equity(seats: int) -> bool:
    """Whether the section has the equity table: the N-seat equilibrium is solved for ``seats``."""
    return seats >= 3 and seats in TARGET_LIMITS["equilibrium"]


def field_folder(args: argparse.Namespace) -> Path | None:
    """The folder of the section's figures (None: no section)."""
    return None if args.field_target is None else args.runs / f"farkle-{args.field_seats}p"


def _one_regret(spec: str, rules: FarkleRules, players: int, games: int, seed: int, solution: Any) -> Any:
    """:func:`~agents.evaluation.field_regret.field_regret` of ``spec``, or why it cannot be measured."""
    from agents.evaluation.field_regret import field_regret

    try:
        return field_regret(spec, rules, players, games=games, seed=seed, solution=solution).to_dict()
    except (ConfigError, FileNotFoundError, ImportError) as exc:
        return str(exc)


def _one_exploitability(
    spec: str,
    rules: FarkleRules,
    players: int,
    seed: int,
    on_seat: Any = None,
    solved: dict[int, float] | None = None,
) -> dict[str, Any] | str:
    """:func:`agent_exploitability` of ``spec`` (``on_seat``, ``solved`` as there), or why it
    cannot be measured."""
    try:
        return agent_exploitability(spec, rules, players, seed=seed, on_seat=on_seat, solved=solved)
    except (ConfigError, FileNotFoundError, ImportError) as exc:
        return str(exc)


def _split(done: dict[str, Any], specs: Sequence[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The measured specs and, for the others, why not."""
    found = {s: done[s] for s in specs if isinstance(done[s], dict)}
    return found, {s: done[s] for s in specs if isinstance(done[s], str)}


def section(args: argparse.Namespace, specs: Sequence[str], pool_map: PoolMap) -> list[str]:
    """Measure ``specs`` as the options ask (one agent per process of ``pool_map``), write the
    figures and return the section's markdown lines."""
    from agents.evaluation.regret import write_json
    from agents.solver.farkle_field import equilibrium

    t0 = time.perf_counter()
    rules, players, folder = field_rules(args), args.field_seats, field_folder(args)
    assert folder is not None
    folder.mkdir(parents=True, exist_ok=True)
    jobs = sorted(specs, key=lambda s: not s.startswith("pretrained:"))  # the slowest first
    md: list[str] = []
    if _equity(players):
        solution = equilibrium(rules, players, cap=0)  # one solve serves every agent
        games, seed = args.regret_games, args.seed
        run = partial(_one_regret, rules=rules, players=players, games=games, seed=seed, solution=solution)
        desc = None if args.quiet else f"farkle {players}p equity lost"
        found, skipped = _split(pool_map(run, jobs, args.workers, desc), specs)
        saved = {"players": players, "target": rules.target, "agents": found, "skipped": skipped}
        write_json(folder / FIELD_REGRET_FILE, saved, overwrite=args.force)
        md += tables.field_regret_section(found, skipped, players, rules.target)
    if args.exploitability:
        run = partial(_one_exploitability, rules=rules, players=players, seed=args.seed)
        desc = None if args.quiet else f"farkle {players}p exploitability"
        found, skipped = _split(pool_map(run, jobs, args.workers, desc), specs)
        saved = {"players": players, "target": rules.target, "agents": found, "skipped": skipped}
        write_json(folder / EXPLOITABILITY_FILE, saved, overwrite=args.force)
        md += tables.exploitability_section(found, skipped, players, rules.target)
    return [*md, f"_{time.perf_counter() - t0:.0f} s; figures: `{folder}`_", ""]
