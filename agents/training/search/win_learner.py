"""``trainer: search`` with ``reward: win``: a win chance of two-player turn starts, from self-play.

Fitted value iteration as for solitaire points (:mod:`agents.training.search.learner`), on the two-player
engine. Each iteration:

1. **self-play** ``games_per_iteration`` two-player games, both seats the same search over the
   current network (:func:`agents.players.search.win_play.play_win_games`): each turn is searched exactly
   to its end over the network's win chance of the other player's next turn start (exact 1, 1/2 or
   0 where the entry ends the game);
2. **targets**: the searched win chance of each turn start met;
3. **fit** the network (sigmoid output) to the targets of the last ``buffer_iterations``
   iterations with binary cross-entropy: ``fit_steps`` Adam steps on minibatches of
   ``batch_size``, the learning rate linear from ``learning_rate`` to ``lr_final``.

It starts from random weights and never reads the solver's values. Every ``eval_every``
iterations the network's agent (:class:`agents.players.search.win_agent.WinSearchAgent`) plays
``eval_games`` games against ``eval_opponent`` on dice never used for training, each deal once
from each seat (the game runner, :func:`agents.evaluation.regret.seat_games`); the win rate (ties
1/2) and its standard error are the learning curve. These games do not feed the learning.

Products as for solitaire: ``<name>.npz`` and its card ``<name>.json`` (``reward: win``,
``num_players: 2``), ``progress.csv``, ``learning_curve.png``, ``config.json``, ``checkpoints/``.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from agents.players.search.value import ValueNet
from agents.players.search.win import WIN_FEATURES, random_win_net, win_features
from agents.players.search.win_play import play_win_games
from agents.solver.cache import single_thread_blas
from agents.solver.scorecard import turn_solver
from agents.training.artifacts import ProgressLog
from agents.training.products import TrainResult
from agents.training.search import products
from agents.training.search.config import SearchConfig
from agents.training.search.learner import EVAL_SEED_OFFSET, Iteration, fit, iterate
from dice_envs.io import atomic_write_bytes

__all__ = ["LEARNER", "match", "run", "train_win"]

#: How the card names the learner.
LEARNER = (
    "fitted value iteration over self-play turn starts of two-player games; targets: exact "
    "expectimax of the turn over the current win network (agents.training.search.win_learner); no solver "
    "values read"
)


def match(
    agent: Any, opponent: Any, rules: Any, games: int, seed: int, width: int = 1000
) -> tuple[float, float]:
    """``agent``'s win rate (ties 1/2) against ``opponent`` over ``games`` games: ``games / 2``
    deals, each played from both seats with the same dice (the game runner); the rate and its
    standard error over deals."""
    from agents.evaluation.regret import seat_games

    deals = games // 2
    shares = np.stack(
        [seat_games(agent, opponent, rules, seat, deals, seed, num_envs=width) for seat in (0, 1)], axis=1
    )
    per_deal = shares.mean(axis=1)
    se = float(per_deal.std(ddof=1) / np.sqrt(deals)) if deals > 1 else 0.0
    return float(per_deal.mean()), se


def evaluate_win(cfg: SearchConfig, net: ValueNet, games: int, seed: int) -> tuple[float, float]:
    """Win rate and its standard error of ``net``'s agent against ``cfg.eval_opponent``."""
    import agents
    from agents.players.search.win_agent import WinSearchAgent

    rules = cfg.rule_config()
    with single_thread_blas():
        opponent = agents.load(cfg.eval_opponent, game=rules, num_players=2)
        return match(WinSearchAgent(rules, 2, net=net), opponent, rules, games, seed)


def train_win(cfg: SearchConfig, folder: Path, resume: bool, command: str) -> TrainResult:
    """Run the win learner of ``cfg`` in ``folder`` (module docstring); the run's products."""
    solver = turn_solver(cfg.rule_config())

    def play(net: ValueNet, seed: int) -> Iteration:
        out = play_win_games(solver, net, cfg.games_per_iteration, seed)
        states = np.column_stack([out.own, out.other, out.d]).astype(np.int64)
        return Iteration(states, out.targets, out.steps, float((out.totals[:, 0] - out.totals[:, 1]).mean()))

    def fit_buffer(model: Any, opt: Any, buffer: list[Any], it: int) -> float:
        return _fit(cfg, model, opt, solver, buffer, it)

    def evaluate(net: ValueNet, games: int, seed: int) -> tuple[float, float]:
        return evaluate_win(cfg, net, games, seed)

    trained = iterate(
        cfg, folder, resume, random_win_net(solver, cfg.hidden, seed=cfg.seed), play, fit_buffer, evaluate
    )
    return save_win_model(
        cfg,
        folder,
        trained.net,
        command,
        games=trained.games,
        steps=trained.steps,
        wall_s=trained.wall_s,
        resumed_from=trained.resumed_from,
    )


