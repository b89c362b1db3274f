"""``trainer: search``: learn a value of turn starts from the agent's own games, from scratch.

Fitted value iteration over visited states. Each iteration:

1. **play** ``games_per_iteration`` solitaire games on the batched engine with the search agent
   over the current network (:func:`agents.players.search.play.play_games`): each turn is searched exactly
   to its end (the dice, the holds, the box) over the network's values of the states it can end in;
2. **targets**: the searched value of each turn-start state met, i.e. this turn's expected points
   plus the network's value of where the turn leads, under the best play of the turn (a Bellman
   backup with the turn's chance handled exactly, so targets carry little noise; a filled card is
   worth 0 by the rules, which anchors the backups at the game's end);
3. **fit** the network to the targets of the last ``buffer_iterations`` iterations:
   ``fit_steps`` Adam steps on minibatches of ``batch_size`` (mean squared error), the learning
   rate linear from ``learning_rate`` to ``lr_final`` over the run.

It starts from random weights and uses the rules, the dice probabilities and the tables derived
from scoring; it never reads the exact solver's values (an empty solver cache stays empty). Every
``eval_every`` iterations and after the last (``0``: only after the last) the network plays
``eval_games`` games on dice seeds never used for training (the learning curve's evaluation points).

Products in the run folder: ``<name>.npz`` (weights) and its card ``<name>.json``
(:mod:`agents.players.search.agent`), ``progress.csv``, ``learning_curve.png`` (score against wall-clock
time and against games played), ``config.json`` and ``checkpoints/`` (every
``checkpoint_every`` iterations and after the last: the network, Adam's moments and the replay
buffer's states and targets, as plain arrays; ``--resume`` continues exactly where the newest
intact checkpoint stopped, and refuses, touching nothing, when none is intact).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from agents.players.search.agent import SearchAgent
from agents.players.search.play import play_games
from agents.players.search.value import VALUE_SCALE, LearnedValues, ValueNet, state_features
from agents.solver.cache import single_thread_blas
from agents.solver.scorecard import turn_solver
from agents.training.products import TrainResult
from agents.training.score_table import format_table, solitaire_rows
from agents.training.search import products
from agents.training.search.config import RESUMABLE, SearchConfig
from dice_envs.io import atomic_write_text
from dice_envs.rules import ConfigError

__all__ = [
    "EVAL_SEED_OFFSET",
    "Iteration",
    "Trained",
    "evaluate_net",
    "final_evaluation",
    "iterate",
    "prepare_folder",
    "run",
    "train_search",
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


def evaluate_net(cfg: SearchConfig, net: ValueNet, games: int, seed: int) -> tuple[float, float]:
    """Mean score and its standard error over ``games`` games of ``net``'s search agent."""
    solver = turn_solver(cfg.rule_config())
    with single_thread_blas():
        scores = play_games(solver, LearnedValues(net, solver), games, seed).scores
    return float(scores.mean()), float(scores.std(ddof=1) / np.sqrt(len(scores)))


class Iteration(NamedTuple):
    """What one iteration's games give the loop of :func:`iterate`."""

    states: np.ndarray  #: turn-start states met (one row each)
    targets: np.ndarray  #: their searched values
    steps: int  #: actions taken
    train_return: float  #: the games' mean result, for the progress log


class Trained(NamedTuple):
    """Where :func:`iterate` ended."""

    net: ValueNet
    games: int
    steps: int
    wall_s: float
    resumed_from: Path | None


def iterate(
    cfg: SearchConfig,
    folder: Path,
    resume: bool,
    net: ValueNet,
    play: Callable[[ValueNet, int], Iteration],
    fit_buffer: Callable[[Any, Any, list[Any], int], float],
    evaluate: Callable[[ValueNet, int, int], tuple[float, float]],
) -> Trained:
    """The learner's loop, shared by both learners: per iteration ``play(net, dice seed)``, keep the
    targets of the last ``buffer_iterations`` iterations, ``fit_buffer(model, opt, buffer, it)``,
    log a row (and ``evaluate(net, games, seed)`` every ``eval_every`` iterations and after the
    last), checkpoint every ``checkpoint_every`` iterations and after the last. ``net`` is the
    start (random weights); a resumed run starts from its newest intact checkpoint instead
    (:func:`prepare_folder`, which runs first)."""
    import torch

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
    log = products.open_log(folder, _FIELDS, resume_steps=steps if resume else None, cfg=cfg, start=start)
    t0 = time.perf_counter() - spent
    try:
        for it in range(start, cfg.iterations):
            with single_thread_blas():
                out = play(net, cfg.seed_of(it))
            games += cfg.games_per_iteration
            steps += out.steps
            buffer = [*buffer, (out.states, out.targets)][-cfg.buffer_iterations :]
            loss = fit_buffer(model, opt, buffer, it)
            net = _numpy_net(model)
            row: dict[str, Any] = {
                "steps": steps,
                "iteration": it + 1,
                "games": games,
                "train_return": out.train_return,
                "value_start": float(out.targets[0]),
                "loss": loss,
            }
            last = it + 1 == cfg.iterations  # 0 = only at the end, for both
            if last or (cfg.eval_every and (it + 1) % cfg.eval_every == 0):
                row["eval"], row["eval_se"] = evaluate(net, cfg.eval_games, EVAL_SEED_OFFSET + cfg.seed)
            row["wall_s"] = time.perf_counter() - t0
            log.report(row, 1)
            if last or (cfg.checkpoint_every and (it + 1) % cfg.checkpoint_every == 0):
                state = {"iteration": it + 1, "games": games, "steps": steps, "wall_s": row["wall_s"]}
                products.save_checkpoint(folder, model, opt, state, buffer)
    finally:
        log.close()
    return Trained(net, games, steps, time.perf_counter() - t0, resumed_from)


