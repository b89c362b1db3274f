r"""``dice-envs train`` / ``scripts/train.py``: train an agent on a dice-envs game.

Examples::

    dice-envs train --config configs/train/quickstart.yaml
    dice-envs train --config configs/train/spiffel-scratch.yaml --device cuda
    dice-envs train --config configs/train/farkle.yaml --set n_envs=2048 --rules target=5000
    dice-envs train --config configs/train/quickstart-ppo.yaml --resume --out runs/quickstart-ppo \
        --total-timesteps 6000000

Products in ``--out`` (default ``runs/<name>``, never an earlier run's folder): ``<name>.zip``
(an sb3-contrib ``MaskablePPO`` file: ``agents.load(path)``, ``opponents=[path]`` or
``MaskablePPO.load``), its model card ``<name>.json``, ``learning_curve.png``,
``progress.csv``, ``checkpoints/``, TensorBoard logs in ``tb/``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings
from pathlib import Path

from agents.commands.cli import add_rules_option, error
from agents.training.recipes import available_configs
from dice_envs.rules import ConfigError

__all__ = ["main", "parser"]

#: The recipe run when no ``--config`` is given (a shipped config: found from any directory).
DEFAULT_CONFIG = "quickstart"


def parser() -> argparse.ArgumentParser:
    """The command line of ``dice-envs train``."""
    p = argparse.ArgumentParser(
        prog="dice-envs train",
        description="Train an agent (native PPO by default) on a dice-envs game; see configs/train/.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:" + __doc__.split("Examples::", 1)[1].split("Products", 1)[0],
    )
    p.add_argument(
        "--config",
        type=Path,
        help="YAML file of TrainConfig keys, or a shipped recipe's name, found from any directory: "
        f"{', '.join(available_configs('train'))} (default: quickstart)",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (value parsed as YAML, e.g. net_arch=[64,64]); repeatable",
    )
    add_rules_option(p, "target=5000")
    p.add_argument("--seed", type=int, help="random seed (overrides the config)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], help="torch device (overrides the config)")
    p.add_argument(
        "--trainer",
        choices=["ppo", "sb3", "search"],
        help="native PPO (default), sb3-contrib MaskablePPO, or the search learner (trainer: search)",
    )
    p.add_argument(
        "--total-timesteps", type=int, help="environment steps in total (resume: including earlier)"
    )
    p.add_argument(
        "--out", type=Path, help="output folder (default runs/<name>; an existing run needs --resume)"
    )
    p.add_argument(
        "--resume", action="store_true", help="continue the run in --out from its newest good checkpoint"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line; 0 on success, 2 on a bad configuration (one line on stderr), 130
    on Ctrl-C. Warnings (a checkpoint skipped on resume, say) print as one ``warning:`` line."""
    with warnings.catch_warnings():
        warnings.showwarning = _warning_line
        return _main(argv)


def _warning_line(message: Warning | str, category: type[Warning], *args: object, **kwargs: object) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _main(argv: list[str] | None) -> int:
    args = parser().parse_args(argv)
    given = list(argv if argv is not None else sys.argv[1:])
    command = " ".join(shlex.quote(a) for a in ["dice-envs", "train", *given])
    from agents.evaluation.tournament import parse_rule_overrides
    from agents.training.train import load_run_config, output_folder, train

    folder: Path | None = None
    try:
        rules = parse_rule_overrides(args.rules)
        config = args.config
        if config is None:
            config = DEFAULT_CONFIG
            print("no --config given: running the quick start's recipe (quickstart)", file=sys.stderr)
        cfg = load_run_config(
            config,
            args.overrides,
            seed=args.seed,
            device=args.device,
            trainer=args.trainer,
            total_timesteps=args.total_timesteps,
            progress_bar=False if args.no_progress else None,
        )
        if rules:
            cfg = cfg.with_overrides(rules={**cfg.rules, **rules})
        folder = output_folder(cfg, args.out, args.resume)  # what train() picks: named for Ctrl-C
        result = train(cfg, out=folder, resume=args.resume, command=command)
    except ConfigError as exc:
        return error(exc)
    except KeyboardInterrupt:
        if folder is None:
            print("\ninterrupted before the run started", file=sys.stderr)
            return 130
        saved = folder.is_dir() and any((folder / "checkpoints").glob("*"))
        print(
            f"\ninterrupted: {folder} keeps the checkpoints written so far; continue the run with the "
            f"same command and --resume --out {shlex.quote(str(folder))}"
            if saved
            else f"\ninterrupted before the first checkpoint: nothing in {folder} to resume",
            file=sys.stderr,
        )
        return 130
    if result.resumed_from:
        print(f"resumed from {result.resumed_from}")
    print(
        f"trained {result.steps_this_run} steps ({result.steps} in total) in {result.wall_time_s:.0f}s: "
        f"{result.env_steps_per_s:,.0f} env steps/s ({result.backend})"
    )
    print(f"model: {result.model_path}\ncard:  {result.card_path}")
    if result.curve_path:
        print(f"curve: {result.curve_path}")
    if result.table:
        print()
        print(result.table)
    return 0
