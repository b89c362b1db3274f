"""``search:<model>`` for Farkle, any number of seats: exact turn search over a learned chance of
winning of every seat at turn starts.

A turn start before the final round is every seat's banked total and the seat to move. A network
(:class:`~agents.players.search.value.ValueNet` with one output per seat, read through a softmax)
estimates each seat's chance of winning from there, from the mover's side: :func:`farkle_features`
lists the totals own first, then the others in play order, the mover's lead and the mover's seat
(its place in the round: a seat that reaches the target lets only the seats after it in the round
play once more). :class:`FarkleValue` turns its outputs back into seat order.

The search is the exact N-player solver's turn search
(:func:`agents.solver.farkle_field.searched_solution`): the mover maximises its own chance over
the dice, a turn that ends before the final round is worth the network's value of the next
seat's turn start, and the final round is searched exactly to the game's end (the seats at the
highest total share the win). :class:`FarkleSearchAgent` acts from those tables as the solved
agents do (:class:`~agents.players.field_optimal.SolvedSeatAgent`, the solver's tie-breaking).
The forced bank of the searched game (``cap`` of :mod:`agents.solver.farkle_field`) is
:func:`search_cap` points past the target.

>>> from dice_envs.rules import make_rules
>>> rules = make_rules("farkle", target=1000)
>>> value = FarkleValue(random_farkle_net(2, hidden=(8,), seed=0), rules, 2)
>>> p = value(np.array([0, 1]), np.array([[3, 5], [3, 5]]))
>>> p.shape, bool(np.allclose(p.sum(axis=1), 1.0))
((2, 2), True)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.models.card import check_card, read_card
from agents.players.field_optimal import SolvedSeatAgent, _EquilibriumSolve
from agents.players.search.value import ValueNet
from agents.solver.farkle_field import FieldSolution, searched_solution
from agents.solver.farkle_win import DEFAULT_CAP, STEP
from dice_envs.rules import ConfigError, FarkleRules

__all__ = [
    "FARKLE_FEATURES",
    "FarkleSearchAgent",
    "FarkleValue",
    "farkle_feature_size",
    "farkle_features",
    "load_farkle_value",
    "random_farkle_net",
    "search_cap",
    "search_solution",
]

#: The name of the feature set :func:`farkle_features` computes (written on model cards).
FARKLE_FEATURES = "farkle-turn-start-v1"
#: The mover's lead is also read as ``clip(lead / r, -1, 1)`` for these ``r`` (steps of 50).
_RAMPS = (10, 40)


def search_cap(players: int) -> int:
    """Points past the target where the searched game banks (with the lead): two seats take
    ``win-optimal``'s cap (its game exactly), more seats none (the final round stays small)."""
    return DEFAULT_CAP if players == 2 else 0


def farkle_feature_size(players: int) -> int:
    """Length of :func:`farkle_features` rows for ``players`` seats."""
    return 2 * players + 1 + len(_RAMPS)


