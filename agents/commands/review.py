"""Review every decision of recorded games, or of an agent's own games, against the exact solvers.

    dice-envs review games.jsonl
    dice-envs review games.jsonl --spec human
    dice-envs review --agent heuristic --games 20 --game spiffel --seed 0
    dice-envs review --agent max-expected --games 10 --game farkle --record farkle.jsonl

Prints one row per decision (turn, dice, the choice made, the best choice, both values and the
loss), then the mean loss per decision and per game, the five worst decisions and the loss by kind
of mistake. Values: expected points to come (solitaire scorecard games) or the chance of winning
(two-player Farkle); other setups have no exact reference and are refused. Exit status 2 on bad
input (a bad record file is named with its line).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.commands.cli import add_rules_option, error
from agents.evaluation import parse_rule_overrides
from agents.evaluation.gamerecord import read_records, write_records
from agents.evaluation.regret import write_json
from agents.evaluation.review import agent_games, format_review, review
from agents.registry import check_seed_arg
from dice_envs.rules import GAMES, ConfigError, make_rules


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = argparse.ArgumentParser(
        prog="dice-envs review",
        description=__doc__.splitlines()[0],
        epilog="examples:\n" + __doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("record", nargs="?", type=Path, help="a game record file (JSON lines)")
    p.add_argument("--spec", help="review only the seats played by this spec (e.g. human)")
    p.add_argument("--agent", metavar="SPEC", help="play and review this agent's games")
    p.add_argument("--games", type=int, default=10, help="--agent: games to play (default 10)")
    p.add_argument(
        "--game", default="spiffel", choices=sorted(GAMES), help="--agent: the game (default spiffel)"
    )
    p.add_argument("--seed", type=int, default=0, help="--agent: seed of game 0 (game i: seed + i)")
    p.add_argument(
        "--opponent", default="win-optimal", help="--agent at Farkle: the other seat (default win-optimal)"
    )
    add_rules_option(p, "target=5000")
    p.add_argument(
        "--record", dest="record_out", type=Path, help="--agent: also write the games to this record file"
    )
    p.add_argument("--json", type=Path, help="also write the review as JSON to this file")
    p.add_argument("--force", action="store_true", help="overwrite the files of --record and --json")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if (args.record is None) == (args.agent is None):
            raise ConfigError("give a RECORD file to review, or --agent SPEC to play and review its games")
        if args.record_out is not None and args.agent is None:
            raise ConfigError("--record writes the games of --agent; a RECORD file is reviewed as it is")
        for path in (args.json, args.record_out):
            if path is not None and path.exists() and not args.force:
                raise ConfigError(f"{path} exists; pass --force to overwrite it")
        if args.agent is not None:
            check_seed_arg(args.seed, "--seed", none=False)
            rules = make_rules(args.game, **parse_rule_overrides(args.rules))
            logs = agent_games(args.agent, rules, args.games, args.seed, args.opponent)
            spec = args.spec or args.agent
            if args.record_out is not None:
                write_records(args.record_out, logs, overwrite=args.force)
        else:
            logs, spec = read_records(args.record), args.spec
        rv = review(logs, spec)
    except ConfigError as exc:
        return error(exc)
    print(format_review(rv))
    if args.json is not None:
        write_json(args.json, rv.to_dict(), overwrite=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
