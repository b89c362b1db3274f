"""The batched Farkle engine: N games stepped at once by :mod:`dice_envs.engine.farkle_turn`.

The turn flow is :mod:`dice_envs.engine.farkle_turn`'s rule functions on arrays of one value
per game (the one-game :class:`~dice_envs.engine.farkle_game.FarkleGame` calls them on one
game). Like that game it plays opening throws, farkles and bankruptcies by itself, so a game
that is not done always awaits a decision of ``current``.

==================  ========  ==========================================================
array               shape     meaning
==================  ========  ==========================================================
``roll``            (N,)      index of the current sorted throw in
                              :func:`~dice_envs.tables.farkle_turn_tables` (``no_throw``
                              once the game is done)
``turn_total``      (N,)      points set aside this turn
``first_throw``     (N,)      the current throw is the turn's first
``banked``          (N, P)    banked totals
``turns``           (N, P)    turns taken
``current``         (N,)      seat to act
``final_round_by``  (N,)      seat that reached the target first (-1: nobody yet)
``done``            (N,)      game over (``truncated`` too when ``max_turns`` ended it)
``to_throw``        (N,)      dice of the pending throw (0: a decision awaits, or the end)
``last_rewards``    (N, P)    each seat's change of banked total in the last step
==================  ========  ==========================================================

>>> from dice_envs.rules import FarkleRules
>>> eng = FarkleEngine(FarkleRules(), num_games=4, seed=0)
>>> eng.action_masks().shape
(4, 128)
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ..layouts import layout
from ..rules.farkle import BANK_FLAG, NUM_DICE, FarkleRules
from . import farkle_turn as turn
from .common import BatchedEngine
from .farkle_game import FarkleGame

__all__ = [
    "STATE_FIELDS",
    "FarkleEngine",
    "apply_decisions",
    "apply_throws",
    "end_turns",
    "fresh_rows",
    "legal_masks",
    "throw_observations",
]

#: The state arrays of a row, the engine's and the forward batch's (see the table above; the last
#: two: the dice of the pending throw and each seat's change of banked total in the last step).
STATE_FIELDS = (*FarkleGame.ROW_FIELDS, "to_throw", "last_rewards")


def fresh_rows(rules: FarkleRules, num_players: int, n: int) -> dict[str, np.ndarray]:
    """The state arrays of ``n`` fresh games, each awaiting seat 0's opening throw of six dice
    (every game of any ``rules`` starts alike)."""
    p = num_players
    return {
        "roll": np.full(n, turn.farkle_turn_tables().no_throw, dtype=np.int64),
        "turn_total": np.zeros(n, dtype=np.int64),
        "first_throw": np.ones(n, dtype=bool),
        "banked": np.zeros((n, p), dtype=np.int64),
        "turns": np.zeros((n, p), dtype=np.int64),
        "current": np.zeros(n, dtype=np.int64),
        "final_round_by": np.full(n, -1, dtype=np.int64),
        "done": np.zeros(n, dtype=bool),
        "truncated": np.zeros(n, dtype=bool),
        "to_throw": np.full(n, NUM_DICE, dtype=np.int64),
        "last_rewards": np.zeros((n, p), dtype=np.int64),
    }


# The two halves of a step, on the state arrays of ``s`` (the engine, or a forward batch: anything
# with ``rules``, ``num_players`` and the arrays of :data:`STATE_FIELDS`), for the rows ``g``.


def legal_masks(s: Any, g: np.ndarray | slice) -> np.ndarray:
    """Legal decisions of rows ``g`` (an index array or a slice), ``(n, 128)`` bool (none where
    no dice are shown)."""
    return turn.legal_masks(turn.farkle_turn_tables(), s.roll[g], s.turn_total[g], s.rules.bank_minimum)


def _seat_of(s: Any, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The seats to act in rows ``g`` and their flat indices ``g * P + seat`` into the ``(N, P)``
    arrays (one gather each instead of a two-axis one: the hot path of a step)."""
    p = s.current[g]
    return p, g * s.num_players + p


