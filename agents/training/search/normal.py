"""``trainer: search`` with ``leaf: normal``: a two-player scorecard win model without a win network.

The model (:mod:`agents.players.search.win_normal`) is the points network of ``points_model``
and the spread of a solitaire game's final score around its projection at each count of open
boxes, measured here by ``iterations x games_per_iteration`` solitaire games of the points search
(dice seeds from ``seed_of(0)``). Nothing is fitted by gradient and no solver value is read; the
card's evaluation plays ``final_eval_games`` seat-balanced games against ``eval_opponent`` on
dice seeds training never used.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.players.search.agent import ALGORITHM
from agents.players.search.value import FEATURES, LearnedValues, npz_bytes
from agents.players.search.win import POINTS_PREFIX
from agents.players.search.win_agent import WinSearchAgent
from agents.players.search.win_normal import WIN_NORMAL_FEATURES, fit_spread
from agents.solver.cache import single_thread_blas
from agents.solver.scorecard import turn_solver
from agents.training.products import TrainResult
from agents.training.search.config import SearchConfig
from dice_envs.io import atomic_write_bytes, atomic_write_text

__all__ = ["LEARNER", "run"]

#: How the card names this learner.
LEARNER = (
    "normal approximation of the final difference over a learned points network; its spread by "
    "open boxes measured by solitaire self-play of the points search (agents.training.search.normal); "
    "no solver values read"
)


def run(cfg: SearchConfig, folder: Path, command: str, evaluate: Callable[..., Any]) -> TrainResult:
    """Measure the spread, write ``<name>.npz`` and its card in ``folder``; ``evaluate(cfg, None,
    agent)`` is the learner's final evaluation of the agent (the card's ``evaluation`` and the
    table printed)."""
    from agents.models.card import make_card, write_card

    rules = cfg.rule_config()
    solver = turn_solver(rules)
    points = cfg.points_net()
    assert points is not None
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / "config.json", json.dumps(cfg.to_dict(), indent=2) + "\n", overwrite=True)
    games = cfg.iterations * cfg.games_per_iteration
    t0 = time.perf_counter()
    with single_thread_blas():
        spread, steps = fit_spread(solver, LearnedValues(points, solver), games, cfg.seed_of(0))
    wall_s = time.perf_counter() - t0
    agent = WinSearchAgent(rules, 2, points=points, spread=spread)
    evaluation, table = evaluate(cfg, None, agent) if cfg.final_eval_games else ({}, "")
    arrays: dict[str, Any] = {f"{POINTS_PREFIX}{k}": a for k, a in points.arrays().items()}
    arrays["spread"] = spread
    data = npz_bytes(arrays)
    model_path = atomic_write_bytes(folder / f"{cfg.name}.npz", data, overwrite=True)
    card = make_card(
        rules,
        2,
        algorithm=ALGORITHM,
        config=cfg.to_dict(),
        steps=steps,
        wall_time_s=wall_s,
        evaluation=evaluation,
        command=command,
        seed=cfg.seed,
        provenance=True,
        trainer="search",
        learner=LEARNER,
        reward="win",
        games=games,
        value={
            "features": WIN_NORMAL_FEATURES,
            "output": "normal",
            "points": {"model": cfg.points_model, "features": FEATURES, "hidden": points.hidden},
            "spread": [round(float(s), 3) for s in spread],
        },
        weights_sha256=hashlib.sha256(data).hexdigest(),
        learning_curve=[],
    )
    card_path = write_card(model_path, card)
    return TrainResult(
        model_path=model_path,
        card_path=card_path,
        curve_path=None,
        steps=steps,
        steps_this_run=steps,
        wall_time_s=wall_s,
        env_steps_per_s=steps / wall_s if wall_s > 0 else 0.0,
        backend="search learner (normal leaf)",
        resumed_from=None,
        evaluation=evaluation,
        table=table,
    )
