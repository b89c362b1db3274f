"""``win-optimal``: the Farkle player that maximises its chance of winning a two-player game.

It acts from the exact tables of :mod:`agents.solver.farkle_win`: at every decision it compares
the chance of winning after each legal action (banking, or throwing the dice left on) and takes
the best (ties: banking first, then the smallest action).

**Its seat.** The two seats play different games (seat 0 banking past the target gives seat 1
a last turn; seat 1 doing so wins at once). The agent reads its seat from the observation's
``seat`` field (``farkle-v3``); ``seat=0`` or ``seat=1`` fixes it instead.

**Three or more players.** Where :data:`~agents.players.field_optimal.TARGET_LIMITS` allows the
equilibrium for the number of seats and the target, the agent plays
the exact all-seats equilibrium of :mod:`agents.solver.farkle_field` (every seat maximising its
own chance of winning). Elsewhere (an approximation, not an optimum) it plays the two-player
policy of seat 0 against the strongest other seat (the highest banked total), and in the last
round plays to end above the leader.
"""

from __future__ import annotations

import numpy as np

from agents.base import BaseAgent, check_mask
from agents.players.field_optimal import TARGET_LIMITS, equilibrium_agent
from agents.solver.farkle_field import FieldSolution
from agents.solver.farkle_win import DEFAULT_CAP, STEP, FarkleWinSolution, solve_farkle_win
from dice_envs.encoding import FarkleBatchView, decode_farkle_batch
from dice_envs.engine import farkle_turn as turn
from dice_envs.rules import ConfigError, FarkleRules
from dice_envs.rules.farkle import BANK_FLAG

__all__ = ["WinOptimalAgent"]

_ACTIONS = np.arange(2 * BANK_FLAG)
_IS_BANK = _ACTIONS >= BANK_FLAG
# preference among equal values: banks first, then by action
_ORDER = np.where(_IS_BANK, _ACTIONS - BANK_FLAG, _ACTIONS + BANK_FLAG)


