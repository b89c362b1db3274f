"""The search learner's Farkle games (``trainer: search`` with ``game: farkle``, any seats).

Each iteration the search agent over the current network
(:class:`~agents.players.search.farkle.FarkleSearchAgent`) plays itself in every seat on the game
runner; every turn start it searches before the final round is a training state, its target the
searched value (every seat's chance of winning: the turn maximised exactly over the dice, over the
network's values of the turns that follow, the final round searched to the end). The network is
fitted to them by cross-entropy on its softmax (:func:`fit_farkle`). No solver value is read.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.evaluation.runner import dice_seed, rotations, run_games
from agents.evaluation.stats import win_shares
from agents.players.search.farkle import FarkleSearchAgent, farkle_features
from agents.players.search.value import ValueNet
from agents.solver.farkle_win import STEP
from dice_envs.rules import FarkleRules

__all__ = ["evaluate_farkle", "farkle_loss", "farkle_xy", "play_farkle"]


def play_farkle(rules: FarkleRules, players: int, net: ValueNet, games: int, seed: int) -> tuple[Any, ...]:
    """``games`` self-play games of ``net``'s agent from dice seed ``seed``: ``(states, targets,
    steps, seat-0 win share)``; ``states`` ``(n, 1 + N)`` rows ``(mover, *totals in steps)``
    (the game's start first), ``targets`` ``(n, N)`` their searched chances in seat order."""
    agent = FarkleSearchAgent(rules, players, net=net, record=True)
    lineups = np.zeros((games, players), dtype=np.int64)
    out = run_games(rules, [agent], lineups, [dice_seed(seed, g) for g in range(games)], agent_seeds=[seed])
    keys = sorted(agent.starts)
    states = np.array(keys, dtype=np.int64)
    states[:, 1:] //= STEP
    targets = np.array([agent.starts[k] for k in keys])
    return states, targets, agent.decisions, float(win_shares(out.winners)[:, 0].mean())


def farkle_xy(rules: FarkleRules, states: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Features and targets (the mover's chance first, then the others in play order) to fit."""
    n, N = targets.shape
    movers = states[:, 0]
    y = targets[np.arange(n)[:, None], (movers[:, None] + np.arange(N)) % N]
    return farkle_features(rules, movers, states[:, 1:]), np.clip(y, 0.0, 1.0)


def farkle_loss(z: Any, y: Any) -> Any:
    """Cross-entropy of the softmax of outputs ``z`` against target chances ``y`` (torch)."""
    import torch

    return -(y * torch.log_softmax(z, dim=1)).sum(dim=1).mean()


def evaluate_farkle(
    rules: FarkleRules, players: int, net: ValueNet, opponent: Any, games: int, seed: int
) -> tuple[float, float]:
    """``net``'s agent against ``opponent`` in every other seat: its mean win share (ties shared)
    and the standard error over deals, each deal played in every seat rotation on the same dice."""
    agent = FarkleSearchAgent(rules, players, net=net)
    deals = max(1, games // players)
    rot = np.array(rotations([0] + [1] * (players - 1)), dtype=np.int64)
    lineups = np.tile(rot, (deals, 1))
    seeds = [dice_seed(seed, d) for d in range(deals) for _ in range(players)]
    out = run_games(rules, [agent, opponent], lineups, seeds, agent_seeds=[seed, None])
    shares = (win_shares(out.winners) * (lineups == 0)).sum(axis=1).reshape(deals, players).mean(axis=1)
    se = float(shares.std(ddof=1) / np.sqrt(deals)) if deals > 1 else 0.0
    return float(shares.mean()), se
