#!/usr/bin/env python
"""Merge trained models into one ensemble model file (``agents.training.ensemble``).

The members (flat MLP models of one game, rules and encoding; ``.zip`` paths with their cards,
or ``pretrained:<name>``) become one ordinary ``MaskableActorCriticPolicy`` whose logits and
value are the mean of theirs: a product of experts. The merged file loads everywhere a trained
model does (``agents.load``, ``opponents=[path]``, ``MaskablePPO.load``); its card lists the
members under ``ensemble`` and sums their steps and wall time.

    python scripts/merge_models.py runs/fs0/farkle-scratch.zip runs/fs1/farkle-scratch.zip \\
        runs/fs2/farkle-scratch.zip --out runs/farkle-ensemble/farkle-scratch.zip
    python scripts/measure_bots.py --dir runs/farkle-ensemble --opponents heuristic max-expected

An existing ``--out`` (or its card) is refused unless ``--force``; an ``--out`` that is one of
the members, and a member given twice (the same file or the same weights), are refused always.
``--curve PNG`` also draws the members' learning curves (the ``progress.csv`` beside each
member's zip) on one figure, checked before the model is written.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.commands.cli import error
from agents.training.artifacts import ProgressLog, save_curve_figure
from agents.training.ensemble import merge_model_files
from dice_envs.rules import ConfigError


def plot_members(models: list[str], path: Path, title: str) -> Path:
    """The evaluation curves of the members' runs (``progress.csv`` beside each zip) on one figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    missing = []
    for i, model in enumerate(models):
        log = Path(model).with_name("progress.csv")
        if not log.is_file():
            missing.append(f"member {i} ({model})")
            continue
        rows = [r for r in ProgressLog.read(log) if r.get("eval") not in (None, "", "nan")]
        x = [float(r["steps"]) for r in rows]
        y = [float(r["eval"]) for r in rows]
        ax.plot(x, y, "o-", ms=3, label=f"member {i}: {Path(model).parent.name}")
    title += f"\nno progress.csv: {', '.join(missing)}" if missing else ""
    return save_curve_figure(fig, ax, path, title, "evaluation (argmax)", title_size=9)


def check_curve(curve: Path | None, force: bool) -> str | None:
    """Why ``--curve`` cannot be written (``None`` when it can): a folder, a name not ending in
    ``.png`` (so it is never the merged model, a member or one of their files), a file where one
    of its folders would be, or an existing file without ``--force``."""
    if curve is None:
        return None
    if curve.is_dir():
        return f"--curve {curve} is a folder; give the path of a .png file"
    if curve.suffix.lower() != ".png":
        return f"--curve {curve} must end in .png: the curves are written as a PNG image"
    blocked = next((p for p in curve.parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:  # a missing folder is made, as for --out
        return f"--curve {curve}: {blocked} is a file, not a folder"
    if curve.exists() and not force:
        return f"{curve} already exists; pass --force to replace it"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", help="member models: .zip paths or pretrained:<name>")
    parser.add_argument("--out", type=Path, required=True, help="the merged model (.zip; its card beside it)")
    parser.add_argument("--force", action="store_true", help="replace an existing --out (and --curve)")
    parser.add_argument("--curve", type=Path, help="also plot the members' learning curves to this PNG")
    args = parser.parse_args(argv)
    problem = check_curve(args.curve, args.force)
    if problem:  # checked before the model is written, so a bad --curve leaves nothing behind
        return error(problem)
    command = "python scripts/merge_models.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    try:
        path = merge_model_files(args.models, args.out, overwrite=args.force, command=command)
    except FileExistsError as exc:
        return error(f"{exc.args[0].split(';')[0]}; pass --force to replace it")
    except (ConfigError, FileNotFoundError) as exc:
        return error(exc)
    print(f"merged {len(args.models)} models into {path}")
    if args.curve is not None:
        try:
            title = f"{path.stem}: the members of the ensemble"
            args.curve.parent.mkdir(parents=True, exist_ok=True)
            print(f"curves: {plot_members(args.models, args.curve, title)}")
        except ImportError:
            return error("--curve needs matplotlib: pip install 'dice-envs[train]'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
