"""The batched scorecard engine: N games of Spiffel, Dice Poker or Yahtzee stepped at once.

The flow is :mod:`dice_envs.engine.scorecard_flow`'s rule functions on whole batches (the
one-game :class:`~dice_envs.engine.scorecard_game.ScorecardGame` calls them on one game);
observations are written field by field from :func:`dice_envs.layouts.layout`.

================  =============  ============================================================
array             shape          meaning
================  =============  ============================================================
``roll``          (N,)           index of the sorted five dice in ``scorecard_tables().rolls``
                                 (``flow.no_roll`` once done)
``throw``         (N,)           throw number of the current turn (1..T; 0 once done)
``cards``         (N, P, K)      box points, ``-1`` where the box is open
``upper``         (N, P)         upper total
``upper_paid``    (N, P)         upper bonus earned
``bonuses``       (N, P)         five-of-a-kind bonuses earned
``totals``        (N, P)         grand totals
``current``       (N,)           seat to act
``round``         (N,)           round (0-based; K once done)
``done``          (N,)           game over
``pending``       (N,)           re-throw action whose dice are pending (``-1``: none)
``to_throw``      (N,)           dice of the pending throw (0: a decision awaits, or the end)
``last_rewards``  (N, P)         points each seat gained in the last step
================  =============  ============================================================

>>> from dice_envs.rules import SpiffelRules
>>> eng = ScorecardEngine(SpiffelRules(), num_games=3, seed=0)
>>> eng.action_masks().shape
(3, 45)
>>> rewards = eng.step(np.full(3, 32 + 12))  # everyone scores chance
>>> bool((rewards[:, 0] == eng.totals[:, 0]).all()), eng.round.tolist()
(True, [1, 1, 1])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..layouts import layout
from ..rules.scorecard import N_REROLL_ACTIONS, ScorecardRules
from .common import BatchedEngine
from .scorecard_flow import advance_turn, scorecard_flow
from .scorecard_game import ScorecardGame

__all__ = [
    "STATE_FIELDS",
    "ScorecardEngine",
    "apply_decisions",
    "apply_throws",
    "fresh_rows",
    "joker_status",
    "legal_masks",
]

#: The state arrays of a row, the engine's and the forward batch's (see the table above; the last
#: three: the re-throw action awaiting its dice or ``-1``, the dice of the pending throw and the
#: points each seat gained in the last step).
STATE_FIELDS = (*ScorecardGame.ROW_FIELDS, "pending", "to_throw", "last_rewards")

_FIVE = 5


def _f32(values: np.ndarray) -> np.ndarray:
    """Exact-as-encode scaling: float64 arithmetic, then one rounding to float32 (assigning a
    float64 array into a float32 observation slice rounds the same way)."""
    return np.asarray(values, dtype=np.float64).astype(np.float32)


def fresh_rows(rules: ScorecardRules, num_players: int, n: int) -> dict[str, np.ndarray]:
    """The state arrays of ``n`` fresh games, each awaiting its opening throw of five dice."""
    flow, p = scorecard_flow(rules), num_players
    return {
        "roll": np.full(n, flow.no_roll, dtype=np.int64),
        "throw": np.zeros(n, dtype=np.int64),
        "cards": np.full((n, p, rules.num_boxes), -1, dtype=np.int32),
        "upper": np.zeros((n, p), dtype=np.int32),
        "upper_paid": np.zeros((n, p), dtype=bool),
        "bonuses": np.zeros((n, p), dtype=np.int32),
        "totals": np.zeros((n, p), dtype=np.int32),
        "current": np.zeros(n, dtype=np.int64),
        "round": np.zeros(n, dtype=np.int64),
        "done": np.zeros(n, dtype=bool),
        "pending": np.full(n, -1, dtype=np.int64),
        "to_throw": np.full(n, _FIVE, dtype=np.int64),
        "last_rewards": np.zeros((n, p), dtype=np.int32),
    }


# The two halves of a step, on the state arrays of ``s`` (the engine, or a forward batch: anything
# with ``flow``, ``num_players`` and the arrays of :data:`STATE_FIELDS`), for the rows ``g``.


def joker_status(s: Any, g: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(bonus_due, joker)`` for seats ``p`` of rows ``g`` entering their current throw now."""
    f = s.flow
    cards = s.cards[g, p] if f.needs_face else None
    return f.joker_status(s.roll[g], s.cards[g, p, f.five], s.bonuses[g, p], cards)


