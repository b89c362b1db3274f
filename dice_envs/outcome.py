"""How a step ends, for every face of a game: legality, the penalty, terminated or truncated, win rewards.

The PettingZoo env (:mod:`dice_envs.multiagent.base`), the Gymnasium env
(:mod:`dice_envs.wrappers`), the native vector env (:mod:`dice_envs.vector.env`) and the RLlib env
(``agents.ray.rllib.env``) test legality with :func:`is_legal` / :func:`legal` and take the rewards
and flags of a step that ends an episode from :func:`step_outcome`, so the four agree by
construction. The rule:

* **Legal action**: an index of the action space whose mask entry is set. Anything else is
  illegal, an integer outside the space (``-1``, ``45`` in ``Discrete(45)``) included.
* **Game over by its rules** (the score cards are full; Farkle's final round is played):
  ``terminated=True, truncated=False``.
* **Game cut short** by a limit outside the game's scoring (Farkle's ``max_turns``):
  ``terminated=False, truncated=True``. Its position still has a value, so a learner that
  bootstraps must not treat it as final; ``"win"`` rewards are scored on the totals at the cut.
* **Illegal action** under ``illegal_action="penalize"``: the episode ends with
  ``terminated=True, truncated=False``: the env's rule ends it, as a forfeit ends a board game
  (Pgx's ``core.Env.step`` does the same), and no time limit cut it. The game's state is left
  as it was. The offender gets ``illegal_reward``, every other seat 0, and that reward *replaces*
  whatever else the step would have given (points scored by the opponents since the offender's
  last step are dropped). Under ``"raise"`` the face raises ``ValueError`` naming the legal
  actions (:func:`illegal_action_error`) before anything changes. (PettingZoo's own
  ``TerminateIllegalWrapper`` sets ``truncated`` as well; here ``truncated`` means only a cut.)
* **Win rewards** (``reward="win"``): 0 until the game is over, then zero-sum: the ``k`` seats
  with the best total share :data:`WIN_REWARD` (``+1/k`` each), the ``N - k`` others share
  :data:`LOSS_REWARD` (``-1/(N-k)`` each); when all seats tie every seat gets
  :data:`DRAW_REWARD`. Under ``reward="score"`` the end of the game adds nothing.

>>> o = step_outcome(2, over=True, totals=[120, 90], reward="win")
>>> o.rewards.tolist(), bool(o.terminated), bool(o.truncated)
([1.0, -1.0], True, False)
>>> o = step_outcome(2, illegal=True, actor=1, illegal_reward=-1.0)
>>> o.rewards.tolist(), bool(o.terminated), bool(o.truncated), bool(o.penalized)
([0.0, -1.0], True, False, True)
>>> o = step_outcome(2, over=True, cut=True, totals=[50, 50], reward="win")
>>> o.rewards.tolist(), bool(o.terminated), bool(o.truncated)
([0.0, 0.0], False, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "DRAW_REWARD",
    "LOSS_REWARD",
    "WIN_REWARD",
    "Outcome",
    "batch_win_rewards",
    "illegal_action_error",
    "is_legal",
    "legal",
    "step_outcome",
    "win_rewards",
]

#: What the winners share under ``reward="win"``.
WIN_REWARD = 1.0
#: What the losers share under ``reward="win"``.
LOSS_REWARD = -1.0
#: What every seat gets when all seats tie.
DRAW_REWARD = 0.0


def is_legal(action: int, mask: np.ndarray) -> bool:
    """Whether ``action`` (an integer) is an index of ``mask`` whose entry is set."""
    return 0 <= action < len(mask) and bool(mask[action])


def legal(actions: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """:func:`is_legal` per row: ``actions`` ``(n,)`` integers, ``masks`` ``(n, n_actions)``.

    >>> legal(np.array([1, 2, -1]), np.array([[0, 1], [1, 0], [1, 1]], dtype=bool)).tolist()
    [True, False, False]
    """
    ok = (actions >= 0) & (actions < masks.shape[1])
    ok[ok] = masks[np.flatnonzero(ok), actions[ok]]
    return ok


def illegal_action_error(action: Any, mask: np.ndarray, where: str = "") -> ValueError:
    """The error of an illegal action under ``illegal_action="raise"``: the action, ``where``
    (e.g. ``" for seat 1"``) and the legal actions."""
    return ValueError(f"illegal action {action!r}{where}; legal actions: {np.flatnonzero(mask).tolist()}")


def batch_win_rewards(totals: np.ndarray) -> np.ndarray:
    """The win rewards of every seat of every game: ``totals`` ``(..., N)`` → ``(..., N)`` floats.

    >>> batch_win_rewards(np.array([[10, 20], [30, 30], [30, 10]])).tolist()
    [[-1.0, 1.0], [0.0, 0.0], [1.0, -1.0]]
    """
    totals = np.asarray(totals)
    n = totals.shape[-1]
    best = totals == totals.max(axis=-1, keepdims=True)
    k = best.sum(axis=-1, keepdims=True)
    out = np.where(best, WIN_REWARD / k, LOSS_REWARD / np.maximum(n - k, 1))
    return np.where(k == n, DRAW_REWARD, out)


def win_rewards(totals: Sequence[float]) -> list[float]:
    """The win rewards of one game's final ``totals``, by seat (:func:`batch_win_rewards`).

    >>> win_rewards([10, 20])
    [-1.0, 1.0]
    >>> win_rewards([30, 30, 10])
    [0.5, 0.5, -1.0]
    >>> win_rewards([30, 10, 10])
    [1.0, -0.5, -0.5]
    >>> win_rewards([7, 7])
    [0.0, 0.0]
    """
    return batch_win_rewards(np.asarray(totals)).tolist()


@dataclass(frozen=True)
class Outcome:
    """The end of a step, by game (scalars for one game, arrays of shape ``(n,)`` for ``n``).

    Attributes:
        rewards: ``(..., N)`` the reward the end of the step gives each seat (win rewards, or
            the penalty); added to the step's other rewards, unless ``penalized``.
        terminated: the episode is over by the game's or the env's rule.
        truncated: the episode was cut short (``max_turns``).
        penalized: an illegal action ended it; ``rewards`` replace the step's other rewards.
    """

    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    penalized: np.ndarray


def step_outcome(
    num_players: int,
    *,
    over: Any = False,
    cut: Any = False,
    illegal: Any = False,
    totals: Any = None,
    actor: Any = None,
    reward: str = "score",
    illegal_reward: float | None = None,
) -> Outcome:
    """The :class:`Outcome` of a step, by the rule of the module docstring.

    Args:
        num_players: seats per game.
        over: the game is over after a legal move (the engine's ``done``).
        cut: it ended by a cut (the engine's ``truncated``); read only where ``over``.
        illegal: the action was illegal (``illegal_action="penalize"``); the game did not move.
        totals: ``(..., N)`` the totals by seat; needed where ``over`` under ``reward="win"``.
        actor: the seat that chose the action; needed where ``illegal``.
        reward: the env's reward mode, ``"score"`` or ``"win"``.
        illegal_reward: the offender's reward; needed where ``illegal``.

    ``over``, ``cut``, ``illegal`` and ``actor`` are scalars for one game or ``(n,)`` arrays.
    """
    illegal = np.asarray(illegal, dtype=bool)
    done = np.asarray(over, dtype=bool) & ~illegal
    truncated = done & np.asarray(cut, dtype=bool)
    shape = np.broadcast_shapes(illegal.shape, done.shape, truncated.shape)
    rewards = np.zeros((*shape, num_players))
    if reward == "win" and done.any():
        if totals is None:
            raise ValueError("step_outcome: a game over under reward='win' needs its totals")
        rewards = np.where(done[..., None], batch_win_rewards(totals), rewards)
    if illegal.any():
        if actor is None or illegal_reward is None:
            raise ValueError("step_outcome: an illegal action needs its actor and the illegal_reward")
        offender = np.arange(num_players) == np.asarray(actor)[..., None]
        penalty = np.where(offender, float(illegal_reward), 0.0)
        rewards = np.where(illegal[..., None], penalty, rewards)
    terminated = illegal | (done & ~truncated)
    return Outcome(rewards, terminated, truncated, illegal)
