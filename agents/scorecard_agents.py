"""Built-in players of the scorecard games (Spiffel, Dice Poker, Yahtzee).

All act from the observation (decoded with :func:`dice_envs.encoding.decode`) and the action mask;
none touches an environment.

* :class:`GreedyAgent` (``"greedy"``) — chases the best box of the moment: the open box the dice
  score most in now. It scores there when that is "good" (see :func:`_good`) or no throw is
  left; otherwise it holds the dice that serve that box and re-throws the rest.
* :class:`HeuristicAgent` (``"heuristic"``) — how a careful human plays: every box has a par value
  (what it yields when kept open, a rule of thumb), entering a throw is worth its points minus the
  box's par, plus an upper-bonus term (the bonus itself when reached; while it is still within
  reach, a reward for being above "three of each face" and a penalty below). Holds are chosen to
  maximise the expectation of that judgement over the turn's remaining throws.
* :class:`OptimalAgent` (``"optimal"``) — the exact solitaire optimum from the solver's value
  table: per turn it solves the throw/hold tree against the values of the following states.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from functools import cache

import numpy as np

from dice_envs.encoding import ScorecardView, decode
from dice_envs.engine.scorecard_flow import scorecard_flow
from dice_envs.layouts import layout
from dice_envs.rules.scorecard import N_REROLL_ACTIONS, UPPER_FACES, ScorecardRules
from dice_envs.tables import scorecard_batch_tables, scorecard_tables

from .actions import hold_to_reroll_mask
from .base import BaseAgent, check_mask, check_mask_width
from .solver.scorecard import NEG, PLAN_CACHE_SIZE, ScorecardSolution, TurnPlan, solve_scorecard, turn_solver

__all__ = ["PAR", "GreedyAgent", "HeuristicAgent", "OptimalAgent"]


class _ScorecardAgent(BaseAgent):
    def __init__(self, rules: ScorecardRules, num_players: int = 1, seed: int | None = None) -> None:
        super().__init__(seed)
        self.rules = rules
        self.num_players = num_players
        self.categories = rules.categories

    def view(self, observation: np.ndarray) -> ScorecardView:
        view = decode(observation, self.rules, self.num_players)
        assert isinstance(view, ScorecardView)
        if len(view.dice) != 5:
            raise ValueError("the observation shows no dice: it is not this agent's turn")
        return view

    def turn_states(self, observations: np.ndarray) -> tuple[np.ndarray, ...]:
        """What :meth:`decide` reads of a :class:`ScorecardView`, for a batch of observations
        ``(B, size)`` at once: ``(filled-box mask, upper total, five-of-a-kind state z, roll index,
        throw)``, each ``(B,)``. ``ValueError`` for a row that shows no dice, as :meth:`view`."""
        obs = np.asarray(observations, dtype=np.float64)
        lay = layout(self.rules, self.num_players)
        if obs.ndim != 2 or obs.shape[1] != lay.size:
            raise ValueError(
                f"observations of shape {obs.shape} do not fit {self.rules.game} with "
                f"{self.num_players} players (expected (B, {lay.size}))"
            )
        onehot = obs[:, lay.slice("dice")].reshape(len(obs), 5, 6) > 0.5
        if not onehot.any(axis=2).all():
            raise ValueError("the observation shows no dice: it is not this agent's turn")
        roll = scorecard_batch_tables().code_roll[(onehot.argmax(axis=2) * 6 ** np.arange(5)).sum(axis=1)]
        throw_hot = obs[:, lay.slice("throw")]
        throw = np.where(throw_hot.max(axis=1) > 0.5, throw_hot.argmax(axis=1) + 1, 0)
        closed = obs[:, lay.slice("open")] <= 0.5
        mask = closed @ (1 << np.arange(closed.shape[1]))
        c = turn_solver(self.rules)
        five, shut = lay.read(obs, "points")[:, c.five].tolist(), closed[:, c.five].tolist()
        bonuses = lay.read(obs, "bonuses").tolist()
        z = np.array(  # the solver's five-of-a-kind state, row by row (TurnSolver.z_of)
            [c.z_of(p if s else None, b) for p, s, b in zip(five, shut, bonuses, strict=True)], dtype=np.int64
        )
        return mask, lay.read(obs, "upper_total"), z, roll, throw


def _choose(plan: TurnPlan, view: ScorecardView, legal: np.ndarray) -> int:
    """The best legal action under a turn plan (scoring preferred on ties)."""
    return _choose_at(plan, scorecard_tables().roll_index[view.dice], view.throw, legal)


def _choose_at(plan: TurnPlan, r: int, throw: int, legal: np.ndarray) -> int:
    """:func:`_choose` for the throw of roll index ``r``, the turn's ``throw``-th."""
    t = scorecard_tables()
    legal = np.asarray(legal)
    boxes = legal[legal >= N_REROLL_ACTIONS]
    box_vals = plan.box_values[boxes - N_REROLL_ACTIONS, r]
    i = int(np.argmax(box_vals)) if boxes.size else -1
    best_a, best_v = (int(boxes[i]), float(box_vals[i])) if i >= 0 else (-1, NEG)
    if throw - 1 < len(plan.keep_values):
        rerolls = legal[legal < N_REROLL_ACTIONS]
        if rerolls.size:
            keep_vals = plan.keep_values[throw - 1][t.reroll_keep[r, rerolls]]
            j = int(np.argmax(keep_vals))
            if keep_vals[j] > best_v + 1e-9:  # scoring wins ties
                best_a = int(rerolls[j])
    if best_a < 0:  # pragma: no cover - a legal box always has a finite value
        best_a = int(legal[-1])
    return best_a