def legal_masks(s: Any, g: np.ndarray | slice) -> np.ndarray:
    """Legal decisions of rows ``g`` (an index array or a slice), ``(n, n_actions)`` bool (none
    where no dice are shown)."""
    if s.num_players == 1:
        p: Any = 0
    else:
        g = np.arange(len(s.done))[g] if isinstance(g, slice) else g
        p = s.current[g]
    boxes = s.cards[g, p] < 0
    roll = s.roll[g]
    if s.flow.forced:
        boxes = s.flow.legal_boxes(boxes, roll, joker_status(s, g, p)[1])
    return s.flow.action_mask(roll, s.throw[g], boxes)


def apply_decisions(s: Any, g: np.ndarray, actions: np.ndarray) -> None:
    """The afterstates of legal ``actions`` (not checked) of rows ``g``; no die moves.

    A re-throw leaves its dice pending (``pending``, ``to_throw``); a box entry scores (joker and
    bonuses included, the points added to ``last_rewards``) and passes the turn: the next seat's
    five dice are pending, or the game is over (``done``, no dice shown).
    """
    f, a = s.flow, actions
    reroll = a < N_REROLL_ACTIONS
    if reroll.any():
        r = g[reroll]
        s.pending[r] = a[reroll]
        s.to_throw[r] = f.reroll_count[a[reroll]]
        if reroll.all():
            return
        g, a = g[~reroll], a[~reroll]
    p, box = s.current[g], a - N_REROLL_ACTIONS
    due, joker = joker_status(s, g, p)
    e = f.enter(s.roll[g], box, joker, due, s.upper[g, p], s.upper_paid[g, p])
    s.cards[g, p, box] = e.points
    s.upper[g, p] = e.upper_total
    s.upper_paid[g, p] |= e.pays_upper_bonus
    s.bonuses[g, p] += due
    s.totals[g, p] += e.gained
    s.last_rewards[g, p] += e.gained
    s.current[g], s.round[g], over = advance_turn(p, s.round[g], s.num_players, f.num_boxes)
    s.done[g] = over
    s.roll[g], s.throw[g] = f.no_roll, 0  # ``pending`` is -1 already: a decision has no dice pending
    s.to_throw[g] = _FIVE - _FIVE * over


def apply_throws(s: Any, g: np.ndarray, codes: np.ndarray) -> None:
    """Rows ``g`` (each with dice pending) after their throw shows the faces of ``codes`` (the
    code of the ``to_throw`` fresh faces in throw order, :func:`~dice_envs.engine.dice.face_codes`;
    ``outcome_code_table()[k, j]`` for outcome ``j``): a re-throw keeps the held dice and counts
    a throw, a turn's opening throw is throw 1."""
    f, pending = s.flow, s.pending[g]
    rethrow = pending >= 0
    if rethrow.all():
        s.roll[g] = f.rethrow(s.roll[g], pending, codes)
        s.throw[g] += 1
    elif not rethrow.any():
        s.roll[g] = f.first_throw(codes)
        s.throw[g] = 1
    else:
        fresh = f.first_throw(codes)
        s.roll[g] = np.where(rethrow, f.rethrow(s.roll[g], np.maximum(pending, 0), codes), fresh)
        s.throw[g] = np.where(rethrow, s.throw[g] + 1, 1)
    s.pending[g] = -1
    s.to_throw[g] = 0