class WinOptimalAgent(BaseAgent):
    """Maximises the chance of winning (exact for two players; see the module docstring)."""

    spec = "win-optimal"

    def __init__(
        self,
        rules: FarkleRules,
        num_players: int = 2,
        seed: int | None = None,
        seat: int | None = None,
        solution: FarkleWinSolution | FieldSolution | None = None,
        cap: int = DEFAULT_CAP,
    ) -> None:
        super().__init__(seed)
        if not isinstance(rules, FarkleRules):
            raise ConfigError(f"win-optimal plays farkle, got rules for {getattr(rules, 'game', rules)!r}")
        if seat is not None and (isinstance(seat, bool) or seat not in (0, 1)):
            raise ConfigError(f"seat must be None (read from the observation), 0 or 1, got {seat!r}")
        if seat is not None and num_players != 2:
            raise ConfigError(f"seat= is for two-player games, got num_players={num_players}")
        self.rules = rules
        self.num_players = int(num_players)
        self.seat = seat
        if isinstance(solution, FieldSolution) and self.num_players == 2:
            raise ConfigError("two-player win-optimal takes a FarkleWinSolution, not a FieldSolution")
        self._solution = solution if not isinstance(solution, FieldSolution) else None
        self._cap = cap
        self._field: BaseAgent | None = None
        if self.num_players > 2 and rules.target <= TARGET_LIMITS["equilibrium"].get(self.num_players, -1):
            field = solution if isinstance(solution, FieldSolution) else None
            self._field = equilibrium_agent(rules, self.num_players, seed=seed, solution=field)

    @property
    def totals_read(self) -> str:  # type: ignore[override]
        """The equilibrium's (``"finished-top"``) where it plays it, else ``"own-and-highest"``
        (see :attr:`BaseAgent.totals_read`)."""
        return self._field.totals_read if self._field is not None else "own-and-highest"

    @property
    def solution(self) -> FarkleWinSolution:
        """The solved tables (solved or loaded from the disk cache on first use)."""
        if self._solution is None:
            self._solution = solve_farkle_win(self.rules, cap=self._cap)
        return self._solution

    # ------------------------------------------------------------------ decisions
    def _seats(self, bv: FarkleBatchView) -> np.ndarray:
        """Per row, the seat the agent plays (see the module docstring); in the last round of a
        two-player game the agent to move is seat 1 (seat 0 has finished)."""
        n = len(bv.banked)
        if self.num_players != 2:
            return np.zeros(n, dtype=np.int64)
        seats = bv.seat if self.seat is None else np.full(n, self.seat, dtype=np.int64)
        return np.where(bv.final_round, 1, seats)

    def values(self, bv: FarkleBatchView, masks: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """``(B, 128)``: the chance of winning after each action (-inf where not legal)."""
        n_rows = len(bv.banked)
        if (bv.n_dice == 0).any():
            raise ValueError("an observation of the batch shows no dice: it is not this agent's turn")
        legal = np.asarray(masks) > 0
        if legal.shape != (n_rows, len(_ACTIONS)):
            raise ValueError(f"expected action masks of shape ({n_rows}, {len(_ACTIONS)}), got {legal.shape}")
        target = self.rules.target
        other = bv.others_banked.max(axis=1) if bv.others_banked.shape[1] else np.zeros(n_rows, np.int64)
        final = bv.final_round & (other > bv.banked)
        kind = np.where(final, 2, seats)
        own = np.where(final, bv.banked, np.minimum(bv.banked, target - STEP))
        oth = np.where(final, other, np.minimum(other, target - STEP))
        tt = turn.farkle_turn_tables()
        throw = turn.throw_of_dice(tt, bv.dice)
        pts = tt.points[throw]  # (B, 64): per set-aside mask
        left = tt.next_dice[throw].clip(1)  # dice thrown next (six after hot dice; 1: mask not legal)
        keys = np.stack([kind, own, oth], axis=1)
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        names = ("seat0", "seat1", "final")
        tables = self.solution.many_turn_tables([(names[k], int(a), int(b)) for k, a, b in uniq.tolist()])
        sizes = np.array([len(B) for B, _ in tables])
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        b_all = np.concatenate([B for B, _ in tables])
        w_all = np.concatenate([W for _, W in tables])
        t2 = np.minimum((bv.turn_total[:, None] + pts) // STEP, sizes[inverse][:, None] - 1)
        at = offsets[inverse][:, None] + t2
        out = np.concatenate([w_all[at, left], b_all[at]], axis=1)  # throw on, then bank
        pts = np.concatenate([pts, pts], axis=1)
        return np.where(legal & (pts > 0), out, -np.inf)

    def action_values(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``(B, 128)``: the chance of winning after each action of a batch of decisions (``-inf``
        where not legal), the agent's seat per row as :meth:`act_batch` plays it."""
        bv = decode_farkle_batch(np.asarray(observations), self.rules, self.num_players)
        return self.values(bv, action_masks, self._seats(bv))

    def _choose(self, values: np.ndarray) -> np.ndarray:
        best = values.max(axis=1, keepdims=True)
        if not np.isfinite(best).all():
            raise ValueError("an action mask of the batch has no legal scoring action")
        near = values >= best - 1e-12  # ties: banks first, then the smallest action
        return _ACTIONS[np.argmin(np.where(near, _ORDER, 10**6), axis=1)].astype(np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if self._field is not None:
            return self._field.act(observation, action_mask)
        check_mask(action_mask, self.rules)
        values = self.action_values(np.asarray(observation)[None, :], np.asarray(action_mask)[None, :])
        return int(self._choose(values)[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions for a batch, decided with array code (rows read by
        :func:`dice_envs.encoding.decode_farkle_batch`)."""
        if self._field is not None:
            return self._field.act_batch(observations, action_masks)
        return self._choose(self.action_values(observations, action_masks))
