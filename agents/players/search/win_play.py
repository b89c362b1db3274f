"""Batched two-player self-play of a scorecard game for the win, both seats the same search.

:func:`play_win_games` plays ``n`` two-player games at once on the batched engine
(:class:`~dice_envs.engine.scorecard.ScorecardEngine` with ``num_players=2``). The games move in
step: every game's seat 0 plays its turn, then every game's seat 1. At each turn start the turns of
all games are searched together (:class:`agents.players.search.win.WinSearch`) over what the player to move
observes: its card, the other card's ``(mask, u)`` and the score difference. It returns the final
totals and every turn start met with the searched win chance of that turn (the learner's targets).

>>> from dice_envs.rules import make_rules
>>> from agents.solver.scorecard import turn_solver
>>> from agents.players.search.win import random_win_net
>>> solver = turn_solver(make_rules("spiffel"))
>>> out = play_win_games(solver, random_win_net(solver, hidden=(8,), seed=0), games=3, seed=1)
>>> out.totals.shape, out.own.shape, out.other.shape, out.d.shape, out.targets.shape
((3, 2), (78, 3), (78, 2), (78,), (78,))
>>> bool(((out.targets > -1e-9) & (out.targets < 1 + 1e-9)).all())
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from agents.players.search.play import engine_states, play_turns
from agents.players.search.value import LearnedValues, ValueNet
from agents.players.search.win import WinSearch
from agents.solver.scorecard import TurnSolver
from dice_envs.engine.scorecard import ScorecardEngine

__all__ = ["WinPlayed", "play_win_games", "win_shares"]


class WinPlayed(NamedTuple):
    """What :func:`play_win_games` returns (turn starts in the order met, game by game per turn)."""

    totals: np.ndarray  #: (n, 2) final grand totals
    own: np.ndarray  #: (m, 3) the mover's card (mask, u, z) at each turn start
    other: np.ndarray  #: (m, 2) the other card (mask, u); (m, 3) with z when playing with points
    d: np.ndarray  #: (m,) the mover's total minus the other's
    targets: np.ndarray  #: (m,) the searched win chance of each of those turns (or its λ-return)
    steps: int  #: actions taken in all


def win_shares(totals: np.ndarray) -> np.ndarray:
    """Seat 0's share of each game's win (1, 1/2 or 0) from the final totals ``(n, 2)``."""
    diff = totals[:, 0].astype(np.int64) - totals[:, 1]
    return np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))


def play_win_games(
    solver: TurnSolver,
    net: ValueNet,
    games: int,
    seed: int,
    chunk: int = 512,
    points: LearnedValues | None = None,
    td_lambda: float = 0.0,
) -> WinPlayed:
    """Self-play ``games`` two-player games with dice seed ``seed``, each turn searched over ``net``
    (reading the expected points to come of a points network's values ``points``, when given).

    The target of a turn start is its searched win chance ``V`` (``td_lambda = 0``) or its
    λ-return ``G = (1 - λ) V + λ (1 - G')``, ``G'`` the target of the other player's next turn
    start in the same game and ``G = V`` at the game's last turn (searched exactly to the end):
    with ``λ > 0`` what the game then did reaches the early turns in fewer iterations."""
    search = WinSearch(solver, net, points)
    totals, own, other, ds, targets, steps = [], [], [], [], [], 0
    for lo in range(0, games, chunk):
        n = min(chunk, games - lo)
        engine = ScorecardEngine(solver.rules, n, seed=seed + lo, num_players=2)
        g = np.arange(n)
        searched = []
        for _ in range(2 * solver.k):
            seat = engine.current.copy()
            mine = engine_states(solver, engine, g, seat)
            theirs = engine_states(solver, engine, g, 1 - seat)  # z: the fit reads it with points
            d = (engine.totals[g, seat] - engine.totals[g, 1 - seat]).astype(np.int64)
            plans = search.turn_plans(mine, theirs[:, :2], d)  # the mover sees (mask, u)
            own.append(mine)
            other.append(theirs[:, : 2 if points is None else 3])
            ds.append(d)
            searched.append(np.array([p.value for p in plans]))
            steps += play_turns(engine, plans, g)
        assert engine.done.all()
        for i in range(len(searched) - 2, -1, -1):  # the turns alternate seats: the λ-return
            searched[i] = (1.0 - td_lambda) * searched[i] + td_lambda * (1.0 - searched[i + 1])
        targets += searched
        totals.append(engine.totals.astype(np.int64))
    return WinPlayed(
        np.concatenate(totals),
        np.concatenate(own),
        np.concatenate(other),
        np.concatenate(ds),
        np.concatenate(targets),
        steps,
    )
