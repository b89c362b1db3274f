"""The record of one played game (:class:`GameRecord`) and the summaries of a run's records
(per agent, per pairing, head to head) that ``results.json`` holds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.evaluation.stats import mean_ci, wilson_interval, win_shares
from dice_envs.engine import FarkleGame, ScorecardGame
from dice_envs.rules import RuleConfig, ScorecardRules

__all__ = ["GameRecord", "agent_stats", "game_record", "pairing_stats", "win_matrix"]


@dataclass(frozen=True)
class GameRecord:
    """The outcome of one game (seat-indexed tuples)."""

    pairing: int
    deal: int
    rotation: int
    seed: int
    seats: tuple[str, ...]
    agent_seeds: tuple[int, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    turns: tuple[int, ...]
    truncated: bool
    upper_bonus: tuple[bool, ...] = ()
    five_kind: tuple[bool, ...] = ()
    reached_target: tuple[bool, ...] = ()

    def win_shares(self) -> tuple[float, ...]:
        """Each seat's share of the win (:func:`~.stats.win_shares`)."""
        won = np.isin(np.arange(len(self.seats)), self.winners)
        return tuple(float(x) for x in win_shares(won))


def game_record(game: ScorecardGame | FarkleGame, pairing: int, deal: int, rotation: int, seed: int,
                seats: tuple[str, ...], agent_seeds: tuple[int, ...]) -> GameRecord:  # fmt: skip
    """The record of the finished ``game``, played as ``deal`` of ``pairing`` in seat ``rotation``."""
    n = game.num_players
    head = (pairing, deal, rotation, seed, seats, agent_seeds, tuple(game.totals()), tuple(game.winners()))
    if isinstance(game, FarkleGame):
        return GameRecord(
            *head, turns=tuple(game.turns), truncated=bool(game.truncated),
            reached_target=tuple(b >= game.rules.target for b in game.banked),
        )  # fmt: skip
    five = game.categories.index(game.rules.five_kind_box)
    return GameRecord(
        *head, turns=(game.round,) * n, truncated=False,
        upper_bonus=tuple(bool(c.upper_bonus_paid) for c in game.cards),
        five_kind=tuple(c.boxes[five] == 50 for c in game.cards),
    )  # fmt: skip


# ---------------------------------------------------------------------------- summaries of a run
def agent_stats(
    records: Sequence[GameRecord],
    spec: str,
    rules: RuleConfig,
    optimum: float | None = None,
    ratings: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ``results.json`` entry of one agent over every seat it took in ``records``: scores, the
    game's rates and, at tables, the win share and the rating from ``ratings``."""
    scores: list[int] = []
    wins = 0.0
    bonus: list[bool] = []
    five: list[bool] = []
    reached: list[bool] = []
    turns: list[int] = []
    turns_to_target: list[int] = []
    truncated = 0
    multi = False
    for rec in records:
        for s, seat_spec in enumerate(rec.seats):
            if seat_spec != spec:
                continue
            multi = multi or len(rec.seats) > 1
            scores.append(rec.scores[s])
            wins += rec.win_shares()[s]
            turns.append(rec.turns[s])
            truncated += rec.truncated
            if rec.upper_bonus:
                bonus.append(rec.upper_bonus[s])
                five.append(rec.five_kind[s])
            if rec.reached_target:
                reached.append(rec.reached_target[s])
                if rec.reached_target[s]:
                    turns_to_target.append(rec.turns[s])
    n = len(scores)
    mean, ci = mean_ci(scores)
    x = np.asarray(scores, dtype=np.float64)
    stats: dict[str, Any] = {
        "games": n,
        "mean_score": mean,
        "ci95": [ci[0], ci[1]],
        "median": float(np.median(x)),
        "std": float(x.std(ddof=1)) if n > 1 else 0.0,
        "min": int(x.min()),
        "max": int(x.max()),
        "win_rate": None,
        "win_rate_ci95": None,
        "rating": None,
        "rating_ci95": None,
        "rating_sd": None,
    }
    if isinstance(rules, ScorecardRules):
        stats["upper_bonus_rate"] = float(np.mean(bonus))
        stats["five_kind_rate"] = float(np.mean(five))
        stats["gap_to_optimum"] = None if optimum is None else float(optimum - mean)
    else:
        stats["target_rate"] = float(np.mean(reached))
        stats["mean_turns"] = float(np.mean(turns))
        stats["mean_turns_to_target"] = float(np.mean(turns_to_target)) if turns_to_target else None
        stats["truncated_rate"] = truncated / n
    if multi:
        lo, hi = wilson_interval(wins, n)
        stats["wins"] = wins
        stats["win_rate"] = wins / n
        stats["win_rate_ci95"] = [lo, hi]
        if ratings is not None:
            stats["rating"] = ratings[spec]["rating"]
            stats["rating_ci95"] = ratings[spec]["ci95"]
            stats["rating_sd"] = ratings[spec]["sd"]
    return stats


def pairing_stats(records: Sequence[GameRecord], pairing: Sequence[str], deals: int) -> dict[str, Any]:
    """The ``results.json`` entry of one pairing (``records``: its games): wins (shared wins split),
    win rates with Wilson intervals, mean scores, shared wins and games per agent and seat."""
    k = len(pairing)
    wins = [0.0] * k
    scores: list[list[int]] = [[] for _ in range(k)]
    seat_games = [[0] * k for _ in range(k)]
    shared = 0
    for rec in records:
        shares = rec.win_shares()
        shared += len(rec.winners) > 1
        for s, spec in enumerate(rec.seats):
            i = list(pairing).index(spec)
            wins[i] += shares[s]
            scores[i].append(rec.scores[s])
            seat_games[i][s] += 1
    n = len(records)
    return {
        "agents": list(pairing),
        "games": n,
        "deals": deals,
        "wins": wins,
        "win_rate": [w / n for w in wins],
        "ci95": [list(wilson_interval(w, n)) for w in wins],
        "mean_score": [float(np.mean(s)) for s in scores],
        "shared_wins": shared,
        "seat_games": seat_games,
    }


def win_matrix(records: Sequence[GameRecord], agents: Sequence[str]) -> np.ndarray:
    """``M[i, j]``: win share of agent ``i`` over the games where agent ``j`` sat too (NaN: none)."""
    idx = {a: i for i, a in enumerate(agents)}
    n = len(agents)
    wins = np.zeros((n, n))
    games = np.zeros((n, n))
    for rec in records:
        shares = rec.win_shares()
        for s, a in enumerate(rec.seats):
            for b in rec.seats:
                if a != b:
                    wins[idx[a], idx[b]] += shares[s]
                    games[idx[a], idx[b]] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(games > 0, wins / np.maximum(games, 1), np.nan)
