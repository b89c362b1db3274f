"""Two-player scorecard play for the win without a win network: a normal approximation over a
points network.

:class:`NormalWinSearch` is the win search of :class:`~agents.players.search.win.WinSearch` (the
mover's turn searched exactly, an entry that ends the game scored exactly) with the other
player's chance at its next turn start read from a solitaire points network instead of a win
network: the other's projected lead ``p = d + e_other - e_mover`` (``e``: each card's expected
points to come; the other card's five-of-a-kind state weighed by
:data:`~agents.players.search.win.OTHER_Z_WEIGHTS`, the mover's own known) and the chance that
the final difference, normal around ``p`` with spread ``sd``, favours the other:
``Phi((p + 1/2) / sd)`` (a tie counts 1/2). ``sd = sqrt(s[a]^2 + s[b]^2)`` for the two cards'
open boxes ``a`` and ``b``, ``s[k]`` the spread of a solitaire game's final score around its
projection with ``k`` boxes open (:func:`fit_spread`, measured by self-play of the points
search; the two players' games are taken as independent). Early in a game ``Phi`` is nearly
linear in ``p`` and the search plays for points; late it weighs the chance of passing.

A model of this kind (card feature set :data:`WIN_NORMAL_FEATURES`) is one ``.npz`` holding the
points network (``points_w0``, ...) and ``spread``; the search learner writes it (recipe key
``leaf: normal``, :mod:`agents.training.search.normal`). No solver values are read.

>>> from dice_envs.rules import make_rules
>>> from agents.solver.scorecard import turn_solver
>>> from agents.players.search.value import LearnedValues, ValueNet
>>> solver = turn_solver(make_rules("spiffel"))
>>> values = LearnedValues(ValueNet.random(solver, hidden=(8,), seed=0), solver)
>>> search = NormalWinSearch(solver, values, np.linspace(0.0, 60.0, solver.k + 1))
>>> full = (1 << solver.k) - 1
>>> chance = search.other_value(np.array([[full ^ 1, 0]]), np.array([[full ^ 1, 0, 0]]), np.array([-20.0]))
>>> bool(0.0 < chance[0] < 0.5)   # the other player 20 behind with one box each to fill
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.players.search.play import engine_states, play_turns
from agents.players.search.value import LearnedValues
from agents.players.search.win import WinSearch, _popcount, card_points
from agents.solver.scorecard import TurnSolver
from dice_envs.engine.scorecard import ScorecardEngine
from dice_envs.rules import ConfigError

__all__ = ["WIN_NORMAL_FEATURES", "NormalWinSearch", "fit_spread", "normal_chance", "read_spread"]

#: The card feature set of a normal-approximation win model.
WIN_NORMAL_FEATURES = "win-normal-v1"

_ERF = np.frompyfunc(math.erf, 1, 1)


def normal_chance(x: np.ndarray) -> np.ndarray:
    """``Phi(x)``, the standard normal distribution function (``math.erf``: no scipy needed)."""
    return 0.5 * (1.0 + _ERF(np.asarray(x, dtype=np.float64) / math.sqrt(2.0)).astype(np.float64))


class NormalWinSearch(WinSearch):
    """The win search with the normal approximation of the module docstring: ``points`` the points
    network's values, ``spread`` ``(k + 1,)`` the spread by open boxes."""

    def __init__(self, solver: TurnSolver, points: LearnedValues, spread: np.ndarray) -> None:
        super().__init__(solver, None, points)
        spread = np.asarray(spread, dtype=np.float64)
        if spread.shape != (solver.k + 1,) or not np.isfinite(spread).all() or (spread < 0).any():
            raise ConfigError(
                f"spread must be {solver.k + 1} finite non-negative numbers (one per count of open "
                f"boxes, 0 to {solver.k}), got shape {spread.shape}"
            )
        self.spread = spread

    def other_value(self, other: np.ndarray, card: np.ndarray, d: np.ndarray) -> np.ndarray:
        """The other player's chance at its turn start: its card ``other`` ``(n, 2)``, the mover's
        card after its turn ``card`` ``(n, 3)`` (its five-of-a-kind state known), ``d`` the
        other's lead."""
        assert self.points is not None
        other = np.asarray(other, dtype=np.int64).reshape(-1, 2)
        card = np.asarray(card, dtype=np.int64).reshape(-1, 3)
        seen = np.column_stack([other, np.full(len(other), -1)])
        p = np.asarray(d, dtype=np.float64) + card_points(self.points, seen) - card_points(self.points, card)
        k = self.solver.k
        sd = np.hypot(self.spread[k - _popcount(other[:, 0])], self.spread[k - _popcount(card[:, 0])])
        z = np.where(sd > 0, (p + 0.5) / np.maximum(sd, 1e-12), np.sign(p + 0.5) * np.inf)
        return normal_chance(z)


def fit_spread(solver: TurnSolver, points: LearnedValues, games: int, seed: int) -> tuple[np.ndarray, int]:
    """``s`` ``(k + 1,)``: the standard deviation of a solitaire game's final score minus its
    projection (score so far plus the points network's expected points to come) at each count
    of open boxes, over ``games`` games of the points search with dice seed ``seed``
    (``s[0] = 0``: a full card has nothing to come); and the actions those games took."""
    if games < 2:
        raise ConfigError(f"the spread needs at least 2 games, got {games}")
    engine = ScorecardEngine(solver.rules, games, seed=seed)
    g, projected, steps = np.arange(games), [], 0
    for _ in range(solver.k):
        s = engine_states(solver, engine, g)
        projected.append(engine.totals[:, 0] + card_points(points, s))
        steps += play_turns(engine, solver.turn_plans(solver.box_values_of(points, s)), g)
    final = engine.totals[:, 0].astype(np.float64)
    spread = np.zeros(solver.k + 1)
    for turn, proj in enumerate(projected):
        spread[solver.k - turn] = float(np.std(final - proj, ddof=1))
    return spread, steps


def read_spread(path: Any, card: dict[str, Any], solver: TurnSolver) -> np.ndarray:
    """The ``spread`` array of a normal-approximation win model's file, checked
    (:func:`agents.models.files.read_arrays`; its shape and values by :class:`NormalWinSearch`)."""
    from agents.models.files import read_arrays

    arrays = read_arrays(path, str(card.get("weights_sha256")))
    if "spread" not in arrays:
        raise ConfigError(
            f"{path}: a {WIN_NORMAL_FEATURES!r} model keeps its spread as 'spread'; the file has none"
        )
    spread = np.asarray(arrays["spread"], dtype=np.float64)
    if spread.shape != (solver.k + 1,):
        raise ConfigError(
            f"{path}: 'spread' has shape {spread.shape}; {solver.rules.game} needs ({solver.k + 1},)"
        )
    return spread
