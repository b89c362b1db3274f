#!/usr/bin/env python
"""Train a MaskablePPO agent on a dice-envs game.

Examples::

    python scripts/train.py --config configs/train/quickstart.yaml
    python scripts/train.py --config configs/train/farkle.yaml --set n_envs=8 --device cuda
    python scripts/train.py --config configs/train/quickstart.yaml --resume --total-timesteps 200000

Products in ``--out`` (default ``runs/<name>``): ``<name>.zip`` (load with
``sb3_contrib.MaskablePPO.load`` or ``agents.load(path)``), its model card ``<name>.json``,
``learning_curve.png``, ``evaluations.npz``, ``checkpoints/``, TensorBoard logs in ``tb/``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.training.config import load_config
from dice_envs.rules import ConfigError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", type=Path, help="YAML file of TrainConfig keys (configs/train/*.yaml)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (value parsed as YAML); repeatable",
    )
    parser.add_argument("--seed", type=int, help="random seed (overrides the config)")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], help="torch device")
    parser.add_argument(
        "--total-timesteps", type=int, help="environment steps in total (resume: including earlier)"
    )
    parser.add_argument("--out", type=Path, help="output folder (default runs/<name>)")
    parser.add_argument("--resume", action="store_true", help="continue from the newest checkpoint in --out")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    command = " ".join(
        shlex.quote(a) for a in ["python", "scripts/train.py", *(argv if argv is not None else sys.argv[1:])]
    )
    try:
        cfg = load_config(
            args.config,
            args.overrides,
            seed=args.seed,
            device=args.device,
            total_timesteps=args.total_timesteps,
            progress_bar=False if args.no_progress else None,
        )
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    from agents.training.train import train

    try:
        result = train(cfg, out=args.out, resume=args.resume, command=command)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if result.resumed_from:
        print(f"resumed from {result.resumed_from}")
    print(
        f"trained {result.steps_this_run} steps ({result.steps} in total) in {result.wall_time_s:.0f}s: "
        f"{result.env_steps_per_s:.0f} env steps/s ({result.backend} vector env, {cfg.n_envs} envs)"
    )
    print(f"model: {result.model_path}\ncard:  {result.card_path}")
    if result.curve_path:
        print(f"curve: {result.curve_path}")
    if result.table:
        print()
        print(result.table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
