"""Named observation layouts: where each field of an observation lives, written once.

Every reader and writer of observations — :func:`dice_envs.encoding.encode` / ``decode`` /
``observation_bounds``, the batched engines' ``observe`` and every built-in agent — takes the
field positions and scales from the layout of the observation's encoding, never from numeric
offsets. A new encoding version is a new layout, and every reader follows it.

A field stores ``value / scale`` (``scale`` 1 for flags and one-hot blocks); :meth:`Layout.read`
undoes the scaling and rounds to the integer game fact.

>>> from dice_envs.rules import make_rules
>>> lay = layout(make_rules("farkle"), 2)
>>> lay.encoding, lay.size, lay.slice("turn_total"), lay.scale("banked")
('farkle-v3', 52, slice(43, 44, None), 10000.0)
>>> lay.names[:4]
('dice', 'face_counts', 'n_dice', 'turn_total')
>>> [f.name for f in lay.others("banked")]
['other1_banked']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .rules import FarkleRules, RuleConfig, ScorecardRules

__all__ = ["ENCODING_VERSION", "Field", "Layout", "encoding_family", "layout", "legacy_size"]

#: Version of each family's encoding; bump on any change of layout or scaling. (Farkle v2 dropped
#: an always-zero spare slot that v1 reserved after the ``lead`` field; v3 appended the ``seat`` field.)
ENCODING_VERSION: dict[str, int] = {"scorecard": 1, "farkle": 3}


@dataclass(frozen=True)
class Field:
    """One named field: ``size`` values from ``start``, each the game fact divided by ``scale``."""

    name: str
    start: int
    size: int
    scale: float
    doc: str

    @property
    def slice(self) -> slice:
        """The field's positions in the observation vector."""
        return slice(self.start, self.start + self.size)


class Layout:
    """The ordered fields of one encoding for one rule configuration and player count.

    Built once per ``(rules, num_players)`` by :func:`layout` (cached); read-only.
    """

    def __init__(self, encoding: str, fields: Sequence[tuple[str, int, float, str]]) -> None:
        built, start = [], 0
        for name, size, scale, doc in fields:
            built.append(Field(name, start, int(size), float(scale), doc))
            start += int(size)
        self.encoding = encoding
        self.fields: tuple[Field, ...] = tuple(built)
        self.size = start
        self._by_name = {f.name: f for f in self.fields}
        if len(self._by_name) != len(self.fields):  # pragma: no cover - guarded by the builders
            raise ValueError(f"duplicate field names in layout {encoding}")

    @property
    def names(self) -> tuple[str, ...]:
        """Field names in order."""
        return tuple(f.name for f in self.fields)

    def field(self, name: str) -> Field:
        """The field called ``name``; ``KeyError`` naming the fields when there is none."""
        try:
            return self._by_name[name]
        except KeyError:
            known = ", ".join(self.names)
            raise KeyError(f"no field {name!r} in layout {self.encoding}; fields: {known}") from None

    def slice(self, name: str) -> slice:
        """Positions of field ``name``."""
        return self.field(name).slice

    def index(self, name: str) -> int:
        """Position of the one-value field ``name``."""
        f = self.field(name)
        if f.size != 1:
            raise ValueError(f"field {name!r} of {self.encoding} holds {f.size} values; use slice()")
        return f.start

    def scale(self, name: str) -> float:
        """What one unit of field ``name`` is worth in game units."""
        return self.field(name).scale

    def others(self, kind: str) -> list[Field]:
        """The per-opponent fields ``other1_<kind>``, ``other2_<kind>``, ... in turn order after the own."""
        out, i = [], 1
        while f"other{i}_{kind}" in self._by_name:
            out.append(self._by_name[f"other{i}_{kind}"])
            i += 1
        return out

    def read(self, obs: np.ndarray, name: str) -> np.ndarray:
        """Field ``name`` of observations ``obs`` (``(..., size)``) in game units, rounded to integers.

        One-value fields drop their last axis: ``(B, size) -> (B,)``.
        """
        f = self.field(name)
        values = np.asarray(obs)[..., f.slice]
        if f.size == 1:
            values = values[..., 0]
        return np.rint(np.asarray(values, dtype=np.float64) * f.scale).astype(np.int64)

    def flag(self, obs: np.ndarray, name: str) -> np.ndarray:
        """One-value field ``name`` of ``obs`` as booleans (``> 0.5``)."""
        return np.asarray(obs)[..., self.index(name)] > 0.5

    def __repr__(self) -> str:
        return f"Layout({self.encoding!r}, size={self.size}, fields={list(self.names)})"


