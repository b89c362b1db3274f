"""The Farkle turn flow as rule functions, written once for one game and for batches of games.

Every function takes plain values — Python ints and bools for one game, numpy arrays of one
value per game for a batch — and uses only table lookups, arithmetic, comparisons, ``&`` and
``|``, so the same call serves :class:`~dice_envs.engine.farkle_game.FarkleGame` (one game, at
Python-scalar speed) and :class:`~dice_envs.engine.farkle.FarkleEngine` (``N`` games at once),
and the solvers and built-in agents use it to read the rules rather than re-derive them.

A throw is an index into :func:`dice_envs.tables.farkle_turn_tables` (``t``): the sorted faces
``t.faces[throw]``, and ``t.no_throw`` for "no dice" (a finished game: no legal action).

The flow of a turn (RULES.md), in these functions:

1. :func:`throw` six dice. :func:`is_farkle`: the turn ends with nothing, and on the turn's
   first throw :func:`farkle_banked` wipes the banked total (bankruptcy).
2. The player picks one of :func:`legal_masks` (an action ``mask + 64 * bank``,
   :func:`split_action`); :func:`set_aside` adds its points to the turn total and says how many
   dice are thrown next (:func:`dice_to_throw`: all six after hot dice).
3. Banking (allowed when :func:`may_bank`) adds the turn total to the banked total; throwing on
   goes back to 1 with the dice left (no longer the first throw).
4. :func:`end_turn` counts the turn, starts the final round when the target is reached and ends
   the game after the last seat's turn of the final round, or of turn ``max_turns``.

>>> from dice_envs.tables import farkle_turn_tables
>>> t = farkle_turn_tables()
>>> i = t.roll_index[(1, 1, 1, 2, 3, 5)]
>>> bool(is_farkle(t, i)), int(legal_masks(t, i, 0, 350).sum())  # 7 selections, 2 of them bankable
(False, 9)
>>> tt, left = set_aside(t, i, 0, 0b100111)  # 1-1-1 + 5
>>> int(tt), int(left), bool(may_bank(tt, 350))
(1050, 2, True)
>>> end_turn(0, 10_200, 7, -1, 2, 10_000, 100)  # seat 0 reaches the target: final round
(0, False, False, 1)
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from ..rules.farkle import BANK_FLAG, NUM_DICE, dice_to_throw
from ..tables import FarkleTurnTables, farkle_turn_tables

__all__ = [
    "NO_CAP",
    "FarkleTurnTables",
    "dice_to_throw",
    "end_turn",
    "farkle_banked",
    "farkle_turn_tables",
    "is_farkle",
    "is_legal",
    "legal_masks",
    "legal_row",
    "may_bank",
    "set_aside",
    "split_action",
    "throw",
    "throw_of_dice",
]

#: Stands in for ``max_turns=None`` in :func:`end_turn` (no game gets this far).
NO_CAP = 1 << 62

_POW6 = 6 ** np.arange(NUM_DICE, dtype=np.int64)

#: An int, a bool or an array of them (one per game).
V = TypeVar("V", int, bool, np.ndarray, Any)


def throw(t: FarkleTurnTables, n_dice: Any, code: Any) -> Any:
    """The throw index of ``n_dice`` dice showing the faces of ``code`` (faces ``f_j`` thrown in
    order: ``sum((f_j - 1) * 6**j)``, :func:`dice_envs.tables.face_code`)."""
    return t.code_roll[t.code_offset[n_dice] + code]


def throw_of_dice(t: FarkleTurnTables, dice: np.ndarray) -> np.ndarray:
    """The throw indices of sorted faces ``(..., 6)``, 0-padded after the last die (as
    :func:`dice_envs.encoding.decode_farkle_batch` gives them); no dice: ``t.no_throw``."""
    dice = np.asarray(dice, dtype=np.int64)
    n = (dice > 0).sum(axis=-1)
    code = ((dice - 1).clip(0) * _POW6).sum(axis=-1)
    return np.where(n > 0, throw(t, np.maximum(n, 1), code), t.no_throw)


def is_farkle(t: FarkleTurnTables, throw_index: Any) -> Any:
    """True where nothing in the throw scores: the turn ends and its total is lost."""
    return t.farkle[throw_index]


def split_action(action: V) -> tuple[V, V]:
    """``(mask, bank)`` of an action ``mask + 64 * bank``: dice set aside (bit ``i``: die ``i``
    of the sorted throw) and whether the player banks afterwards."""
    return action & (BANK_FLAG - 1), action >= BANK_FLAG


def may_bank(turn_total: V, bank_minimum: int) -> V:
    """Banking is allowed when the turn total (the set-aside points included) exceeds the minimum."""
    return turn_total > bank_minimum


def legal_row(t: FarkleTurnTables, throw_index: Any, turn_total: Any, bank_minimum: int) -> Any:
    """Index into ``t.mask_rows`` of the legal actions: every canonical scoring selection, and
    banking after those that make :func:`may_bank` true (none for ``t.no_throw``)."""
    b = (bank_minimum - turn_total) // t.step + 1
    b = b * (b > 0)  # clipped to 0 .. buckets - 1 with arithmetic (cheap on Python ints too)
    top = t.buckets - 1
    return t.mask_row.ravel()[throw_index * t.buckets + b - (b - top) * (b > top)]  # flat: one gather


def legal_masks(t: FarkleTurnTables, throw_index: Any, turn_total: Any, bank_minimum: int) -> np.ndarray:
    """Legal actions as a bool mask over the 128 actions: a fresh ``(N, 128)`` array for a batch,
    a read-only row of the table for one game."""
    row = legal_row(t, throw_index, turn_total, bank_minimum)
    return np.take(t.mask_rows, row, axis=0) if isinstance(row, np.ndarray) else t.mask_rows[row]


def is_legal(t: FarkleTurnTables, throw_index: Any, turn_total: Any, action: Any, bank_minimum: int) -> Any:
    """Whether ``action`` (``0 <= action < 128``) is legal (see :func:`legal_row`)."""
    return t.mask_rows[legal_row(t, throw_index, turn_total, bank_minimum), action]


def set_aside(t: FarkleTurnTables, throw_index: Any, turn_total: Any, mask: Any) -> tuple[Any, Any]:
    """``(turn total, dice to throw next)`` after setting the dice of a legal ``mask`` aside
    (the points from the rules' scoring, ``t.points``; the dice by :func:`dice_to_throw`)."""
    i = throw_index * BANK_FLAG + mask  # flat index: one cheap gather per table
    return turn_total + t.points.ravel()[i], t.next_dice.ravel()[i]


def farkle_banked(banked: V, first_throw: V, bankruptcy: bool) -> V:
    """The banked total after a farkle: wiped when it hit the turn's first throw and the
    ``bankruptcy`` rule holds, else kept."""
    return banked - banked * (first_throw & bankruptcy)


def end_turn(
    player: Any,
    banked: Any,
    turns: Any,
    final_round_by: Any,
    num_players: int,
    target: int,
    max_turns: int | None,
) -> tuple[Any, Any, Any, Any]:
    """The end of ``player``'s turn: ``(final_round_by, done, truncated, next_player)``.

    ``banked``: the player's banked total now; ``turns``: the player's turns, this one counted;
    ``final_round_by``: the seat that reached ``target`` first, ``-1`` for nobody yet (the
    player becomes it on reaching the target). The game ends after the last seat's turn once
    somebody reached the target, else it is *truncated* after the last seat's turn
    ``max_turns``; otherwise the next seat plays (``next_player`` is ``player`` when done).
    """
    reached = (banked >= target) > (final_round_by >= 0)  # bools: a > b is a & ~b
    final_round_by = final_round_by + (player - final_round_by) * reached
    over = final_round_by >= 0
    capped = turns >= (NO_CAP if max_turns is None else max_turns)
    if num_players == 1:  # solitaire: every turn is the last of its round
        truncated = capped > over
        done = over | truncated
        return final_round_by, done, truncated, player
    last = player == num_players - 1
    truncated = (last > over) & capped
    done = (last & over) | truncated
    return final_round_by, done, truncated, (player + 1 - done) % num_players
