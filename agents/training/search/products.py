"""What a search-learner run writes: progress, checkpoints, the value model, its card and curve.

Every file is written atomically (:mod:`dice_envs.io`); checkpoints and weights are plain arrays
in ``.npz`` files, read back with ``allow_pickle=False``.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import numpy as np

from agents.players.search.agent import ALGORITHM
from agents.players.search.farkle import FARKLE_FEATURES
from agents.players.search.value import FEATURES, ValueNet, npz_bytes
from agents.players.search.win import POINTS_PREFIX, WIN_FEATURES, WIN_POINTS_FEATURES
from agents.training.artifacts import ProgressLog, numbered_files, plot_learning_curve, resume_point
from agents.training.products import TrainResult
from agents.training.search.config import SearchConfig
from dice_envs.io import atomic_write_bytes

__all__ = ["LEARNERS", "load_checkpoint", "read_checkpoint", "save_checkpoint", "save_model"]

#: How the card names the learner of each objective (``reward``).
LEARNERS = {
    "score": "fitted value iteration over the agent's own turn-start states; targets: exact expectimax "
    "of the turn over the current network (agents.training.search.learner); no solver values read",
    "win": "fitted value iteration over self-play turn starts of two-player games; targets: exact "
    "expectimax of the turn over the current win network (agents.training.search.learner); no solver "
    "values read",
    "farkle": "fitted value iteration over self-play turn starts; targets: the exact turn search of "
    "the mover over the current network's chances of every seat, the final round searched to the end "
    "(agents.training.search.farkle); no solver values read",
}
_CKPT = re.compile(r"^iter-(\d{7})\.npz$")
_KEEP = 2


def _torch_state(model: Any, opt: Any) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for i, p in enumerate(model.parameters()):
        arrays[f"param{i}"] = p.detach().numpy().copy()
        st = opt.state.get(p, {})
        if st:
            arrays[f"adam_step{i}"] = np.asarray(float(st["step"]))
            arrays[f"adam_m{i}"] = st["exp_avg"].numpy().copy()
            arrays[f"adam_v{i}"] = st["exp_avg_sq"].numpy().copy()
    return arrays


def save_checkpoint(folder: Path, model: Any, opt: Any, state: dict[str, Any], buffer: list[Any]) -> Path:
    """Write ``checkpoints/iter-<n>.npz`` (network, Adam moments, buffer, counters); keep the newest two."""
    arrays = _torch_state(model, opt)
    for key in ("iteration", "games", "steps", "wall_s"):
        arrays[key] = np.asarray(state[key])
    for j, (s, t) in enumerate(buffer):
        arrays[f"buffer_states{j}"], arrays[f"buffer_targets{j}"] = s, t
    path = folder / "checkpoints" / f"iter-{int(state['iteration']):07d}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, npz_bytes(arrays), overwrite=True)
    for old in numbered_files(path.parent, _CKPT)[:-_KEEP]:
        old.unlink()
    return path


def read_checkpoint(path: Path, model: Any) -> dict[str, Any]:
    """The arrays and counters of a checkpoint that fits ``model`` (each parameter and Adam moment
    of its shape; nothing unpickled); one of the checkpoint errors
    (:data:`agents.training.artifacts.CHECKPOINT_ERRORS`) saying why when it does not read."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except ValueError:  # numpy's words would be "pickled data": whatever it is, it is not read
        raise ValueError("not an .npz file of plain arrays") from None
    for i, p in enumerate(model.parameters()):
        adam = (f"adam_m{i}", f"adam_v{i}") if f"adam_m{i}" in arrays else ()
        for key in (f"param{i}", *adam):
            if arrays[key].shape != tuple(p.shape):
                raise ValueError(f"its {key} has shape {arrays[key].shape}, the network's {tuple(p.shape)}")
        if adam:
            float(arrays[f"adam_step{i}"])  # a number (KeyError / TypeError otherwise)
    n = len([k for k in arrays if k.startswith("buffer_states")])
    state: dict[str, Any] = {k: int(arrays[k]) for k in ("iteration", "games", "steps")}
    state["wall_s"] = float(arrays["wall_s"])
    state["buffer"] = [(arrays[f"buffer_states{j}"], arrays[f"buffer_targets{j}"]) for j in range(n)]
    state["arrays"] = arrays
    return state


