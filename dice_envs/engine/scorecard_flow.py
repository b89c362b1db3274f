"""The game flow of the scorecard games, written once on arrays.

:class:`ScorecardFlow` holds one rule configuration's tables (:mod:`dice_envs.tables`) and the
rule functions of a turn. Every function is elementwise: arguments are numpy scalars or arrays
that broadcast, and only table lookups, ``&``, ``|``, ``^``, comparisons and arithmetic are
used, so the same code serves the batched engine on ``(N,)`` / ``(N, K)`` arrays, the one-game
:class:`~dice_envs.engine.scorecard_game.ScorecardGame` and the solver. Card rows are
``(..., K)`` integers, ``-1`` where a box is open; a throw is its index ``roll`` in
``scorecard_tables().rolls`` (:attr:`ScorecardFlow.no_roll`: no dice shown).

>>> from dice_envs.rules import make_rules
>>> flow = scorecard_flow(make_rules("dice_poker"))
>>> sixes = flow.roll_of((6, 6, 6, 6, 6))
>>> card = np.full(15, -1); card[flow.five] = 50           # poker box holds 50, the rest open
>>> due, joker = flow.joker_status(sixes, card[flow.five], 0)
>>> bool(due), bool(joker)
(True, True)
>>> np.flatnonzero(flow.forced_joker_boxes(card < 0, sixes)).tolist()   # the sixes box first
[5]
>>> int(flow.entry_points(sixes, 10, joker))                             # full house as a joker
25
>>> bool(flow.upper_bonus_due(False, 63)), bool(flow.upper_bonus_due(False, 64))
(False, True)
"""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

import numpy as np

from ..rules.scorecard import N_REROLL_ACTIONS, ScorecardRules, joker_applies
from ..tables import score_tables, scorecard_tables

__all__ = ["Entry", "ScorecardFlow", "advance_turn", "scorecard_flow"]


class Entry(NamedTuple):
    """What entering a throw in a box does (elementwise over games; see :meth:`ScorecardFlow.enter`)."""

    points: Any  # box points (joker scoring applied)
    joker: Any  # joker scoring applied
    bonus_due: Any  # a five-of-a-kind bonus is paid
    upper_total: Any  # upper total after the entry
    pays_upper_bonus: Any  # this entry pays the upper bonus
    gained: Any  # points + upper bonus + five-of-a-kind bonus


def advance_turn(current: Any, round_: Any, num_players: int, num_boxes: int) -> tuple[Any, Any, Any]:
    """``(next seat, round, game over)`` after seat ``current`` entered a box in ``round_``.

    >>> advance_turn(1, 4, 2, 13), advance_turn(0, 12, 1, 13)
    ((0, 5, False), (0, 13, True))
    """
    nxt = (current + 1) % num_players
    round_ = round_ + (nxt == 0)
    return nxt, round_, round_ == num_boxes


