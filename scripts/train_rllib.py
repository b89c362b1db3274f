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
checkpoint). Exit status 2 on bad input.
"""

from __future__ import annotations

import argparse
import csv
import io
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.evaluation import parse_rule_overrides
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
    p.add_argument("--reward", choices=("score", "win"), default=None, help="default: win with 2+ players")
    p.add_argument("--opponents", nargs="*", default=["random"], metavar="SPEC", help="built-in opponents")
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
    p.add_argument("--activation", choices=("tanh", "relu"), default="tanh")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--address", default=None, help="an existing Ray cluster (auto, host:6379); default: local"
    )
    p.add_argument("--cpus", type=int, default=None, help="CPUs of the local Ray (default: all)")
    p.add_argument("--name", default="rllib", help="file stem of the exported model")
    p.add_argument("--out", required=True, type=Path, help="a new (or empty) output folder")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.out.exists() and any(args.out.iterdir()):
            raise ConfigError(f"output folder {args.out} is not empty; choose a new one")
        for name in ("iterations", "batch", "minibatch", "epochs"):
            if getattr(args, name) < 1:
                raise ConfigError(f"--{name} must be >= 1, got {getattr(args, name)}")
        if args.env_runners < 0:
            raise ConfigError(f"--env-runners must be >= 0, got {args.env_runners}")
        env_config = parse_rule_overrides(args.rules)
        if args.reward:
            env_config["reward"] = args.reward
        import ray

        from agents.ray_eval import ensure_ray
        from agents.rllib import export_policy, ppo_config

        cfg = ppo_config(
            args.game,
            num_players=args.players,
            env_config=env_config,
            opponents=args.opponents,
            snapshots=args.snapshots,
            snapshot_every=args.snapshot_every,
            net_arch=args.net_arch,
            activation=args.activation,
            num_env_runners=args.env_runners,
            train_batch_size=args.batch,
            minibatch_size=args.minibatch,
            num_epochs=args.epochs,
            lr=args.lr,
            entropy_coeff=args.entropy,
            seed=args.seed,
        )
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    started = ensure_ray(args.address, args.cpus)
    t0 = time.perf_counter()
    rows = []
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
            rows.append(row)
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
            evaluation={"rllib_progress": rows[-1]},
            command=" ".join(shlex.quote(a) for a in sys.argv),
            seed=args.seed,
            config={"rllib": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}},
        )
        algo.stop()
    finally:
        if started:
            ray.shutdown()
    from agents.training.artifacts import atomic_write_text

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(args.out / "progress.csv", buf.getvalue())
    print(f"wrote {model}, {card}, {args.out / 'progress.csv'} in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
