"""The batched Farkle engine: N games stepped at once from :func:`dice_envs.tables.farkle_batch_tables`.

Mirrors :class:`dice_envs.rules.farkle.FarkleGame`: points of the dice set aside, banking only
above ``bank_minimum``, hot dice (all six set aside: throw six again), a farkle loses the turn
total, a farkle on a turn's first throw bankrupts the player (``bankruptcy``), the round is
finished once someone reaches ``target``, and ``max_turns`` truncates. Like the scalar engine it
advances by itself through opening throws, farkles and bankruptcies, so a game that is not done
always awaits a decision of ``current``.

==================  ========  ==========================================================
array               shape     meaning
==================  ========  ==========================================================
``roll``            (N,)      index of the current sorted throw (1-6 dice) in the tables
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

from typing import Any

import numpy as np

from ..encoding import observation_size
from ..rules.config import ConfigError, check_int
from ..rules.farkle import BANK_FLAG, NUM_DICE, FarkleGame, FarkleRules
from ..tables import farkle_batch_tables
from .dice import DiceStream, RandomDice

__all__ = ["FarkleEngine"]


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
        t = farkle_batch_tables()
        self._points = t.points.astype(np.int64)
        self._points_flat = self._points.ravel()
        self._build_mask_tables(t.points)
        self._farkle = t.farkle.copy()
        self._n_dice = t.n_dice.astype(np.int64)
        self._offset = t.code_offset.copy()
        self._code_roll = t.code_roll.astype(np.int64)
        self._mask_count = t.mask_count.astype(np.int64)
        self._max_turns = rules.max_turns
        self._all = np.arange(self.num_games)
        self._build_observation_tables()

        n, p = self.num_games, self.num_players
        self.roll = np.zeros(n, dtype=np.int64)
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
        """The sorted dice of each game (meaningless once a game is done)."""
        t = farkle_batch_tables()
        return [tuple(int(f) for f in t.faces[r, : t.n_dice[r]]) for r in self.roll[self._games(games)]]

    def to_game(self, i: int) -> FarkleGame:
        """Game ``i`` as a scalar :class:`~dice_envs.rules.farkle.FarkleGame` (for checks,
        rendering, or continuing it with the rules engine; its dice come from a fresh generator).
        The ``history`` is not kept by the batched engine and starts empty."""
        g = FarkleGame(self.rules, num_players=self.num_players, seed=0)
        g.history = []
        g.banked = [int(v) for v in self.banked[i]]
        g.turns = [int(v) for v in self.turns[i]]
        g.current_player = int(self.current[i])
        fr = int(self.final_round_by[i])
        g.final_round_by = None if fr < 0 else fr
        g.done, g.truncated = bool(self.done[i]), bool(self.truncated[i])
        g.turn_total = 0 if g.done else int(self.turn_total[i])
        g.first_throw = bool(self.first_throw[i])
        g.dice = () if g.done else self.dice_faces([i])[0]
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
        self._start_turn(g)

    def _throw(self, g: np.ndarray, n: np.ndarray | int) -> None:
        self.roll[g] = self._code_roll[self._offset[n] + self.dice.codes(g, n)]

    def _start_turn(self, g: np.ndarray) -> None:
        """Open turns until each game needs a decision or is over (bankruptcies on the way)."""
        while g.size:
            self.turn_total[g] = 0
            self.first_throw[g] = True
            self._throw(g, NUM_DICE)
            g = g[self._farkle[self.roll[g]]]
            if not g.size:
                return
            if self.rules.bankruptcy:
                p = self.current[g]
                self._pending[g, p] -= self.banked[g, p]
                self.banked[g, p] = 0
            self._end_turn(g)
            g = g[~self.done[g]]

    def _end_turn(self, g: np.ndarray) -> None:
        if self.num_players == 1:  # solitaire: every turn is the last of its round
            turns = self.turns[g, 0] + 1
            self.turns[g, 0] = turns
            over = (self.final_round_by[g] >= 0) | (self.banked[g, 0] >= self.rules.target)
            self.final_round_by[g[over]] = 0
            if self._max_turns is not None:
                capped = ~over & (turns >= self._max_turns)
                self.truncated[g[capped]] = True
                over |= capped
            self.done[g[over]] = True
            return
        p = self.current[g]
        self.turns[g, p] += 1
        reached = (self.final_round_by[g] < 0) & (self.banked[g, p] >= self.rules.target)
        self.final_round_by[g[reached]] = p[reached]
        last = p == self.num_players - 1
        over = last & (self.final_round_by[g] >= 0)
        if self._max_turns is not None:
            capped = last & ~over & (self.turns[g, p] >= self._max_turns)
            self.truncated[g[capped]] = True
            over |= capped
        self.done[g[over]] = True
        self.current[g[~over]] = (p[~over] + 1) % self.num_players

    def _next_turn(self, g: np.ndarray) -> None:
        self.turn_total[g] = 0
        self._end_turn(g)
        self._start_turn(g[~self.done[g]])

    def _build_mask_tables(self, points: np.ndarray) -> None:
        """Mask rows by throw and *level*: banking needs ``turn total + points > bank_minimum``;
        the banking options of a throw only change where ``bank_minimum - turn total`` crosses
        one of the throw's distinct point values, so ``level`` = how many of them are at most
        ``bank_minimum - turn total``, and row ``throw * (L + 1) + level`` is the whole mask."""
        values = [np.unique(row[row > 0]) for row in points]
        width = max(len(v) for v in values)
        self._levels = np.full((len(points), width), np.iinfo(np.int64).max, dtype=np.int64)
        rows = np.zeros((len(points), width + 1, self.n_actions), dtype=bool)
        for r, v in enumerate(values):
            self._levels[r, : len(v)] = v
            scoring = points[r] > 0
            rows[r, :, :BANK_FLAG] = scoring
            for level in range(len(v) + 1):
                floor = v[level - 1] if level else 0  # points > need >= floor
                rows[r, level, BANK_FLAG:] = scoring & (points[r] > floor)
        self._mask_rows = rows.reshape(-1, self.n_actions)
        self._level_count = width + 1

    def action_masks(self, games: np.ndarray | None = None) -> np.ndarray:
        """Legal actions, ``(n, 128)`` bool (all False where a game is done)."""
        g = slice(None) if games is None else np.asarray(games, dtype=np.int64)
        roll = self.roll[g]
        need = self.rules.bank_minimum - self.turn_total[g]
        level = (self._levels[roll] <= need[:, None]).sum(axis=1)
        out = np.take(self._mask_rows, roll * self._level_count + level, axis=0)
        done = self.done[g]
        if done.any():
            out[done] = False
        return out

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
        mask, bank = a & (BANK_FLAG - 1), a >= BANK_FLAG
        roll = self.roll[sel]
        tt = self.turn_total[sel] + self._points_flat[roll * BANK_FLAG + mask]
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
            left = self._n_dice[roll[on]] - self._mask_count[mask[on]]
            left[left == 0] = NUM_DICE  # hot dice: all six again
            self._throw(gt, left)
            farkled = gt[self._farkle[self.roll[gt]]]
            if farkled.size:
                ended = np.concatenate([ended, farkled]) if ended.size else farkled
        if ended.size:
            self._next_turn(ended)
        return self._pending.copy() if full else self._pending[g]

    # ------------------------------------------------------------------ observations
    def _build_observation_tables(self) -> None:
        t = farkle_batch_tables()
        feats = np.zeros((t.num_rolls + 1, 43), dtype=np.float32)  # last row: no dice shown
        for ri in range(t.num_rolls):
            n = int(t.n_dice[ri])
            for i in range(n):
                f = int(t.faces[ri, i])
                feats[ri, i * 6 + f - 1] = 1.0
                feats[ri, 36 + f - 1] += 1.0 / 6.0
            feats[ri, 42] = n / 6.0
        self._obs_dice = feats
        self._no_roll = t.num_rolls
        self.observation_size = observation_size(self.rules, self.num_players)

    def observe(self, seat: int | np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
        """Observations of ``seat`` (one seat, or one per game), ``(n, observation_size)`` float32,
        byte-identical to :func:`dice_envs.encoding.encode` of the equivalent scalar state."""
        r = self.rules
        np_ = self.num_players
        if games is None and np.ndim(seat) == 0:  # fast path: views, one seat
            g: Any = slice(None)
            n, s = self.num_games, int(seat)
            own = self.banked[:, s]
            turns = self.turns[:, s]
            others = self.banked[:, [(s + i) % np_ for i in range(1, np_)]] if np_ > 1 else None
        else:
            g = self._all if games is None else np.asarray(games, dtype=np.int64)
            n = g.size
            s = np.broadcast_to(np.asarray(seat, dtype=np.int64), (n,))
            own = self.banked[g, s]
            turns = self.turns[g, s]
            others = None
            if np_ > 1:
                others = self.banked[g[:, None], (s[:, None] + np.arange(1, np_)) % np_]
        obs = np.empty((n, self.observation_size), dtype=np.float32)
        active = ~self.done[g] & (self.current[g] == s)
        np.take(self._obs_dice, np.where(active, self.roll[g], self._no_roll), axis=0, out=obs[:, :43])
        obs[:, 43] = np.where(active, self.turn_total[g], 0) / 1000.0
        obs[:, 44] = active & self.first_throw[g]
        obs[:, 45] = own / r.target
        obs[:, 46] = turns / (r.max_turns or 100)
        obs[:, 47] = self.final_round_by[g] >= 0
        if others is not None:
            obs[:, 48 : 48 + np_ - 1] = others / r.target
            obs[:, 48 + np_ - 1] = (others.max(axis=1) - own) / r.target
        else:
            obs[:, 48] = 0.0
        return obs
