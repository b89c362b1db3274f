"""What every one-game machine shares: reading the action handed to ``apply``."""

from __future__ import annotations

import numpy as np

__all__ = ["integer_action"]


def integer_action(action: object, done: bool) -> int | None:
    """The first step of every ``apply``: a finished game refuses any action (``ValueError``);
    otherwise ``action`` as a Python ``int``, or ``None`` when it is not an integer (bools are not).

    >>> integer_action(np.int64(3), False), integer_action(True, False), integer_action("3", False)
    (3, None, None)
    """
    if done:
        raise ValueError("the game is over; no action is legal")
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    return None
