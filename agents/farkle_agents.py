"""Built-in Farkle players.

An action is "set these dice aside, then bank or throw on" (``mask + 64 * bank``). All agents act
from the decoded observation and the action mask.

* :class:`GreedyFarkleAgent` (``"greedy"``) — best immediate score: sets aside the selection worth
  most and banks as soon as banking is legal.
* :class:`ThresholdAgent` (``"threshold:N"``) — banks as soon as the turn total (after setting
  aside) is at least ``N`` and banking is legal; otherwise sets aside by :func:`thrifty_key`
  (hot dice first, else points plus 100 for every die left to throw) and throws on.
* :class:`HeuristicFarkleAgent` (``"heuristic"``) — a good human's play: sets aside like the
  threshold agent; banks at a turn total that depends on the dice left to throw (one or two
  dice: bank whenever allowed; three: 500; four: 1000; five: 3000; hot dice: throw on), and
  plays the race: it banks whatever reaches the target,
  it keeps throwing in the final round until it beats the leader, and it takes more risk when
  far behind and less when far ahead.
* :class:`MaxExpectedAgent` (``"max-expected"``) — the exact policy maximizing the expected
  points banked per turn (:mod:`agents.solver.farkle`).
"""

from __future__ import annotations

import numpy as np

from dice_envs.encoding import FarkleView, decode
from dice_envs.rules.farkle import BANK_FLAG, NUM_DICE, FarkleRules
from dice_envs.tables import farkle_tables

from .base import BaseAgent, check_mask
from .solver.farkle import FarkleSolution, solve_farkle

__all__ = [
    "GreedyFarkleAgent",
    "HeuristicFarkleAgent",
    "MaxExpectedAgent",
    "ThresholdAgent",
    "thrifty_key",
]


class _FarkleAgent(BaseAgent):
    def __init__(self, rules: FarkleRules, num_players: int = 1, seed: int | None = None) -> None:
        super().__init__(seed)
        self.rules = rules
        self.num_players = num_players

    def view(self, observation: np.ndarray) -> FarkleView:
        view = decode(observation, self.rules, self.num_players)
        assert isinstance(view, FarkleView)
        if not view.dice:
            raise ValueError("the observation shows no dice: it is not this agent's turn")
        return view

    def options(self, view: FarkleView, legal: np.ndarray) -> list[tuple[int, int, int, bool]]:
        """``(action, points, dice_left_to_throw, bank)`` of every legal action."""
        ft = farkle_tables()
        n = len(view.dice)
        row = ft.points[n][ft.roll_index[view.dice]]
        out = []
        for a in legal:
            mask, bank = int(a) % BANK_FLAG, int(a) >= BANK_FLAG
            left = n - bin(mask).count("1")
            out.append((int(a), int(row[mask]), left if left else NUM_DICE, bank))
        return out


def thrifty_key(points: int, left: int, hot: bool) -> tuple[int, int]:
    """Preference among selections when throwing on: hot dice, then points + 100 per die left."""
    return (int(hot), points + 100 * (0 if hot else left))


def _thrifty(opts: list[tuple[int, int, int, bool]], n: int) -> tuple[int, int, int, bool]:
    throws = [o for o in opts if not o[3]]
    return max(throws, key=lambda o: (*thrifty_key(o[1], o[2], o[2] == NUM_DICE), -o[0]))


def _bank_best(opts: list[tuple[int, int, int, bool]]) -> tuple[int, int, int, bool] | None:
    banks = [o for o in opts if o[3]]
    return max(banks, key=lambda o: (o[1], -o[0])) if banks else None


class GreedyFarkleAgent(_FarkleAgent):
    """Sets aside the most points; banks as soon as banking is legal."""

    spec = "greedy"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        opts = self.options(self.view(observation), check_mask(action_mask))
        best = _bank_best(opts)
        if best is not None:
            return best[0]
        return max(opts, key=lambda o: (o[1], -o[0]))[0]


class ThresholdAgent(_FarkleAgent):
    """Banks as soon as the turn total reaches ``threshold`` (and banking is legal)."""

    def __init__(
        self, rules: FarkleRules, threshold: int, num_players: int = 1, seed: int | None = None
    ) -> None:
        super().__init__(rules, num_players, seed)
        self.threshold = int(threshold)
        self.spec = f"threshold:{self.threshold}"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        view = self.view(observation)
        opts = self.options(view, check_mask(action_mask))
        best = _bank_best(opts)
        if best is not None and view.turn_total + best[1] >= self.threshold:
            return best[0]
        return _thrifty(opts, len(view.dice))[0]


#: Turn total at which the heuristic banks, by the number of dice it would throw next.
BANK_AT: dict[int, int] = {6: 20_000, 5: 3000, 4: 1000, 3: 500, 2: 0, 1: 0}


class HeuristicFarkleAgent(_FarkleAgent):
    """Dice-left thresholds plus race awareness (see the module docstring)."""

    spec = "heuristic"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        view = self.view(observation)
        opts = self.options(view, check_mask(action_mask))
        target = self.rules.target
        best_other = max(view.others_banked, default=None)
        banks = [o for o in opts if o[3]]
        # 1. the race: a bank that reaches the target or, in the final round, beats the leader
        for o in sorted(banks, key=lambda o: (-o[1], o[0])):
            after = view.banked + view.turn_total + o[1]
            if view.final_round and best_other is not None:
                if after > best_other:
                    return o[0]
            elif after >= target:
                return o[0]
        if view.final_round and best_other is not None and view.banked <= best_other:
            return _thrifty(opts, len(view.dice))[0]  # banking now loses: throw on
        # 2. dice-left thresholds, scaled by the standing
        scale = 1.0
        if best_other is not None:
            gap = best_other - view.banked
            scale = 1.5 if gap > 0.3 * target else 0.75 if gap < -0.3 * target else 1.0
        choice = _thrifty(opts, len(view.dice))
        for o in sorted(banks, key=lambda o: (-o[1], o[0])):
            if view.turn_total + o[1] >= scale * BANK_AT[o[2]]:
                return o[0]
        return choice[0]


class MaxExpectedAgent(_FarkleAgent):
    """Maximizes the expected points banked this turn (exact, from the turn solver)."""

    spec = "max-expected"

    def __init__(
        self,
        rules: FarkleRules,
        num_players: int = 1,
        seed: int | None = None,
        solution: FarkleSolution | None = None,
    ) -> None:
        super().__init__(rules, num_players, seed)
        self.solution = solution if solution is not None else solve_farkle(rules.bank_minimum)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.decide(self.view(observation), check_mask(action_mask))

    def decide(self, view: FarkleView, legal: np.ndarray) -> int:
        """The max-expected action for the decoded state ``view`` among the ``legal`` actions."""
        opts = self.options(view, legal)
        sol = self.solution
        best_a, best_v = -1, -np.inf
        for a, pts, left, bank in sorted(opts, key=lambda o: (not o[3], o[0])):  # banks win ties
            v = sol.option_value(view.turn_total + pts, left, bank)
            if v > best_v + 1e-9:
                best_a, best_v = a, v
        return best_a
