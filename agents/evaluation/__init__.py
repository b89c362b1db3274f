"""Evaluation: playing games, their statistics, ratings and reports — one module per job.

* :mod:`.runner` — the game runner :func:`run_games` (every game played for a figure: tournaments,
  training's evaluation table, ``scripts/measure_bots.py``, the leaderboard, the win-rate
  deficits of :mod:`agents.evaluation.regret`), seat-balanced lineups and seeds;
* :mod:`.stats` — win counting (:func:`win_shares`, :func:`wins_draws_losses`) and intervals
  (:func:`mean_ci`, :func:`wilson_interval`);
* :mod:`.records` — :class:`GameRecord`, one played game, and the per-agent / per-pairing
  summaries of a run's records;
* :mod:`.ratings` — Bradley-Terry ratings on the Elo scale (:func:`rate_agents`);
* :mod:`.tournament` — :func:`evaluate`: solitaire series and seat-balanced round robins over a
  process pool or Ray (:mod:`.pool`: the tasks on Ray), and :func:`replay`;
* :mod:`.regret` — exact references: regret against the optimum, win-rate deficits;
  :mod:`.bot_figures` — the shipped bots' measured figures as Markdown tables;
* :mod:`.report` — ``results.json`` (:data:`RESULTS_SCHEMA`), ``games.csv`` and the plots.

Two modes, chosen by the number of seats ``players``:

* **solitaire** (``players=1``, the default for the scorecard games): every agent plays ``games``
  games alone; per agent the mean score with a 95% confidence interval, median, standard
  deviation, and for scorecard games the upper-bonus rate, the five-of-a-kind rate (five-kind box
  holds 50) and the gap to the exact optimum (``agents.solver.expected_score``) when a solver
  exists; for Farkle the rate of reaching the target, the mean turns to the target and the
  final score.
* **tables** (``players=K >= 2``, the default for Farkle): every combination of ``K`` agents
  (a *pairing*) plays ``games`` deals, each deal once in every cyclic seat rotation, so each agent
  sits in each seat equally often and meets the same dice in every seat. Win rates (shared wins
  count fractionally) with Wilson 95% intervals per pairing, and a Bradley-Terry rating per agent
  (Elo scale, maximum likelihood over all games at once, so the order games were played in does
  not matter; 95% bootstrap intervals with a fixed seed), see :func:`rate_agents`.

>>> res = evaluate("spiffel", ["random"], games=3, seed=1, workers=1, optimum=False)
>>> summary = res.summary()
>>> summary["agents"]["random"]["games"], summary["pairings"]
(3, [])
>>> res == evaluate("spiffel", ["random"], games=3, seed=1, workers=2, optimum=False)
True
"""

from __future__ import annotations

from agents.evaluation.ratings import ELO_MEAN, ELO_SCALE, bradley_terry, rate_agents
from agents.evaluation.records import GameRecord
from agents.evaluation.report import OUTPUT_FILES, RESULTS_SCHEMA, write_outputs
from agents.evaluation.runner import (
    MAX_PLAYERS,
    Outcomes,
    SeededDice,
    balanced_lineups,
    batch_actions,
    derive_seeds,
    dice_seed,
    play_game,
    rotations,
    run_games,
    schedule,
)
from agents.evaluation.stats import Z95, mean_ci, wilson_interval, win_shares, wins_draws_losses
from agents.evaluation.tournament import (
    DEALS_PER_TASK,
    EvaluationResult,
    default_players,
    evaluate,
    parse_rule_overrides,
    replay,
)

__all__ = [
    "DEALS_PER_TASK",
    "ELO_MEAN",
    "ELO_SCALE",
    "MAX_PLAYERS",
    "OUTPUT_FILES",
    "RESULTS_SCHEMA",
    "Z95",
    "EvaluationResult",
    "GameRecord",
    "Outcomes",
    "SeededDice",
    "balanced_lineups",
    "batch_actions",
    "bradley_terry",
    "default_players",
    "derive_seeds",
    "dice_seed",
    "evaluate",
    "mean_ci",
    "parse_rule_overrides",
    "play_game",
    "rate_agents",
    "replay",
    "rotations",
    "run_games",
    "schedule",
    "wilson_interval",
    "win_shares",
    "wins_draws_losses",
    "write_outputs",
]
