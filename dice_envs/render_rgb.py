"""``render_mode="rgb_array"``: the game as an image (numpy only), so Gymnasium's ``RecordVideo`` works.

:func:`render_rgb` draws the current throw's dice as dice (pips; held dice on a yellow ground)
and below them the text of :func:`dice_envs.render.render_text`: the score card of a scorecard
game or the Farkle table. Every frame of an env has the same size (:func:`frame_size`), as video
encoders need. The glyphs are a 6x11 pixel bitmap font embedded below (ASCII 32-126), so no
imaging library is needed.

>>> from dice_envs.rules import make_rules

>>> from dice_envs.engine import new_game
>>> frame = render_rgb(new_game(make_rules("spiffel"), num_players=2, seed=0))
>>> frame.shape, frame.dtype.name
((616, 600, 3), 'uint8')
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .engine import FarkleGame, ScorecardGame
from .render import render_text

__all__ = ["FRAME_COLUMNS", "FRAME_LINES", "frame_size", "render_rgb", "text_image"]

#: Text area of a frame, in characters (longer lines and extra lines are cut).
FRAME_COLUMNS = 100
FRAME_LINES = 48
_CW, _CH = 6, 11  # glyph cell
_DICE_BAND = 88  # pixels above the text: the dice
_DIE = 56
_BG = np.array([250, 248, 240], dtype=np.uint8)
_INK = np.array([20, 20, 30], dtype=np.uint8)
_HELD = np.array([255, 222, 89], dtype=np.uint8)

_FONT_HEX = (
    "000000000000000000000000000018181818001800000000001414140000000000000014143e14143e14140000081e32"
    "3c1e06363c08000000382a3c081e2a0e00000000001c30183e2c3e000000000c08100000000000000000040818181818"
    "080400000010080c0c0c0c0810000000083c1824000000000000000008083e080800000000000000000000000c081000"
    "000000003e00000000000000000000000000180000000002020404080810100000001c36363636361c000000000c3c0c"
    "0c0c0c3f000000001c36060c18363e000000001c36061c06361c00000000060e16363f0606000000003e303c3606263c"
    "000000001c36303c36361c000000003e36060c0c1818000000001c36361c36361c000000001c36361e06361c00000000"
    "00000018000018000000000000001800001810200000000c1830180c000000000000003c003c00000000000000180c06"
    "0c180000000000001c260c180018000000001c32262a2a27301c000000003c1c143e363700000000003c363c36363c00"
    "000000001e363030361c00000000003c363636363c00000000003e303c30363e00000000003e303c3030380000000000"
    "1c36303e361e000000000037363e36363700000000003c181818183c00000000001e0c0c2c2c3800000000003634383c"
    "363b000000000038303030363e00000000002236363e2a2a0000000000373a3a36363200000000001c363636361c0000"
    "0000003c36363c303800000000001c363636361c06000000003c36363c363b00000000001e323c0e263c00000000003e"
    "1a1818183c000000000037363636361c00000000003736141c1c0800000000002b2a2a3e1c140000000000331e0c0c1e"
    "33000000000033331e0c0c1e00000000003e360c18363e000000001c1818181818181c00000020201010080804040000"
    "001c0c0c0c0c0c0c1c000000081c36000000000000000000000000000000003f0000180804000000000000000000001c"
    "361e363f0000000030303c3636363c0000000000001c3630361c000000000e061e3636361f0000000000001c363e301e"
    "000000000e183e1818183e0000000000001b3636361e063c000030303c36363636000000000c003c0c0c0c3f00000000"
    "0c003c0c0c0c0c0c3800003030363c383c37000000003c0c0c0c0c0c3f0000000000003c3e2a2a2a0000000000002c36"
    "3636360000000000001c3636361c0000000000003c3636363c3038000000001b3636361e060f00000000371d18183c00"
    "00000000001e381e073e0000000018183e18181b0e000000000000363636361f00000000000036361c1c080000000000"
    "002b2a3e1e140000000000003b1e0c1e37000000000000373636141c1830000000003e2c18363e00000000060c0c180c"
    "0c0c0600000000080808080808080000003018180c1818183000000000001a2c0000000000"
)


def _glyphs() -> np.ndarray:
    raw = bytes.fromhex("".join(_FONT_HEX))
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8)).reshape(-1, _CH, 8)[:, :, 2:]
    return bits.astype(bool)  # (95, 11, 6)


_GLYPHS = _glyphs()


def frame_size() -> tuple[int, int]:
    """``(height, width)`` of every frame."""
    return _DICE_BAND + FRAME_LINES * _CH, FRAME_COLUMNS * _CW


def text_image(text: str, lines: int = FRAME_LINES, columns: int = FRAME_COLUMNS) -> np.ndarray:
    """``text`` drawn into a ``(lines * 11, columns * 6)`` boolean ink mask (cut to fit)."""
    codes = np.full((lines, columns), 0, dtype=np.int64)  # 0 = space
    for r, line in enumerate(text.splitlines()[:lines]):
        for c, ch in enumerate(line[:columns]):
            o = ord(ch)
            codes[r, c] = o - 32 if 32 <= o < 127 else ord("?") - 32
    ink = _GLYPHS[codes]  # (lines, columns, 11, 6)
    return ink.transpose(0, 2, 1, 3).reshape(lines * _CH, columns * _CW)


_PIPS = {
    1: [(1, 1)],
    2: [(0, 0), (2, 2)],
    3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (0, 2), (2, 0), (2, 2)],
    5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)],
    6: [(0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)],
}


def _draw_die(img: np.ndarray, top: int, left: int, face: int, held: bool) -> None:
    s = _DIE
    img[top : top + s, left : left + s] = _INK
    img[top + 2 : top + s - 2, left + 2 : left + s - 2] = _HELD if held else 255
    yy, xx = np.mgrid[0:s, 0:s]
    for r, c in _PIPS[face]:
        cy, cx = s * (1 + 2 * r) / 6, s * (1 + 2 * c) / 6
        pip = (yy - cy) ** 2 + (xx - cx) ** 2 <= (s / 11) ** 2
        img[top : top + s, left : left + s][pip] = _INK


def _held_flags(dice: Sequence[int], held: Sequence[int] | None) -> list[bool]:
    pool = list(held or ())
    flags = []
    for f in dice:
        flags.append(f in pool)
        if f in pool:
            pool.remove(f)
    return flags


def render_rgb(
    game: ScorecardGame | FarkleGame, held: Sequence[int] | None = None, names: Sequence[str] | None = None
) -> np.ndarray:
    """The game as an ``(H, W, 3)`` ``uint8`` image of :func:`frame_size`: dice, then the card/table."""
    h, w = frame_size()
    img = np.empty((h, w, 3), dtype=np.uint8)
    img[:] = _BG
    dice = () if game.done else tuple(game.dice)
    for i, (face, is_held) in enumerate(zip(dice, _held_flags(dice, held), strict=True)):
        if 1 <= face <= 6:
            _draw_die(img, 16, 16 + i * (_DIE + 16), int(face), is_held)
    ink = text_image(render_text(game, held=held, names=names))
    img[_DICE_BAND:][ink] = _INK
    return img