class OptimalAgent(_ScorecardAgent):
    """Plays the exact solitaire optimum (maximum expected grand total)."""

    spec = "optimal"

    def __init__(
        self,
        rules: ScorecardRules,
        num_players: int = 1,
        seed: int | None = None,
        solution: ScorecardSolution | None = None,
    ) -> None:
        super().__init__(rules, num_players, seed)
        self.solution = solution if solution is not None else solve_scorecard(rules)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = check_mask(action_mask, self.rules)
        return self.decide(self.view(observation), legal)

    def decide(self, view: ScorecardView, legal: np.ndarray) -> int:
        """The optimal action for the decoded state ``view`` among the ``legal`` action indices."""
        plan = self.solution.plan(*self.solution.state(view.boxes, view.upper_total, view.five_kind_bonuses))
        return _choose(plan, view, legal)


#: Par value of each box: roughly what it yields when kept open (mean scores under good play).
PAR: dict[str, float] = {
    "ones": 2.1,
    "twos": 5.3,
    "threes": 8.6,
    "fours": 12.2,
    "fives": 15.7,
    "sixes": 19.2,
    "pair": 20.0,
    "two_pairs": 17.0,
    "three_of_a_kind": 21.7,
    "four_of_a_kind": 13.1,
    "full_house": 22.6,
    "small_straight": 29.5,
    "large_straight": 32.7,
    "spiffel": 16.9,
    "poker": 16.9,
    "yahtzee": 16.9,
    "chance": 22.0,
}
#: Weight of each point above or below "three of the face" while the upper bonus is in reach.
BONUS_PACE_WEIGHT = 0.6


