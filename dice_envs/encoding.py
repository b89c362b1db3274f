"""Observation encodings (versioned) shared by every environment, vector engine and agent.

Each family has one flat ``float32`` encoding, always from the point of view of one seat: its own
card first, then the other seats in turn order after it. Every field is an exact scaling of an
integer, so :func:`decode` recovers the game facts an agent needs (built-in agents act from the
observation alone). Saved models record :data:`ENCODING_VERSION`.

Scorecard games (``K`` boxes, ``T`` throws, ``N`` players):

=====================  ======  ==============================================================
field                  size    value
=====================  ======  ==============================================================
dice                   30      one-hot face of each of the 5 sorted dice
face counts            6       dice showing each face / 5
throw                  T       one-hot of the throw number (1..T) of the current turn
open boxes             K       1 where the own box is still open
box points             K       points in each own box / 50 (0 while open)
upper total            1       own upper total / 100
upper bonus            1       1 once the upper bonus is earned
bonuses                1       five-of-a-kind bonuses earned / 10
five-kind box 50       1       1 when the own five-of-a-kind box holds 50
bonus due              1       1 when entering the current dice now earns a bonus
joker                  1       1 when joker scoring applies to the current dice
round                  1       current round (0-based) / K
grand total            1       own grand total / 400
potential              K       points the current dice would score in each box / 50
others                 (N-1)×(K+2)  per other seat: open boxes (K), upper total / 100,
                                    grand total / 400
=====================  ======  ==============================================================

Farkle (``N`` players):

=====================  ======  ==============================================================
dice                   36      one-hot face of each of up to 6 sorted dice (zeros if absent)
face counts            6       dice showing each face / 6
dice thrown            1       dice in the current throw / 6
turn total             1       turn total / 1000
first throw            1       1 on the turn's first throw
banked                 1       own banked total / target
turns                  1       own turns taken / max_turns (or / 100 without a cap)
final round            1       1 once some seat reached the target
others                 N-1     other seats' banked totals / target
lead                   1       (best other total - own total) / target (0 in solitaire)
=====================  ======  ==============================================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rules import FarkleGame, FarkleRules, RuleConfig, ScorecardGame, ScorecardRules
from .rules.scorecard import _box_score_cached

__all__ = [
    "ENCODING_VERSION",
    "FarkleBatchView",
    "FarkleView",
    "ScorecardView",
    "decode",
    "decode_farkle_batch",
    "encode",
    "encoding_id",
    "observation_bounds",
    "observation_size",
]

#: Version of each family's encoding; bump on any change of layout or scaling. (Farkle v2 dropped
#: an always-zero spare slot that v1 reserved after the ``lead`` field.)
ENCODING_VERSION: dict[str, int] = {"scorecard": 1, "farkle": 2}


def family(rules: RuleConfig) -> str:
    """``"farkle"`` or ``"scorecard"``."""
    return "farkle" if isinstance(rules, FarkleRules) else "scorecard"


def encoding_id(rules: RuleConfig) -> str:
    """A string naming the encoding of ``rules`` and its version, e.g. ``"scorecard-v1"``."""
    fam = family(rules)
    return f"{fam}-v{ENCODING_VERSION[fam]}"


def observation_size(rules: RuleConfig, num_players: int) -> int:
    """Length of the observation vector of ``rules`` with ``num_players`` seats."""
    if isinstance(rules, FarkleRules):
        return 48 + num_players
    assert isinstance(rules, ScorecardRules)
    k, t = len(rules.categories), rules.num_throws  # type: ignore[attr-defined]
    return 30 + 6 + t + 2 * k + 8 + k + (num_players - 1) * (k + 2)


#: Bound of the Farkle fields that no rule caps (turn total, banked totals, turns without a cap):
#: far beyond any reachable game (a turn total of a billion points), but finite.
UNCAPPED = 1e6


def _max_grand_total(rules: ScorecardRules) -> int:
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
    n = observation_size(rules, num_players)
    low = np.zeros(n, dtype=np.float32)
    high = np.ones(n, dtype=np.float32)
    if isinstance(rules, FarkleRules):
        high[43] = UNCAPPED  # turn total / 1000
        high[45] = UNCAPPED  # banked / target
        high[46] = 1.0 if rules.max_turns else UNCAPPED
        high[48 : 48 + num_players - 1] = UNCAPPED
        low[48 + num_players - 1], high[48 + num_players - 1] = -UNCAPPED, UNCAPPED
        return low, high
    assert isinstance(rules, ScorecardRules)
    k, t = len(rules.categories), rules.num_throws  # type: ignore[attr-defined]
    total = _max_grand_total(rules) / 400.0
    o = 36 + t + 2 * k
    high[o] = 105 / 100.0  # upper total
    high[o + 2] = max(1.0, (k - 1) / 10.0)  # five-of-a-kind bonuses / 10
    high[o + 7] = total
    o += 8 + k
    for _ in range(num_players - 1):
        high[o + k] = 105 / 100.0
        high[o + k + 1] = total
        o += k + 2
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
    k, t = len(g.categories), r.num_throws  # type: ignore[attr-defined]
    obs = np.zeros(observation_size(r, g.num_players), dtype=np.float32)
    dice = g.dice
    active = not g.done and g.current_player == player and len(dice) == 5
    if active:
        for i, f in enumerate(dice):
            obs[i * 6 + f - 1] = 1.0
            obs[30 + f - 1] += 0.2
        obs[36 + g.throw - 1] = 1.0
    o = 36 + t
    card = g.cards[player]
    for b, v in enumerate(card.boxes):
        obs[o + b] = 1.0 if v is None else 0.0
        obs[o + k + b] = 0.0 if v is None else v / 50.0
    o += 2 * k
    five = card.boxes[g._five]
    bonus_due, joker = g.joker_status() if active else (False, False)
    obs[o : o + 8] = (
        g.upper_total(player) / 100.0,
        float(card.upper_bonus_paid),
        card.five_kind_bonuses / 10.0,
        float(five == 50),
        float(bonus_due),
        float(joker),
        g.round / k,
        g.total(player) / 400.0,
    )
    o += 8
    if active:
        for b, name in enumerate(g.categories):
            obs[o + b] = _box_score_cached(name, dice, joker) / 50.0
    o += k
    for other in _seats_after(player, g.num_players):
        for b, v in enumerate(g.cards[other].boxes):
            obs[o + b] = 1.0 if v is None else 0.0
        obs[o + k] = g.upper_total(other) / 100.0
        obs[o + k + 1] = g.total(other) / 400.0
        o += k + 2
    return obs


def _encode_farkle(g: FarkleGame, player: int) -> np.ndarray:
    r = g.rules
    n = g.num_players
    obs = np.zeros(observation_size(r, n), dtype=np.float32)
    active = not g.done and g.current_player == player
    if active:
        for i, f in enumerate(g.dice):
            obs[i * 6 + f - 1] = 1.0
            obs[36 + f - 1] += 1.0 / 6.0
        obs[42] = len(g.dice) / 6.0
        obs[43] = g.turn_total / 1000.0
        obs[44] = float(g.first_throw)
    obs[45] = g.banked[player] / r.target
    obs[46] = g.turns[player] / (r.max_turns or 100)
    obs[47] = float(g.final_round_by is not None)
    others = [g.banked[s] for s in _seats_after(player, n)]
    for i, v in enumerate(others):
        obs[48 + i] = v / r.target
    obs[48 + n - 1] = (max(others) - g.banked[player]) / r.target if others else 0.0
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


def decode(obs: np.ndarray, rules: RuleConfig, num_players: int) -> ScorecardView | FarkleView:
    """Recover the game facts from an observation made by :func:`encode`."""
    obs = np.asarray(obs, dtype=np.float64)
    if obs.shape != (observation_size(rules, num_players),):
        raise ValueError(
            f"observation of shape {obs.shape} does not fit {rules.game} with {num_players} players "
            f"(expected ({observation_size(rules, num_players)},))"
        )
    if isinstance(rules, FarkleRules):
        onehot = obs[:36].reshape(6, 6)
        dice = tuple(int(np.argmax(row)) + 1 for row in onehot if row.max() > 0.5)
        target = rules.target
        return FarkleView(
            dice=dice,
            turn_total=round(float(obs[43]) * 1000),
            first_throw=bool(obs[44] > 0.5),
            banked=round(float(obs[45]) * target),
            turns=round(float(obs[46]) * (rules.max_turns or 100)),
            final_round=bool(obs[47] > 0.5),
            others_banked=tuple(round(float(v) * target) for v in obs[48 : 48 + num_players - 1]),
        )
    assert isinstance(rules, ScorecardRules)
    k, t = len(rules.categories), rules.num_throws  # type: ignore[attr-defined]
    onehot = obs[:30].reshape(5, 6)
    dice = tuple(int(np.argmax(row)) + 1 for row in onehot if row.max() > 0.5)
    throw_hot = obs[36 : 36 + t]
    throw = int(np.argmax(throw_hot)) + 1 if throw_hot.max() > 0.5 else 0
    o = 36 + t
    boxes = tuple(None if obs[o + b] > 0.5 else round(float(obs[o + k + b]) * 50) for b in range(k))
    o += 2 * k
    f = obs[o : o + 8]
    o += 8 + k
    others = tuple(round(float(obs[o + i * (k + 2) + k + 1]) * 400) for i in range(num_players - 1))
    return ScorecardView(
        dice=dice,
        throw=throw,
        throws_left=t - throw if throw else 0,
        boxes=boxes,
        upper_total=round(float(f[0]) * 100),
        upper_bonus_paid=bool(f[1] > 0.5),
        five_kind_bonuses=round(float(f[2]) * 10),
        five_kind_50=bool(f[3] > 0.5),
        bonus_due=bool(f[4] > 0.5),
        joker=bool(f[5] > 0.5),
        round=round(float(f[6]) * k),
        total=round(float(f[7]) * 400),
        others_totals=others,
    )


@dataclass(frozen=True)
class FarkleBatchView:
    """The facts of a batch of Farkle observations (one row each), as :class:`FarkleView` arrays.

    ``dice`` ``(B, 6)``: the sorted faces, 0 where no die; ``n_dice`` the dice per row;
    ``others_banked`` ``(B, N-1)``.
    """

    dice: np.ndarray
    n_dice: np.ndarray
    turn_total: np.ndarray
    first_throw: np.ndarray
    banked: np.ndarray
    turns: np.ndarray
    final_round: np.ndarray
    others_banked: np.ndarray


def decode_farkle_batch(obs: np.ndarray, rules: FarkleRules, num_players: int) -> FarkleBatchView:
    """:func:`decode` of every row of a ``(B, size)`` batch of Farkle observations at once."""
    obs = np.asarray(obs, dtype=np.float64)
    size = observation_size(rules, num_players)
    if obs.ndim != 2 or obs.shape[1] != size:
        raise ValueError(
            f"observations of shape {obs.shape} do not fit {rules.game} with {num_players} players "
            f"(expected (B, {size}))"
        )
    onehot = obs[:, :36].reshape(-1, 6, 6)
    present = onehot.max(axis=2) > 0.5
    dice = np.where(present, onehot.argmax(axis=2) + 1, 0).astype(np.int64)
    target = rules.target
    return FarkleBatchView(
        dice=dice,
        n_dice=present.sum(axis=1).astype(np.int64),
        turn_total=np.rint(obs[:, 43] * 1000).astype(np.int64),
        first_throw=obs[:, 44] > 0.5,
        banked=np.rint(obs[:, 45] * target).astype(np.int64),
        turns=np.rint(obs[:, 46] * (rules.max_turns or 100)).astype(np.int64),
        final_round=obs[:, 47] > 0.5,
        others_banked=np.rint(obs[:, 48 : 48 + num_players - 1] * target).astype(np.int64),
    )
