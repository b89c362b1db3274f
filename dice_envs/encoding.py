"""Observation encodings (versioned) shared by every environment, vector engine and agent.

Each family has one flat ``float32`` encoding, always from the point of view of one seat: its own
card first, then the other seats in turn order after it. Every field is an exact scaling of an
integer, so :func:`decode` recovers the game facts an agent needs (built-in agents act from the
observation alone). Saved models record :data:`ENCODING_VERSION`.

The fields of each encoding, in order, with their sizes, scales and meanings, are its layout's
(:func:`dice_envs.layouts.layout`; the docs' game pages print them as tables).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .engine import FarkleGame, ScorecardGame
from .engine.farkle import throw_observations
from .layouts import ENCODING_VERSION, Layout, encoding_family, layout
from .rules import FarkleRules, RuleConfig, ScorecardRules
from .rules.scorecard import _box_score_cached

__all__ = [
    "ENCODING_VERSION",
    "FarkleBatchView",
    "FarkleView",
    "Layout",
    "ScorecardView",
    "decode",
    "decode_farkle_batch",
    "encode",
    "encoding_id",
    "layout",
    "max_grand_total",
    "observation_bounds",
    "observation_size",
]

#: ``"farkle"`` or ``"scorecard"`` (see :func:`dice_envs.layouts.encoding_family`).
family = encoding_family


def encoding_id(rules: RuleConfig) -> str:
    """A string naming the encoding of ``rules`` and its version, e.g. ``"scorecard-v1"``."""
    return layout(rules, 1).encoding


def observation_size(rules: RuleConfig, num_players: int) -> int:
    """Length of the observation vector of ``rules`` with ``num_players`` seats."""
    return layout(rules, num_players).size


#: Bound of the Farkle fields that no rule caps (turn total, banked totals, turns without a cap):
#: far beyond any reachable game (a turn total of a billion points), but finite.
UNCAPPED = 1e6


def max_grand_total(rules: ScorecardRules) -> int:
    """An upper bound of a scorecard game's grand total (all boxes at their maximum)."""
    k = len(rules.categories)
    limit = rules.five_kind_bonus_limit
    bonuses = k - 1 if limit is None else min(limit, k - 1)
    return 105 + rules.upper_bonus + 50 * k + bonuses * rules.five_kind_bonus