class HeuristicAgent(_ScorecardAgent):
    """A careful human's strategy: par values, upper-bonus pace and expectation-maximizing holds."""

    spec = "heuristic"

    def __init__(self, rules: ScorecardRules, num_players: int = 1, seed: int | None = None) -> None:
        super().__init__(rules, num_players, seed)
        self._solver = turn_solver(rules)
        self._plans: OrderedDict[tuple[int, int, int], TurnPlan] = OrderedDict()

    def _evaluate(self, mask: int, u: int, z: int) -> np.ndarray:
        """Judgement (K, 252) of entering each throw in each box (``-inf``: closed or not legal)."""
        c, r = self._solver, self.rules
        T, ub = c.T, float(r.upper_bonus)
        out = np.full((c.k, 252), NEG)
        open_upper = [b for b in c.upper_idx if not mask >> b & 1]
        five_filled = bool(mask >> c.five & 1)
        bonus_due, joker, _ = c.status(z, five_filled)
        legal_five = c.five_kind_boxes(mask) if joker and c.flow.forced else None
        fk_extra = float(r.five_kind_bonus) if bonus_due else 0.0
        for b in range(c.k):
            if mask >> b & 1:
                continue
            name = self.categories[b]
            pts = c.normal[:, b].copy()
            if joker:
                pts[c.fk_rows] = c.joker_tab[c.fk_rows, b]
            val = pts - PAR[name]
            if c.upper[b] and u < T:
                f = UPPER_FACES[name]
                reach = u + pts + sum(5 * c.face[o] for o in open_upper if o != b)
                crossed = c.flow.upper_bonus_due(False, u + pts)  # u < T: not paid yet
                pace = np.where(reach >= T, BONUS_PACE_WEIGHT * (pts - 3 * f), 0.0)
                val = val + np.where(crossed, ub, pace)
            val[c.fk_rows] += fk_extra
            if legal_five is not None:
                val[c.fk_rows] = np.where(legal_five[:, b], val[c.fk_rows], NEG)
            out[b] = val
        return out

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = check_mask(action_mask, self.rules)
        return self.decide(self.view(observation), legal)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for each row, the observations read as arrays (:meth:`turn_states`)."""
        check_mask_width(action_masks, self.rules)
        states = self.turn_states(observations)
        return np.array(
            [
                _choose_at(self._plan(mask, u, z), r, throw, check_mask(m))
                for mask, u, z, r, throw, m in zip(*(s.tolist() for s in states), action_masks, strict=True)
            ],
            dtype=np.int64,
        )

    def decide(self, view: ScorecardView, legal: np.ndarray) -> int:
        """The heuristic's action for the decoded state ``view`` among the ``legal`` actions."""
        c = self._solver
        mask = sum(1 << i for i, v in enumerate(view.boxes) if v is not None)
        plan = self._plan(mask, view.upper_total, c.z_of(view.boxes[c.five], view.five_kind_bonuses))
        return _choose(plan, view, legal)

    def _plan(self, mask: int, upper_total: int, z: int) -> TurnPlan:
        """The turn plan of a card (memoized, the least recently used dropped past PLAN_CACHE_SIZE)."""
        c = self._solver
        key = (mask, min(upper_total, c.T), z)
        plan = self._plans.get(key)
        if plan is None:
            values = self._evaluate(*key)
            _, keep_values = c.widget(values.max(axis=0)[:, None])
            plan = TurnPlan(values, [kv[:, 0] for kv in keep_values], 0.0)
            self._plans[key] = plan
            if len(self._plans) > PLAN_CACHE_SIZE:
                self._plans.popitem(last=False)
        else:
            self._plans.move_to_end(key)
        return plan


# ---------------------------------------------------------------------- greedy
def _good(box: str, points: int, dice: tuple[int, ...]) -> bool:
    """Whether ``points`` in ``box`` are good enough to stop throwing."""
    if box in UPPER_FACES:
        return points >= 3 * UPPER_FACES[box]
    if box in ("full_house", "small_straight", "large_straight", "spiffel", "poker", "yahtzee"):
        return points > 0
    if box in ("three_of_a_kind", "four_of_a_kind", "pair", "two_pairs"):
        return points >= 20
    return points >= 24  # chance


