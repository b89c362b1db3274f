"""``train(cfg)``: one entry point for both trainers, and what they share.

1. the run folder: a fresh ``runs/<name>`` (never an earlier run's), or the run being resumed,
   checked *before* anything is written (a different config is refused naming the keys);
2. the device (``auto`` → ``cuda`` when available; ``cuda`` without CUDA is a one-line error);
3. the trainer: ``ppo`` (:func:`agents.training.ppo_train.train_ppo`, the default) or ``sb3``
   (:func:`agents.training.sb3_train.train_sb3`);
4. what both end with (:func:`save_products`): the evaluation table (:func:`final_evaluation`),
   the model and its card (:func:`agents.model_io.save_model`, schema in
   :mod:`agents.model_card`), and the learning curve with its reference lines
   (:func:`reference_lines`).
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dice_envs.rules import ConfigError

from .artifacts import atomic_write_text
from .config import AGENT_LIST_KEYS, RESUMABLE_KEYS, TrainConfig
from .envs import eval_opponents

__all__ = [
    "TrainResult",
    "check_agent_specs",
    "check_resume",
    "check_resume_point",
    "evaluation_record",
    "final_evaluation",
    "output_folder",
    "reference_lines",
    "resolve_device",
    "save_products",
    "train",
]


@dataclass
class TrainResult:
    """Where a run's products are and what it measured."""

    model_path: Path
    card_path: Path
    curve_path: Path | None
    steps: int
    steps_this_run: int
    wall_time_s: float
    env_steps_per_s: float
    backend: str
    resumed_from: Path | None
    evaluation: dict[str, Any] = field(default_factory=dict)
    table: str = ""


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when available, else ``cpu``."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            "device 'cuda' was asked for but torch sees no CUDA device; use --device cpu or auto"
        )
    return device


def _holds_run(folder: Path) -> bool:
    return folder.is_dir() and (any(folder.glob("*.zip")) or (folder / "checkpoints").is_dir())


def _occupied(folder: Path) -> bool:
    """Anything there: a file, or a folder with something in it."""
    return folder.exists() and (not folder.is_dir() or any(folder.iterdir()))


def output_folder(cfg: TrainConfig, out: str | Path | None, resume: bool) -> Path:
    """The run's folder. Default ``runs/<name>``, or ``runs/<name>-2``, ``-3``, ... when something
    is there already (unless resuming it). A given ``out`` must be a new or empty folder, or, with
    ``resume``, the run to continue: a fresh run never writes into a folder holding files.
    """
    if out is not None:
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {out} is a file, not a folder; give a new folder for the run")
        if resume:
            return out
        if _holds_run(out):
            raise ConfigError(
                f"{out} already holds a training run; pass --resume to continue it, or choose another --out"
            )
        if _occupied(out):
            found = sorted(p.name for p in out.iterdir())
            shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
            raise ConfigError(
                f"--out {out} is not empty ({shown}) and holds no training run: a fresh run writes only "
                "into a new or empty folder, so nothing was touched; choose another --out"
            )
        return out
    base = Path("runs") / cfg.name
    if resume or not _occupied(base):
        return base
    n = 2
    while _occupied(base.with_name(f"{cfg.name}-{n}")):
        n += 1
    return base.with_name(f"{cfg.name}-{n}")


def check_resume_point(folder: Path) -> None:
    """Refuse a resume that could only start over in a folder holding results.

    Checkpoint files that all fail their check (a ``.sha256`` that does not match, a zip that
    does not read) are the run's evidence, and a model with no checkpoint is a finished run:
    starting over would overwrite both, so either is refused and nothing is touched. A folder
    with neither (a run killed before its first checkpoint) starts over: it lost less than one
    ``checkpoint_freq``.
    """
    from .artifacts import checkpoint_files, checkpoint_intact

    ckpt_dir = folder / "checkpoints"
    files = checkpoint_files(ckpt_dir)
    if files and not any(checkpoint_intact(p) for p in files):
        names = ", ".join(p.name for p in files)
        raise ConfigError(
            f"--resume: no checkpoint in {ckpt_dir} verifies ({names}); starting over would overwrite "
            "the run's results, so nothing was touched: give a new --out to train afresh"
        )
    if not files and (models := sorted(p.name for p in folder.glob("*.zip"))):
        raise ConfigError(
            f"--resume: {folder} holds a model ({', '.join(models)}) but no checkpoint to continue "
            "from; starting over would overwrite it, so nothing was touched: give a new --out to "
            "train afresh, or warm_start: model with init_model: <that model> to fine-tune it"
        )


