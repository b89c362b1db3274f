"""``search:<model>`` of a win model: a seat of a two-player scorecard game played for the win.

:class:`WinSearchAgent` reads its turn start from the observation (its own card, the other card's
open boxes and upper total, both totals), searches the turn exactly over the win network
(:class:`agents.players.search.win.WinSearch`: the dice, holds and boxes exactly; past the turn the
network's estimate, with the other card's unseen five-of-a-kind state weighed half 0, half 50)
and plays the throw it is shown by that plan, as the solitaire search agent does. Plans are kept
by turn start (the same state gets the same plan and the same action, whatever else is in the
batch).

>>> from dice_envs.rules import make_rules
>>> from agents.solver.scorecard import turn_solver
>>> from agents.players.search.win import random_win_net
>>> rules = make_rules("spiffel")
>>> bot = WinSearchAgent(rules, 2, net=random_win_net(turn_solver(rules), hidden=(8,), seed=0))
>>> bot.spec
'search'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import check_mask, check_mask_width, legal_rows
from agents.players.scorecard import ScorecardAgent, choose_actions
from agents.players.search.value import LearnedValues, ValueNet
from agents.players.search.win import WinSearch
from agents.solver.plans import PlanCache, TurnPlan
from agents.solver.scorecard import turn_solver
from dice_envs.layouts import layout
from dice_envs.rules import ConfigError, ScorecardRules

__all__ = ["WinSearchAgent", "observed_turn_starts"]

#: Plans kept (least recently used dropped past this many turn starts).
_CACHE = 4096
#: Turn starts searched together.
_CHUNK = 512

Key = tuple[int, int, int, int, int, int]


def observed_turn_starts(agent: ScorecardAgent, observations: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(own (B, 3), other (B, 2), d (B,), roll (B,), throw (B,))`` of two-player observations:
    own ``(mask, capped u, z)``, the other card's ``(mask, capped u)``, own total minus other's."""
    mask, u, z, roll, throw = agent.turn_states(observations)
    obs = np.asarray(observations, dtype=np.float64)
    lay = layout(agent.rules, agent.num_players)
    T = int(agent.rules.upper_bonus_threshold)
    closed = lay.read(obs, "other1_open") <= 0.5
    omask = closed.astype(np.int64) @ (1 << np.arange(closed.shape[1]))
    ou = np.minimum(lay.read(obs, "other1_upper_total").astype(np.int64), T)
    d = lay.read(obs, "total").astype(np.int64) - lay.read(obs, "other1_total").astype(np.int64)
    own = np.stack([mask, np.minimum(u, T), z], axis=1).astype(np.int64)
    return own, np.stack([omask, ou], axis=1), d, roll, throw


class WinSearchAgent(ScorecardAgent):
    """Plays a seat of a two-player scorecard game by exact turn search over a win-chance network
    (the other card's unseen five-of-a-kind state weighed by
    :data:`~agents.players.search.win.OTHER_Z_WEIGHTS`).

    ``net``: the network (:func:`agents.players.search.win.random_win_net` shape); ``points``: the
    points network whose expected points to come it reads, if it reads them; ``spread``: in place
    of ``net``, the normal approximation over ``points``
    (:class:`~agents.players.search.win_normal.NormalWinSearch`); ``model``: the model's path or
    ``pretrained:<name>`` for the spec.
    """

    spec = "search"

    def __init__(
        self,
        rules: ScorecardRules,
        num_players: int = 2,
        seed: int | None = None,
        net: ValueNet | None = None,
        model: str = "",
        points: ValueNet | None = None,
        spread: np.ndarray | None = None,
    ) -> None:
        if not isinstance(rules, ScorecardRules):
            raise ConfigError(f"search over a win model plays the scorecard games, got {rules.game!r}")
        if num_players != 2:
            raise ConfigError(f"a win model plays a seat of a two-player game, got {num_players} players")
        if (net is None) == (spread is None) or (spread is not None and points is None):
            raise ConfigError(
                "WinSearchAgent needs a win network (net=) or, for the normal approximation, a points "
                "network and its spread (points=, spread=)"
            )
        super().__init__(rules, num_players, seed)
        solver = turn_solver(rules)
        values = None if points is None else LearnedValues(points, solver)
        if spread is not None:
            from agents.players.search.win_normal import NormalWinSearch

            assert values is not None
            self.search: WinSearch = NormalWinSearch(solver, values, spread)
        else:
            self.search = WinSearch(solver, net, values)
        self.spec = f"search:{model}" if model else "search"
        self._plans = PlanCache(self._search, size=_CACHE, chunk=_CHUNK)
        self.card: dict[str, Any] = {}

    def _search(self, keys: list[Key]) -> list[TurnPlan]:
        starts = np.array(keys, dtype=np.int64)
        return self.search.turn_plans(starts[:, :3], starts[:, 3:5], starts[:, 5])

    def plans(self, own: np.ndarray, other: np.ndarray, d: np.ndarray) -> list[TurnPlan]:
        """The plan of each turn start (kept; those not kept are searched together)."""
        rows = zip(own.tolist(), other.tolist(), d.tolist(), strict=True)
        return self._plans.get([(a, b, c, e, f, g) for (a, b, c), (e, f), g in rows])

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        check_mask(action_mask, self.rules)
        obs = np.asarray(observation, dtype=np.float64)[None]
        return int(self.act_batch(obs, np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The action of each row (the same actions, whatever else is in the batch)."""
        check_mask_width(action_masks, self.rules)
        own, other, d, roll, throw = observed_turn_starts(self, observations)
        legal = legal_rows(action_masks)
        return choose_actions(self.plans(own, other, d), roll, throw, legal)
