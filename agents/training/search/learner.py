"""``trainer: search``: learn a value of turn starts from the agent's own games, from scratch.

Fitted value iteration over visited states (docs/guide/search.md), for ``reward: score`` (the
expected points of a solitaire game) or ``reward: win`` (the chance to win a two-player game, from
self-play; Farkle with any number of seats: :mod:`agents.training.search.farkle`). Each iteration
plays ``games_per_iteration`` games with the search agent over the current network (:func:`play`),
each turn searched exactly to its end; the targets are the searched values of the turn starts
met (a Bellman backup with the turn's chance summed exactly);
:func:`fit` fits the network to the targets of the last ``buffer_iterations`` iterations. It
never reads the exact solver's values. Evaluations (every ``eval_every`` iterations and after the
last) play dice seeds never used for training. What a run writes:
:mod:`agents.training.search.products`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from agents.players.search.agent import SearchAgent
from agents.players.search.farkle import random_farkle_net
from agents.players.search.play import play_games
from agents.players.search.value import VALUE_SCALE, LearnedValues, ValueNet, state_features
from agents.players.search.win import random_win_net, win_features
from agents.players.search.win_agent import WinSearchAgent
from agents.players.search.win_play import play_win_games
from agents.solver.cache import single_thread_blas
from agents.solver.scorecard import TurnSolver, turn_solver
from agents.training.artifacts import RunReporter, check_resume
from agents.training.products import TrainResult
from agents.training.score_table import format_table, solitaire_rows
from agents.training.search import farkle, products
from agents.training.search.config import SearchConfig
from dice_envs.io import atomic_write_text
from dice_envs.rules import FarkleRules

__all__ = [
    "EVAL_SEED_OFFSET",
    "Iteration",
    "evaluate",
    "final_evaluation",
    "fit",
    "match",
    "play",
    "prepare_folder",
    "run",
]

#: Evaluation games use dice seeds from here on; training games use seeds below it.
EVAL_SEED_OFFSET = 10**9
_FIELDS = ["steps", "iteration", "games", "wall_s", "train_return", "value_start", "loss", "eval", "eval_se"]


def _torch_net(net: ValueNet, threads: int) -> Any:
    """A torch copy of ``net`` (float32) to fit."""
    import torch

    torch.set_num_threads(threads)
    layers: list[Any] = []
    for i, (w, b) in enumerate(zip(net.weights, net.biases, strict=True)):
        lin = torch.nn.Linear(*w.shape)
        with torch.no_grad():
            lin.weight.copy_(torch.as_tensor(w.T))
            lin.bias.copy_(torch.as_tensor(b))
        layers += [lin] if i == len(net.weights) - 1 else [lin, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers)


def _numpy_net(model: Any) -> ValueNet:
    """The :class:`ValueNet` of a torch copy (weights as float64)."""
    lins = [m for m in model if hasattr(m, "weight")]
    return ValueNet(
        [m.weight.detach().double().numpy().T.copy() for m in lins],
        [m.bias.detach().double().numpy().copy() for m in lins],
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


def evaluate(
    cfg: SearchConfig, net: ValueNet | None, games: int, seed: int, agent: Any = None
) -> tuple[float, float]:
    """``net``'s agent (or ``agent``, a two-player win agent) over ``games`` games and the standard
    error: the mean score (points), or the win rate against ``cfg.eval_opponent`` (win; Farkle:
    in every other seat)."""
    rules = cfg.rule_config()
    with single_thread_blas():
        if isinstance(rules, FarkleRules):
            opponent = cfg.agent_specs[cfg.eval_opponent].build(cfg.num_players)
            return farkle.evaluate_farkle(rules, cfg.num_players, net, opponent, games, seed)
        if cfg.reward == "win":
            opponent = cfg.agent_specs[cfg.eval_opponent].build(2)
            bot = agent or WinSearchAgent(rules, 2, net=net, points=cfg.points_net())
            return match(bot, opponent, rules, games, seed)
        solver = turn_solver(rules)
        scores = play_games(solver, LearnedValues(net, solver), games, seed).scores
    return float(scores.mean()), float(scores.std(ddof=1) / np.sqrt(len(scores)))


class Iteration(NamedTuple):
    """What one iteration's games give the loop."""

    states: np.ndarray  #: turn-start states met (one row each)
    targets: np.ndarray  #: their searched values
    steps: int  #: actions taken
    train_return: float  #: the games' mean result (points; for the win the score difference)