#: Older encodings whose observation is the leading part of the current one: the first field the
#: older version lacks. (Farkle v3 only appended fields to v2, so a v2 observation is a v3 one
#: cut before ``seat``.)
_LEGACY_PREFIX: dict[str, tuple[str, str]] = {"farkle-v2": ("farkle-v3", "seat")}


def legacy_size(encoding: str, rules: RuleConfig, num_players: int) -> int | None:
    """Length of an observation of the older ``encoding`` when it is the leading part of the
    current observation of ``rules`` with ``num_players`` seats (``None`` otherwise): a model saved
    with that encoding reads the current observations cut to that length.

    >>> from dice_envs.rules import make_rules
    >>> legacy_size("farkle-v2", make_rules("farkle"), 2), legacy_size("farkle-v1", make_rules("farkle"), 2)
    (50, None)
    """
    lay = layout(rules, num_players)
    current, first_new = _LEGACY_PREFIX.get(encoding, ("", ""))
    return lay.field(first_new).start if current == lay.encoding else None


def encoding_family(rules: RuleConfig) -> str:
    """``"farkle"`` or ``"scorecard"``: the encoding family of ``rules``."""
    return "farkle" if isinstance(rules, FarkleRules) else "scorecard"


def layout(rules: RuleConfig, num_players: int) -> Layout:
    """The observation layout of ``rules`` with ``num_players`` seats (built once, cached)."""
    return _layout(rules, int(num_players))


@lru_cache(maxsize=256)
def _layout(rules: RuleConfig, n: int) -> Layout:
    fam = encoding_family(rules)
    enc = f"{fam}-v{ENCODING_VERSION[fam]}"
    if isinstance(rules, FarkleRules):
        target = float(rules.target)
        fields: list[tuple[str, int, float, str]] = [
            ("dice", 36, 1.0, "one-hot face of each of up to 6 sorted dice (zeros if absent)"),
            ("face_counts", 6, 6.0, "dice showing each face / 6"),
            ("n_dice", 1, 6.0, "dice in the current throw / 6"),
            ("turn_total", 1, 1000.0, "turn total / 1000"),
            ("first_throw", 1, 1.0, "1 on the turn's first throw"),
            ("banked", 1, target, "own banked total / target"),
            ("turns", 1, float(rules.max_turns or 100), "own turns taken / max_turns (or / 100 uncapped)"),
            ("final_round", 1, 1.0, "1 once some seat reached the target"),
        ]
        fields += [(f"other{i}_banked", 1, target, f"banked of seat +{i} / target") for i in range(1, n)]
        fields.append(("lead", 1, target, "(best other total - own total) / target (0 in solitaire)"))
        fields.append(("seat", n, 1.0, "one-hot of the own seat (seat 0 throws first in each round)"))
        return Layout(enc, fields)
    assert isinstance(rules, ScorecardRules)
    k, t = rules.num_boxes, rules.num_throws  # type: ignore[attr-defined]
    fields = [
        ("dice", 30, 1.0, "one-hot face of each of the 5 sorted dice"),
        ("face_counts", 6, 5.0, "dice showing each face / 5"),
        ("throw", t, 1.0, "one-hot of the throw number (1..T) of the current turn"),
        ("open", k, 1.0, "1 where the own box is still open"),
        ("points", k, 50.0, "points in each own box / 50 (0 while open)"),
        ("upper_total", 1, 100.0, "own upper total / 100"),
        ("upper_bonus", 1, 1.0, "1 once the upper bonus is earned"),
        ("bonuses", 1, 10.0, "five-of-a-kind bonuses earned / 10"),
        ("five_kind_50", 1, 1.0, "1 when the own five-of-a-kind box holds 50"),
        ("bonus_due", 1, 1.0, "1 when entering the current dice now earns a bonus"),
        ("joker", 1, 1.0, "1 when joker scoring applies to the current dice"),
        ("round", 1, float(k), "current round (0-based) / K"),
        ("total", 1, 400.0, "own grand total / 400"),
        ("potential", k, 50.0, "points the current dice would score in each box / 50"),
    ]
    for i in range(1, n):
        fields += [
            (f"other{i}_open", k, 1.0, f"open boxes of seat +{i}"),
            (f"other{i}_upper_total", 1, 100.0, f"upper total of seat +{i} / 100"),
            (f"other{i}_total", 1, 400.0, f"grand total of seat +{i} / 400"),
        ]
    return Layout(enc, fields)
