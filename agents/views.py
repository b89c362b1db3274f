"""Seat views: a trained model plays any seat of any table of its game that it can see.

A model is trained for ``P`` seats (its card's ``num_players``) and reads observations of that
size. At a table of ``N`` seats, :func:`seat_view` turns the table's observation of the model's
seat (:func:`dice_envs.encoding.encode`) into the observation the model was trained on:

* **Scorecard games.** The encoding holds the seat's own card first and then one block per
  other seat (:mod:`dice_envs.encoding`), so a solitaire model (``P = 1``) is shown exactly its
  own view of the table as in solitaire: the leading fields, unchanged (dice, throw, own boxes,
  bonuses, round, potential scores). A ``P``-seat model at a larger table is shown the ``P - 1``
  other seats with the highest grand totals; at a smaller table it is refused (an absent seat
  has no card to show).
* **Farkle.** The own fields are kept; the model is shown the ``P - 1`` other seats with the most
  points banked, strongest first (a 2-player model thus plays against "the leader of the
  others", the seat it must beat), and ``lead`` is recomputed from the seats it is shown, which
  for ``P >= 2`` equals the table's lead over the strongest seat. Seats the table lacks (a
  2-player model in solitaire) are shown as an opponent with nothing banked.

Anything else (another game or family, another encoding, another observation size, e.g. a
changed ``num_throws``) is refused with :class:`~dice_envs.rules.ConfigError` naming why.

>>> from dice_envs.rules import make_rules, new_game
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

from dice_envs.encoding import observation_size
from dice_envs.rules import ConfigError, FarkleRules, RuleConfig

__all__ = ["SeatView", "seat_view"]

#: ``observations (B, table size) -> observations (B, model size)``.
SeatView = Callable[[np.ndarray], np.ndarray]


def _identity(obs: np.ndarray) -> np.ndarray:
    return obs


def seat_view(rules: RuleConfig, model_players: int, num_players: int) -> SeatView:
    """The view of a ``model_players``-seat model at a ``num_players``-seat table of ``rules``."""
    if model_players == num_players:
        return _identity
    table = observation_size(rules, num_players)
    if isinstance(rules, FarkleRules):
        return _farkle_view(model_players, num_players)
    k = len(rules.categories)  # type: ignore[attr-defined]
    if model_players > num_players:
        raise ConfigError(
            f"a {model_players}-player {rules.game} model cannot play a {num_players}-player game: the "
            f"table has no cards for {model_players - num_players} of the seats it was trained to see; "
            f"it fits tables of {model_players} to 8 players"
        )
    solo = observation_size(rules, 1)
    shown = model_players - 1

    def view(obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float32)
        if obs.shape[-1] != table:
            raise ValueError(f"observation of width {obs.shape[-1]}, expected {table} ({num_players} seats)")
        if not shown:
            return obs[:, :solo]
        others = obs[:, solo:].reshape(len(obs), num_players - 1, k + 2)
        order = np.argsort(-others[:, :, k + 1], axis=1, kind="stable")[:, :shown]
        picked = np.take_along_axis(others, order[:, :, None], axis=1)
        return np.concatenate([obs[:, :solo], picked.reshape(len(obs), -1)], axis=1)

    return view


def _farkle_view(model_players: int, num_players: int) -> SeatView:
    table = observation_size(FarkleRules(), num_players)  # width does not depend on rule values
    shown = model_players - 1

    def view(obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float32)
        if obs.shape[-1] != table:
            raise ValueError(f"observation of width {obs.shape[-1]}, expected {table} ({num_players} seats)")
        b = len(obs)
        others = -np.sort(-obs[:, 48 : 48 + num_players - 1], axis=1)  # strongest first
        picked = np.zeros((b, shown), dtype=np.float32)
        m = min(shown, others.shape[1])
        picked[:, :m] = others[:, :m]
        lead = (picked.max(axis=1) - obs[:, 45]) if shown else np.zeros(b, dtype=np.float32)
        return np.concatenate([obs[:, :48], picked, lead[:, None]], axis=1).astype(np.float32)

    return view
