"""Per-decision equity lost against the exact N-seat Farkle equilibrium (``win-optimal`` at three
seats), as :func:`agents.evaluation.regret.farkle_regret` measures it at two.

Game ``i`` throws the dice of seed ``seed + i`` with the agent in seat ``i % players`` and
``win-optimal`` (the all-seats equilibrium of :mod:`agents.solver.farkle_field`, solved once) in
every other seat. Each of the agent's decisions is scored by the equilibrium's tables for its
seat: the chance of winning of the best legal action minus that of the chosen one, every seat
playing the tables from then on. Summed over a game it is the chance of winning the agent's
choices gave away. A throw-on past the model's forced bank (``target + cap`` with the lead, see
the module above) has no value in the solved game: such decisions are counted, not scored.

>>> from dice_envs.rules import FarkleRules
>>> r = field_regret("win-optimal", FarkleRules(target=300, bank_minimum=50), players=3, games=3)
>>> r.mean == 0.0 and r.games == 3 and r.unscored == 0
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.base import Agent
from agents.evaluation.regret import TIE
from agents.evaluation.stats import mean_ci
from agents.players.field_optimal import check_target, equilibrium_agent
from agents.registry import load
from agents.solver.farkle_field import FieldSolution
from dice_envs.encoding import encode
from dice_envs.engine import new_game
from dice_envs.outcome import is_legal
from dice_envs.rules import ConfigError, FarkleRules, RuleConfig, make_rules

__all__ = ["FieldRegretResult", "field_regret"]


@dataclass(frozen=True)
class FieldRegretResult:
    """Chance of winning an agent's decisions gave away per game against the ``players``-seat
    equilibrium: mean with a 95% interval; ``wrong``: the share of scored decisions that lost
    any; ``unscored``: throw-ons past the model's forced bank (not in the solved game)."""

    agent: str
    players: int
    target: int
    games: int
    mean: float
    ci95: tuple[float, float]
    wrong: float
    decisions: int
    unscored: int
    per_game: tuple[float, ...] = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "players": self.players,
            "target": self.target,
            "games": self.games,
            "mean": self.mean,
            "ci95": list(self.ci95),
            "wrong_decisions": self.wrong,
            "decisions": self.decisions,
            "unscored": self.unscored,
        }


def field_regret(
    agent: str | Agent,
    rules: str | RuleConfig = "farkle",
    players: int = 3,
    games: int = 200,
    seed: int = 0,
    solution: FieldSolution | None = None,
) -> FieldRegretResult:
    """Per-game equity lost by ``agent`` (a spec :func:`agents.load` builds with ``seed``, or an
    agent) against ``win-optimal`` in the other ``players - 1`` seats (see the module).
    ``solution``: the equilibrium of these rules and seats, already solved (one solve can serve
    many agents).

    Raises :class:`ConfigError` for other games than Farkle, a bad ``games`` and seats or targets
    the equilibrium is not solved for (:func:`~agents.players.field_optimal.check_target`).
    """
    r = make_rules(rules)
    if not isinstance(r, FarkleRules):
        raise ConfigError(f"the N-seat Farkle regret needs farkle rules, got {r.game!r}")
    if not isinstance(games, int) or isinstance(games, bool) or games < 1:
        raise ConfigError(f"games must be a positive integer, got {games!r}")
    check_target("equilibrium", r, players)
    judge = equilibrium_agent(r, players, seed=seed, solution=solution)
    others = equilibrium_agent(r, players, seed=seed, solution=judge.solution(0))  # one solve
    me = load(agent, game=r, num_players=players, seed=seed) if isinstance(agent, str) else agent
    per_game: list[float] = []
    wrong = decisions = unscored = 0
    for i in range(games):
        seat = i % players
        if callable(getattr(me, "reset", None)):
            me.reset(seed=seed + i)
        g = new_game(r, num_players=players, seed=seed + i)
        lost = 0.0
        while not g.done:
            p = g.current_player
            obs, mask = encode(g, p), g.action_mask()
            a = int((me if p == seat else others).act(obs, mask))
            if not is_legal(a, mask):
                who = agent if isinstance(agent, str) else type(agent).__name__
                raise ValueError(f"agent {who!r} chose illegal action {a}; legal: {np.flatnonzero(mask)}")
            if p == seat:
                values = judge.action_values(obs, mask)
                if np.isnan(values[a]):
                    unscored += 1
                else:
                    loss = float(np.nanmax(values) - values[a])
                    loss = loss if loss > TIE else 0.0
                    lost += loss
                    wrong += loss > 0.0
                    decisions += 1
            g.apply(a)
        per_game.append(lost)
    mean, ci = mean_ci(per_game)
    return FieldRegretResult(
        agent=agent if isinstance(agent, str) else type(agent).__name__,
        players=players,
        target=r.target,
        games=games,
        mean=mean,
        ci95=ci,
        wrong=wrong / decisions if decisions else 0.0,
        decisions=decisions,
        unscored=unscored,
        per_game=tuple(per_game),
    )
