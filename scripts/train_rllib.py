#!/usr/bin/env python
"""PPO on RLlib (new API stack) for one dice game, on a local Ray or an existing cluster.

Examples::

    # local Ray started by the script, 2 env runners, Farkle 2-player self-play
    python scripts/train_rllib.py --game farkle --players 2 --opponents heuristic --snapshots 2 \\
        --env-runners 2 --iterations 20 --out runs/rllib-farkle
    # an existing cluster (ray start --head on one machine, ray start --address=HEAD:6379 on others)
    python scripts/train_rllib.py --address auto --game spiffel --players 1 --env-runners 32 --out runs/r

Writes ``OUT/<name>.zip`` + ``OUT/<name>.json`` (the learner exported as an sb3-contrib model
with its card: ``agents.load``, ``opponents=[...]`` and ``scripts/evaluate.py`` take it),
``OUT/progress.csv`` (one row per iteration) and ``OUT/rllib_checkpoint/`` (RLlib's own
checkpoint). Every option is checked before Ray starts or anything is written (the training
knobs by ``TrainConfig``'s ranges, the opponents by ``agents.registry.check_spec``): exit status
2 and one line on stderr on bad input.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.cli import error
from agents.evaluation import parse_rule_overrides
from agents.models.activations import ACTIVATION_NAMES
from agents.training.artifacts import ProgressLog
from agents.training.config import TrainConfig
from dice_envs.options import REWARD_MODES
from dice_envs.rules import GAMES, ConfigError


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--game", required=True, help=f"one of: {', '.join(GAMES)}")
    p.add_argument("--players", type=int, default=2, help="seats (1 = solitaire)")
    p.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="rule parameter overrides")
    p.add_argument("--reward", choices=REWARD_MODES, default=None, help="default: win with 2+ players")
    p.add_argument(
        "--opponents",
        nargs="*",
        default=None,
        metavar="SPEC",
        help="agent specs of the other seats (agents.load; default random; needs --players >= 2)",
    )
    p.add_argument("--snapshots", type=int, default=0, help="frozen learner snapshots among the opponents")
    p.add_argument("--snapshot-every", type=int, default=5, help="iterations between snapshot refreshes")
    p.add_argument("--env-runners", type=int, default=2, help="sampling actors (0 = in the driver)")
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--batch", type=int, default=4000, help="env steps per iteration")
    p.add_argument("--minibatch", type=int, default=256)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--entropy", type=float, default=0.0)
    p.add_argument("--net-arch", type=int, nargs="+", default=[64, 64])
    p.add_argument("--activation", choices=ACTIVATION_NAMES, default="tanh")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--address", default=None, help="an existing Ray cluster (auto, host:6379); default: local"
    )
    p.add_argument("--cpus", type=int, default=None, help="CPUs of the local Ray (default: all)")
    p.add_argument("--name", default="rllib", help="file stem of the exported model")
    p.add_argument("--out", required=True, type=Path, help="a new (or empty) output folder")
    return p


#: The option behind each name an error may give: TrainConfig fields (``config 'key'``) and the
#: arguments of :func:`agents.ray.rllib.config.train_config` / the env.
_FLAGS = {
    "name": "--name",
    "game": "--game",
    "rules": "--rules",
    "num_players": "--players",
    "reward": "--reward",
    "opponents": "--opponents",
    "seed": "--seed",
    "learning_rate": "--lr",
    "ent_coef": "--entropy",
    "batch_size": "--minibatch",
    "minibatch_size": "--minibatch",
    "n_epochs": "--epochs",
    "n_steps": "--batch",
    "train_batch_size": "--batch",
    "total_timesteps": "--iterations x --batch",
    "n_envs": "--env-runners",
    "num_env_runners": "--env-runners",
    "net_arch": "--net-arch",
    "activation": "--activation",
    "snapshots": "--snapshots",
    "pool_size": "--snapshots",
    "snapshot_every": "--snapshot-every",
    "snapshot_freq": "--snapshot-every",
    "iterations": "--iterations",
}
_KEYS = re.compile(r"config '(\w+)'")
_ARGS = re.compile(r"\b(" + "|".join(k for k in _FLAGS if "_" in k) + r")\b")


def _flag_names(message: str) -> str:
    """``message`` with config keys (``config 'learning_rate'`` → ``--lr``) and, in a message about
    a config key or an argument (``num_players must ...``; not the env's list of its keywords),
    argument names replaced by this script's options."""
    ours = _ARGS.match(message) or _KEYS.search(message)
    message = _KEYS.sub(lambda m: _FLAGS.get(m.group(1), m.group(0)), message)
    if ours:
        message = _ARGS.sub(lambda m: _FLAGS[m.group(1)], message)
    return message


def check_args(args: argparse.Namespace) -> tuple[dict, TrainConfig]:
    """The env settings and the run as a validated ``TrainConfig``; ``ConfigError`` naming the
    option (and what it allows) on bad input. Starts nothing and writes nothing."""
    from agents.ray.rllib.config import train_config

    if args.out.exists() and not args.out.is_dir():
        raise ConfigError(f"--out {args.out} is a file; choose a new folder")
    if args.out.exists() and any(args.out.iterdir()):
        raise ConfigError(f"output folder {args.out} is not empty; choose a new one")
    lows = {"iterations": 1, "batch": 1, "minibatch": 1, "epochs": 1, "snapshot_every": 1, "cpus": 1}
    for name, low in {**lows, "env_runners": 0, "snapshots": 0}.items():
        value = getattr(args, name)
        if value is not None and value < low:
            raise ConfigError(f"--{name.replace('_', '-')} must be >= {low}, got {value}")
    if args.cpus is not None and args.address is not None:
        raise ConfigError("--cpus sets the CPUs of a local Ray; a cluster (--address) has its own")
    if args.game not in GAMES:
        raise ConfigError(f"--game must be one of {', '.join(GAMES)}, got {args.game!r}")
    if args.players < 2 and args.snapshots:
        raise ConfigError(
            f"--snapshots need --players >= 2 (a solitaire game has no opponents), got {args.players}"
        )
    if args.players < 2 and args.opponents is not None:
        raise ConfigError(
            f"--opponents need --players >= 2 (a solitaire game has none), got --players {args.players}"
        )
    if args.opponents is None:
        args.opponents = ["random"] if args.players >= 2 else []
    env_config = parse_rule_overrides(args.rules)
    if args.reward:
        env_config["reward"] = args.reward
    try:
        run = train_config(**run_arguments(args, env_config), name=args.name, iterations=args.iterations)
    except ConfigError as exc:
        raise ConfigError(_flag_names(str(exc))) from None
    return env_config, run


def run_arguments(args: argparse.Namespace, env_config: dict) -> dict:
    """The options as the arguments of ``ppo_config`` (and ``train_config``, which checks them)."""
    return {
        "game": args.game,
        "num_players": args.players,
        "env_config": env_config,
        "opponents": args.opponents,
        "snapshots": args.snapshots,
        "snapshot_every": args.snapshot_every,
        "net_arch": args.net_arch,
        "activation": args.activation,
        "num_env_runners": args.env_runners,
        "train_batch_size": args.batch,
        "minibatch_size": args.minibatch,
        "num_epochs": args.epochs,
        "lr": args.lr,
        "entropy_coeff": args.entropy,
        "seed": args.seed,
    }


def card_config(args: argparse.Namespace, run: TrainConfig) -> dict:
    """The model card's ``config``: the run in ``TrainConfig`` terms (only the fields it sets) and
    this script's options under ``rllib`` (``export_policy`` adds ``trainer: rllib``)."""
    from agents.ray.rllib.config import run_settings

    options = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {**run_settings(run), "rllib": options}


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status (2 and one line on stderr on bad input)."""
    args = build_parser().parse_args(argv)
    try:
        try:
            import ray
        except ImportError:
            raise ConfigError("train_rllib needs the Ray extra: pip install 'dice-envs[ray]'") from None
        env_config, run = check_args(args)

        from agents.evaluation.pool import ensure_ray
        from agents.ray.rllib import export_policy, ppo_config

        cfg = ppo_config(**run_arguments(args, env_config))
    except ConfigError as exc:
        return error(exc)
    started = ensure_ray(args.address, args.cpus)
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    fields = ["iteration", "env_steps", "learner_return_mean", "episode_len_mean", "wall_s"]
    log = ProgressLog(args.out / "progress.csv", fields)  # a new folder: nothing to overwrite
    try:
        algo = cfg.build_algo()
        steps = 0
        for it in range(1, args.iterations + 1):
            result = algo.train()
            runners = result["env_runners"]
            steps = int(runners.get("num_env_steps_sampled_lifetime", steps))
            returns = runners.get("module_episode_returns_mean", {})
            row = {
                "iteration": it,
                "env_steps": steps,
                "learner_return_mean": returns.get("learner"),
                "episode_len_mean": runners.get("episode_len_mean"),
                "wall_s": round(time.perf_counter() - t0, 2),
            }
            log.append(row)
            print("  ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()))
        algo.save(str((args.out / "rllib_checkpoint").resolve()))
        from dice_envs.rules import make_rules

        rules = make_rules(args.game, **{k: v for k, v in env_config.items() if k != "reward"})
        model, card = export_policy(
            algo,
            args.out / f"{args.name}.zip",
            rules,
            args.players,
            steps=steps,
            wall_time_s=time.perf_counter() - t0,
            evaluation={"rllib_progress": row},
            command=" ".join(shlex.quote(a) for a in sys.argv),
            seed=args.seed,
            config=card_config(args, run),
        )
        algo.stop()
    finally:
        if started:
            ray.shutdown()
    print(f"wrote {model}, {card}, {args.out / 'progress.csv'} in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