def _fit(cfg: SearchConfig, model: Any, opt: Any, solver: Any, buffer: list[Any], it: int) -> float:
    """:func:`~agents.training.search.learner.fit` to the buffer's win targets (binary cross-entropy
    on the logit)."""
    import torch

    states = np.concatenate([s for s, _ in buffer])
    x = win_features(solver, states[:, :3], states[:, 3:5], states[:, 5])
    y = np.clip(np.concatenate([t for _, t in buffer]), 0.0, 1.0)
    return fit(cfg, model, opt, x, y, it, torch.nn.BCEWithLogitsLoss())


def save_win_model(
    cfg: SearchConfig,
    folder: Path,
    net: ValueNet,
    command: str,
    *,
    games: int,
    steps: int,
    wall_s: float,
    resumed_from: Path | None,
) -> TrainResult:
    """Evaluate ``net`` on ``final_eval_games`` games, write ``<name>.npz``, its card and the curve."""
    evaluation: dict[str, Any] = {}
    if cfg.final_eval_games:
        rate, se = evaluate_win(cfg, net, cfg.final_eval_games, EVAL_SEED_OFFSET + 7_777_777 + cfg.seed)
        evaluation = {
            "games": cfg.final_eval_games,
            "opponent": cfg.eval_opponent,
            "win_rate": rate,
            "stderr": se,
        }
    curve = products.learning_curve(ProgressLog.read(folder / "progress.csv"))
    table = ""
    if evaluation:
        rate, se = evaluation["win_rate"], evaluation["stderr"]
        table = (
            f"{cfg.game}, 2 players: win rate {rate:.4f} ± {se:.4f} (s.e.), 95% CI "
            f"[{rate - 1.96 * se:.4f}, {rate + 1.96 * se:.4f}] against {cfg.eval_opponent} "
            f"over {cfg.final_eval_games} games"
        )
    value = {"features": WIN_FEATURES, "hidden": net.hidden, "activation": "relu", "output": "sigmoid"}
    return products.save_model(
        cfg,
        folder,
        net,
        command,
        games=games,
        steps=steps,
        wall_s=wall_s,
        resumed_from=resumed_from,
        evaluation=evaluation,
        table=table,
        value=value,
        curve_path=plot_win_curve(folder, cfg, curve),
        learner=LEARNER,
        reward="win",
    )


def plot_win_curve(folder: Path, cfg: SearchConfig, curve: list[dict[str, float]]) -> Path | None:
    """``learning_curve.png``: the evaluation win rate against wall-clock minutes and games played."""
    if not curve:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    wall, games, rate, se = (
        np.array([c.get(k, 0.0) for c in curve]) for k in ("wall_s", "games", "eval", "eval_se")
    )
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, x, label in ((axes[0], wall / 60, "wall-clock minutes"), (axes[1], games, "games played")):
        ax.plot(x, rate, "o-", ms=3, color="tab:orange", label=f"win rate ({cfg.eval_games} games, ± s.e.)")
        ax.fill_between(x, rate - se, rate + se, color="tab:orange", alpha=0.25)
        ax.axhline(0.5, color="0.3", ls="--", lw=1, label="even")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"win rate against {cfg.eval_opponent}")
    axes[1].legend(loc="lower right")
    fig.suptitle(f"{cfg.name}: search learner for the win on {cfg.game}, 2 players")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, dpi=100, format="png")
    plt.close(fig)
    return atomic_write_bytes(folder / "learning_curve.png", buf.getvalue(), overwrite=True)


def run(cfg: SearchConfig, folder: Path, resume: bool, command: str) -> TrainResult:
    """:func:`train_win` in ``folder`` (from :func:`agents.training.train.output_folder`)."""
    return train_win(cfg, folder, resume, command)
