"""Batched solitaire play of a scorecard game by turn search over a value table.

:func:`play_games` plays ``n`` games at once on the batched engine
(:class:`~dice_envs.engine.scorecard.ScorecardEngine`): at the start of each turn it plans the
turn of every game together (the solver's widget over the values ``V`` of the states a turn can
end in), then steps the games through their throws by those plans. It returns the final scores
and every turn-start state met with the planned value of that turn: the search's one-step
look-ahead, the targets a value learner fits.

>>> from dice_envs.rules import make_rules
>>> from agents.solver.scorecard import turn_solver
>>> from agents.players.search.value import LearnedValues, ValueNet
>>> solver = turn_solver(make_rules("spiffel"))
>>> V = LearnedValues(ValueNet.random(solver, hidden=(8,), seed=0), solver)
>>> out = play_games(solver, V, games=4, seed=1)
>>> out.scores.shape, out.states.shape, out.targets.shape   # 13 turns of 4 games
((4,), (52, 3), (52,))
>>> 52 <= out.steps <= 3 * 52                                # one to three actions a turn
True
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from agents.players.scorecard import choose_actions
from agents.solver.plans import TurnPlan
from agents.solver.scorecard import TurnSolver
from dice_envs.engine.scorecard import ScorecardEngine

__all__ = ["Played", "engine_states", "play_games", "play_turns"]


class Played(NamedTuple):
    """What :func:`play_games` returns."""

    scores: np.ndarray  #: (n,) final grand totals
    states: np.ndarray  #: (n * turns, 3) turn-start states (mask, u, z), turn by turn
    targets: np.ndarray  #: (n * turns,) the searched value of each of those turns
    steps: int  #: actions taken in all (throws and entries)


def engine_states(
    solver: TurnSolver, engine: ScorecardEngine, games: np.ndarray, seat: Any = 0
) -> np.ndarray:
    """The solver states ``(len(games), 3)`` of ``(mask, capped upper total, z)`` of the cards of
    ``seat`` (an int or one per game) in ``games`` of ``engine``."""
    cards = engine.cards[games, seat]
    mask = (cards >= 0) @ (1 << np.arange(solver.k))
    u = np.minimum(engine.upper[games, seat], solver.T)
    five_50 = cards[:, solver.five] == 50
    paid = engine.bonuses[games, seat]
    capped = np.minimum(paid, solver.limit) if solver.limit is not None else np.zeros_like(paid)
    z = np.where(five_50, 1 + capped, 0)
    return np.stack([mask, u, z], axis=1).astype(np.int64)


def play_turns(engine: ScorecardEngine, plans: list[TurnPlan], games: np.ndarray) -> int:
    """Step ``games`` of ``engine`` through the throws of their turns by ``plans`` (one per game)
    until each has scored; the number of actions taken."""
    live, steps = games, 0
    while live.size and not engine.done.all():
        masks = engine.action_masks(live)
        acts = choose_actions([plans[i] for i in live], engine.roll[live], engine.throw[live], masks)
        engine.step(acts, live)
        steps += live.size
        live = live[engine.throw[live] > 1]  # scored games start the next turn at throw 1
    return steps


def play_games(solver: TurnSolver, V: Any, games: int, seed: int, chunk: int = 512) -> Played:
    """Play ``games`` solitaire games with dice seed ``seed``, turn search over values ``V``."""
    scores, states, targets, steps = [], [], [], 0
    for lo in range(0, games, chunk):
        n = min(chunk, games - lo)
        engine = ScorecardEngine(solver.rules, n, seed=seed + lo)
        rows: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        for _ in range(solver.k):
            g = np.arange(n)
            s = engine_states(solver, engine, g)
            plans = solver.turn_plans(solver.box_values_of(V, s))
            rows.append(s)
            vals.append(np.array([p.value for p in plans]))
            steps += play_turns(engine, plans, g)
        scores.append(engine.totals[:, 0].astype(np.int64))
        states.append(np.stack(rows, axis=1).reshape(-1, 3))
        targets.append(np.stack(vals, axis=1).reshape(-1))
    return Played(np.concatenate(scores), np.concatenate(states), np.concatenate(targets), steps)