def play(
    cfg: SearchConfig,
    solver: TurnSolver | None,
    net: ValueNet,
    seed: int,
    points: LearnedValues | None = None,
) -> Iteration:
    """The ``games_per_iteration`` training games of ``net`` from dice seed ``seed`` (a win network
    reading ``points``, the values of ``cfg.points_model``, when it has one)."""
    rules = cfg.rule_config()
    if isinstance(rules, FarkleRules):
        return Iteration(*farkle.play_farkle(rules, cfg.num_players, net, cfg.games_per_iteration, seed))
    assert solver is not None
    if cfg.reward == "win":
        won = play_win_games(
            solver, net, cfg.games_per_iteration, seed, points=points, td_lambda=cfg.td_lambda
        )
        states = np.column_stack([won.own, won.other, won.d]).astype(np.int64)
        return Iteration(states, won.targets, won.steps, float((won.totals[:, 0] - won.totals[:, 1]).mean()))
    out = play_games(solver, LearnedValues(net, solver), cfg.games_per_iteration, seed)
    return Iteration(out.states, out.targets, out.steps, float(out.scores.mean()))


def _fit_buffer(
    cfg: SearchConfig, model: Any, opt: Any, solver: Any, buffer: list[Any], it: int, points: Any = None
) -> float:
    """:func:`fit` to the buffer's states and targets: points / VALUE_SCALE with squared error, or
    the win chance with binary cross-entropy on the logit (Farkle: every seat's, on the softmax)."""
    import torch

    states = np.concatenate([s for s, _ in buffer])
    targets = np.concatenate([t for _, t in buffer])
    rules = cfg.rule_config()
    if isinstance(rules, FarkleRules):
        return fit(cfg, model, opt, *farkle.farkle_xy(rules, states, targets), it, farkle.farkle_loss)
    if cfg.reward == "win":
        x = win_features(
            solver, states[:, :3], states[:, 3:-1], states[:, -1], points
        )  # other: 2 or 3 columns
        return fit(cfg, model, opt, x, np.clip(targets, 0.0, 1.0), it, torch.nn.BCEWithLogitsLoss())
    x = state_features(solver, *states.T)
    return fit(cfg, model, opt, x, targets / VALUE_SCALE, it, lambda p, y: ((p - y) ** 2).mean())


def fit(
    cfg: SearchConfig, model: Any, opt: Any, x: np.ndarray, y: np.ndarray, it: int, loss_fn: Any
) -> float:
    """``fit_steps`` Adam steps of ``model`` on features ``x`` and targets ``y`` (minibatches of
    ``batch_size`` drawn as a function of the seed and iteration ``it``; the step size linear from
    ``learning_rate`` to ``lr_final`` over the run); ``loss_fn(output, target)``. The mean loss."""
    import torch

    x = torch.as_tensor(x, dtype=torch.float32)
    y = torch.as_tensor(y, dtype=torch.float32)
    frac = it / max(1, cfg.iterations - 1)
    for group in opt.param_groups:
        group["lr"] = cfg.learning_rate + frac * (cfg.lr_final - cfg.learning_rate)
    rng = np.random.default_rng([cfg.seed, it])  # minibatches: a function of the seed and iteration
    total = 0.0
    for _ in range(cfg.fit_steps):
        idx = torch.as_tensor(rng.integers(0, len(x), cfg.batch_size))
        out = model(x[idx])
        loss = loss_fn(out if y.ndim > 1 else out[:, 0], y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return total / max(1, cfg.fit_steps)


def prepare_folder(
    cfg: SearchConfig, folder: Path, resume: bool, model: Any, opt: Any
) -> tuple[Path, dict[str, Any]] | None:
    """Before any work, what a resume needs: the run's ``config.json`` equal to ``cfg`` but for
    its ``RESUMABLE`` keys (:func:`agents.training.artifacts.check_resume`) and its newest intact
    checkpoint loaded into ``model`` / ``opt`` (:func:`agents.training.search.products.load_checkpoint`);
    then ``config.json`` written. A refusal leaves the folder as it was. The checkpoint's path and
    state, or ``None`` for a fresh run."""
    got = None
    if resume:
        check_resume(cfg, folder)
        got = products.load_checkpoint(folder, model, opt)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / "config.json", json.dumps(cfg.to_dict(), indent=2) + "\n", overwrite=True)
    return got


