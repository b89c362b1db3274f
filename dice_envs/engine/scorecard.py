"""The batched scorecard engine: N games of Spiffel, Dice Poker or Yahtzee stepped at once.

State is a handful of numpy arrays (one row per game); a step is a few dozen vectorised table
lookups, with no Python loop over games. The flow — throws, the upper bonus, the five-of-a-kind
bonus with its limit, the free or forced joker, the legal mask, the turn advance — is the rule
functions of :mod:`dice_envs.engine.scorecard_flow`, called on whole batches; the scalar
:class:`~dice_envs.engine.scorecard_game.ScorecardGame` calls the same functions on one game, and
the tests drive both with the same dice and compare masks, rewards, cards and observations.
Observations are written field by field from :func:`dice_envs.layouts.layout`.

==============  =============  ============================================================
array           shape          meaning
==============  =============  ============================================================
``roll``        (N,)           index of the sorted five dice in ``scorecard_tables().rolls``
                               (``flow.no_roll`` once done)
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

from ..layouts import layout
from ..rules.config import ConfigError, check_int
from ..rules.scorecard import N_REROLL_ACTIONS, ScorecardRules
from .dice import DiceStream, RandomDice
from .scorecard_flow import advance_turn, scorecard_flow
from .scorecard_game import ScorecardGame

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
        self.flow = scorecard_flow(rules)
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
        """The sorted dice of each game, ``(n, 5)`` (zeros once a game is done)."""
        return self.flow.roll_faces[self.roll[self._games(games)]]

    def to_game(self, i: int) -> ScorecardGame:
        """Game ``i`` as a scalar :class:`~dice_envs.engine.scorecard_game.ScorecardGame` (for checks,
        rendering, or continuing it with the rules engine; its dice come from a fresh generator).
        The per-turn ``history`` is not kept by the batched engine and starts empty."""
        g = ScorecardGame(self.rules, num_players=self.num_players, seed=0)
        for p, card in enumerate(g.cards):
            card.boxes = [None if v < 0 else int(v) for v in self.cards[i, p]]
            card.five_kind_bonuses = int(self.bonuses[i, p])
            card.upper_bonus_paid = bool(self.upper_paid[i, p])
        g.current_player, g.round, g.done = int(self.current[i]), int(self.round[i]), bool(self.done[i])
        g.throw = int(self.throw[i])
        g.dice = self.flow.dice[int(self.roll[i])]
        g._turn_throws = [g.dice] if g.dice else []
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
            self.roll[g] = self.flow.first_throw(self.dice.codes(g, 5))
            self.throw[g] = 1

    def joker_status(self, games: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(bonus_due, joker)`` for entering the current dice now (cf. ``ScorecardGame``)."""
        g = self._games(games)
        return self._joker_status(g, self.current[g])

    def _joker_status(self, g: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = self.flow
        cards = self.cards[g, p] if f.needs_face else None
        return f.joker_status(self.roll[g], self.cards[g, p, f.five], self.bonuses[g, p], cards)

    def action_masks(self, games: np.ndarray | None = None) -> np.ndarray:
        """Legal actions, ``(n, n_actions)`` bool (all False where a game is done)."""
        g = self._games(games)
        if self.num_players == 1:
            boxes = self.cards[g, 0] < 0 if games is not None else self.cards[:, 0] < 0
            p = np.zeros(g.size, dtype=np.int64)
        else:
            p = self.current[g]
            boxes = self.cards[g, p] < 0
        roll = self.roll[g]
        if self.flow.forced:
            boxes = self.flow.legal_boxes(boxes, roll, self._joker_status(g, p)[1])
        return self.flow.action_mask(roll, self.throw[g], boxes)

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
        self.roll[g] = self.flow.rethrow(self.roll[g], a, self.dice.codes(g, self.flow.reroll_count[a]))
        self.throw[g] += 1

    def _score(self, g: np.ndarray, p: np.ndarray, box: np.ndarray) -> np.ndarray:
        due, joker = self._joker_status(g, p)
        e = self.flow.enter(self.roll[g], box, joker, due, self.upper[g, p], self.upper_paid[g, p])
        self.cards[g, p, box] = e.points
        self.upper[g, p] = e.upper_total
        self.upper_paid[g, p] |= e.pays_upper_bonus
        self.bonuses[g, p] += due
        self.totals[g, p] += e.gained
        return e.gained

    def _advance(self, g: np.ndarray, p: np.ndarray) -> None:
        self.current[g], self.round[g], over = advance_turn(
            p, self.round[g], self.num_players, self.num_boxes
        )
        if over.any():
            fin = g[over]
            self.done[fin] = True
            self.throw[fin] = 0
            self.roll[fin] = self.flow.no_roll
            g = g[~over]
        self._open_turn(g)

    # ------------------------------------------------------------------ observations
    def _build_observation_tables(self) -> None:
        """Row tables of :func:`dice_envs.encoding.encode`'s fields (same float32 arithmetic)."""
        f, lay = self.flow, layout(self.rules, self.num_players)
        self._layout = lay
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
