"""The batched scorecard engine: N games of Spiffel, Dice Poker or Yahtzee stepped at once.

State is a handful of numpy arrays (one row per game); a step is a few dozen vectorised table
lookups, with no Python loop over games. Every number comes from :mod:`dice_envs.tables`
(built from :func:`dice_envs.rules.scorecard.box_score`); the flow — throws, the upper bonus,
the five-of-a-kind bonus with its limit, the free or forced joker — mirrors
:class:`dice_envs.rules.scorecard.ScorecardGame`, and the tests drive both with the same dice
and compare masks, rewards, cards and observations.

==============  =============  ============================================================
array           shape          meaning
==============  =============  ============================================================
``roll``        (N,)           index of the sorted five dice in ``scorecard_tables().rolls``
``throw``       (N,)           throw number of the current turn (1..T; 0 once done)
``cards``       (N, P, K)      box points, ``-1`` where the box is open
``upper``       (N, P)         upper total
``upper_paid``  (N, P)         upper bonus earned
``bonuses``     (N, P)         five-of-a-kind bonuses earned
``totals``      (N, P)         grand totals
``current``     (N,)           seat to act
``round``       (N,)           round (0-based; K once done)
``done``        (N,)           game over
==============  =============  ============================================================

>>> from dice_envs.rules import SpiffelRules
>>> eng = ScorecardEngine(SpiffelRules(), num_games=3, seed=0)
>>> eng.action_masks().shape
(3, 45)
>>> rewards = eng.step(np.full(3, 32 + 12))  # everyone scores chance
>>> bool((rewards[:, 0] == eng.totals[:, 0]).all()), eng.round.tolist()
(True, [1, 1, 1])
"""

from __future__ import annotations

import numpy as np

from ..encoding import observation_size
from ..rules.config import ConfigError, check_int
from ..rules.scorecard import N_REROLL_ACTIONS, ScorecardGame, ScorecardRules, joker_applies
from ..tables import score_tables, scorecard_batch_tables, scorecard_tables
from .dice import DiceStream, RandomDice

__all__ = ["ScorecardEngine"]


def _f32(values: np.ndarray) -> np.ndarray:
    """Exact-as-encode scaling: float64 arithmetic, then one rounding to float32 (assigning a
    float64 array into a float32 observation slice rounds the same way)."""
    return np.asarray(values, dtype=np.float64).astype(np.float32)


