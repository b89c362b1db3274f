"""The batched Farkle engine: N games stepped at once by :mod:`dice_envs.engine.farkle_turn`.

The turn flow — points of the dice set aside, banking only above ``bank_minimum``, hot dice,
a farkle losing the turn total, bankruptcy on a turn's first throw, the final round once someone
reaches ``target``, truncation after ``max_turns`` — is the rule functions of
:mod:`dice_envs.engine.farkle_turn`, called here on arrays of one value per game (the scalar
:class:`~dice_envs.engine.farkle_game.FarkleGame` calls the same functions on one game). Like
the scalar game it advances by itself through opening throws, farkles and bankruptcies, so a
game that is not done always awaits a decision of ``current``.

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
from ..rules.config import ConfigError, check_int
from ..rules.farkle import NUM_DICE, FarkleRules
from . import farkle_turn as turn
from .dice import DiceStream, RandomDice
from .farkle_game import FarkleGame

__all__ = ["FarkleEngine", "throw_observations"]


class FarkleEngine:
    """``num_games`` Farkle games of ``num_players`` seats, stepped together.

    Methods take an optional index array ``games`` (default: all games).
    """

    family = "farkle"

    def __init__(
        self,
        rules: FarkleRules,
        num_games: int,
        num_players: int = 1,
        dice: DiceStream | None = None,
        seed: int | None = None,
    ) -> None:
        if not isinstance(rules, FarkleRules):
            raise ConfigError(f"rules must be a FarkleRules instance, got {type(rules).__name__}")
        check_int("num_games", num_games, 1, 1 << 24)
        check_int("num_players", num_players, 1, 8)
        self.rules = rules
        self.num_games, self.num_players = int(num_games), int(num_players)
        self.n_actions = rules.n_actions
        self.dice: DiceStream = dice if dice is not None else RandomDice(seed)
        self._t = turn.farkle_turn_tables()
        self._all = np.arange(self.num_games)
        self._build_observation_tables()

        n, p = self.num_games, self.num_players
        self.roll = np.full(n, self._t.no_throw, dtype=np.int64)
        self.turn_total = np.zeros(n, dtype=np.int64)
        self.first_throw = np.zeros(n, dtype=bool)
        self.banked = np.zeros((n, p), dtype=np.int64)
        self.turns = np.zeros((n, p), dtype=np.int64)
        self.current = np.zeros(n, dtype=np.int64)
        self.final_round_by = np.full(n, -1, dtype=np.int64)
        self.done = np.zeros(n, dtype=bool)
        self.truncated = np.zeros(n, dtype=bool)
        self._pending = np.zeros((n, p), dtype=np.int64)
        self.reset()

    def _games(self, games: np.ndarray | None) -> np.ndarray:
        return self._all if games is None else np.asarray(games, dtype=np.int64)

    @property
    def totals(self) -> np.ndarray:
        """Banked totals ``(N, P)`` (the score of a Farkle game)."""
        return self.banked

    def dice_faces(self, games: np.ndarray | None = None) -> list[tuple[int, ...]]:
        """The sorted dice of each game (``()`` once a game is done)."""
        return [self._t.faces[r] for r in self.roll[self._games(games)].tolist()]

    def to_game(self, i: int) -> FarkleGame:
        """Game ``i`` as a scalar :class:`~dice_envs.engine.farkle_game.FarkleGame` (for checks,
        rendering, or continuing it with the rules engine; its dice come from a fresh generator).
        The ``history`` is not kept by the batched engine and starts empty."""
        g = FarkleGame(self.rules, num_players=self.num_players, seed=0)
        g.history = []
        g.banked = [int(v) for v in self.banked[i]]
        g.turns = [int(v) for v in self.turns[i]]
        g.current_player = int(self.current[i])
        g.final_round_by = int(self.final_round_by[i]) if self.final_round_by[i] >= 0 else None
        g.done, g.truncated = bool(self.done[i]), bool(self.truncated[i])
        g.turn_total = 0 if g.done else int(self.turn_total[i])
        g.first_throw = bool(self.first_throw[i])
        g.throw_index = int(self.roll[i])
        return g

    # ------------------------------------------------------------------ transitions
    def reset(self, games: np.ndarray | None = None) -> None:
        """Start fresh games (seat 0's opening throw is made, farkles auto-advanced)."""
        g = self._games(games)
        self.banked[g] = 0
        self.turns[g] = 0
        self.current[g] = 0
        self.final_round_by[g] = -1
        self.done[g] = False
        self.truncated[g] = False
        self.turn_total[g] = 0
        self._start_turn(g)

    def _throw(self, g: np.ndarray, n: np.ndarray | int) -> np.ndarray:
        """Throw ``n`` dice in games ``g``; True where that is a farkle."""
        roll = turn.throw(self._t, n, self.dice.codes(g, n))
        self.roll[g] = roll
        return turn.is_farkle(self._t, roll)

    def _start_turn(self, g: np.ndarray) -> None:
        """Open turns (turn total already 0) until each game needs a decision or is over."""
        banked, pending = self.banked.reshape(-1), self._pending.reshape(-1)  # views, by game * P + seat
        self.first_throw[g] = True
        while g.size:
            g = g[self._throw(g, NUM_DICE)]
            if not g.size:
                return
            at = g * self.num_players + self.current[g]
            old = banked[at]
            new = turn.farkle_banked(old, True, self.rules.bankruptcy)
            pending[at] += new - old
            banked[at] = new
            self._end_turn(g, at)
            g = g[~self.done[g]]

    def _end_turn(self, g: np.ndarray, at: np.ndarray | None = None) -> None:
        """End the turns of games ``g`` (``at``: their ``game * P + current`` if known)."""
        r = self.rules
        p = self.current[g]
        if at is None:
            at = g * self.num_players + p
        turns_flat = self.turns.reshape(-1)
        turns = turns_flat[at] + 1
        turns_flat[at] = turns
        fr, done, truncated, nxt = turn.end_turn(
            p,
            self.banked.reshape(-1)[at],
            turns,
            self.final_round_by[g],
            self.num_players,
            r.target,
            r.max_turns,
        )
        self.turn_total[g] = 0
        self.final_round_by[g] = fr
        self.done[g] = done
        self.truncated[g] = truncated
        self.current[g] = nxt
        self.roll[g[done]] = self._t.no_throw

    def _next_turn(self, g: np.ndarray) -> None:
        self._end_turn(g)
        self._start_turn(g[~self.done[g]])

    def action_masks(self, games: np.ndarray | None = None) -> np.ndarray:
        """Legal actions, ``(n, 128)`` bool (all False where a game is done)."""
        g = slice(None) if games is None else np.asarray(games, dtype=np.int64)
        return turn.legal_masks(self._t, self.roll[g], self.turn_total[g], self.rules.bank_minimum)

    def step(self, actions: np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
        """Apply one legal action per game (not checked: see :meth:`action_masks`).

        Returns each seat's change of banked total, ``(n, num_players)``.
        """
        a = np.asarray(actions, dtype=np.int64)
        full = games is None
        g = self._all if full else np.asarray(games, dtype=np.int64)
        sel = slice(None) if full else g
        if full:
            self._pending.fill(0)
        else:
            self._pending[g] = 0
        mask, bank = turn.split_action(a)
        tt, left = turn.set_aside(self._t, self.roll[sel], self.turn_total[sel], mask)
        self.turn_total[sel] = tt
        rows = np.flatnonzero(bank)
        ended = g[rows]
        if rows.size:
            flat = ended * self.num_players + self.current[ended]
            self.banked.ravel()[flat] += tt[rows]
            self._pending.ravel()[flat] += tt[rows]
        if rows.size < g.size:
            on = np.flatnonzero(~bank)
            gt = g[on]
            self.first_throw[gt] = False
            farkled = gt[self._throw(gt, left[on])]
            if farkled.size:
                ended = np.concatenate([ended, farkled]) if ended.size else farkled
        if ended.size:
            self._next_turn(ended)
        return self._pending.copy() if full else self._pending[g]

    # ------------------------------------------------------------------ observations
    def _build_observation_tables(self) -> None:
        """The per-throw rows of :func:`throw_observations`; the other fields are written by
        :meth:`observe`."""
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
