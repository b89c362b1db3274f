"""``planner:<model>``: exact search within each Farkle turn over a trained model's critic.

A two-player Farkle turn is a small chance tree: throw, set dice aside, bank or throw on, until
the turn is banked or lost. What lies beyond the turn is the other seat's turn, and a policy
network's value head already estimates that: its value at the start of a turn, for every pair
of banked totals, is a table of the same shape as ``win-optimal``'s solved one
(:class:`~agents.solver.farkle_win.FarkleWinSolution`: ``S0`` / ``S1``). :class:`PlannerAgent`
builds that table once from the model's critic and then plays each turn by exact expectimax
over the dice with the *critic's* table in place of the solved one (the turn solver of
``win-optimal``, :mod:`agents.solver.farkle_win`). Seat 1's last turn, after seat 0 has
reached the target, has no future beyond the turn and is searched to its end.

This is one step of policy improvement on the model: search where the game's rules are exact
(the dice), the model's judgement where they are not (the rest of the game). It uses the rules
and the model only: no solved table. Behaviour cloning of the planner
(``warm_start: bc`` with ``bc_expert: planner:<model>``) distils it back into a network, the
step of expert iteration that ``configs/train/farkle-scratch-exit.yaml`` takes.

**The table.** The critic is asked about the turn's first throw: for banked totals ``(a, b)``
and seat ``s`` the start value is the mean of the critic's value (a ``win`` reward: +1 win,
-1 loss) over the scoring throws of six dice, weighted by their probability, turned into a
chance of winning; a farkle on that throw (probability 0.0231) hands the other seat its turn
against a banked total of 0 (``bankruptcy``) or ``a``. The critic is evaluated on a grid of
every ``stride``-th banked total (both seats) and interpolated linearly in between (stride 4,
200 points: the interpolation moves no value by more than 0.004 for ``pretrained:farkle-scratch-ppo``).
The observation's ``turns`` field (turns taken) is filled with a typical count for the totals,
``(a + b) / 2 / POINTS_PER_TURN``. Tables are kept per model (weights checksum), rules and stride
in the solver's disk cache (:mod:`agents.solver.cache`, verified on load; nothing unpickled).

>>> import agents
>>> spec = "planner:pretrained:farkle-scratch-ppo"
>>> planner = agents.load(spec, game="farkle", num_players=2)  # doctest: +SKIP
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from agents.players.win_optimal import WinOptimalAgent
from agents.solver.farkle_win import DEFAULT_CAP, STEP, FarkleWinSolution
from dice_envs.engine import farkle_turn as turn
from dice_envs.engine.farkle import throw_observations
from dice_envs.forward import farkle_throws
from dice_envs.layouts import layout
from dice_envs.rules import ConfigError, FarkleRules
from dice_envs.rules.farkle import NUM_DICE

__all__ = ["POINTS_PER_TURN", "PlannerAgent", "critic_start_values", "planner_solution"]

#: Points a turn banks on average in strong play (fills the observation's ``turns`` field only).
POINTS_PER_TURN = 430.0
_ROWS_PER_BATCH = 1 << 15
_TABLES: OrderedDict[tuple[Any, ...], FarkleWinSolution] = OrderedDict()


def _first_throws() -> tuple[np.ndarray, np.ndarray, float]:
    """Throw indices and probabilities of the scoring throws of six dice, and P(farkle)."""
    throws, probs = farkle_throws(NUM_DICE)
    scoring = (turn.farkle_turn_tables().points[throws] > 0).any(axis=1)
    return throws[scoring], probs[scoring], float(probs[~scoring].sum())


def _interpolate(grid: np.ndarray, table: np.ndarray, size: int) -> np.ndarray:
    """Bilinear interpolation of ``table`` (values at ``grid x grid``) to ``size x size``."""
    at = np.arange(size)
    rows = np.stack([np.interp(at, grid, table[:, j]) for j in range(len(grid))], axis=1)
    return np.stack([np.interp(at, grid, rows[i]) for i in range(size)], axis=0)


def critic_start_values(agent: Any, rules: FarkleRules, stride: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """``(S0, S1)`` read from the critic of ``agent`` (a two-player Farkle
    :class:`~agents.players.model.ModelAgent`), indexed as :class:`FarkleWinSolution`'s: ``S0[a, b]`` the
    chance that seat 0, to start its turn with ``a`` banked (steps of 50) against ``b``, wins;
    ``S1[a, b]`` the same for seat 1 to move (see the module docstring)."""
    import torch

    if not isinstance(stride, int) or isinstance(stride, bool) or stride < 1:
        raise ConfigError(
            f"stride must be a positive integer (banked totals in steps of {STEP}), got {stride!r}"
        )
    lay = layout(rules, 2)
    size = -(-rules.target // STEP)
    grid = np.unique(np.r_[np.arange(0, size, stride), size - 1])
    index, prob, p_farkle = _first_throws()
    base = throw_observations(rules, 2)[index].copy()
    base[:, lay.index("first_throw")] = 1.0
    other_at = lay.others("banked")[0].start
    policy = agent.policy
    g = len(grid)
    values = np.zeros((2, g, g))  # [seat, own, other]
    per = max(1, _ROWS_PER_BATCH // len(index))
    with torch.no_grad():
        for seat in (0, 1):
            for i, own in enumerate(grid):
                for j0 in range(0, g, per):
                    other = grid[j0 : j0 + per]
                    obs = np.repeat(base[None], len(other), axis=0)
                    obs[:, :, lay.index("banked")] = own * STEP / rules.target
                    obs[:, :, other_at] = (other * STEP / rules.target)[:, None]
                    obs[:, :, lay.index("lead")] = ((other - own) * STEP / rules.target)[:, None]
                    taken = np.round((own + other) * STEP / 2 / POINTS_PER_TURN) + seat
                    obs[:, :, lay.index("turns")] = (taken / (rules.max_turns or 100))[:, None]
                    obs[:, :, lay.field("seat").start + seat] = 1.0
                    flat = obs.reshape(-1, obs.shape[-1])
                    if agent.view is not None:
                        flat = agent.view(flat)
                    x = torch.as_tensor(np.ascontiguousarray(flat, dtype=np.float32), device=policy.device)
                    v = policy.predict_values(x).cpu().numpy().reshape(len(other), len(index))
                    values[seat, i, j0 : j0 + len(other)] = v @ prob / prob.sum()
    scoring = np.clip((values + 1.0) / 2.0, 0.0, 1.0)
    scoring = np.stack([_interpolate(grid, scoring[s], size) for s in (0, 1)])
    # a farkle on the first throw: the other seat starts its turn against 0 (or the same total)
    start = scoring.copy()
    for _ in range(8):  # the farkle term weighs 0.023 per round: 8 rounds leave < 1e-13
        new = (1.0 - p_farkle) * scoring
        for s in (0, 1):
            if rules.bankruptcy:  # the other seat starts with b against a wiped total
                new[s] += p_farkle * (1.0 - start[1 - s][:, 0])[None, :]
            else:  # the other seat starts with b against a
                new[s] += p_farkle * (1.0 - start[1 - s].T)
        start = new
    return start[0], start[1].T.copy()


class PlannerAgent(WinOptimalAgent):
    """Exact search within each turn over ``model``'s critic (two-player Farkle; module docstring).

    ``model``: ``pretrained:<name>`` or a path to a two-player Farkle model (loaded weights-only
    and checked against its card, as every model is). ``stride``: every how many banked totals
    the critic is asked (the rest interpolated). ``seat``, ``cap``: as for ``win-optimal``.
    """

    spec = "planner"

    def __init__(
        self,
        model: str,
        rules: FarkleRules,
        num_players: int = 2,
        seed: int | None = None,
        seat: int | None = None,
        stride: int = 4,
        cap: int = DEFAULT_CAP,
        device: str = "cpu",
    ) -> None:
        if not isinstance(rules, FarkleRules):
            raise ConfigError(f"planner plays farkle, got rules for {getattr(rules, 'game', rules)!r}")
        if num_players != 2:
            raise ConfigError(
                f"planner is for two-player Farkle (its table has two seats), got num_players={num_players}"
            )
        super().__init__(rules, 2, seed=seed, seat=seat, cap=cap)
        self.spec = f"planner:{model}"
        self.model = str(model)
        self.stride = stride
        self._device = device

    @property
    def solution(self) -> FarkleWinSolution:
        """The critic's table as a :class:`FarkleWinSolution` (built on first use, then cached)."""
        if self._solution is None:
            self._solution = planner_solution(self.model, self.rules, self.stride, self._cap, self._device)
        return self._solution