def run(cfg: SearchConfig, folder: Path, resume: bool, command: str) -> TrainResult:
    """Run the search learner of ``cfg`` in ``folder`` (from
    :func:`agents.training.train.output_folder`; the module docstring); the run's products."""
    import torch

    if cfg.leaf == "normal":  # no win network to fit: agents.training.search.normal
        from agents.training.search import normal

        return normal.run(cfg, folder, command, final_evaluation)
    rules = cfg.rule_config()
    solver, win, points = None, cfg.reward == "win", None
    if isinstance(rules, FarkleRules):
        net = random_farkle_net(cfg.num_players, cfg.hidden, seed=cfg.seed)
    else:
        solver = turn_solver(rules)
        if win:
            net = random_win_net(solver, cfg.hidden, seed=cfg.seed, points=bool(cfg.points_model))
            points_net = cfg.points_net()  # read once; its values are kept as they are read
            points = None if points_net is None else LearnedValues(points_net, solver)
        else:
            net = ValueNet.random(solver, cfg.hidden, seed=cfg.seed)
    torch.manual_seed(cfg.seed)
    model = _torch_net(net, cfg.torch_threads)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
    start, games, steps, spent = 0, 0, 0, 0.0
    buffer: list[tuple[np.ndarray, np.ndarray]] = []
    resumed_from = None
    got = prepare_folder(cfg, folder, resume, model, opt)
    if got is not None:
        resumed_from, state = got
        start, games, steps, spent = (state[k] for k in ("iteration", "games", "steps", "wall_s"))
        buffer = state["buffer"]
        net = _numpy_net(model)
    log = RunReporter(
        folder,
        _FIELDS,
        steps=steps,
        resumed=resume,
        total_timesteps=cfg.iterations,
        tensorboard=False,
        progress_bar=cfg.progress_bar,
        unit="it",
    )
    if log.bar is not None:  # the bar counts iterations, not steps
        log.bar.n = start
        log.bar.refresh()
    t0 = time.perf_counter() - spent
    try:
        for it in range(start, cfg.iterations):
            with single_thread_blas():
                out = play(cfg, solver, net, cfg.seed_of(it), points)
            games += cfg.games_per_iteration
            steps += out.steps
            buffer = [*buffer, (out.states, out.targets)][-cfg.buffer_iterations :]
            loss = _fit_buffer(cfg, model, opt, solver, buffer, it, points)
            net = _numpy_net(model)
            row: dict[str, Any] = {
                "steps": steps,
                "iteration": it + 1,
                "games": games,
                "train_return": out.train_return,
                "value_start": float(np.ravel(out.targets)[0]),
                "loss": loss,
            }
            last = it + 1 == cfg.iterations  # 0 = only at the end, for both
            if last or (cfg.eval_every and (it + 1) % cfg.eval_every == 0):
                row["eval"], row["eval_se"] = evaluate(cfg, net, cfg.eval_games, EVAL_SEED_OFFSET + cfg.seed)
            row["wall_s"] = time.perf_counter() - t0
            log.report(row, 1)
            if last or (cfg.checkpoint_every and (it + 1) % cfg.checkpoint_every == 0):
                state = {"iteration": it + 1, "games": games, "steps": steps, "wall_s": row["wall_s"]}
                products.save_checkpoint(folder, model, opt, state, buffer)
    finally:
        log.close()
    wall_s = time.perf_counter() - t0
    evaluation, table = final_evaluation(cfg, net) if cfg.final_eval_games else ({}, "")
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
    )


def final_evaluation(
    cfg: SearchConfig, net: ValueNet | None, agent: Any = None
) -> tuple[dict[str, Any], str]:
    """The card's evaluation of ``net``'s agent over ``final_eval_games`` dice seeds that training
    never used (for the win against ``eval_opponent``; for points beside each of
    ``final_eval_opponents`` on the same dice, when there are any), and what is printed at the end."""
    games, seed = cfg.final_eval_games, EVAL_SEED_OFFSET + 7_777_777 + cfg.seed
    if cfg.reward == "win" or not cfg.final_eval_opponents:
        mean, se = evaluate(cfg, net, games, seed, agent)
        lo, hi = mean - 1.96 * se, mean + 1.96 * se
        if cfg.reward == "win":
            line = (
                f"{cfg.game}, {cfg.num_players} players: win rate {mean:.4f} ± {se:.4f} (s.e.), "
                f"95% CI [{lo:.4f}, {hi:.4f}] against {cfg.eval_opponent} over {games} games"
            )
            return {"games": games, "opponent": cfg.eval_opponent, "win_rate": mean, "stderr": se}, line
        line = (
            f"{cfg.game}: mean score {mean:.2f} ± {se:.2f} (s.e.), 95% CI [{lo:.2f}, {hi:.2f}] "
            f"over {games} games"
        )
        return {"games": games, "mean_score": mean, "stderr": se}, line
    rules, specs = cfg.rule_config(), [cfg.agent_specs[s] for s in cfg.final_eval_opponents]
    names = ", ".join(cfg.final_eval_opponents)
    print(f"final evaluation: {games} games each of the trained agent and {names}", file=sys.stderr)
    with single_thread_blas():
        rows = solitaire_rows(SearchAgent(rules, net=net), rules, games, seed, specs, 256)
    evaluation = {
        "games": games,
        "mean_score": rows[0].mean_score,
        "stderr": rows[0].stderr,
        "rows": [r.to_dict() for r in rows],
    }
    title = f"{cfg.game} solitaire, {games} games per agent, every agent on the same dice (seed {seed}):"
    return evaluation, f"{title}\n{format_table(rows)}"
