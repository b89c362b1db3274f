"""Exact max-expected policy of one Farkle turn.

``W(t, n)`` is the expected number of points banked in the rest of a turn that holds turn total
``t`` and is about to throw ``n`` dice, when every choice maximizes that expectation. After a
throw (:func:`dice_envs.forward.farkle_throws`) the player picks a scoring selection (from
:func:`dice_envs.tables.farkle_turn_tables`, built from the rules' scoring function) and then
banks (allowed only when the new turn total is greater than ``bank_minimum``) or throws the dice
left (all six after hot dice). A farkle scores 0; the bankruptcy rule does not enter (it costs
banked points, not turn points).

Every selection scores at least 50, so turn totals only grow and ``W`` is computed from large
totals down. Above :data:`T_MAX` banking is assumed (and checked: the computed policy already
banks in every state of the top band, so the assumption changes nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from dice_envs.engine import farkle_turn as turn
from dice_envs.forward import farkle_throws
from dice_envs.rules.farkle import NUM_DICE

__all__ = ["STEP", "T_MAX", "FarkleSolution", "solve_farkle"]

#: Every Farkle score is a multiple of this.
STEP = 50
#: Turn totals above which banking is assumed optimal (verified in the top band).
T_MAX = 40_000
_PAD = 8_000  # largest single selection (six 1s) so every successor fits in the table


@cache
def _options() -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per dice count ``n``: the throws' probabilities (:func:`dice_envs.forward.farkle_throws`),
    points (throws × 64), dice thrown after each selection (the rules'
    :func:`~dice_envs.rules.farkle.dice_to_throw`: six after hot dice), legality."""
    tt = turn.farkle_turn_tables()
    out = {}
    for n in range(1, NUM_DICE + 1):
        throws, probs = farkle_throws(n)
        pts = tt.points[throws]
        out[n] = (probs, pts, tt.next_dice[throws].clip(1), pts > 0)  # clip: masks not legal
    return out


@dataclass
class FarkleSolution:
    """``W[t // STEP, n]`` (n = 1..6) of the max-expected policy for one ``bank_minimum``."""

    bank_minimum: int
    W: np.ndarray = field(repr=False)

    @property
    def expected_turn_points(self) -> float:
        """Expected points banked in one turn (from the opening throw of six dice)."""
        return float(self.W[0, NUM_DICE])

    def continue_value(self, turn_total: int, dice_left: int) -> float:
        """Expected banked points of throwing ``dice_left`` dice (0 means six: hot dice)."""
        n = dice_left if dice_left > 0 else NUM_DICE
        i = turn_total // STEP
        return float(self.W[i, n]) if i < self.W.shape[0] else float(turn_total)

    def option_value(self, turn_total: int, dice_left: int, bank: bool) -> float:
        """Value of reaching ``turn_total`` with ``dice_left`` dice and banking or throwing on."""
        if bank:
            return float(turn_total) if turn.may_bank(turn_total, self.bank_minimum) else -np.inf
        return self.continue_value(turn_total, dice_left)


def _solve(bank_minimum: int) -> np.ndarray:
    n_t = (T_MAX + _PAD) // STEP + 1
    top = T_MAX // STEP
    t_of = np.arange(n_t) * STEP
    W = np.zeros((n_t, NUM_DICE + 1))
    W[top + 1 :, 1:] = t_of[top + 1 :, None]  # bank beyond T_MAX
    opts = _options()
    for ti in range(top, -1, -1):
        t = ti * STEP
        for n in range(1, NUM_DICE + 1):
            probs, pts, left, legal = opts[n]
            t2 = t + pts
            bank = np.where(turn.may_bank(t2, bank_minimum), t2, -np.inf)
            cont = W[ti + pts // STEP, left]
            best = np.where(legal, np.maximum(bank, cont), -np.inf).max(axis=1)
            best[~np.isfinite(best)] = 0.0  # a farkle
            W[ti, n] = probs @ best
    band = slice(max(0, top - _PAD // STEP), top + 1)
    if not np.all(W[band, 1:] <= t_of[band, None] + 1e-9):  # pragma: no cover - a guard on T_MAX
        raise RuntimeError("T_MAX too small: the max-expected policy still throws near it")
    return W


@cache
def solve_farkle(bank_minimum: int = 350) -> FarkleSolution:
    """Solve the max-expected turn policy for ``bank_minimum`` (memoized)."""
    return FarkleSolution(int(bank_minimum), _solve(int(bank_minimum)))