def _hold_for(box: str, dice: tuple[int, ...]) -> list[int]:
    """The dice a player holds to chase ``box``."""
    counts = Counter(dice)
    by_count = sorted(counts, key=lambda f: (counts[f], f), reverse=True)
    if box in UPPER_FACES:
        return [f for f in dice if f == UPPER_FACES[box]]
    if box in ("three_of_a_kind", "four_of_a_kind", "spiffel", "poker", "yahtzee", "pair"):
        f = by_count[0]
        return [f] * counts[f]
    if box in ("two_pairs", "full_house"):
        held: list[int] = []
        for f in by_count[:2]:
            held += [f] * min(counts[f], 3 if box == "full_house" and not held else 2)
        return held
    if box in ("small_straight", "large_straight"):
        length = 4 if box == "small_straight" else 5
        faces = set(dice)
        best: list[int] = []
        for lo in range(1, 8 - length):
            run = [f for f in range(lo, lo + length) if f in faces]
            if len(run) > len(best):
                best = run
        return best
    return [f for f in dice if f >= 4]  # chance


class GreedyAgent(_ScorecardAgent):
    """Chases the box the dice score most in now; scores it once good (or out of throws)."""

    spec = "greedy"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = check_mask(action_mask, self.rules)
        view = self.view(observation)
        boxes = [int(a) - N_REROLL_ACTIONS for a in legal if a >= N_REROLL_ACTIONS]
        flow = scorecard_flow(self.rules)
        r = flow.roll_of(view.dice)
        points = {b: int(flow.entry_points(r, b, view.joker)) for b in boxes}
        target = max(boxes, key=lambda b: (points[b], -b))
        name = self.categories[target]
        can_throw = any(a < N_REROLL_ACTIONS for a in legal)
        if not can_throw or _good(name, points[target], view.dice):
            return N_REROLL_ACTIONS + target
        mask = hold_to_reroll_mask(view.dice, _hold_for(name, view.dice))
        if mask == 0 or not action_mask[mask]:
            return N_REROLL_ACTIONS + target
        return mask

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for a whole batch, from tables of its choices (:func:`_greedy_tables`)."""
        check_mask_width(action_masks, self.rules)
        obs = np.asarray(observations, dtype=np.float64)
        legal = np.asarray(action_masks) > 0
        if not legal.any(axis=1).all():
            raise ValueError("an action mask of the batch has no legal action")
        lay = layout(self.rules, self.num_players)
        hot = obs[:, lay.slice("dice")].reshape(-1, 5, 6)
        if (hot.max(axis=2) < 0.5).any():
            raise ValueError("an observation of the batch shows no dice: it is not this agent's turn")
        roll = scorecard_batch_tables().code_roll[(hot.argmax(axis=2) * 6 ** np.arange(5)).sum(axis=1)]
        joker = lay.flag(obs, "joker").astype(np.int64)
        points, good, hold = _greedy_tables(self.rules)
        boxes = legal[:, N_REROLL_ACTIONS:]
        target = np.argmax(np.where(boxes, points[joker, roll], -np.inf), axis=1)
        mask = hold[roll, target]
        rows = np.arange(len(obs))
        throw = legal[:, :N_REROLL_ACTIONS].any(axis=1) & ~good[joker, roll, target]
        throw &= (mask != 0) & legal[rows, mask]
        return np.where(throw, mask, N_REROLL_ACTIONS + target).astype(np.int64)


@cache
def _greedy_tables(rules: ScorecardRules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The greedy agent's choices per throw and box, from its own rules (:func:`_good`,
    :func:`_hold_for`): points ``(2, 252, K)`` (normal / joker), good ``(2, 252, K)`` and the
    re-throw mask that chases the box ``(252, K)``."""
    flow = scorecard_flow(rules)
    points = flow.scores.reshape(2, flow.rows, -1)[:, : flow.no_roll].astype(np.float64)
    rolls = flow.dice[: flow.no_roll]
    good = np.array(
        [
            [
                [_good(b, int(points[j, r, i]), d) for i, b in enumerate(rules.categories)]
                for r, d in enumerate(rolls)
            ]
            for j in range(2)
        ]
    )
    hold = np.array([[hold_to_reroll_mask(d, _hold_for(b, d)) for b in rules.categories] for d in rolls])
    return points, good, hold.astype(np.int64)
