"""``dice-envs solve GAME [--param value ...]``: solve a game and print its value.

Scorecard games print the optimal solitaire expected grand total; Farkle the expected points of
one max-expected turn. Parameters are the rule parameters of the game (--yahtzee_bonus 0
--joker false; none for an unlimited bonus). --no-cache solves without the disk cache.
"""

from __future__ import annotations

import argparse
import time

from agents.evaluation import parse_rule_overrides
from agents.solver import expected_turn_points
from agents.solver.cache import cache_dir
from agents.solver.scorecard import solve_scorecard
from dice_envs.rules import GAMES, ConfigError, FarkleRules, make_rules

__all__ = ["main"]


def _value(text: str) -> object:
    low = text.lower()
    if low in ("none", "null", "unlimited"):
        return None
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    try:
        return int(text)
    except ValueError:
        return text


def main(argv: list[str] | None = None, prog: str = "dice-envs solve") -> int:
    """Solve the game named in ``argv`` and print its value; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: dice-envs solve yahtzee --yahtzee_bonus 0 --joker false   # 245.8708",
    )
    parser.add_argument("game", choices=sorted(GAMES), help="the game to solve")
    parser.add_argument("--no-cache", action="store_true", help="solve without reading or writing the cache")
    parser.add_argument(
        "--rules",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="rule parameters, e.g. --rules yahtzee_bonus=0 joker=false (as every dice-envs command)",
    )
    args, rest = parser.parse_known_args(argv)

    try:
        params: dict[str, object] = parse_rule_overrides(args.rules)
    except ConfigError as exc:
        parser.error(str(exc))
    i = 0
    while i < len(rest):
        key = rest[i]
        if not key.startswith("--") or i + 1 >= len(rest):
            parser.error(f"expected '--parameter value' pairs, got {rest[i:]!r}")
        params[key[2:].replace("-", "_")] = _value(rest[i + 1])
        i += 2
    try:
        rules = make_rules(args.game, **params)
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