class ScorecardEngine(BatchedEngine):
    """``num_games`` scorecard games of ``num_players`` seats, stepped together (see
    :class:`~dice_envs.engine.common.BatchedEngine`). A step is :func:`apply_decisions` then
    :func:`apply_throws` with the dice stream's faces: the re-throws first, then the next turns'
    opening throws.
    """

    family = "scorecard"
    rules_class = ScorecardRules
    game_class = ScorecardGame
    _fresh_rows = staticmethod(fresh_rows)
    _legal_masks = staticmethod(legal_masks)

    @property
    def truncated(self) -> np.ndarray:
        """Scorecard games are never truncated (all False)."""
        return np.zeros(self.num_games, dtype=bool)

    def dice_faces(self, games: np.ndarray | None = None) -> np.ndarray:
        """The sorted dice of each game, ``(n, 5)`` (zeros once a game is done)."""
        return self.flow.roll_faces[self.roll[self._games(games)]]

    # ------------------------------------------------------------------ transitions
    def _open_turns(self, g: np.ndarray) -> None:
        apply_throws(self, g, self.dice.codes(g, _FIVE))

    def joker_status(self, games: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(bonus_due, joker)`` for entering the current dice now (cf. ``ScorecardGame``)."""
        g = self._games(games)
        return joker_status(self, g, self.current[g])

    def _step(self, a: np.ndarray, g: np.ndarray) -> None:
        apply_decisions(self, g, a)
        # the dice stream's order: the re-throws first, then the next turns' opening throws
        reroll = a < N_REROLL_ACTIONS
        rethrown = g[reroll] if not reroll.all() else g
        if rethrown.size:
            apply_throws(self, rethrown, self.dice.codes(rethrown, self.to_throw[rethrown]))
        if rethrown.size < g.size:
            entered = g[~reroll]
            opening = entered[~self.done[entered]]
            if opening.size:
                self._open_turns(opening)

    # ------------------------------------------------------------------ observations
    def _build_tables(self) -> None:
        """The flow, and row tables of :func:`dice_envs.encoding.encode`'s fields (same float32
        arithmetic)."""
        self.num_boxes = self.rules.num_boxes
        self.num_throws = self.rules.num_throws  # type: ignore[attr-defined]
        f = self.flow = scorecard_flow(self.rules)
        lay = self._layout = layout(self.rules, self.num_players)
        t, rows = self.num_throws, f.rows
        dice_f, counts_f, throw_f = lay.field("dice"), lay.field("face_counts"), lay.field("throw")
        # row throw * rows + roll: the dice, face counts and throw one-hot (row no_roll: no dice)
        width = throw_f.start + throw_f.size
        head = np.zeros((t + 1, rows, width), dtype=np.float32)
        for ri, roll in enumerate(f.dice):
            for i, face in enumerate(roll):
                head[:, ri, dice_f.start + i * 6 + face - 1] = 1.0
                head[:, ri, counts_f.start + face - 1] += np.float32(1.0 / counts_f.scale)
        head[np.arange(1, t + 1), :, throw_f.start + np.arange(t)] = 1.0
        head[:, f.no_roll, throw_f.slice] = 0.0
        assert dice_f.start == 0 and counts_f.start == dice_f.size and throw_f.start == counts_f.start + 6
        self._obs_head = head.reshape(-1, width)
        # row joker * rows + roll: points the dice would score (row no_roll: none)
        self._obs_potential = _f32(f.scores / lay.scale("potential"))
        self.observation_size = lay.size

    def observe(self, seat: int | np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
        """Observations of ``seat`` (one seat, or one per game), ``(n, observation_size)`` float32,
        byte-identical to :func:`dice_envs.encoding.encode` of the equivalent scalar state."""
        g = slice(None) if games is None else np.asarray(games, dtype=np.int64)
        n = self.num_games if games is None else g.size  # type: ignore[union-attr]
        f, lay, rows = self.flow, self._layout, self.flow.rows
        if np.ndim(seat) or games is not None:
            seat = np.broadcast_to(np.asarray(seat, dtype=np.int64), (n,))
            gi = self._all if games is None else g
        else:
            seat = int(seat)
            gi = g
        obs = np.empty((n, self.observation_size), dtype=np.float32)
        active = ~self.done[g] & (self.current[g] == seat)
        roll = np.where(active, self.roll[g], f.no_roll)
        head = self.throw[g] * rows + roll
        np.take(self._obs_head, head, axis=0, out=obs[:, : self._obs_head.shape[1]])
        card = self.cards[gi, seat]
        obs[:, lay.slice("open")] = card < 0
        obs[:, lay.slice("points")] = np.maximum(card, 0) / lay.scale("points")  # float64, then one rounding
        five = card[:, f.five]
        bonuses = self.bonuses[gi, seat]
        bonus_due, joker = f.joker_status(roll, five, bonuses, card)
        obs[:, lay.index("upper_total")] = self.upper[gi, seat] / lay.scale("upper_total")
        obs[:, lay.index("upper_bonus")] = self.upper_paid[gi, seat]
        obs[:, lay.index("bonuses")] = bonuses / lay.scale("bonuses")
        obs[:, lay.index("five_kind_50")] = five == 50
        obs[:, lay.index("bonus_due")] = bonus_due
        obs[:, lay.index("joker")] = joker
        obs[:, lay.index("round")] = self.round[g] / lay.scale("round")
        obs[:, lay.index("total")] = self.totals[gi, seat] / lay.scale("total")
        np.take(self._obs_potential, joker * rows + roll, axis=0, out=obs[:, lay.slice("potential")])
        others = zip(lay.others("open"), lay.others("upper_total"), lay.others("total"), strict=True)
        for i, (open_f, upper_f, total_f) in enumerate(others, start=1):
            other = (seat + i) % self.num_players
            obs[:, open_f.slice] = self.cards[gi, other] < 0
            obs[:, upper_f.start] = self.upper[gi, other] / upper_f.scale
            obs[:, total_f.start] = self.totals[gi, other] / total_f.scale
        return obs