class ScorecardEngine:
    """``num_games`` scorecard games of ``num_players`` seats, stepped together.

    ``dice`` supplies the throws (default: :class:`RandomDice` seeded with ``seed``). Methods
    take an optional index array ``games`` (default: all games); rows of their inputs and
    outputs follow it.
    """

    family = "scorecard"

    def __init__(
        self,
        rules: ScorecardRules,
        num_games: int,
        num_players: int = 1,
        dice: DiceStream | None = None,
        seed: int | None = None,
    ) -> None:
        if not isinstance(rules, ScorecardRules):
            raise ConfigError(f"rules must be a ScorecardRules instance, got {type(rules).__name__}")
        check_int("num_games", num_games, 1, 1 << 24)
        check_int("num_players", num_players, 1, 8)
        self.rules = rules
        self.num_games, self.num_players = int(num_games), int(num_players)
        self.num_boxes = k = rules.num_boxes
        self.num_throws = rules.num_throws  # type: ignore[attr-defined]
        self.n_actions = rules.n_actions
        self.dice: DiceStream = dice if dice is not None else RandomDice(seed)

        ct, st, bt = scorecard_tables(), score_tables(type(rules)), scorecard_batch_tables()
        self._scores = np.stack([st.normal, st.joker]).astype(np.int32)  # (2, 252, K)
        self._upper_box = st.upper.copy()
        self._lower_box = ~st.upper
        self._five = int(st.five_kind_box)
        self._face_box = st.face_box.astype(np.int64)[ct.rolls[:, 0].astype(np.int64)]  # (252,)
        self._five_kind = np.append(ct.five_kind, False)  # extra row: no dice
        self._reroll_rows = np.concatenate([ct.reroll_legal, np.zeros_like(ct.reroll_legal)])
        self._reroll_count = ct.reroll_count.astype(np.int64)
        self._code_roll = bt.code_roll.astype(np.int64)
        self._kept_code = bt.kept_code.astype(np.int64)
        limit = rules.five_kind_bonus_limit
        self._limit = np.iinfo(np.int32).max if limit is None else int(limit)
        self._bonus_points = int(rules.five_kind_bonus)
        self._joker_rule = bool(rules.joker)  # type: ignore[attr-defined]
        self._forced = rules.joker_order == "forced"
        self._needs_face = rules.joker_trigger == "filled_upper"  # else the face's box plays no part
        self._all = np.arange(self.num_games)
        self._build_observation_tables()

        n, p = self.num_games, self.num_players
        self.roll = np.zeros(n, dtype=np.int64)
        self.throw = np.zeros(n, dtype=np.int64)
        self.cards = np.full((n, p, k), -1, dtype=np.int32)
        self.upper = np.zeros((n, p), dtype=np.int32)
        self.upper_paid = np.zeros((n, p), dtype=bool)
        self.bonuses = np.zeros((n, p), dtype=np.int32)
        self.totals = np.zeros((n, p), dtype=np.int32)
        self.current = np.zeros(n, dtype=np.int64)
        self.round = np.zeros(n, dtype=np.int64)
        self.done = np.zeros(n, dtype=bool)
        self.reset()

    # ------------------------------------------------------------------ helpers
    def _games(self, games: np.ndarray | None) -> np.ndarray:
        return self._all if games is None else np.asarray(games, dtype=np.int64)

    @property
    def truncated(self) -> np.ndarray:
        """Scorecard games are never truncated (all False)."""
        return np.zeros(self.num_games, dtype=bool)

    def dice_faces(self, games: np.ndarray | None = None) -> np.ndarray:
        """The sorted dice of each game, ``(n, 5)`` (meaningless once a game is done)."""
        return scorecard_tables().rolls[self.roll[self._games(games)]]

    def to_game(self, i: int) -> ScorecardGame:
        """Game ``i`` as a scalar :class:`~dice_envs.rules.scorecard.ScorecardGame` (for checks,
        rendering, or continuing it with the rules engine; its dice come from a fresh generator).
        The per-turn ``history`` is not kept by the batched engine and starts empty."""
        g = ScorecardGame(self.rules, num_players=self.num_players, seed=0)
        for p, card in enumerate(g.cards):
            card.boxes = [None if v < 0 else int(v) for v in self.cards[i, p]]
            card.five_kind_bonuses = int(self.bonuses[i, p])
            card.upper_bonus_paid = bool(self.upper_paid[i, p])
        g.current_player, g.round, g.done = int(self.current[i]), int(self.round[i]), bool(self.done[i])
        if g.done:
            g.throw, g.dice, g._turn_throws = 0, (), []
        else:
            g.throw = int(self.throw[i])
            g.dice = tuple(int(f) for f in scorecard_tables().rolls[self.roll[i]])
            g._turn_throws = [g.dice]
        return g

    # ------------------------------------------------------------------ transitions
    def reset(self, games: np.ndarray | None = None) -> None:
        """Start fresh games (the first throw of seat 0 is made)."""
        g = self._games(games)
        self.cards[g] = -1
        self.upper[g] = 0
        self.upper_paid[g] = False
        self.bonuses[g] = 0
        self.totals[g] = 0
        self.current[g] = 0
        self.round[g] = 0
        self.done[g] = False
        self._open_turn(g)

    def _open_turn(self, g: np.ndarray) -> None:
        if g.size:
            self.roll[g] = self._code_roll[self.dice.codes(g, 5)]
            self.throw[g] = 1

    def joker_status(self, games: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(bonus_due, joker)`` for entering the current dice now (cf. ``ScorecardGame``)."""
        g = self._games(games)
        return self._joker_status(g, self.current[g])

    def _joker_status(self, g: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        roll = self.roll[g]
        five = self._five_kind[roll]
        box = self.cards[g, p, self._five]
        bonus_due = five & (box == 50) & (self.bonuses[g, p] < self._limit)
        face_filled = self._face_filled(self.cards[g, p], roll)
        return bonus_due, joker_applies(self.rules, five, box >= 0, bonus_due, face_filled)

    def _face_filled(self, cards: np.ndarray, roll: np.ndarray) -> np.ndarray:
        """Whether the upper box of each roll's first face is filled on ``cards`` ``(m, K)``."""
        if not self._needs_face:
            return np.ones(len(roll), dtype=bool)
        fb = self._face_box[np.minimum(roll, len(self._face_box) - 1)]
        return np.take_along_axis(cards, np.maximum(fb, 0)[:, None], axis=1)[:, 0] >= 0

    def action_masks(self, games: np.ndarray | None = None) -> np.ndarray:
        """Legal actions, ``(n, n_actions)`` bool (all False where a game is done)."""
        g = self._games(games)
        roll = self.roll[g]
        out = np.empty((g.size, self.n_actions), dtype=bool)
        # rows roll (throws left) and 252 + roll (last throw: no re-throw)
        last = self.throw[g] >= self.num_throws
        np.take(self._reroll_rows, roll + last * self._no_roll, axis=0, out=out[:, :N_REROLL_ACTIONS])
        if self.num_players == 1:
            boxes = self.cards[g, 0] < 0 if games is not None else self.cards[:, 0] < 0
            p = np.zeros(g.size, dtype=np.int64)
        else:
            p = self.current[g]
            boxes = self.cards[g, p] < 0
        if self._forced and self._joker_rule:
            _, joker = self._joker_status(g, p)
            if joker.any():
                j = np.flatnonzero(joker)
                jb = boxes[j]
                fb = self._face_box[roll[j]]
                face_open = jb[np.arange(j.size), fb] & (fb >= 0)
                lower = jb & self._lower_box
                use_lower = ~face_open & lower.any(axis=1)
                jb[use_lower] = lower[use_lower]
                jb[face_open] = False
                jb[np.flatnonzero(face_open), fb[face_open]] = True
                boxes[j] = jb
        out[:, N_REROLL_ACTIONS:] = boxes
        done = self.done[g]
        if done.any():
            out[done] = False
        return out

    def step(self, actions: np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
        """Apply one legal action per game (not checked: see :meth:`action_masks`).

        Returns the points each seat gained, ``(n, num_players)`` int32.
        """
        g = self._games(games)
        a = np.asarray(actions, dtype=np.int64)
        rewards = np.zeros((g.size, self.num_players), dtype=np.int32)
        reroll = a < N_REROLL_ACTIONS
        if reroll.all():
            self._reroll(g, a)
            return rewards
        if reroll.any():
            self._reroll(g[reroll], a[reroll])
            rows = np.flatnonzero(~reroll)
        else:
            rows = np.arange(g.size)
        gs = g[rows]
        p = self.current[gs]
        rewards[rows, p] = self._score(gs, p, a[rows] - N_REROLL_ACTIONS)
        self._advance(gs, p)
        return rewards

    def _reroll(self, g: np.ndarray, a: np.ndarray) -> None:
        code = self._kept_code[self.roll[g], a] + self.dice.codes(g, self._reroll_count[a])
        self.roll[g] = self._code_roll[code]
        self.throw[g] += 1

    def _score(self, g: np.ndarray, p: np.ndarray, box: np.ndarray) -> np.ndarray:
        bonus_due, joker = self._joker_status(g, p)
        points = self._scores[joker.astype(np.int64), self.roll[g], box]
        self.cards[g, p, box] = points
        upper = self.upper[g, p] + np.where(self._upper_box[box], points, 0)
        self.upper[g, p] = upper
        newly = ~self.upper_paid[g, p] & (upper >= self.rules.upper_bonus_threshold)
        self.upper_paid[g, p] |= newly
        self.bonuses[g, p] += bonus_due
        gained = points + newly * self.rules.upper_bonus + bonus_due * self._bonus_points
        self.totals[g, p] += gained
        return gained

    def _advance(self, g: np.ndarray, p: np.ndarray) -> None:
        nxt = p + 1
        wrap = nxt == self.num_players
        nxt[wrap] = 0
        self.current[g] = nxt
        self.round[g] += wrap
        over = self.round[g] == self.num_boxes
        if over.any():
            fin = g[over]
            self.done[fin] = True
            self.throw[fin] = 0
            g = g[~over]
        self._open_turn(g)

    # ------------------------------------------------------------------ observations
    def _build_observation_tables(self) -> None:
        """Row tables of :func:`dice_envs.encoding.encode`'s fields (same float32 arithmetic)."""
        ct = scorecard_tables()
        t, k = self.num_throws, self.num_boxes
        r = self._no_roll = len(ct.rolls)  # row r: no dice shown
        dice = np.zeros((r + 1, 36), dtype=np.float32)
        for ri, roll in enumerate(ct.rolls):
            for i, f in enumerate(roll):
                dice[ri, i * 6 + f - 1] = 1.0
                dice[ri, 30 + f - 1] += 0.2
        throw = np.zeros((t + 1, t), dtype=np.float32)
        throw[np.arange(1, t + 1), np.arange(t)] = 1.0
        # row throw * (r + 1) + roll: the dice block and the throw one-hot
        self._obs_head = np.concatenate([np.tile(dice, (t + 1, 1)), np.repeat(throw, r + 1, axis=0)], axis=1)
        # row joker * (r + 1) + roll: points the dice would score / 50 (row r: none)
        pot = np.zeros((2, r + 1, k))
        pot[:, :r] = self._scores
        self._obs_potential = _f32(pot.reshape(-1, k) / 50.0)
        self.observation_size = observation_size(self.rules, self.num_players)

    def observe(self, seat: int | np.ndarray, games: np.ndarray | None = None) -> np.ndarray:
        """Observations of ``seat`` (one seat, or one per game), ``(n, observation_size)`` float32,
        byte-identical to :func:`dice_envs.encoding.encode` of the equivalent scalar state."""
        g = slice(None) if games is None else np.asarray(games, dtype=np.int64)
        n = self.num_games if games is None else g.size  # type: ignore[union-attr]
        k, t, rows = self.num_boxes, self.num_throws, self._no_roll + 1
        if np.ndim(seat) or games is not None:
            seat = np.broadcast_to(np.asarray(seat, dtype=np.int64), (n,))
            gi = self._all if games is None else g
        else:
            seat = int(seat)
            gi = g
        obs = np.empty((n, self.observation_size), dtype=np.float32)
        active = ~self.done[g] & (self.current[g] == seat)
        roll = np.where(active, self.roll[g], self._no_roll)
        head = np.where(active, self.throw[g] * rows + roll, self._no_roll)
        np.take(self._obs_head, head, axis=0, out=obs[:, : 36 + t])
        o = 36 + t
        card = self.cards[gi, seat]
        obs[:, o : o + k] = card < 0
        obs[:, o + k : o + 2 * k] = np.maximum(card, 0) / 50.0  # float64, then one rounding
        o += 2 * k
        five = self._five_kind[roll]  # False for the no-dice row
        box = card[:, self._five]
        bonuses = self.bonuses[gi, seat]
        bonus_due = five & (box == 50) & (bonuses < self._limit)
        joker = joker_applies(self.rules, five, box >= 0, bonus_due, self._face_filled(card, roll))
        obs[:, o] = self.upper[gi, seat] / 100.0
        obs[:, o + 1] = self.upper_paid[gi, seat]
        obs[:, o + 2] = bonuses / 10.0
        obs[:, o + 3] = box == 50
        obs[:, o + 4] = bonus_due
        obs[:, o + 5] = joker
        obs[:, o + 6] = self.round[g] / k
        obs[:, o + 7] = self.totals[gi, seat] / 400.0
        o += 8
        np.take(self._obs_potential, joker * rows + roll, axis=0, out=obs[:, o : o + k])
        o += k
        for i in range(1, self.num_players):
            other = (seat + i) % self.num_players
            obs[:, o : o + k] = self.cards[gi, other] < 0
            obs[:, o + k] = self.upper[gi, other] / 100.0
            obs[:, o + k + 1] = self.totals[gi, other] / 400.0
            o += k + 2
        return obs
