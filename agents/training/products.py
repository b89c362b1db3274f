"""What both trainers end a run with (:func:`save_products`), and what
:func:`agents.training.train.train` returns (:class:`TrainResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.training.config import TrainConfig
from dice_envs.rules import ConfigError

__all__ = [
    "TrainResult",
    "final_evaluation",
    "previous_wall_time",
    "reference_lines",
    "save_products",
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


def reference_lines(cfg: TrainConfig, rows: list[Any]) -> dict[str, float]:
    """Reference lines of a solitaire learning curve: the exact optimum of scorecard games (the
    default rules' known one needs no solve) and the ``heuristic`` row's mean of the final table."""
    refs: dict[str, float] = {}
    rules = cfg.rule_config()
    if cfg.num_players == 1:
        from dice_envs.rules import ScorecardRules

        if isinstance(rules, ScorecardRules):
            from agents.solver import expected_score
            from agents.solver.scorecard import known_optimum

            known = known_optimum(rules)  # default rules: no cold solve
            refs["exact optimum"] = known if known is not None else float(expected_score(rules))
        for row in rows:
            if getattr(row, "agent", "") == "heuristic":
                refs["heuristic"] = float(row.mean_score)
    return refs


def final_evaluation(model: Any, cfg: TrainConfig) -> list[Any]:
    """Table rows: the trained agent (and, solitaire, each built-in agent) over ``final_eval_games``."""
    from agents.players.model import ModelAgent
    from agents.training.score_table import load_or_skip, play_games, solitaire_rows

    rules, agents = cfg.rule_config(), cfg.agent_specs
    games, seed = cfg.final_eval_games, cfg.seed + 50_000
    trained = ModelAgent(model, deterministic=True, name="trained")
    if cfg.num_players == 1:
        return solitaire_rows(trained, rules, games, seed, [agents[s] for s in cfg.final_eval_opponents])
    rows = []
    for spec in [agents[s] for s in dict.fromkeys([*cfg.final_eval_opponents, *cfg.eval_opponents()])]:
        if load_or_skip(spec, cfg.num_players, seed) is None:
            continue
        opponents = [spec] * (cfg.num_players - 1)
        rows.append(play_games(trained, rules, games, opponents=opponents, seed=seed))
    return rows


def previous_wall_time(model_path: Path) -> float:
    """The wall time on the card of an earlier run's model (0 when there is none)."""
    from agents.models.card import read_card

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
    steps_this_run: int,
    learn_s: float,
    wall_time_s: float,
    warm_stats: dict[str, Any] | None,
    command: str,
    title: str,
    ylabel: str,
    references: dict[str, float],
    backend: str,
    resumed_from: Path | None,
    **card_extra: Any,
) -> TrainResult:
    """What both trainers end with, in order: the final evaluation table, the model
    ``<out>/<name>.zip`` with its card (``wall_time_s``: the whole training's; ``card_extra`` added
    to it), the learning curve. ``learn_s``: this run's seconds of learning."""
    from agents.models.card import card_path, make_card
    from agents.models.files import save_model
    from agents.training.artifacts import plot_learning_curve
    from agents.training.score_table import format_table

    rows = final_evaluation(model, cfg) if cfg.final_eval_games else []
    evaluation: dict[str, Any] = {"games_per_row": cfg.final_eval_games, "rows": [r.to_dict() for r in rows]}
    if warm_stats:
        evaluation["warm_start"] = warm_stats
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
    return TrainResult(
        model_path=model_path,
        card_path=card_path(model_path),
        curve_path=plot_learning_curve(out, out / "learning_curve.png", title, ylabel, references),
        steps=steps,
        steps_this_run=steps_this_run,
        wall_time_s=learn_s,
        env_steps_per_s=steps_this_run / learn_s if learn_s > 0 else float("nan"),
        backend=backend,
        resumed_from=resumed_from,
        evaluation=evaluation,
        table=format_table(rows) if rows else "",
    )