def load_checkpoint(folder: Path, model: Any, opt: Any) -> tuple[Path, dict[str, Any]]:
    """Load the newest checkpoint of ``folder`` that reads and fits (:func:`read_checkpoint`) into
    ``model`` / ``opt`` by :func:`agents.training.artifacts.resume_point`'s rule; its path and state."""
    import torch

    ckpt_dir = folder / "checkpoints"
    path, state = resume_point(ckpt_dir, numbered_files(ckpt_dir, _CKPT), lambda p: read_checkpoint(p, model))
    arrays = state.pop("arrays")
    params = list(model.parameters())
    with torch.no_grad():
        for i, p in enumerate(params):
            p.copy_(torch.as_tensor(arrays[f"param{i}"]))
    for i, p in enumerate(params):
        if f"adam_m{i}" in arrays:
            opt.state[p] = {
                "step": torch.tensor(float(arrays[f"adam_step{i}"])),
                "exp_avg": torch.as_tensor(arrays[f"adam_m{i}"]).clone(),
                "exp_avg_sq": torch.as_tensor(arrays[f"adam_v{i}"]).clone(),
            }
    return path, state


def save_model(
    cfg: SearchConfig,
    folder: Path,
    net: ValueNet,
    command: str,
    *,
    games: int,
    steps: int,
    wall_s: float,
    resumed_from: Path | None,
    evaluation: dict[str, Any],
    table: str,
) -> TrainResult:
    """Write ``<name>.npz``, its card (``evaluation``: the learner's final evaluation) and the
    learning curve; ``table`` is what is printed at the end."""
    from agents.models.card import make_card, write_card
    from agents.solver.scorecard import known_optimum

    points = cfg.points_net()  # None without a points_model (reward win only)
    arrays = net.arrays()
    if points is not None:  # the win network's points network travels in the same file
        arrays.update({f"{POINTS_PREFIX}{k}": a for k, a in points.arrays().items()})
    data = npz_bytes(arrays)
    model_path = atomic_write_bytes(folder / f"{cfg.name}.npz", data, overwrite=True)
    rows = ProgressLog.read(folder / "progress.csv")
    win, farkle = cfg.reward == "win", cfg.game == "farkle"
    features = FARKLE_FEATURES if farkle else WIN_FEATURES if win else FEATURES
    value: dict[str, Any] = {"features": features, "hidden": net.hidden, "activation": "relu"}
    if points is not None:
        value["features"] = WIN_POINTS_FEATURES
        value["points"] = {"model": cfg.points_model, "features": FEATURES, "hidden": points.hidden}
    card = make_card(
        cfg.rule_config(),
        cfg.num_players,
        algorithm=ALGORITHM,
        config=cfg.to_dict(),
        steps=steps,
        wall_time_s=wall_s,
        evaluation=evaluation,
        command=command,
        seed=cfg.seed,
        provenance=True,
        trainer="search",
        learner=LEARNERS["farkle" if farkle else cfg.reward],
        **({"reward": "win"} if win else {}),
        games=games,
        value={**value, "output": "softmax" if farkle else "sigmoid"} if win else value,
        weights_sha256=hashlib.sha256(data).hexdigest(),
        learning_curve=learning_curve(rows),
    )
    card_path = write_card(model_path, card)
    if win:
        title = f"{cfg.name}: search learner for the win on {cfg.game}, {cfg.num_players} players"
        ylabel, references = f"win rate against {cfg.eval_opponent}", {"even": 1.0 / cfg.num_players}
    else:
        optimum = known_optimum(cfg.rule_config())  # a constant of the default rules: no solve
        title, ylabel = f"{cfg.name}: search learner on {cfg.game}", "mean score"
        references = {} if optimum is None else {"exact optimum": optimum}
    curve = plot_learning_curve(
        folder, folder / "learning_curve.png", title, ylabel, references, x="games", train=not win
    )
    return TrainResult(
        model_path=model_path,
        card_path=card_path,
        curve_path=curve,
        steps=steps,
        steps_this_run=steps,
        wall_time_s=wall_s,
        env_steps_per_s=steps / wall_s if wall_s > 0 else 0.0,
        backend="search learner",
        resumed_from=resumed_from,
        evaluation=evaluation,
        table=table,
    )


def learning_curve(rows: list[dict[str, str]]) -> list[dict[str, float]]:
    """The evaluation points of ``progress.csv`` rows (games, wall seconds, score, its s.e.)."""
    keys = ("games", "wall_s", "eval", "eval_se")
    return [{k: float(r[k]) for k in keys if r.get(k) not in (None, "")} for r in rows if r.get("eval")]
