"""dice-envs solve GAME [--rules KEY=VALUE ...]: solve a game exactly and print its value.
dice-envs solve --list: what the solver cache holds (file, game, rules, size, date).

Scorecard games print the optimal solitaire expected grand total; Farkle the expected points of
one max-expected turn. Rule parameters are given as in every dice-envs command, with --rules
(--rules yahtzee_bonus=0 joker=false; yahtzee_bonus_limit=none for an unlimited bonus).
--no-cache solves without the disk cache. The cache is $DICE_ENVS_CACHE when set, else the
user cache directory; a solve that fills it says so on stderr.
"""

from __future__ import annotations

import argparse
import shlex
import time

from agents.commands.cli import add_rules_option
from agents.evaluation import parse_rule_overrides
from agents.solver import expected_turn_points
from agents.solver.cache import cache_dir, cached_tables
from agents.solver.scorecard import solve_scorecard
from dice_envs.rules import GAMES, ConfigError, FarkleRules, make_rules

__all__ = ["main"]

EXAMPLES = """examples:
  dice-envs solve yahtzee                                        # 254.5877
  dice-envs solve yahtzee --rules joker_rule=verhoeff            # 254.5896
  dice-envs solve yahtzee --rules yahtzee_bonus=0 joker=false    # 245.8708
  dice-envs solve farkle --rules target=5000 bank_minimum=300
  dice-envs solve --list                                         # the cached tables"""


def _as_rules(rest: list[str]) -> list[str] | None:
    """``--param value`` / ``--param=value`` pairs in ``rest`` as ``--rules`` items
    (``param=value``); None when ``rest`` is not made of such pairs."""
    items, i = [], 0
    while i < len(rest):
        flag = rest[i]
        if not flag.startswith("--") or len(flag) < 3:
            return None
        name, eq, value = flag[2:].partition("=")
        if not eq:
            if i + 1 >= len(rest) or rest[i + 1].startswith("--"):
                return None
            value = rest[i + 1]
            i += 1
        items.append(f"{name.replace('-', '_')}={value}")
        i += 1
    return items


def cache_listing() -> str:
    """The solver cache as a table: one row per cached table (file, game, rules, size, date)."""
    rows = cached_tables()
    total = sum(row["bytes"] for row in rows) / 1e6
    head = f"solver cache {cache_dir()}: {len(rows)} table(s), {total:.1f} MB"
    if not rows:
        return head
    cells = [("file", "game", "rules", "size", "date")]
    cells += [(r["file"], r["game"], r["rules"], r["size"], r["modified"]) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join([head, *lines])


def main(argv: list[str] | None = None) -> int:
    """Solve the game named in ``argv`` and print its value; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="dice-envs solve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EXAMPLES,
    )
    parser.add_argument("game", nargs="?", choices=sorted(GAMES), help="the game to solve")
    parser.add_argument("--list", action="store_true", help="list the solver cache and exit")
    parser.add_argument("--no-cache", action="store_true", help="solve without reading or writing the cache")
    add_rules_option(parser, "yahtzee_bonus=0 joker=false")
    args, rest = parser.parse_known_args(argv)
    if rest:  # '--joker false' (an older spelling) is answered with its --rules form
        items = _as_rules(rest)
        if items is None:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        wanted = " ".join(shlex.quote(item) for item in [*args.rules, *items])
        parser.error(f"rule parameters are given as --rules KEY=VALUE: use --rules {wanted}")
    if args.list:
        print(cache_listing())
        return 0
    if args.game is None:
        parser.error(f"give the GAME to solve ({', '.join(sorted(GAMES))}), or --list to list the cache")
    try:
        rules = make_rules(args.game, **parse_rule_overrides(args.rules))
    except ConfigError as exc:
        parser.error(str(exc))
    start = time.perf_counter()
    if isinstance(rules, FarkleRules):
        value = expected_turn_points(rules)
        print(f"{rules.game} {rules.to_dict()}: expected points per max-expected turn = {value:.4f}")
    else:
        sol = solve_scorecard(rules, use_cache=not args.no_cache)  # type: ignore[arg-type]
        value = sol.expected_score()
        how = "loaded from cache" if sol.loaded_from_cache else "solved"
        print(f"{rules.game} {rules.to_dict()}: optimal expected score = {value:.4f}")
        print(f"{how} in {time.perf_counter() - start:.1f} s (cache: {cache_dir()})")
        return 0
    print(f"solved in {time.perf_counter() - start:.1f} s")
    return 0