def end_turns(s: Any, g: np.ndarray) -> None:
    """End the turns of rows ``g`` (:func:`~dice_envs.engine.farkle_turn.end_turn`): the next
    seat's six dice are pending, or the game is over (no dice shown)."""
    if not g.size:
        return
    r = s.rules
    p, at = _seat_of(s, g)
    turns = s.turns.reshape(-1)[at] + 1
    s.turns.reshape(-1)[at] = turns
    fr, done, truncated, nxt = turn.end_turn(
        p, s.banked.reshape(-1)[at], turns, s.final_round_by[g], s.num_players, r.target, r.max_turns
    )
    s.turn_total[g] = 0
    s.final_round_by[g], s.done[g], s.truncated[g], s.current[g] = fr, done, truncated, nxt
    s.roll[g] = turn.farkle_turn_tables().no_throw
    s.to_throw[g] = NUM_DICE - NUM_DICE * done
    s.first_throw[g[~done]] = True


def _add_points(s: Any, at: np.ndarray, points: np.ndarray) -> None:
    """Add ``points`` to the banked totals and the rewards at flat indices ``at``."""
    s.banked.reshape(-1)[at] += points
    s.last_rewards.reshape(-1)[at] += points


def apply_decisions(s: Any, g: np.ndarray, actions: np.ndarray) -> None:
    """The afterstates of legal ``actions`` (not checked) of rows ``g``; no die moves.

    The dice set aside add their points to the turn total; banking adds it to the banked total
    (and to ``last_rewards``) and ends the turn (:func:`end_turns`), throwing on leaves the dice
    left pending (all six after hot dice).
    """
    end_turns(s, _decide(s, g, actions))