def train_search(cfg: SearchConfig, folder: Path, resume: bool, command: str) -> TrainResult:
    """Run the search learner of ``cfg`` in ``folder`` (module docstring); the run's products."""
    solver = turn_solver(cfg.rule_config())

    def play(net: ValueNet, seed: int) -> Iteration:
        out = play_games(solver, LearnedValues(net, solver), cfg.games_per_iteration, seed)
        return Iteration(out.states, out.targets, out.steps, float(out.scores.mean()))

    def fit_buffer(model: Any, opt: Any, buffer: list[Any], it: int) -> float:
        return _fit(cfg, model, opt, solver, buffer, it)

    def evaluate(net: ValueNet, games: int, seed: int) -> tuple[float, float]:
        return evaluate_net(cfg, net, games, seed)

    trained = iterate(
        cfg, folder, resume, ValueNet.random(solver, cfg.hidden, seed=cfg.seed), play, fit_buffer, evaluate
    )
    evaluation, table = final_evaluation(cfg, trained.net) if cfg.final_eval_games else ({}, "")
    return products.save_model(
        cfg,
        folder,
        trained.net,
        command,
        games=trained.games,
        steps=trained.steps,
        wall_s=trained.wall_s,
        resumed_from=trained.resumed_from,
        evaluation=evaluation,
        table=table,
    )


def final_evaluation(cfg: SearchConfig, net: ValueNet) -> tuple[dict[str, Any], str]:
    """The card's evaluation of ``net``'s search agent over ``final_eval_games`` dice seeds that
    training never used, and the table printed at the end ("" for the default line).

    With ``final_eval_opponents``, the trained agent and each of them play the same dice through
    the game runner (:func:`agents.training.score_table.solitaire_rows`), and the card keeps every
    row; without, the learner's own player measures the trained agent alone."""
    games, seed = cfg.final_eval_games, EVAL_SEED_OFFSET + 7_777_777 + cfg.seed
    if not cfg.final_eval_opponents:
        mean, se = evaluate_net(cfg, net, games, seed)
        return {"games": games, "mean_score": mean, "stderr": se}, ""
    rules = cfg.rule_config()
    names = ", ".join(cfg.final_eval_opponents)
    print(f"final evaluation: {games} games each of the trained agent and {names}", file=sys.stderr)
    with single_thread_blas():
        rows = solitaire_rows(SearchAgent(rules, net=net), rules, games, seed, cfg.final_eval_opponents, 256)
    rows_out = [r.to_dict() for r in rows]
    evaluation = {
        "games": games,
        "mean_score": rows[0].mean_score,
        "stderr": rows[0].stderr,
        "rows": rows_out,
    }
    title = f"{cfg.game} solitaire, {games} games per agent, every agent on the same dice (seed {seed}):"
    return evaluation, f"{title}\n{format_table(rows)}"


def _fit(cfg: SearchConfig, model: Any, opt: Any, solver: Any, buffer: list[Any], it: int) -> float:
    """:func:`fit` to the buffer's states and targets (points / VALUE_SCALE, squared error)."""
    states = np.concatenate([s for s, _ in buffer])
    targets = np.concatenate([t for _, t in buffer]) / VALUE_SCALE
    return fit(
        cfg, model, opt, state_features(solver, *states.T), targets, it, lambda p, y: ((p - y) ** 2).mean()
    )


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
        loss = loss_fn(model(x[idx])[:, 0], y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return total / max(1, cfg.fit_steps)


def prepare_folder(
    cfg: SearchConfig, folder: Path, resume: bool, model: Any, opt: Any
) -> tuple[Path, dict[str, Any]] | None:
    """What a resume needs checked before any work (the recipe's keys, agent specs included, were
    checked by :meth:`SearchConfig.validate`), then ``config.json`` written: the run's
    ``config.json`` (it must equal ``cfg`` but for :data:`~agents.training.search.config.RESUMABLE` keys,
    else ``ConfigError`` naming them) and its newest intact checkpoint, loaded into ``model`` /
    ``opt`` (:func:`agents.training.search.products.load_checkpoint`: ``ConfigError`` when none reads). A
    refusal leaves the folder as it was. The checkpoint's path and state, or ``None`` for a fresh
    run."""
    got = None
    if resume:
        path = folder / "config.json"
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"--resume: cannot read {path}: {exc}") from None
        now = cfg.to_dict()
        differ = (
            [k for k in now if k not in RESUMABLE and saved.get(k) != now[k]]
            if isinstance(saved, dict)
            else ["*"]
        )
        if differ:
            raise ConfigError(
                f"--resume: the config differs from the run's {path} in {', '.join(differ)}; "
                f"only {', '.join(RESUMABLE)} may change on resume"
            )
        got = products.load_checkpoint(folder, model, opt)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / "config.json", json.dumps(cfg.to_dict(), indent=2) + "\n", overwrite=True)
    return got


def run(cfg: SearchConfig, folder: Path, resume: bool, command: str) -> TrainResult:
    """:func:`train_search` in ``folder`` (from :func:`agents.training.train.output_folder`)."""
    return train_search(cfg, folder, resume, command)
