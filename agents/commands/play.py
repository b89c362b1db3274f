"""Play a dice game in the terminal against any agents.

    dice-envs play --game spiffel --opponents optimal heuristic --hint --seed 1
    dice-envs play --game farkle --opponents max-expected --rules target=3000
    dice-envs play --game spiffel --opponents pretrained:spiffel

You hold seat 1; the opponents follow in the order given (none: solitaire). After every move the
card (or the Farkle standings) is shown. ``--hint`` shows what the optimal agent (max-expected
for Farkle) would do. Type ``?`` for the commands; Ctrl-D or ``q`` quits.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

import numpy as np

import agents
from agents.commands.cli import add_rules_option, error
from agents.evaluation import parse_rule_overrides
from agents.evaluation.gamerecord import GameLog, write_records
from agents.players.human import HumanAgent, HumanQuit, describe_action
from agents.registry import check_seed_arg
from dice_envs.encoding import decode, encode
from dice_envs.engine import FarkleGame, ScorecardGame, new_game
from dice_envs.rules import GAMES, ConfigError, make_rules


def show_card(game: ScorecardGame, names: list[str], out: TextIO) -> None:
    """Print the scorecard of every player."""
    width = max(8, *(len(n) for n in names))
    head = f"{'box':<19}" + "".join(f"{n:>{width + 2}}" for n in names)
    lines = [head, "-" * len(head)]
    for b, cat in enumerate(game.categories):
        cells = []
        for card in game.cards:
            v = card.boxes[b]
            cells.append(f"{'.' if v is None else v:>{width + 2}}")
        lines.append(f"{b + 1:>2} {cat:<16}" + "".join(cells))
    rows = [
        ("upper total", [game.upper_total(p) for p in range(game.num_players)]),
        ("upper bonus", [game.upper_bonus(p) for p in range(game.num_players)]),
        (
            f"{game.rules.five_kind_box} bonus",
            [game.five_kind_bonus_points(p) for p in range(game.num_players)],
        ),
        ("TOTAL", game.totals()),
    ]
    lines.append("-" * len(head))
    lines += [f"{label:<19}" + "".join(f"{v:>{width + 2}}" for v in vals) for label, vals in rows]
    print("\n".join(lines), file=out)


def _verb(who: str, you: str, other: str) -> str:
    return f"{who} {you if who == 'you' else other}"


def show_farkle_events(game: FarkleGame, seen: int, names: list[str], out: TextIO) -> int:
    """Print, in plain English, what happened since history entry ``seen``."""
    for ev in game.history[seen:]:
        who = names[ev.player]
        if ev.kind == "throw" and ev.player != 0:
            print(f"  {_verb(who, 'throw', 'throws')} {list(ev.dice)}", file=out)
        elif ev.kind == "farkle":
            print(
                f"  {who} farkled: {list(ev.dice)} scores nothing, the turn's points are lost",
                file=out,
            )
        elif ev.kind == "bankrupt":
            print(f"  {_verb(who, 'go', 'goes')} bankrupt: the banked total drops to 0", file=out)
        elif ev.kind == "bank":
            print(f"  {_verb(who, 'bank', 'banks')} {ev.points}", file=out)
    return len(game.history)


def results_table(game: ScorecardGame | FarkleGame, names: list[str], specs: list[str]) -> str:
    """The final results: place, player, agent, score (and the bonuses of a scorecard game)."""
    totals = game.totals()
    winners = set(game.winners())
    order = sorted(range(len(totals)), key=lambda p: (-totals[p], p))
    scorecard = isinstance(game, ScorecardGame)
    head = f"{'place':<6}{'player':<8}{'agent':<22}{'score':>7}"
    if scorecard:
        head += f"{'upper bonus':>13}{'5-kind bonus':>14}"
    lines = ["final results", head, "-" * len(head)]
    for place, p in enumerate(order, 1):
        row = f"{place:<6}{names[p]:<8}{specs[p]:<22}{totals[p]:>7}"
        if scorecard:
            assert isinstance(game, ScorecardGame)
            row += f"{game.upper_bonus(p):>13}{game.five_kind_bonus_points(p):>14}"
        lines.append(row + ("   winner" if p in winners else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="dice-envs play",
        description=__doc__.splitlines()[0],
        epilog="examples:\n" + __doc__.split("\n\n", 1)[1].replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--game", default="spiffel", choices=sorted(GAMES), help="the game (default spiffel)")
    parser.add_argument(
        "--opponents",
        nargs="*",
        default=[],
        metavar="SPEC",
        help="agent specs of the opponents, one per other seat (random, heuristic, pretrained:spiffel, ...)",
    )
    parser.add_argument("--hint", action="store_true", help="show what the optimal agent would do")
    parser.add_argument("--seed", type=int, default=None, help="random seed of the dice and the opponents")
    parser.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="PATH",
        help="write the finished game, decision by decision, to this game record file (dice-envs review)",
    )
    add_rules_option(parser, "target=3000")
    parser.add_argument("--rule", action="append", default=[], help=argparse.SUPPRESS)  # old spelling
    args = parser.parse_args(argv)
    out = sys.stdout
    try:
        if args.seed is not None:  # none given: a random game
            check_seed_arg(args.seed, "--seed", none=False)
        if args.record is not None and args.record.exists():
            raise ConfigError(f"--record {args.record} exists; give a new file")
        params = parse_rule_overrides([*args.rules, *args.rule])
        rules = make_rules(args.game, **params)
        n = 1 + len(args.opponents)
        seeds = np.random.SeedSequence(args.seed).generate_state(n + 1)
        hint = None
        if args.hint:
            print("preparing the hint agent (a first solve of a game takes up to a minute)", file=out)
            hint = agents.load(
                "max-expected" if args.game == "farkle" else "optimal", game=rules, num_players=n
            )
        human = HumanAgent(rules, num_players=n, hint=hint)
        seats = [human] + [
            agents.load(spec, game=rules, num_players=n, seed=int(seeds[i + 1]))
            for i, spec in enumerate(args.opponents)
        ]
    except ConfigError as exc:
        return error(exc)
    names = ["you"] + [f"P{i + 2}" for i in range(len(args.opponents))]
    specs = ["human", *args.opponents]
    game = new_game(rules, num_players=n, seed=int(seeds[0]))
    log = GameLog(rules, tuple(specs), int(seeds[0]))
    print(f"{args.game} with {n} player(s); type ? for the commands", file=out)
    for name, spec in zip(names[1:], args.opponents, strict=True):
        print(f"  {name} is {spec}", file=out)
    seen = 0
    announced_final = False
    last_turn: tuple[int, int] | None = None
    try:
        while not game.done:
            p = game.current_player
            if isinstance(game, FarkleGame) and seen == 0:
                seen = show_farkle_events(game, seen, names, out)
            if isinstance(game, ScorecardGame) and game.throw == 1:
                k = len(game.categories)
                if game.round == k - 1 and not announced_final:
                    print(f"\n*** final round ({k} of {k}) ***", file=out)
                    announced_final = True
                print(f"\n== round {game.round + 1} of {k}: {names[p]} ({specs[p]}) ==", file=out)
            if isinstance(game, FarkleGame):
                if game.final_round_by is not None and not announced_final:
                    who = names[game.final_round_by]
                    print(
                        f"\n*** final round: {who} reached {game.rules.target}; every other seat gets one "
                        "last turn ***",
                        file=out,
                    )
                    announced_final = True
                turn = (p, game.turns[p])
                if turn != last_turn:
                    print(
                        f"\n== turn {game.turns[p] + 1}: {names[p]} ({specs[p]}), banked {game.banked[p]} ==",
                        file=out,
                    )
                    last_turn = turn
            obs = encode(game, p)
            mask = game.action_mask()
            action = seats[p].act(obs, mask)
            words = describe_action(rules, decode(obs, rules, n), action)
            if p != 0:
                print(f"  {names[p]}: {words}", file=out)
            log.add(game, action)
            game.apply(action)
            if isinstance(game, ScorecardGame):
                if action >= 32:
                    show_card(game, names, out)
                elif p != 0:
                    print(f"  {names[p]} throws {list(game.dice)}", file=out)
            else:
                seen = show_farkle_events(game, seen, names, out)
                parts = [f"{n}: {t}" for n, t in zip(names, game.totals(), strict=True)]
                print(f"banked — {', '.join(parts)} (target {game.rules.target})", file=out)
    except HumanQuit:
        print("bye", file=out)
        return 0
    totals = game.totals()
    winners = ", ".join(names[w] for w in game.winners())
    print(f"\ngame over: {dict(zip(names, totals, strict=True))}; winner(s): {winners}", file=out)
    print("\n" + results_table(game, names, specs), file=out)
    if args.record is not None:
        log.finish(game)
        print(f"wrote the game record {write_records(args.record, [log])}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