def planner_solution(
    model: str, rules: FarkleRules, stride: int = 4, cap: int = DEFAULT_CAP, device: str = "cpu"
) -> FarkleWinSolution:
    """The :class:`FarkleWinSolution` a :class:`PlannerAgent` plays: ``model``'s critic table with the
    exact last turn; kept in memory per (weights, rules, stride, cap) and in the solver's disk cache."""
    from agents.players.model import ModelAgent
    from agents.solver.cache import cache_key, cached_array
    from agents.solver.farkle_win import final_turn_values

    agent = ModelAgent.from_file(model, rules, 2, device=device)
    if int(agent.card.get("num_players", 0)) != 2:
        raise ConfigError(
            f"planner needs a two-player Farkle model (its critic judges two seats); "
            f"{model} was trained for {agent.card.get('num_players')} player(s)"
        )
    meta = {**rules.to_dict(), "weights_sha256": agent.card["weights_sha256"], "stride": stride}
    key = (tuple(sorted(meta.items())), cap)
    if key in _TABLES:
        _TABLES.move_to_end(key)
        return _TABLES[key]
    size = -(-rules.target // STEP)

    def compute() -> np.ndarray:
        s0, s1 = critic_start_values(agent, rules, stride)
        return np.stack([s0, s1])

    tables, _ = cached_array(
        cache_key("farkle-planner", "farkle", meta), compute, meta, shape=(2, size, size)
    )
    final = final_turn_values(rules, cap)
    s0, s1 = (np.array(t, dtype=np.float64) for t in tables)
    for a in (s0, s1, final):
        a.setflags(write=False)
    sol = FarkleWinSolution(rules, cap, s0, s1, final)
    _TABLES[key] = sol
    if len(_TABLES) > 4:
        _TABLES.popitem(last=False)
    return sol