class ScorecardFlow:
    """The turn rules of one scorecard configuration on arrays (built once per rules by
    :func:`scorecard_flow`)."""

    def __init__(self, rules: ScorecardRules) -> None:
        ct, st = scorecard_tables(), score_tables(type(rules))
        self.rules = rules
        self.num_boxes = k = rules.num_boxes
        self.num_throws = int(rules.num_throws)  # type: ignore[attr-defined]
        self.n_actions = rules.n_actions
        #: Index of "no dice shown" (one past the 252 throws); ``rows`` throws in every table.
        self.no_roll = r = len(ct.rolls)
        self.rows = r + 1
        #: ``(rows, 5)`` faces of each throw (zeros for no dice); ``dice[roll]`` as tuples.
        self.roll_faces = np.concatenate([ct.rolls, np.zeros((1, 5), dtype=ct.rolls.dtype)])
        self.dice = [tuple(int(f) for f in row) for row in ct.rolls] + [()]
        self._roll_index = ct.roll_index
        #: ``(2 * rows, K)`` points: row ``joker * rows + roll`` (zeros for no dice).
        scores = np.zeros((2, self.rows, k), dtype=np.int32)
        scores[0, :r], scores[1, :r] = st.normal, st.joker
        self.scores = scores.reshape(2 * self.rows, k)
        #: :attr:`scores` where the box is an upper one, else 0 (what an entry adds to the upper total).
        self.upper_scores = self.scores * st.upper
        self.five = int(st.five_kind_box)
        self.upper_box = st.upper.copy()
        self.lower_box = ~st.upper
        self.box_ids = np.arange(k)
        self.five_kind = np.append(ct.five_kind, False)
        #: Upper box of each throw's (first) face, ``-1`` if none.
        self.face_box = np.append(st.face_box.astype(np.int64)[ct.rolls[:, 0].astype(np.int64)], -1)
        # row roll + last * rows: legal re-throw masks (none on the last throw or without dice)
        self.reroll_rows = np.zeros((2 * self.rows, N_REROLL_ACTIONS), dtype=bool)
        self.reroll_rows[:r] = ct.reroll_legal
        self.reroll_count = ct.reroll_count.astype(np.int64)
        self.code_roll = ct.code_roll.astype(np.int64)
        no_dice = np.zeros((1, N_REROLL_ACTIONS), dtype=np.int64)
        self.kept_code = np.concatenate([ct.kept_code.astype(np.int64), no_dice])
        limit = rules.five_kind_bonus_limit
        self.bonus_limit = np.iinfo(np.int32).max if limit is None else int(limit)
        # numpy integers on the left of ``*`` keep one-game arithmetic on numpy's fast scalar path;
        # the points of one five-of-a-kind bonus and of the upper bonus
        self._rows = np.int64(self.rows)
        self.five_kind_bonus = np.int64(rules.five_kind_bonus)
        self.upper_bonus = np.int64(rules.upper_bonus)
        self.threshold = int(rules.upper_bonus_threshold)
        #: Whether the joker forces the box order; whether its trigger looks at the face's upper box.
        self.forced = bool(rules.joker) and rules.joker_order == "forced"  # type: ignore[attr-defined]
        self.needs_face = rules.joker_trigger == "filled_upper"

    def __reduce__(self) -> tuple[Any, tuple[ScorecardRules]]:
        # copies and pickles of games share the one cached flow of their rules
        return scorecard_flow, (self.rules,)

    # ------------------------------------------------------------------ throws
    def roll_of(self, dice: tuple[int, ...]) -> int:
        """The throw index of five dice (any order), or :attr:`no_roll` for ``()``."""
        return self._roll_index[tuple(sorted(dice))] if dice else self.no_roll

    def first_throw(self, code: Any) -> Any:
        """The throw of five dice with face code ``code`` (see :func:`dice_envs.tables.face_code`)."""
        return self.code_roll[code]

    def rethrow(self, roll: Any, action: Any, fresh_code: Any) -> Any:
        """The throw after re-throwing ``action``'s dice of ``roll`` and seeing faces ``fresh_code``
        (the code of the ``reroll_count[action]`` new faces in throw order)."""
        return self.code_roll[self.kept_code[roll, action] + fresh_code]

    # ------------------------------------------------------------------ five of a kind and joker
    def five_kind_status(
        self, five_kind: Any, five_points: Any, bonuses: Any, face_filled: Any = True
    ) -> tuple[Any, Any]:
        """``(bonus_due, joker)`` of a throw: the one definition of the five-of-a-kind bonus.

        ``five_kind``: the throw is five of a kind; ``five_points``: the five-of-a-kind box
        (``-1`` open); ``bonuses``: bonuses paid so far; ``face_filled``: the upper box of the
        throw's face is filled (only read by the ``"filled_upper"`` trigger). A bonus is due when
        the box holds 50 and the bonus limit is not reached; the joker follows
        :func:`~dice_envs.rules.scorecard.joker_applies`.
        """
        due = five_kind & (five_points == 50) & (bonuses < self.bonus_limit)
        return due, joker_applies(self.rules, five_kind, five_points >= 0, due, face_filled)

    def face_filled(self, cards: np.ndarray, roll: Any) -> Any:
        """Whether the upper box of the throw's face is filled on card rows ``cards`` ``(..., K)``."""
        fb = self.face_box[roll]
        filled = np.take_along_axis(cards, np.maximum(fb, 0)[..., None], axis=-1)[..., 0] >= 0
        return filled & (fb >= 0)

    def joker_status(
        self, roll: Any, five_points: Any, bonuses: Any, cards: np.ndarray | None = None
    ) -> tuple[Any, Any]:
        """``(bonus_due, joker)`` for entering throw ``roll`` now (:meth:`five_kind_status`).

        ``cards`` (the card rows ``(..., K)``) is needed only when :attr:`needs_face`.
        """
        face = self.face_filled(cards, roll) if self.needs_face else True  # type: ignore[arg-type]
        return self.five_kind_status(self.five_kind[roll], five_points, bonuses, face)

    # ------------------------------------------------------------------ entering a box
    def entry_points(self, roll: Any, box: Any, joker: Any) -> Any:
        """Points of throw ``roll`` in ``box``, with joker scoring where ``joker``."""
        return self.scores[self._rows * joker + roll, box]

    def upper_bonus_due(self, paid: Any, upper_total: Any) -> Any:
        """Whether an entry pays the upper bonus: not paid yet and the upper total reached the threshold."""
        return (upper_total >= self.threshold) & (paid ^ np.True_)

    def enter(self, roll: Any, box: Any, joker: Any, bonus_due: Any, upper_total: Any, paid: Any) -> Entry:
        """Enter throw ``roll`` in ``box`` (legal, with its :meth:`joker_status`) on a card whose upper
        total is ``upper_total`` and upper bonus ``paid``: the points, bonuses and new upper total."""
        row = self._rows * joker + roll
        points = self.scores[row, box]
        upper = upper_total + self.upper_scores[row, box]
        newly = self.upper_bonus_due(paid, upper)
        gained = points + self.upper_bonus * newly + self.five_kind_bonus * bonus_due
        return Entry(points, joker, bonus_due, upper, newly, gained)

    def upper_total(self, cards: np.ndarray) -> Any:
        """Upper totals of card rows ``(..., K)``."""
        return (np.maximum(cards, 0) * self.upper_box).sum(axis=-1)

    def card_total(self, cards: np.ndarray, paid: Any, bonuses: Any) -> Any:
        """Grand totals: the boxes, the upper bonus and the five-of-a-kind bonuses."""
        return np.maximum(cards, 0).sum(axis=-1) + self.upper_bonus * paid + self.five_kind_bonus * bonuses

    # ------------------------------------------------------------------ legality
    def forced_joker_boxes(self, open_: np.ndarray, roll: Any) -> np.ndarray:
        """Boxes ``(..., K)`` a forced joker throw may go in, given the open boxes ``open_``: the
        upper box of its face if open, else any open lower box, else any open (upper) box."""
        fb = self.face_box[roll]
        face_open = np.take_along_axis(open_, np.maximum(fb, 0)[..., None], axis=-1)[..., 0] & (fb >= 0)
        lower = open_ & self.lower_box
        rest = np.where(lower.any(axis=-1, keepdims=True), lower, open_)
        return np.where(np.asarray(face_open)[..., None], self.box_ids == np.asarray(fb)[..., None], rest)

    def legal_boxes(self, open_: np.ndarray, roll: Any, joker: Any) -> np.ndarray:
        """Boxes ``(..., K)`` the throw may be entered in: the open ones, narrowed by the forced
        joker order where ``joker`` (only those rows are computed)."""
        if not self.forced:
            return open_
        if not isinstance(joker, np.ndarray) or joker.ndim == 0:  # one game
            return self.forced_joker_boxes(open_, roll) if joker else open_
        if not joker.any():
            return open_
        out = open_.copy()
        j = np.flatnonzero(joker)
        out[j] = self.forced_joker_boxes(open_[j], np.asarray(roll)[j])
        return out

    def action_mask(self, roll: Any, throw: Any, boxes: np.ndarray) -> np.ndarray:
        """Legal actions ``(..., n_actions)`` bool: the canonical re-throws while throws are left,
        then the ``boxes`` (:meth:`legal_boxes`). A finished game (no dice, no open box) has none."""
        return np.concatenate((self.reroll_mask(roll, throw), boxes), axis=-1)

    def reroll_mask(self, roll: Any, throw: Any) -> np.ndarray:
        """The legal re-throws ``(..., 32)``: the canonical non-empty masks while throws are left."""
        return self.reroll_rows[roll + self._rows * (throw >= self.num_throws)]


@cache
def scorecard_flow(rules: ScorecardRules) -> ScorecardFlow:
    """The (cached) :class:`ScorecardFlow` of ``rules``."""
    return ScorecardFlow(rules)