def check_resume(cfg: TrainConfig, out: Path) -> None:
    """Refuse to resume ``out`` under a config that differs from its ``config.json``.

    Only :data:`~agents.training.config.RESUMABLE_KEYS` may change; the message names every
    other key that differs, with both values. Nothing in ``out`` is touched.
    """
    saved_path = out / "config.json"
    if not saved_path.is_file():
        raise ConfigError(f"--resume: {out} holds no config.json, so it is not a run folder made by train.py")
    try:
        saved = json.loads(saved_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--resume: cannot read {saved_path}: {exc}") from None
    if not isinstance(saved, dict):
        raise ConfigError(f"--resume: {saved_path} is not a mapping of config keys")
    now = cfg.to_dict()
    differ = [
        k
        for k in sorted(set(now) | set(saved))
        if k not in RESUMABLE_KEYS and now.get(k) != saved.get(k, now.get(k))
    ]
    if differ:
        detail = "; ".join(f"{k}: run {saved.get(k)!r}, now {now.get(k)!r}" for k in differ)
        raise ConfigError(
            f"--resume: the config differs from the run's {saved_path} in {', '.join(differ)} ({detail}); "
            f"only {', '.join(RESUMABLE_KEYS)} may change on resume"
        )


def train(
    cfg: TrainConfig,
    out: str | Path | None = None,
    resume: bool = False,
    command: str | None = None,
) -> TrainResult:
    """Run (or continue, ``resume``) the training described by ``cfg``; see the module doc."""
    folder = output_folder(cfg, out, resume)
    if resume:
        if not folder.is_dir():
            raise ConfigError(f"--resume: no run folder {folder}")
        check_resume(cfg, folder)
        check_resume_point(folder)
    check_agent_specs(cfg)
    device = resolve_device(cfg.device)  # before any file is written
    command = command or " ".join(shlex.quote(a) for a in sys.argv)
    fresh = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    saved = (folder / "config.json").read_text(encoding="utf-8") if resume else None
    atomic_write_text(folder / "config.json", json.dumps(cfg.to_dict(), indent=2) + "\n")
    try:
        if cfg.trainer == "sb3":
            from .sb3_train import train_sb3

            return train_sb3(cfg, folder, resume, command, device)
        from .ppo_train import train_ppo

        return train_ppo(cfg, folder, resume, command, device)
    except ConfigError:
        if saved is not None:  # a refused resume leaves the run's config as it was
            atomic_write_text(folder / "config.json", saved)
        else:
            _undo_refused_start(folder, fresh)
        raise


def check_agent_specs(cfg: TrainConfig) -> None:
    """Refuse an unknown agent spec in any of ``cfg``'s agent lists (``opponents``,
    ``pool_builtin``, ``final_eval_opponents``) and ``bc_expert`` before training, not when (or
    whether) the run first uses it: a typo in a list this run does not use is still a typo."""
    from ..registry import check_spec

    rules = cfg.rule_config()
    keys = {key: getattr(cfg, key) for key in AGENT_LIST_KEYS}
    keys["bc_expert"] = [cfg.bc_expert] if cfg.bc_expert else []
    for key, specs in keys.items():
        for spec in specs:
            try:
                check_spec(spec, rules)
            except ConfigError as exc:
                raise ConfigError(f"config {key!r}: {exc}") from None


def _undo_refused_start(folder: Path, created: bool) -> None:
    """A start refused before its first step (a warm-start model that does not fit, say) leaves
    the folder as it found it: its ``config.json`` goes, and so does the folder if this run made
    it and nothing else was written there."""
    if (folder / "checkpoints").exists() or any(folder.glob("*.zip")):
        return  # it trained: keep everything
    (folder / "config.json").unlink(missing_ok=True)
    if created:
        for sub in sorted(folder.rglob("*"), reverse=True):
            if sub.is_dir() and not any(sub.iterdir()):
                sub.rmdir()
        if not any(folder.iterdir()):
            folder.rmdir()


def evaluation_record(cfg: TrainConfig, rows: list[Any], warm_stats: dict[str, Any] | None) -> dict[str, Any]:
    """The card's ``evaluation``: the final table's rows and, after a warm start, its statistics."""
    evaluation: dict[str, Any] = {"games_per_row": cfg.final_eval_games, "rows": [r.to_dict() for r in rows]}
    if warm_stats:
        evaluation["warm_start"] = warm_stats
    return evaluation


def reference_lines(cfg: TrainConfig, rows: list[Any]) -> dict[str, float]:
    """Reference lines of the learning curve: the exact optimum and the ``heuristic`` agent's mean.

    Solitaire scorecard games: the solver's optimum (solved once and cached; the default rules'
    known optimum, :func:`agents.solver.scorecard.known_optimum`) and the heuristic's
    mean of the final table when it has that row. Multi-player games plot a win rate, whose
    reference is 50% against the evaluation opponents.
    """
    refs: dict[str, float] = {}
    rules = cfg.rule_config()
    if cfg.num_players == 1:
        from dice_envs.rules import ScorecardRules

        if isinstance(rules, ScorecardRules):
            from ..solver import expected_score
            from ..solver.scorecard import known_optimum

            known = known_optimum(rules)  # default rules: no cold solve
            refs["exact optimum"] = known if known is not None else float(expected_score(rules))
        for row in rows:
            if getattr(row, "agent", "") == "heuristic":
                refs["heuristic"] = float(row.mean_score)
    return refs


def final_evaluation(model: Any, cfg: TrainConfig) -> list[Any]:
    """Table rows: the trained agent (and, solitaire, each built-in agent) over ``final_eval_games``."""
    from ..learned import ModelAgent
    from ..registry import load
    from .evaluate import play_games

    rules = cfg.rule_config()
    games, seed = cfg.final_eval_games, cfg.seed + 50_000
    trained = ModelAgent(model, deterministic=True, name="trained")
    rows = []
    if cfg.num_players == 1:
        rows.append(play_games(trained, rules, games, seed=seed))
        for spec in cfg.final_eval_opponents:
            agent = _try_load(load, spec, rules, 1, seed)
            if agent is not None:
                rows.append(play_games(agent, rules, games, seed=seed, agent_name=spec))
        return rows
    specs = list(dict.fromkeys([*cfg.final_eval_opponents, *eval_opponents(cfg)]))
    for spec in specs:
        if _try_load(load, spec, rules, cfg.num_players, seed) is None:
            continue
        opponents = [spec] * (cfg.num_players - 1)
        rows.append(play_games(trained, rules, games, opponents=opponents, seed=seed))
    return rows


def _try_load(load: Any, spec: str, rules: Any, num_players: int, seed: int) -> Any:
    from dice_envs.rules import ConfigError

    try:
        return load(spec, game=rules, num_players=num_players, seed=seed)
    except (ConfigError, NotImplementedError) as exc:
        print(f"(skipping {spec!r} in the evaluation table: {exc})", file=sys.stderr)
        return None


def previous_wall_time(model_path: Path) -> float:
    """The wall time on the card of an earlier run's model (0 when there is none)."""
    from ..model_card import read_card

    try:
        return float(read_card(model_path).get("wall_time_s", 0.0))
    except (ConfigError, TypeError, ValueError):
        return 0.0


def save_products(
    model: Any,
    cfg: TrainConfig,
    out: Path,
    *,
    steps: int,
    wall_time_s: float,
    warm_stats: dict[str, Any] | None,
    command: str,
    title: str,
    ylabel: str,
    references: dict[str, float],
    **card_extra: Any,
) -> dict[str, Any]:
    """What both trainers end with, in order: the final evaluation table, the model
    ``<out>/<name>.zip`` with its card (``card_extra`` added to it), the learning curve.

    Returns the :class:`TrainResult` fields ``model_path``, ``card_path``, ``curve_path``,
    ``evaluation`` and ``table``.
    """
    from ..model_card import card_path, make_card
    from ..model_io import save_model
    from .artifacts import plot_learning_curve
    from .evaluate import format_table

    rows = final_evaluation(model, cfg) if cfg.final_eval_games else []
    evaluation = evaluation_record(cfg, rows, warm_stats)
    card = make_card(
        cfg.rule_config(),
        cfg.num_players,
        config=cfg.to_dict(),
        steps=steps,
        wall_time_s=wall_time_s,
        evaluation=evaluation,
        command=command,
        seed=cfg.seed,
        provenance=True,
        **card_extra,
    )
    model_path = save_model(model, out / f"{cfg.name}.zip", card, overwrite=True)  # atomic, checksums
    references = {**reference_lines(cfg, rows), **references}
    curve = plot_learning_curve(out, out / "learning_curve.png", title, ylabel, references)
    return {
        "model_path": model_path,
        "card_path": card_path(model_path),
        "curve_path": curve,
        "evaluation": evaluation,
        "table": format_table(rows) if rows else "",
    }