def farkle_features(rules: FarkleRules, movers: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Features ``(n, farkle_feature_size)`` of turn starts: ``movers`` ``(n,)`` the seats to
    move, ``totals`` ``(n, N)`` the banked totals (steps of 50) in seat order.

    The totals over the target, the mover's first and then the others in play order; the mover's
    lead over the best other (over the target, and clipped ramps); the mover's seat, one-hot.
    """
    movers = np.asarray(movers, dtype=np.int64)
    totals = np.asarray(totals, dtype=np.int64)
    n, N = totals.shape
    rel = totals[np.arange(n)[:, None], (movers[:, None] + np.arange(N)) % N].astype(np.float64)
    lead = rel[:, 0] - rel[:, 1:].max(axis=1)
    X = rules.target / STEP
    cols = [rel / X, (lead / X)[:, None]] + [np.clip(lead / r, -1.0, 1.0)[:, None] for r in _RAMPS]
    return np.concatenate([*cols, np.eye(N)[movers]], axis=1)


def random_farkle_net(players: int, hidden: Sequence[int] = (256, 256), seed: int = 0) -> ValueNet:
    """Random initial weights of a Farkle value net (He-uniform, zero biases, a small last layer:
    the seats' chances start near equal)."""
    return ValueNet.random(None, hidden, seed, inputs=farkle_feature_size(players), outputs=players)


class FarkleValue:
    """The :data:`~agents.solver.farkle_field.TurnValues` of a Farkle value net: every seat's
    chance of winning ``(n, N)`` in seat order, at turn starts ``(movers, totals)``."""

    def __init__(self, net: ValueNet, rules: FarkleRules, players: int) -> None:
        want = (farkle_feature_size(players), players)
        got = (net.weights[0].shape[0], net.weights[-1].shape[1])
        if got != want:
            raise ConfigError(
                f"the value network reads {got[0]} features into {got[1]} outputs; "
                f"{players}-seat Farkle needs {want[0]} into {want[1]}"
            )
        self.net, self.rules, self.players = net, rules, players

    def __call__(self, movers: np.ndarray, totals: np.ndarray) -> np.ndarray:
        movers = np.asarray(movers, dtype=np.int64)
        z = self.net.outputs(farkle_features(self.rules, movers, totals))
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        n, N = p.shape
        out = np.empty_like(p)
        out[np.arange(n)[:, None], (movers[:, None] + np.arange(N)) % N] = p
        return out


def search_solution(rules: FarkleRules, players: int, net: ValueNet) -> FieldSolution:
    """The turn tables of every seat searching over ``net`` (:func:`searched_solution`)."""
    return searched_solution(rules, players, FarkleValue(net, rules, players), cap=search_cap(players))


class FarkleSearchAgent(SolvedSeatAgent):
    """Plays each Farkle turn by exact search over a value network of turn starts (module doc).

    ``net``: the network (then nothing is read; the learner plays this way); ``model``: the value
    model's path or ``pretrained:<name>`` (for the spec); ``record``: keep in :attr:`starts` the
    searched values of the turn starts met before the final round (``(mover, *totals)`` in points
    -> every seat's chance, what the learner fits). Deterministic: the same position gets the
    same action.
    """

    def __init__(
        self,
        rules: FarkleRules,
        num_players: int = 2,
        seed: int | None = None,
        net: ValueNet | None = None,
        model: str = "",
        record: bool = False,
    ) -> None:
        if not isinstance(rules, FarkleRules):
            raise ConfigError(f"Farkle search plays farkle, got rules for {getattr(rules, 'game', rules)!r}")
        if net is None:
            raise ConfigError("FarkleSearchAgent needs a value network (net=) or a model file (from_file)")
        sol: Any = search_solution(rules, num_players, net)
        self.starts: dict[tuple[int, ...], np.ndarray] = {}
        if record:
            sol = _Recording(sol, self.starts)
        solve = _EquilibriumSolve(rules, num_players, sol.cap, sol)
        super().__init__(rules, num_players, solve, f"search:{model}" if model else "search", seed)
        self.net = net
        self.decisions = 0  #: decisions taken (actions chosen) so far

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        self.decisions += len(observations)
        return super().act_batch(observations, action_masks)

    @classmethod
    def from_file(
        cls, model: str, path: str | Path, rules: FarkleRules, num_players: int = 2, seed: int | None = None
    ) -> FarkleSearchAgent:
        """The agent of the Farkle value model at ``path``: its card must be a Farkle value
        model's for these rules and this number of seats (``ConfigError`` names what differs)."""
        net, card = load_farkle_value(path, rules, num_players, name=model)
        n = int(num_players)
        agent = cls(rules, n, seed, net=net, model=model)
        agent.card = card
        return agent


def load_farkle_value(
    path: str | Path, rules: FarkleRules, num_players: int, name: str = ""
) -> tuple[ValueNet, dict[str, Any]]:
    """The network and card of the Farkle value model ``path``: its card must be a Farkle value
    model's for these rules and this number of seats (``ConfigError`` names what differs, the
    model by ``name``, e.g. its spec, or else by its path), its weights the card's (SHA-256)."""
    card = read_card(path)
    label = name or str(path)
    value: dict[str, Any] = card.get("value") or {}
    if value.get("features") != FARKLE_FEATURES:
        raise ConfigError(
            f"{label}: the card's feature set {value.get('features')!r} is not {FARKLE_FEATURES!r}"
        )
    if card.get("num_players") != num_players:
        raise ConfigError(
            f"{label} was trained for {card.get('num_players')}-player Farkle (its value has a chance "
            f"per seat); it plays no {num_players}-player game"
        )
    check_card(card, rules, num_players)
    n = int(num_players)
    return ValueNet.load(path, card, inputs=farkle_feature_size(n), outputs=n), card


class _Recording:
    """A :class:`FieldSolution` whose turns before the final round keep their searched start
    values (every seat's chance) in ``starts``."""

    def __init__(self, sol: FieldSolution, starts: dict[tuple[int, ...], np.ndarray]) -> None:
        self.sol, self.starts, self.seat, self.cap = sol, starts, None, sol.cap

    def turns(self, totals: np.ndarray, mover: int, final: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        B, W = self.sol.turns(totals, mover, final)
        for i in np.flatnonzero(~np.asarray(final)):
            self.starts[(mover, *np.asarray(totals)[i].tolist())] = W[
                i, 0, 6
            ].copy()  # the first throw: its start
        return B, W
