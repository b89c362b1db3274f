"""Two-player scorecard play for the win: a learned win chance of turn starts and the turn search over it.

At the start of a turn the player to move sees its own card ``(mask, u, z)`` (the solver's state,
:class:`agents.solver.scorecard.TurnSolver`), the other card and the score difference ``d = own
total - other total``. A network estimates ``W``, the chance that the player to move wins (a
tie counts 1/2): its sigmoid output reads :func:`win_features`, the features of both cards
(:func:`agents.players.search.value.state_features`) and of ``d``.

What is exact and what is not: the mover's turn is searched exactly (every throw, hold and box,
each entry's points by the rules) and an entry that ends the game is scored exactly; any other
entry is worth ``1 - W`` of the other player's turn start, a network estimate with one guessed
input. The other card's five-of-a-kind state is not part of the observation (it shows which boxes
are open and the totals, not what the five-of-a-kind box holds), so the other card is read as
``(mask, u)`` only, and where the search needs ``W`` of the other player its five-of-a-kind state
is unknown: an open box is state 0 (exact); a filled one is taken as holding 0 (state 0) or 50
with no bonus paid (state 1) with the fixed weights :data:`OTHER_Z_WEIGHTS`, not inferred from
the other's total or play (a state with a bonus already paid, where the rules cap the bonuses, is
never assumed).

:meth:`WinSearch.box_values` builds the leaf matrix of the solver's turn search: entering throw
``r`` in box ``b`` is worth ``1 - W(the other's turn start)`` with the other card, this card after
the entry and ``-(d + points)``; when that entry ends the game the value is exact: 1, 1/2 or 0 by
the final difference. The points of each entry and the card after it are the solver's own
(:meth:`TurnSolver.box_values_of` over a zero table gives the points, over a table of state
indices the next state), so every scoring rule (upper bonus, five-of-a-kind bonus, jokers) is the
engine's flow. Each box leads to few distinct ``(next card, points)`` pairs; the network is
evaluated on the distinct ones only.

>>> from dice_envs.rules import make_rules
>>> from agents.solver.scorecard import turn_solver
>>> solver = turn_solver(make_rules("spiffel"))
>>> search = WinSearch(solver, random_win_net(solver, hidden=(8,), seed=0))
>>> full = (1 << solver.k) - 1
>>> bv = search.box_values(np.array([[full ^ 1, 0, 0]]), np.array([[full, 5]]), np.array([-3]))
>>> sorted(set(np.round(bv[0, 0], 6).tolist()))   # ones: 0..5 points against 3 behind
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.players.search.value import LearnedValues, ValueNet, feature_size, state_features
from agents.solver.plans import TurnPlan
from agents.solver.scorecard import NEG, TurnSolver
from dice_envs.rules import ConfigError

__all__ = [
    "OTHER_Z_WEIGHTS",
    "POINTS_PREFIX",
    "WIN_FEATURES",
    "WIN_POINTS_FEATURES",
    "WinSearch",
    "card_points",
    "random_win_net",
    "read_points_net",
    "win_feature_size",
    "win_features",
    "win_prob",
]

#: The name of the feature set :func:`win_features` computes (written on model cards).
WIN_FEATURES = "win-turn-start-v1"
#: ... with both cards' five-of-a-kind states and a points network's expected points to come of
#: both cards (``points=``).
WIN_POINTS_FEATURES = "win-turn-start-v2"
#: A win model's file keeps the points network it reads under these array names (``points_w0``...).
POINTS_PREFIX = "points_"
#: The weights of the other player's five-of-a-kind states 0 (the box holds 0) and 1 (it holds 50,
#: no bonus paid) where its box is filled: a fixed guess at a state the observation does not show.
OTHER_Z_WEIGHTS = (0.5, 0.5)
#: Score differences are read as ``d / D_SCALE`` and a few clipped ramps and signs.
D_SCALE = 100.0
_RAMPS = (10.0, 30.0, 60.0)


def win_feature_size(solver: TurnSolver, points: bool = False) -> int:
    """Length of :func:`win_features` rows for the rules of ``solver`` (``points``: the
    :data:`WIN_POINTS_FEATURES` set)."""
    if points:
        return 2 * feature_size(solver) + 2 * (3 + len(_RAMPS)) + 1
    return 2 * feature_size(solver) - solver.Z + 3 + len(_RAMPS) + 1


def card_points(points: LearnedValues, cards: np.ndarray) -> np.ndarray:
    """Expected points to come ``(n,)`` of cards ``(n, 3)`` of ``(mask, u, z)``, read from a points
    network; ``z = -1`` marks a card seen from outside (its five-of-a-kind state unknown: an open
    box is state 0, a filled one weighed by :data:`OTHER_Z_WEIGHTS`)."""
    cards = np.asarray(cards, dtype=np.int64).reshape(-1, 3)
    mask, u, z = cards.T
    known = points[mask, u, np.maximum(z, 0)]
    filled = (mask >> points.solver.five) & 1 == 1
    seen = sum(w * points[mask, u, np.full_like(z, s)] for s, w in enumerate(OTHER_Z_WEIGHTS))
    return np.where(z >= 0, known, np.where(filled, seen, points[mask, u, np.zeros_like(z)]))


def win_features(
    solver: TurnSolver,
    own: np.ndarray,
    other: np.ndarray,
    d: np.ndarray,
    points: LearnedValues | None = None,
) -> np.ndarray:
    """Features ``(n, win_feature_size)`` of turn starts: ``own`` ``(n, 3)`` of ``(mask, u, z)``,
    ``other`` ``(n, 2)`` of ``(mask, u)`` (``(n, 3)`` with ``points``), ``d`` ``(n,)`` own total
    minus other total.

    :data:`WIN_FEATURES`: the own card's :func:`state_features`, the other card's without its
    five-of-a-kind state, ``d / 100``, its sign (ahead, level), clipped ramps
    ``clip(d / s, -1, 1)`` and whether the other player has scored one box more (the player to
    move is the second seat of the round).

    :data:`WIN_POINTS_FEATURES` (``points``, a points network's values): the other card with its
    five-of-a-kind state too, and each card's expected points to come ``e / 100``
    (:func:`card_points`) and the projected difference ``p = d + e_own - e_other`` as ``p / 100``
    and the same clipped ramps: the network then learns how a projected lead turns into a chance
    instead of how many points each card still holds. The search reads the network at the other
    player's turn starts, where the card it calls "other" is the searching player's own: its
    five-of-a-kind state is known there, and without it an entry that keeps a five-of-a-kind bonus
    in reach looks like one that gives it up (a points search judged that way loses clearly to
    ``optimal``; the model's dated record has the measurement).
    """
    own = np.asarray(own, dtype=np.int64).reshape(-1, 3)
    other = np.asarray(other, dtype=np.int64).reshape(-1, 2 if points is None else 3)
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    f_own = state_features(solver, own[:, 0], own[:, 1], own[:, 2])
    if points is None:
        f_other = state_features(solver, other[:, 0], other[:, 1], np.zeros(len(other), dtype=np.int64))
        z0 = solver.k + solver.U
        f_other = np.delete(f_other, np.arange(z0, z0 + solver.Z), axis=1)
    else:
        f_other = state_features(solver, other[:, 0], other[:, 1], other[:, 2])
    cols = [d / D_SCALE, (d > 0).astype(float), (d == 0).astype(float)]
    cols += [np.clip(d / s, -1.0, 1.0) for s in _RAMPS]
    second = _popcount(other[:, 0]) > _popcount(own[:, 0])
    cols.append(second.astype(float))
    if points is not None:
        e_own = card_points(points, own)
        e_other = card_points(points, other)
        p = d + e_own - e_other
        cols += [e_own / D_SCALE, e_other / D_SCALE, p / D_SCALE]
        cols += [np.clip(p / s, -1.0, 1.0) for s in _RAMPS]
    return np.concatenate([f_own, f_other, np.stack(cols, axis=1)], axis=1)


def _popcount(mask: np.ndarray) -> np.ndarray:
    return ((np.asarray(mask, dtype=np.int64)[..., None] >> np.arange(32)) & 1).sum(axis=-1)


def random_win_net(
    solver: TurnSolver, hidden: Sequence[int] = (256, 256), seed: int = 0, points: bool = False
) -> ValueNet:
    """Random initial weights of a win network (He-uniform, zero biases): chances start near 1/2
    (``points``: reading the points-to-come columns too)."""
    return ValueNet.random(solver, hidden, seed, inputs=win_feature_size(solver, points))


def read_points_net(path: Any, card: dict[str, Any], solver: TurnSolver) -> ValueNet:
    """The points network a win model's file keeps beside the win network (arrays
    ``points_w0, points_b0, ...``), checked like the file's own (:func:`agents.models.files.read_arrays`:
    the card's SHA-256, plain finite numbers) and against the card's ``value.points.hidden`` and the
    game's state features; ``ConfigError`` names the file and what is wrong."""
    from agents.models.files import read_arrays

    arrays = read_arrays(path, str(card.get("weights_sha256")))
    inner = {k.removeprefix(POINTS_PREFIX): a for k, a in arrays.items() if k.startswith(POINTS_PREFIX)}
    if not inner:
        raise ConfigError(
            f"{path}: a {WIN_POINTS_FEATURES!r} model keeps its points network as "
            f"{POINTS_PREFIX}w0, {POINTS_PREFIX}b0, ...; the file has none"
        )
    net = ValueNet.from_arrays(inner, f"{path} (its points network)")
    hidden = ((card.get("value") or {}).get("points") or {}).get("hidden")
    if net.hidden != hidden:
        raise ConfigError(
            f"{path}: the points network's hidden widths {net.hidden} are not its card's {hidden!r}"
        )
    if net.weights[0].shape[0] != feature_size(solver):
        raise ConfigError(
            f"{path}: the points network reads {net.weights[0].shape[0]} features; "
            f"{solver.rules.game} states have {feature_size(solver)}"
        )
    return net


def win_prob(net: ValueNet, x: np.ndarray, dtype: Any = np.float64) -> np.ndarray:
    """The win chance ``(n,)`` of feature rows ``x``: the sigmoid of the network's output, its
    last layer being the logit (evaluated in ``dtype``; the search uses float32)."""
    h = np.asarray(x, dtype=dtype)
    for w, b in zip(net.weights[:-1], net.biases[:-1], strict=True):
        h = np.maximum(h @ w.astype(dtype, copy=False) + b.astype(dtype, copy=False), 0)
    logit = (h @ net.weights[-1].astype(dtype, copy=False))[:, 0] + net.biases[-1][0]
    return 1.0 / (1.0 + np.exp(-logit.astype(np.float64)))


class WinSearch:
    """The turn search of the player to move over a win-chance network ``net`` (reading the
    expected points to come of a points network's values ``points``, when given)."""

    def __init__(self, solver: TurnSolver, net: ValueNet | None, points: LearnedValues | None = None) -> None:
        self.solver, self.net, self.points = solver, net, points
        if net is not None:  # None: a subclass judges the leaves (win_normal.NormalWinSearch)
            want = win_feature_size(solver, points is not None)
            if net.weights[0].shape[0] != want:
                raise ConfigError(
                    f"the win network reads {net.weights[0].shape[0]} features; {solver.rules.game} "
                    f"turn starts have {want} {'with' if points is not None else 'without'} a points network"
                )
            self._net32 = ValueNet(
                [w.astype(np.float32) for w in net.weights], [b.astype(np.float32) for b in net.biases]
            )
        shape = (1 << solver.k, solver.U, solver.Z)
        self.shape, self.full = shape, (1 << solver.k) - 1
        self._zero = np.zeros(shape)
        self._index = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)

    def entries(self, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Points ``(n, K, 252)`` (``-inf``: not legal) and the flat index of the card after each
        entry (``-1`` where not legal) from cards ``own`` ``(n, 3)``: the solver's scoring step."""
        c = self.solver
        pts = c.box_values_of(self._zero, own)
        with np.errstate(invalid="ignore"):  # -inf - -inf where not legal
            nxt = c.box_values_of(self._index, own) - pts
        legal = np.isfinite(pts)
        return pts, np.where(legal, np.rint(np.where(legal, nxt, 0)), -1).astype(np.int64)

    def other_value(self, other: np.ndarray, card: np.ndarray, d: np.ndarray) -> np.ndarray:
        """The win chance of the other player at the start of its turn: its card ``other``
        ``(n, 2)`` of ``(mask, u)`` (its five-of-a-kind state by :data:`OTHER_Z_WEIGHTS`), the
        mover's card after its turn ``card`` (``(n, 2)`` of ``(mask, u)``; ``(n, 3)`` with its
        five-of-a-kind state for a network with points), ``d`` the other's lead."""
        other = np.asarray(other, dtype=np.int64).reshape(-1, 2)
        filled = (other[:, 0] >> self.solver.five) & 1 == 1
        out = np.zeros(len(other))
        for z, w in enumerate(OTHER_Z_WEIGHTS):
            rows = np.ones(len(other), dtype=bool) if z == 0 else filled
            weight = np.where(filled, w, 1.0 if z == 0 else 0.0)
            if not rows.any():
                continue
            own = np.column_stack([other[rows], np.full(rows.sum(), z)])
            x = win_features(self.solver, own, card[rows], d[rows], self.points)
            out[rows] += weight[rows] * win_prob(self._net32, x, np.float32)
        return out

    def box_values(self, own: np.ndarray, other: np.ndarray, d: np.ndarray) -> np.ndarray:
        """The leaf matrix ``(n, K, 252)`` of the turns of the player to move (``-inf``: not legal):
        own cards ``(n, 3)``, other cards ``(n, 2)`` of ``(mask, u)``, score differences ``(n,)``."""
        own = np.asarray(own, dtype=np.int64).reshape(-1, 3)
        other = np.asarray(other, dtype=np.int64).reshape(-1, 2)
        d = np.asarray(d, dtype=np.float64).reshape(-1)
        pts, nxt = self.entries(own)
        out = np.full(pts.shape, NEG)
        legal = nxt >= 0
        j = np.nonzero(legal)[0]
        p, ix = pts[legal].astype(np.int64), nxt[legal]
        span = int(p.max()) + 1 if p.size else 1
        key = (j * np.prod(self.shape) + ix) * span + p
        uniq, inv = np.unique(key, return_inverse=True)
        uj, rest = np.divmod(uniq, np.prod(self.shape) * span)
        uix, up = np.divmod(rest, span)
        m, u, z = np.unravel_index(uix, self.shape)
        diff = d[uj] + up
        over = (m == self.full) & (other[uj, 0] == self.full)
        vals = np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))
        live = ~over
        if live.any():
            card = np.column_stack([m[live], u[live]] + ([] if self.points is None else [z[live]]))
            vals[live] = 1.0 - self.other_value(other[uj[live]], card, -diff[live])
        out[legal] = vals[inv.reshape(-1)]
        return out

    def turn_plans(self, own: np.ndarray, other: np.ndarray, d: np.ndarray) -> list[TurnPlan]:
        """The searched turn of each turn start (plans as the solver makes them; ``value``: the
        win chance of the player to move under the best play of its turn)."""
        return self.solver.turn_plans(self.box_values(own, other, d))