def observation_bounds(rules: RuleConfig, num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-field ``(low, high)`` float32 bounds of the observation: every encoded value lies within.

    Scorecard fields are bounded by the rules (e.g. the upper total by 105, the grand total by
    every box at its maximum plus every bonus); Farkle's turn total and banked totals have no
    rule cap and are bounded by :data:`UNCAPPED`, and the ``lead`` field may be negative.

    >>> from dice_envs.rules import make_rules
    >>> low, high = observation_bounds(make_rules("spiffel"), 1)
    >>> float(low.min()), float(high[:30].max()), low.shape == (observation_size(make_rules("spiffel"), 1),)
    (0.0, 1.0, True)
    """
    lay = layout(rules, num_players)
    low = np.zeros(lay.size, dtype=np.float32)
    high = np.ones(lay.size, dtype=np.float32)
    if isinstance(rules, FarkleRules):
        for name in ("turn_total", "banked"):
            high[lay.slice(name)] = UNCAPPED
        high[lay.slice("turns")] = 1.0 if rules.max_turns else UNCAPPED
        for f in lay.others("banked"):
            high[f.slice] = UNCAPPED
        low[lay.slice("lead")], high[lay.slice("lead")] = -UNCAPPED, UNCAPPED
        return low, high
    assert isinstance(rules, ScorecardRules)
    k = rules.num_boxes
    total = max_grand_total(rules) / 400.0
    high[lay.slice("upper_total")] = 105 / 100.0
    high[lay.slice("bonuses")] = max(1.0, (k - 1) / 10.0)  # five-of-a-kind bonuses / 10
    high[lay.slice("total")] = total
    for f in lay.others("upper_total"):
        high[f.slice] = 105 / 100.0
    for f in lay.others("total"):
        high[f.slice] = total
    return low, high


def encode(game: ScorecardGame | FarkleGame, player: int) -> np.ndarray:
    """The observation of ``game`` from ``player``'s seat."""
    if isinstance(game, FarkleGame):
        return _encode_farkle(game, player)
    return _encode_scorecard(game, player)


def _seats_after(player: int, n: int) -> list[int]:
    return [(player + i) % n for i in range(1, n)]


def _encode_scorecard(g: ScorecardGame, player: int) -> np.ndarray:
    r = g.rules
    lay = layout(r, g.num_players)
    obs = np.zeros(lay.size, dtype=np.float32)
    dice = g.dice
    active = not g.done and g.current_player == player and len(dice) == 5
    if active:
        d, fc = lay.field("dice").start, lay.field("face_counts").start
        for i, f in enumerate(dice):
            obs[d + i * 6 + f - 1] = 1.0
            obs[fc + f - 1] += 0.2
        obs[lay.field("throw").start + g.throw - 1] = 1.0
    card = g.cards[player]
    o, p = lay.field("open").start, lay.field("points").start
    for b, v in enumerate(card.boxes):
        obs[o + b] = 1.0 if v is None else 0.0
        obs[p + b] = 0.0 if v is None else v / 50.0
    five = card.boxes[g._five]
    bonus_due, joker = g.joker_status() if active else (False, False)
    for name, value in (
        ("upper_total", g.upper_total(player) / 100.0),
        ("upper_bonus", float(card.upper_bonus_paid)),
        ("bonuses", card.five_kind_bonuses / 10.0),
        ("five_kind_50", float(five == 50)),
        ("bonus_due", float(bonus_due)),
        ("joker", float(joker)),
        ("round", g.round / r.num_boxes),
        ("total", g.total(player) / 400.0),
    ):
        obs[lay.index(name)] = value
    if active:
        pot = lay.field("potential").start
        for b, name in enumerate(g.categories):
            obs[pot + b] = _box_score_cached(name, dice, joker) / 50.0
    for i, other in enumerate(_seats_after(player, g.num_players), start=1):
        oo = lay.field(f"other{i}_open").start
        for b, v in enumerate(g.cards[other].boxes):
            obs[oo + b] = 1.0 if v is None else 0.0
        obs[lay.index(f"other{i}_upper_total")] = g.upper_total(other) / 100.0
        obs[lay.index(f"other{i}_total")] = g.total(other) / 400.0
    return obs


def _encode_farkle(g: FarkleGame, player: int) -> np.ndarray:
    r = g.rules
    n = g.num_players
    lay = layout(r, n)
    active = not g.done and g.current_player == player
    rows = throw_observations(r, n)
    obs = rows[g.throw_index if active else len(rows) - 1].copy()
    if active:
        obs[lay.index("turn_total")] = g.turn_total / lay.scale("turn_total")
        obs[lay.index("first_throw")] = float(g.first_throw)
    obs[lay.index("banked")] = g.banked[player] / r.target
    obs[lay.index("turns")] = g.turns[player] / (r.max_turns or 100)
    obs[lay.index("final_round")] = float(g.final_round_by is not None)
    obs[lay.field("seat").start + player] = 1.0
    others = [g.banked[s] for s in _seats_after(player, n)]
    for f, v in zip(lay.others("banked"), others, strict=True):
        obs[f.start] = v / r.target
    obs[lay.index("lead")] = (max(others) - g.banked[player]) / r.target if others else 0.0
    return obs


@dataclass(frozen=True)
class ScorecardView:
    """The facts of a scorecard observation, decoded."""

    dice: tuple[int, ...]
    throw: int
    throws_left: int
    boxes: tuple[int | None, ...]
    upper_total: int
    upper_bonus_paid: bool
    five_kind_bonuses: int
    five_kind_50: bool
    bonus_due: bool
    joker: bool
    round: int
    total: int
    others_totals: tuple[int, ...]


@dataclass(frozen=True)
class FarkleView:
    """The facts of a Farkle observation, decoded."""

    dice: tuple[int, ...]
    turn_total: int
    first_throw: bool
    banked: int
    turns: int
    final_round: bool
    others_banked: tuple[int, ...]
    seat: int


def decode(obs: np.ndarray, rules: RuleConfig, num_players: int) -> ScorecardView | FarkleView:
    """Recover the game facts from an observation made by :func:`encode`."""
    obs = np.asarray(obs, dtype=np.float64)
    lay = layout(rules, num_players)
    if obs.shape != (lay.size,):
        raise ValueError(
            f"observation of shape {obs.shape} does not fit {rules.game} with {num_players} players "
            f"(expected ({lay.size},))"
        )

    def num(name: str) -> int:
        return int(lay.read(obs, name))

    if isinstance(rules, FarkleRules):
        onehot = obs[lay.slice("dice")].reshape(6, 6)
        return FarkleView(
            dice=tuple(int(np.argmax(row)) + 1 for row in onehot if row.max() > 0.5),
            turn_total=num("turn_total"),
            first_throw=bool(lay.flag(obs, "first_throw")),
            banked=num("banked"),
            turns=num("turns"),
            final_round=bool(lay.flag(obs, "final_round")),
            others_banked=tuple(int(lay.read(obs, f.name)) for f in lay.others("banked")),
            seat=int(np.argmax(obs[lay.slice("seat")])),
        )
    assert isinstance(rules, ScorecardRules)
    t = rules.num_throws  # type: ignore[attr-defined]
    onehot = obs[lay.slice("dice")].reshape(5, 6)
    throw_hot = obs[lay.slice("throw")]
    throw = int(np.argmax(throw_hot)) + 1 if throw_hot.max() > 0.5 else 0
    is_open = obs[lay.slice("open")] > 0.5
    points = lay.read(obs, "points")
    return ScorecardView(
        dice=tuple(int(np.argmax(row)) + 1 for row in onehot if row.max() > 0.5),
        throw=throw,
        throws_left=t - throw if throw else 0,
        boxes=tuple(None if o else int(v) for o, v in zip(is_open, points, strict=True)),
        upper_total=num("upper_total"),
        upper_bonus_paid=bool(lay.flag(obs, "upper_bonus")),
        five_kind_bonuses=num("bonuses"),
        five_kind_50=bool(lay.flag(obs, "five_kind_50")),
        bonus_due=bool(lay.flag(obs, "bonus_due")),
        joker=bool(lay.flag(obs, "joker")),
        round=num("round"),
        total=num("total"),
        others_totals=tuple(int(lay.read(obs, f.name)) for f in lay.others("total")),
    )


@dataclass(frozen=True)
class FarkleBatchView:
    """The facts of a batch of Farkle observations (one row each), as :class:`FarkleView` arrays.

    ``dice`` ``(B, 6)``: the sorted faces, 0 where no die; ``n_dice`` the dice per row;
    ``others_banked`` ``(B, N-1)``; ``seat`` the own seat.
    """

    dice: np.ndarray
    n_dice: np.ndarray
    turn_total: np.ndarray
    first_throw: np.ndarray
    banked: np.ndarray
    turns: np.ndarray
    final_round: np.ndarray
    others_banked: np.ndarray
    seat: np.ndarray


def decode_farkle_batch(obs: np.ndarray, rules: FarkleRules, num_players: int) -> FarkleBatchView:
    """:func:`decode` of every row of a ``(B, size)`` batch of Farkle observations at once."""
    obs = np.asarray(obs)
    if not np.issubdtype(obs.dtype, np.floating):
        obs = obs.astype(np.float64)
    size = observation_size(rules, num_players)
    if obs.ndim != 2 or obs.shape[1] != size:
        raise ValueError(
            f"observations of shape {obs.shape} do not fit {rules.game} with {num_players} players "
            f"(expected (B, {size}))"
        )
    lay = layout(rules, num_players)
    # each die's row is one-hot: its face is the dot product with the faces (one product for the
    # batch, 5x faster than max and argmax over the rows of six at 65,536 rows)
    onehot = obs[:, lay.slice("dice")].reshape(-1, 6, 6) > 0.5
    dice = onehot.astype(np.uint8) @ np.arange(1, 7, dtype=np.uint8)
    present = dice > 0
    dice = dice.astype(np.int64)
    others = [lay.read(obs, f.name) for f in lay.others("banked")]
    return FarkleBatchView(
        dice=dice,
        n_dice=present.sum(axis=1).astype(np.int64),
        turn_total=lay.read(obs, "turn_total"),
        first_throw=lay.flag(obs, "first_throw"),
        banked=lay.read(obs, "banked"),
        turns=lay.read(obs, "turns"),
        final_round=lay.flag(obs, "final_round"),
        others_banked=np.stack(others, axis=1) if others else np.zeros((len(obs), 0), dtype=np.int64),
        seat=obs[:, lay.slice("seat")].argmax(axis=1).astype(np.int64),
    )
