"""``dice-envs benchmark``: throughput of the rules engines, the environments and the training loops.

One subcommand per measurement, each in its own module (imported only when it runs):

* ``engine`` (:mod:`.engine`) — the one-game rules engines, random legal play;
* ``envs`` (:mod:`.envs`) — the Gymnasium env, ``SyncVectorEnv`` and the native vector env;
* ``training`` (:mod:`.training`) — whole training loops, native PPO against ``MaskablePPO``;
* ``recipe`` (:mod:`.recipe`) — a training recipe's vector env and loop per ``vec_env`` backend.

Every subcommand prints its figures and, with ``--out``, writes them as JSON (atomically, never
over an existing file; ``--out`` is checked before anything runs). Rates are per wall second and
per CPU second of this process (``process_time``: the fairer figure on a shared machine). Pin to
one core (``taskset -c 0``) for single-core figures: numpy's BLAS pool is sized when numpy loads,
from the affinity or ``OMP_NUM_THREADS``; ``--threads`` sets torch's threads.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from agents.commands.cli import error
from agents.models.activations import ACTIVATION_NAMES
from dice_envs.games import GAME_SPECS
from dice_envs.io import atomic_write_text, check_out_dir
from dice_envs.options import MAX_PLAYERS
from dice_envs.rules import ConfigError

__all__ = ["PROG", "build_parser", "main", "parse_args"]

PROG = "dice-envs benchmark"

EXAMPLES = {
    "engine": [
        "dice-envs benchmark engine --seconds 2",
        "dice-envs benchmark engine --games spiffel farkle --players 2 --out engine.json",
        "dice-envs benchmark engine --games farkle --profile     # cProfile's top entries",
    ],
    "envs": [
        "taskset -c 0 dice-envs benchmark envs --threads 1 --out envs.json",
        "dice-envs benchmark envs --games spiffel --sizes 1 1024 --seconds 1    # quick",
        "dice-envs benchmark envs --scalar-opponents 1 3 --sizes 1024 --sync-envs 0",
        "dice-envs benchmark envs --games farkle --sizes 1024 --opponents random heuristic",
    ],
    "training": [
        "dice-envs benchmark training --games spiffel --gym --out train.json",
        "dice-envs benchmark training --games spiffel --device cuda --loop-envs 4096",
    ],
    "recipe": ["dice-envs benchmark recipe --config quickstart-ppo --backends native dummy"],
}

HELP = {
    "engine": "engine steps/s of the one-game rules engines (random legal play)",
    "envs": "env steps/s: Gymnasium env, SyncVectorEnv, native vector env (with opponents)",
    "training": "env steps/s of whole training loops: native PPO and MaskablePPO",
    "recipe": "a training recipe's rollout and loop steps/s per vec_env backend",
}


def _examples(names: list[str]) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for name in names for line in EXAMPLES[name])


def _add(sub: Any, name: str, parents: list[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    return sub.add_parser(
        name,
        parents=parents,
        help=HELP[name],
        description=HELP[name][0].upper()
        + HELP[name][1:]
        + f" (details: pydoc agents.commands.benchmark.{name}).",
        epilog=_examples([name]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``dice-envs benchmark`` and its subcommands."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Throughput of the rules engines, the environments and the training loops.",
        epilog=_examples(list(EXAMPLES)) + "\n\nRun 'dice-envs benchmark BENCHMARK --help' for its options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    out = argparse.ArgumentParser(add_help=False)
    out.add_argument(
        "--out", type=Path, default=None, help="write the results as JSON here (never overwritten)"
    )
    threads = argparse.ArgumentParser(add_help=False)
    threads.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores)")
    games = argparse.ArgumentParser(add_help=False)
    games.add_argument("--games", nargs="+", default=list(GAME_SPECS), choices=GAME_SPECS, help="rulesets")

    def seconds(parser: argparse.ArgumentParser, default: float, what: str) -> None:
        parser.add_argument(
            "--seconds", type=float, default=default, help=f"time per {what} (default {default})"
        )

    e = _add(sub, "engine", [out, games])
    seconds(e, 3.0, "ruleset")
    e.add_argument("--players", type=int, default=1, help=f"players per game, 1-{MAX_PLAYERS} (default 1)")
    e.add_argument("--seed", type=int, default=0, help="seed of the games and the random actions")
    e.add_argument("--profile", action="store_true", help="print cProfile's top entries per ruleset")

    v = _add(sub, "envs", [out, threads, games])
    seconds(v, 2.0, "env measurement")
    v.add_argument("--sizes", nargs="+", type=int, default=[1, 64, 1024, 4096], help="native env sizes")
    v.add_argument("--sync-envs", type=int, default=16, help="sub-envs of the SyncVectorEnv (0: skip)")
    v.add_argument(
        "--scalar-opponents",
        nargs="*",
        type=int,
        default=[],
        metavar="N",
        help="also time the scalar env against N random opponents, for each N",
    )
    v.add_argument(
        "--opponents",
        nargs="*",
        default=[],
        help="also time the native env at the largest size with each of these opponents (agent specs)",
    )

    t = _add(sub, "training", [out, threads, games])
    t.add_argument("--loop-envs", type=int, default=1024, help="games per rollout")
    t.add_argument("--loop-steps", type=int, default=32, help="rollout length per game")
    t.add_argument("--loop-batch", type=int, default=4096, help="minibatch size")
    t.add_argument("--loop-epochs", type=int, default=4, help="epochs per rollout")
    t.add_argument("--loop-updates", type=int, default=3, help="rollouts (updates) timed per trainer")
    t.add_argument("--net-arch", nargs="+", type=int, default=[256, 256], help="hidden layers of both nets")
    t.add_argument(
        "--activation",
        default="tanh",
        choices=ACTIVATION_NAMES,
        help="hidden activation (tanh: sb3's default)",
    )
    t.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="torch device of the trainers")
    t.add_argument(
        "--gym", action="store_true", help="also time MaskablePPO on a DummyVecEnv of Gymnasium envs"
    )
    t.add_argument("--subproc", action="store_true", help="also time MaskablePPO on a SubprocVecEnv")
    t.add_argument(
        "--warmup",
        type=int,
        default=None,
        help="untimed updates each training loop runs before its timed run, with the same settings "
        "(default: 1 with --device cuda, whose first products load kernels and cuBLAS; 0 on a CPU)",
    )

    c = _add(sub, "recipe", [out])
    c.add_argument("--config", default="quickstart-ppo", help="a PPO recipe: a file or a shipped name")
    c.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="override a key"
    )
    c.add_argument(
        "--backends",
        nargs="+",
        default=["native", "subproc", "dummy"],
        choices=["native", "subproc", "dummy"],
        help="vec_env backends to time",
    )
    c.add_argument("--rollout-steps", type=int, default=40_000, help="env steps of the rollout figure")
    c.add_argument("--train-steps", type=int, default=32_768, help="env steps of the training figure")
    return p


#: Lower bounds of the integer options (where a subcommand has them).
_LOWS = {
    "sizes": 1,
    "sync_envs": 0,
    "threads": 1,
    "scalar_opponents": 1,
    "net_arch": 1,
    "loop_envs": 1,
    "loop_steps": 1,
    "loop_batch": 1,
    "loop_epochs": 1,
    "loop_updates": 1,
    "warmup": 0,
    "seed": 0,
    "rollout_steps": 1,
    "train_steps": 1,
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see the module doc); out-of-range numbers exit with status 2."""
    top = build_parser()
    args = top.parse_args(argv)
    if args.benchmark is None:
        top.error(f"the following arguments are required: BENCHMARK, one of {', '.join(EXAMPLES)}")
    p = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction)).choices[args.benchmark]
    for dest, lo in _LOWS.items():
        value = getattr(args, dest, None)
        for v in value if isinstance(value, list) else [value]:
            if v is not None and v < lo:
                p.error(f"--{dest.replace('_', '-')} must be an integer >= {lo}, got {v}")
    for n in getattr(args, "scalar_opponents", []):
        if n > MAX_PLAYERS - 1:
            p.error(f"--scalar-opponents must be at most {MAX_PLAYERS - 1}, got {n}")
    if getattr(args, "players", 1) not in range(1, MAX_PLAYERS + 1):
        p.error(f"--players must be an integer in 1-{MAX_PLAYERS}, got {args.players}")
    if hasattr(args, "seconds") and not (math.isfinite(args.seconds) and args.seconds > 0):
        p.error(f"--seconds must be a number of seconds > 0, got {args.seconds}")
    if args.benchmark == "training" and args.warmup is None:
        args.warmup = 1 if args.device == "cuda" else 0
    return args


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The arguments as JSON values (paths as strings)."""
    return {
        k: str(v) if isinstance(v, Path) else v
        for k, v in vars(args).items()
        if k not in ("out", "benchmark")
    }


def _check_out(out: Path) -> str | None:
    """Why ``out`` cannot take the results (``None`` if it can)."""
    if out.exists():
        return f"{out} exists; choose another --out (results are never overwritten)"
    try:
        check_out_dir(out.parent, force=True)
    except OSError as exc:
        return f"--out {out}: {exc}"
    return None


def _check_opponents(specs: list[str], games: list[str]) -> str | None:
    """Why an ``--opponents`` spec cannot be timed (``None`` if all can): it plays none of ``games``
    (:func:`agents.registry.check_fit`: for a model, its file and card) or needs a person at the
    keyboard. A spec that fits some of the games is timed there and skipped elsewhere."""
    from agents.registry import check_fit
    from dice_envs.rules import make_rules

    for spec in specs:
        if spec.strip().lower() == "human":
            return (
                f"--opponents: {spec!r} is a person at the terminal; a benchmark times agents that play alone"
            )
        errors = []
        for game in games:
            try:
                check_fit(spec, make_rules(game), num_players=2)
            except ConfigError as exc:
                errors.append(exc)
        if len(errors) == len(games):
            return f"--opponents: {errors[0]}"
    return None


def main(argv: list[str] | None = None) -> int:
    """``dice-envs benchmark``: parse, check ``--out`` and ``--opponents``, run one benchmark,
    write its JSON. Both are refused before anything is measured."""
    args = parse_args(argv)
    problem = _check_out(args.out) if args.out is not None else None
    problem = problem or _check_opponents(getattr(args, "opponents", []), getattr(args, "games", []))
    if problem is not None:
        return error(problem)
    import importlib

    try:
        module = importlib.import_module(f"{__name__}.{args.benchmark}")
        results = {"benchmark": args.benchmark, "settings": _settings(args), **module.run(args)}
    except ConfigError as exc:  # a bad recipe, override or opponent spec
        return error(exc)
    except ModuleNotFoundError as exc:  # training and recipe need the training extra
        if (exc.name or "").partition(".")[0] in ("agents", "dice_envs"):
            raise
        hint = "pip install 'dice-envs[train]'"
        return error(f"dice-envs benchmark {args.benchmark} needs {exc.name!r} ({hint})")
    if args.out is not None:
        text = json.dumps(results, indent=2) + "\n"
        try:
            atomic_write_text(args.out, text)
        except OSError as exc:  # the folder went away or filled up during the run: keep the figures
            return error(f"could not write {args.out} ({exc}); the results:\n{text}", 1)
        print(f"\nwrote {args.out}")
    return 0
