"""Built-in players of the scorecard games (Spiffel, Dice Poker, Yahtzee).

* :class:`GreedyAgent` (``"greedy"``) — chases the best box of the moment: the open box the dice
  score most in now. It scores there when that is "good" (see :func:`_good`) or no throw is
  left; otherwise it holds the dice that serve that box and re-throws the rest.
* :class:`HeuristicAgent` (``"heuristic"``) — how a careful human plays: entering a throw is worth
  its points minus the box's par value (:data:`PAR`) plus an upper-bonus term; holds maximise the
  expectation of that judgement over the turn's remaining throws.
* :class:`OptimalAgent` (``"optimal"``) — the exact solitaire optimum from the solver's value
  table: per turn it solves the throw/hold tree against the values of the following states.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cache

import numpy as np

from agents.base import BaseAgent, check_mask, check_mask_width, legal_rows
from agents.players.actions import hold_to_reroll_mask
from agents.solver.plans import PlanCache, State, TurnPlan
from agents.solver.scorecard import NEG, ScorecardSolution, solve_scorecard, turn_solver
from dice_envs.encoding import ScorecardView, decode
from dice_envs.engine.scorecard_flow import scorecard_flow
from dice_envs.layouts import layout
from dice_envs.rules.scorecard import N_REROLL_ACTIONS, UPPER_FACES, ScorecardRules
from dice_envs.tables import scorecard_tables

__all__ = [
    "PAR",
    "GreedyAgent",
    "HeuristicAgent",
    "OptimalAgent",
    "PlanningAgent",
    "ScorecardAgent",
    "choose_actions",
    "plan_action_values",
]


class ScorecardAgent(BaseAgent):
    """A player of a scorecard game: reads its observations (:meth:`view` one at a time,
    :meth:`turn_states` a batch at once)."""

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
        roll = scorecard_tables().code_roll[(onehot.argmax(axis=2) * 6 ** np.arange(5)).sum(axis=1)]
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


class PlanningAgent(ScorecardAgent):
    """A scorecard agent that plays each turn by a :class:`TurnPlan` of its card: ``act`` decodes
    the observation (:meth:`decide`), ``act_batch`` reads the batch as arrays
    (:meth:`~ScorecardAgent.turn_states`), plans the new turn states together (:meth:`_plans`:
    each plan the very one its state alone gets) and chooses for all rows at once
    (:func:`choose_actions`)."""

    def __init__(self, rules: ScorecardRules, num_players: int = 1, seed: int | None = None) -> None:
        super().__init__(rules, num_players, seed)
        self._solver = turn_solver(rules)
        self._plan_cache = PlanCache(self._turn_plans)  # a bound method, so the agent pickles

    def _turn_plans(self, cards: list[State]) -> list[TurnPlan]:  # pragma: no cover
        """The turn plans of ``cards`` (filled-box mask, capped upper total, five-of-a-kind state)."""
        raise NotImplementedError

    def _plans(self, cards: Sequence[tuple[int, int, int]]) -> list[TurnPlan]:
        """The plan of each card ``(filled-box mask, upper total, five-of-a-kind state)`` (cached)."""
        c = self._solver
        return self._plan_cache.get([(int(m), int(min(u, c.T)), int(z)) for m, u, z in cards])

    def decide(self, view: ScorecardView, legal: np.ndarray) -> int:
        """The agent's action for the decoded state ``view`` among the ``legal`` action indices."""
        c = self._solver
        mask = sum(1 << i for i, v in enumerate(view.boxes) if v is not None)
        (plan,) = self._plans([(mask, view.upper_total, c.z_of(view.boxes[c.five], view.five_kind_bonuses))])
        row = np.zeros((1, self.rules.n_actions), dtype=bool)
        row[0, legal] = True
        roll = scorecard_tables().roll_index[view.dice]
        return int(choose_actions([plan], np.array([roll]), np.array([view.throw]), row)[0])

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = check_mask(action_mask, self.rules)
        return self.decide(self.view(observation), legal)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for each row (the same actions, whatever else is in the batch)."""
        check_mask_width(action_masks, self.rules)
        mask, u, z, roll, throw = self.turn_states(observations)
        plans = self._plans(list(zip(mask.tolist(), u.tolist(), z.tolist(), strict=True)))
        return choose_actions(plans, roll, throw, legal_rows(action_masks))


def plan_action_values(
    plans: Sequence[TurnPlan], roll: np.ndarray, throw: np.ndarray, legal: np.ndarray
) -> np.ndarray:
    """``(B, actions)``: the value of every action of row ``i`` under ``plans[i]`` for its throw of
    roll index ``roll[i]``, the turn's ``throw[i]``-th: an entry's box value, a re-throw's the
    value of the multiset it keeps (``-inf`` where ``legal`` ``(B, actions)`` is False)."""
    t = scorecard_tables()
    out = np.full(legal.shape, NEG)
    rows = zip(plans, np.asarray(roll).tolist(), np.asarray(throw).tolist(), strict=True)
    for i, (plan, r, th) in enumerate(rows):
        out[i, N_REROLL_ACTIONS:] = plan.box_values[:, r]
        if th - 1 < len(plan.keep_values):  # action 0 re-throws nothing: never legal
            out[i, 1:N_REROLL_ACTIONS] = plan.keep_values[th - 1][t.reroll_keep[r, 1:N_REROLL_ACTIONS]]
    return np.where(legal, out, NEG)


def choose_actions(
    plans: Sequence[TurnPlan], roll: np.ndarray, throw: np.ndarray, legal: np.ndarray
) -> np.ndarray:
    """The best legal action of each row under its plan (:func:`plan_action_values`): the first best
    box, unless the first best re-throw is worth more by over 1e-9 (scoring wins ties)."""
    values = plan_action_values(plans, roll, throw, legal)
    rows = np.arange(len(values))
    boxes = values[:, N_REROLL_ACTIONS:]
    no_value = np.isneginf(boxes.max(axis=1, initial=NEG))  # then the first legal box
    box = np.where(no_value, legal[:, N_REROLL_ACTIONS:].argmax(axis=1), boxes.argmax(axis=1))
    rethrow = values[:, :N_REROLL_ACTIONS].argmax(axis=1)
    out = np.where(values[rows, rethrow] > boxes[rows, box] + 1e-9, rethrow, N_REROLL_ACTIONS + box)
    last_legal = legal.shape[1] - 1 - legal[:, ::-1].argmax(axis=1)  # no legal box nor re-throw
    return np.where(legal[rows, out], out, last_legal).astype(np.int64)


class OptimalAgent(PlanningAgent):
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

    def _plans(self, cards: Sequence[tuple[int, int, int]]) -> list[TurnPlan]:
        t = self.solution.solver.T
        return self.solution.plans([(int(m), int(min(u, t)), int(z)) for m, u, z in cards])


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


class HeuristicAgent(PlanningAgent):
    """A careful human's strategy: par values, upper-bonus pace and expectation-maximizing holds."""

    spec = "heuristic"

    def __init__(self, rules: ScorecardRules, num_players: int = 1, seed: int | None = None) -> None:
        super().__init__(rules, num_players, seed)
        c = self._solver
        self._five_rows = np.isin(np.arange(c.normal.shape[0]), c.fk_rows)  # the five-of-a-kind throws
        self._faces5 = np.array([5 * c.face[o] for o in c.upper_idx], dtype=np.int64)  # upper boxes, 5 dice
        self._boxes = np.arange(c.k)
        self._points = np.ascontiguousarray(c.normal.T)  # (K, 252): a box's points, a row per box
        self._joker_points = np.ascontiguousarray(c.joker_tab.T)

    def _turn_plans(self, cards: list[State]) -> list[TurnPlan]:
        """The turn plans of ``cards`` (filled-box mask, capped upper total, five-of-a-kind state)."""
        return self._solver.turn_plans(self._evaluate(np.array(cards)))

    def _evaluate(self, cards: np.ndarray) -> np.ndarray:
        """Judgement ``(n, K, 252)`` of entering each throw in each box, for ``cards`` ``(n, 3)``
        of (filled-box mask, capped upper total, five-of-a-kind state); ``-inf``: closed or not
        legal. Each card's numbers are the same whatever else is in the batch."""
        c, r = self._solver, self.rules
        T, ub = c.T, float(r.upper_bonus)
        masks, u, z = cards[:, 0], cards[:, 1], cards[:, 2]
        closed = (masks[:, None] >> self._boxes) & 1 == 1  # (n, K)
        five = c.five_kind_state(~closed, z)
        bonus_due, joker = five.bonus_due, five.joker
        u_list = u.tolist()
        n_rolls, fk = c.normal.shape[0], c.fk_rows
        any_joker, some_due = bool(joker.any()), bool(bonus_due.any())
        on_joker = joker[:, None] & self._five_rows if any_joker else None  # (n, 252): jokers' throws
        fk_extra = np.where(bonus_due, float(r.five_kind_bonus), 0.0)[:, None] if some_due else None
        legal_five = None
        if c.flow.forced and any_joker:
            legal_five = np.where(joker[:, None, None], c.five_kind_boxes(~closed), True)
        below = (u < T)[:, None]
        some_below, all_below = any(x < T for x in u_list), all(x < T for x in u_list)
        if some_below:  # 5 x face of the open upper boxes
            open_upper = ~closed[:, c.upper_idx] @ self._faces5
        out = np.empty((len(cards), c.k, n_rolls))
        for b in np.flatnonzero(~closed.all(axis=0)).tolist():  # the boxes open on some card
            name = self.categories[b]
            pts = self._points[b, None]
            if on_joker is not None:
                pts = np.where(on_joker, self._joker_points[b], pts)
            val = out[:, b]  # (n, 252), written in place
            np.subtract(pts, PAR[name], out=val)
            if c.upper[b] and some_below:  # the bonus, or its pace while in reach
                f = UPPER_FACES[name]
                raw = u[:, None] + pts
                reach = raw + (open_upper - 5 * c.face[b])[:, None]  # the other open ones at 5 dice
                crossed = c.flow.upper_bonus_due(False, raw)  # u < T: not paid yet
                bonus = np.where(crossed, ub, np.where(reach >= T, BONUS_PACE_WEIGHT * (pts - 3 * f), 0.0))
                if all_below:
                    val += bonus
                else:
                    val[:] = np.where(below, val + bonus, val)
            if fk_extra is not None:
                val[:, fk] += fk_extra
            if legal_five is not None:
                val[:, fk] = np.where(legal_five[:, :, b], val[:, fk], NEG)
        out[closed] = NEG
        return out


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


class GreedyAgent(ScorecardAgent):
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
        legal = legal_rows(action_masks)
        lay = layout(self.rules, self.num_players)
        hot = obs[:, lay.slice("dice")].reshape(-1, 5, 6)
        if (hot.max(axis=2) < 0.5).any():
            raise ValueError("an observation of the batch shows no dice: it is not this agent's turn")
        roll = scorecard_tables().code_roll[(hot.argmax(axis=2) * 6 ** np.arange(5)).sum(axis=1)]
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