def _decide(s: Any, g: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """:func:`apply_decisions` but for ending the turns: the rows that banked, whose turns end."""
    mask, bank = turn.split_action(actions)
    tt, left = turn.set_aside(turn.farkle_turn_tables(), s.roll[g], s.turn_total[g], mask)
    s.turn_total[g] = tt
    banked = g[bank]
    if banked.size:
        _add_points(s, _seat_of(s, banked)[1], tt[bank])
        on = ~bank
        g, left = g[on], left[on]
    s.first_throw[g] = False
    s.roll[g] = turn.farkle_turn_tables().no_throw
    s.to_throw[g] = left
    return banked


def apply_throws(s: Any, g: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Rows ``g`` (each with dice pending) after their throw shows the faces of ``codes`` (the
    code of the ``to_throw`` faces in throw order, :func:`~dice_envs.engine.dice.face_codes`;
    ``outcome_code_table()[k, j]`` for outcome ``j``). A throw that scores nothing is a farkle:
    the turn total is lost, on the turn's first throw the banked total too under bankruptcy
    (the change added to ``last_rewards``), and the turn ends (:func:`end_turns`). Returns the
    rows that farkled."""
    farkled = _throw(s, g, codes)
    end_turns(s, farkled)
    return farkled


def _throw(s: Any, g: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """:func:`apply_throws` but for ending the turns: the rows that farkled, whose turns end."""
    t = turn.farkle_turn_tables()
    roll = turn.throw(t, s.to_throw[g], codes)
    s.roll[g] = roll
    s.to_throw[g] = 0
    farkled = g[turn.is_farkle(t, roll)]
    if farkled.size:
        at = _seat_of(s, farkled)[1]
        old = s.banked.reshape(-1)[at]
        _add_points(s, at, turn.farkle_banked(old, s.first_throw[farkled], s.rules.bankruptcy) - old)
    return farkled


class FarkleEngine(BatchedEngine):
    """``num_games`` Farkle games of ``num_players`` seats, stepped together (see
    :class:`~dice_envs.engine.common.BatchedEngine`). A step is the halves,
    :func:`apply_decisions` then :func:`apply_throws` with the dice stream's faces until every
    game awaits a decision or is over (the dice thrown on first, then the next turns' openings);
    the turns that end in the step (banked or farkled) end together, as one :func:`end_turns`.
    """

    family = "farkle"
    rules_class = FarkleRules
    game_class = FarkleGame
    _fresh_rows = staticmethod(fresh_rows)
    _legal_masks = staticmethod(legal_masks)

    @property
    def totals(self) -> np.ndarray:
        """Banked totals ``(N, P)`` (the score of a Farkle game)."""
        return self.banked

    def dice_faces(self, games: np.ndarray | None = None) -> list[tuple[int, ...]]:
        """The sorted dice of each game (``()`` once a game is done)."""
        return [self._t.faces[r] for r in self.roll[self._games(games)].tolist()]

    # ------------------------------------------------------------------ transitions
    def _open_turns(self, g: np.ndarray) -> None:
        """Throw the six dice of the games ``g`` (each awaiting a turn's opening throw), again
        after each farkle, until each of them needs a decision or is over."""
        while g.size:
            farkled = apply_throws(self, g, self.dice.codes(g, NUM_DICE))
            g = farkled[~self.done[farkled]]

    def _step(self, a: np.ndarray, g: np.ndarray) -> None:
        # the halves, with the turns that end (banked, farkled) ended together, as the dice
        # stream's order asks: the dice thrown on first, then the next turns' opening throws
        ended = _decide(self, g, a)
        if ended.size < g.size:
            on = g[a < BANK_FLAG]
            farkled = _throw(self, on, self.dice.codes(on, self.to_throw[on]))
            ended = np.concatenate([ended, farkled]) if farkled.size else ended
        end_turns(self, ended)
        self._open_turns(ended[~self.done[ended]])

    # ------------------------------------------------------------------ observations
    def _build_tables(self) -> None:
        """The turn tables and the per-throw rows of :func:`throw_observations`; the other fields
        are written by :meth:`observe`."""
        self._t = turn.farkle_turn_tables()
        lay = self._layout = layout(self.rules, self.num_players)
        self.observation_size = lay.size
        self._obs_dice = throw_observations(self.rules, self.num_players)
        others = lay.others("banked")
        self._others = slice(others[0].start, others[-1].start + 1) if others else None
        assert not others or self._others.stop - self._others.start == len(others)
        self._seat = lay.field("seat").start

    def observe(self, seat: int | np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
        """Observations of ``seat`` (one seat, or one per game), ``(n, observation_size)`` float32,
        byte-identical to :func:`dice_envs.encoding.encode` of the equivalent scalar state; every
        field is written where :func:`dice_envs.layouts.layout` puts it."""
        lay, np_ = self._layout, self.num_players
        if games is None and np.ndim(seat) == 0:  # fast path: views, one seat
            g: Any = slice(None)
            s = int(seat)
            own = self.banked[:, s]
            turns = self.turns[:, s]
            others = self.banked[:, [(s + i) % np_ for i in range(1, np_)]] if np_ > 1 else None
        else:
            g = self._all if games is None else np.asarray(games, dtype=np.int64)
            s = np.broadcast_to(np.asarray(seat, dtype=np.int64), (g.size,))
            own = self.banked[g, s]
            turns = self.turns[g, s]
            others = None
            if np_ > 1:
                others = self.banked[g[:, None], (s[:, None] + np.arange(1, np_)) % np_]
        active = self.current[g] == s  # a done game shows no dice anyway (``no_throw``)
        obs = np.take(self._obs_dice, np.where(active, self.roll[g], self._t.no_throw), axis=0)
        active &= ~self.done[g]
        obs[:, lay.index("turn_total")] = np.where(active, self.turn_total[g], 0) / lay.scale("turn_total")
        obs[:, lay.index("first_throw")] = active & self.first_throw[g]
        obs[:, lay.index("banked")] = own / lay.scale("banked")
        obs[:, lay.index("turns")] = turns / lay.scale("turns")
        obs[:, lay.index("final_round")] = self.final_round_by[g] >= 0
        obs[np.arange(len(obs)), self._seat + s] = 1.0
        if others is not None:
            obs[:, self._others] = others / lay.scale("banked")
            obs[:, lay.index("lead")] = (others.max(axis=1) - own) / lay.scale("lead")
        return obs


@lru_cache(maxsize=64)
def throw_observations(rules: FarkleRules, num_players: int) -> np.ndarray:
    """Per throw index of :func:`~dice_envs.tables.farkle_turn_tables` (the last row: no dice),
    the observation with only the fields of the throw filled (``dice``, ``face_counts``,
    ``n_dice``). Built once per layout, read-only; the batched engine and
    :func:`dice_envs.encoding.encode` both start from it.
    """
    lay = layout(rules, num_players)
    t = turn.farkle_turn_tables()
    feats = np.zeros((t.no_throw + 1, lay.size), dtype=np.float32)
    dice, counts = lay.field("dice").start, lay.field("face_counts").start
    for ri, faces in enumerate(t.faces):
        for i, f in enumerate(faces):
            feats[ri, dice + i * 6 + f - 1] = 1.0
            feats[ri, counts + f - 1] += 1.0 / lay.scale("face_counts")
        if faces:
            feats[ri, lay.index("n_dice")] = len(faces) / lay.scale("n_dice")
    feats.flags.writeable = False
    return feats
