"""Seat views: a trained model plays any seat of any table of its game that it can see.

A model trained for ``P`` seats (its card's ``num_players``) at a table of ``N`` seats:
:func:`seat_view` turns the table's observation of its seat into one of the size it was trained on.

* **Scorecard games.** The own fields are kept (a solitaire model sees exactly its solitaire
  view); a ``P``-seat model at a larger table is shown the ``P - 1`` other seats with the highest
  grand totals; at a smaller table it is refused (an absent seat has no card to show).
* **Farkle.** The own fields are kept; the model is shown the ``P - 1`` other seats with the most
  points banked, strongest first (seats the table lacks: nothing banked), ``lead`` is recomputed
  from them, and ``seat`` counts the shown seats that throw before it in the round.

Anything else (another game or family, another encoding, another observation size, e.g. a
changed ``num_throws``) is refused with :class:`~dice_envs.rules.ConfigError` naming why.

>>> from dice_envs.rules import make_rules

>>> from dice_envs.engine import new_game
>>> from dice_envs.encoding import encode
>>> rules = make_rules("spiffel")
>>> view = seat_view(rules, model_players=1, num_players=3)
>>> g = new_game(rules, num_players=3, seed=0)
>>> solo = encode(new_game(rules, num_players=1, seed=0), 0)
>>> bool((view(encode(g, 0)[None])[0] == solo).all())
True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dice_envs.layouts import Layout, layout
from dice_envs.rules import ConfigError, FarkleRules, RuleConfig

__all__ = ["SeatView", "seat_view"]

#: ``observations (B, table size) -> observations (B, model size)``.
SeatView = Callable[[np.ndarray], np.ndarray]


def _identity(obs: np.ndarray) -> np.ndarray:
    return obs


def _opponent_kinds(lay: Layout) -> list[str]:
    """The kinds of per-opponent field (``other1_<kind>``), in layout order."""
    return [n.removeprefix("other1_") for n in lay.names if n.startswith("other1_")]


def seat_view(rules: RuleConfig, model_players: int, num_players: int) -> SeatView:
    """The view of a ``model_players``-seat model at a ``num_players``-seat table of ``rules``."""
    if model_players == num_players:
        return _identity
    if model_players > num_players and not isinstance(rules, FarkleRules):
        raise ConfigError(
            f"a {model_players}-player {rules.game} model cannot play a {num_players}-player game: the "
            f"table has no cards for {model_players - num_players} of the seats it was trained to see; "
            f"it fits tables of {model_players} to 8 players"
        )
    return _TableView(rules, model_players, num_players)


class _TableView:
    """The view of :func:`seat_view` between tables of different sizes (a class, not a closure,
    so that an agent holding it pickles, e.g. as an env's opponent sent to a worker process)."""

    def __init__(self, rules: RuleConfig, model_players: int, num_players: int) -> None:
        table, model = layout(rules, num_players), layout(rules, model_players)
        self.table, self.model, self.num_players = table, model, num_players
        self.farkle = isinstance(rules, FarkleRules)
        # the own seat's fields: all but the per-opponent blocks and the derived lead and seat
        own = [n for n in model.names if not n.startswith("other") and n not in ("lead", "seat")]
        self.own = [(table.slice(n), model.slice(n)) for n in own]
        # rank the other seats by grand total (scorecard) or points banked (Farkle), strongest first
        self.rank_by = [f.start for f in table.others("banked" if self.farkle else "total")]
        self.kinds = _opponent_kinds(model) or _opponent_kinds(table)
        self.shown = model_players - 1

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        table, model, num_players, shown = self.table, self.model, self.num_players, self.shown
        obs = np.asarray(obs, dtype=np.float32)
        if obs.shape[-1] != table.size:
            raise ValueError(
                f"observation of width {obs.shape[-1]}, expected {table.size} ({num_players} seats)"
            )
        out = np.zeros((len(obs), model.size), dtype=np.float32)
        for src, dst in self.own:
            out[:, dst] = obs[:, src]
        m = min(shown, len(self.rank_by))
        order = np.argsort(-obs[:, self.rank_by], axis=1, kind="stable")[:, :m] if m else None
        for kind in self.kinds if m else ():
            block = np.stack([obs[:, f.slice] for f in table.others(kind)], axis=1)  # (B, n - 1, size)
            picked = np.take_along_axis(block, order[:, :, None], axis=1)
            for j, f in enumerate(model.others(kind)[:m]):
                out[:, f.slice] = picked[:, j]
        if self.farkle:  # own seat among the seats shown: how many of them throw earlier in the round
            own_seat = obs[:, table.slice("seat")].argmax(axis=1)
            earlier = np.zeros(len(obs), dtype=np.int64)
            if m:
                table_seat = (own_seat[:, None] + 1 + order) % num_players
                earlier = (table_seat < own_seat[:, None]).sum(axis=1)
            out[np.arange(len(obs)), model.field("seat").start + earlier] = 1.0
            # the lead over the seats shown (seats the table lacks have nothing banked)
            best = np.stack([out[:, f.start] for f in model.others("banked")], axis=1)
            lead = best.max(axis=1) - out[:, model.index("banked")] if shown else 0.0
            out[:, model.index("lead")] = lead
        return out
