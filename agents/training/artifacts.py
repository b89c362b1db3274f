"""What a run leaves behind besides the model: its card, its learning curve, its checkpoints.

The model card (``<stem>.json`` beside ``<stem>.zip``) follows the schema that
:mod:`agents.learned` checks when loading a model: ``format``, ``format_version``, ``game``,
``rules``, ``num_players``, ``observation_encoding``, ``n_actions``, ``algorithm``, ``config``,
``steps``, ``wall_time_s``, ``evaluation``, ``command``, ``created``, ``seed``,
``library_versions``.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from dice_envs.encoding import encoding_id
from dice_envs.rules import RuleConfig

__all__ = [
    "CARD_FORMAT",
    "CARD_VERSION",
    "latest_checkpoint",
    "library_versions",
    "make_card",
    "plot_learning_curve",
    "save_card",
]

CARD_FORMAT = "dice-envs-model-card"
CARD_VERSION = 1
_CKPT = re.compile(r"^model_(\d+)_steps\.zip$")


def library_versions() -> dict[str, str]:
    """Versions of the libraries a model depends on."""
    import gymnasium
    import sb3_contrib
    import stable_baselines3
    import torch

    import dice_envs

    return {
        "python": sys.version.split()[0],
        "dice_envs": dice_envs.__version__,
        "numpy": np.__version__,
        "torch": torch.__version__,
        "gymnasium": gymnasium.__version__,
        "stable_baselines3": stable_baselines3.__version__,
        "sb3_contrib": sb3_contrib.__version__,
    }


def make_card(
    rules: RuleConfig,
    num_players: int,
    config: dict[str, Any],
    steps: int,
    wall_time_s: float,
    evaluation: dict[str, Any],
    command: str,
    seed: int,
) -> dict[str, Any]:
    """The model card of a trained model, with exactly the schema's keys."""
    return {
        "format": CARD_FORMAT,
        "format_version": CARD_VERSION,
        "game": rules.game,
        "rules": rules.to_dict(),
        "num_players": int(num_players),
        "observation_encoding": encoding_id(rules),
        "n_actions": int(rules.n_actions),  # type: ignore[attr-defined]
        "algorithm": "MaskablePPO",
        "config": config,
        "steps": int(steps),
        "wall_time_s": float(wall_time_s),
        "evaluation": evaluation,
        "command": command,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seed": int(seed),
        "library_versions": library_versions(),
    }


def save_card(model_path: str | Path, card: dict[str, Any]) -> Path:
    """Write ``card`` beside ``model_path`` (same stem, ``.json``); via agents.learned when present."""
    model_path = Path(model_path)
    try:
        from ..learned import write_card  # type: ignore[attr-defined]
    except ImportError:
        write_card = None
    if write_card is not None:
        result = write_card(model_path, card)
        if model_path.is_file():  # issue 11: bind card and weights (the trainer just saved them)
            from ..model_io import stamp_card

            stamp_card(model_path)
        return Path(result) if result else model_path.with_suffix(".json")
    path = model_path.with_suffix(".json")
    path.write_text(json.dumps(card, indent=2, sort_keys=False) + "\n")
    return path


def latest_checkpoint(checkpoint_dir: str | Path) -> Path | None:
    """The checkpoint with the most steps in a folder, or ``None``."""
    d = Path(checkpoint_dir)
    if not d.is_dir():
        return None
    found = [(int(m.group(1)), p) for p in d.iterdir() if (m := _CKPT.match(p.name))]
    return max(found)[1] if found else None


def plot_learning_curve(run_dir: str | Path, path: str | Path, title: str, ylabel: str) -> Path | None:
    """Plot the periodic evaluations (``evaluations.npz``) and training episodes (monitor files)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run_dir = Path(run_dir)
    fig, ax = plt.subplots(figsize=(7, 4))
    drawn = False
    for monitor in sorted(run_dir.glob("train_from_*.monitor.csv")):
        start = int(monitor.name.split("_")[2].split(".")[0])
        rows = np.genfromtxt(monitor, delimiter=",", skip_header=2)
        if rows.size == 0:
            continue
        rows = rows.reshape(-1, 3)
        steps = start + np.cumsum(rows[:, 1])
        window = max(1, min(200, len(rows) // 10))
        smooth = np.convolve(rows[:, 0], np.ones(window) / window, mode="valid")
        ax.plot(
            steps[window - 1 :],
            smooth,
            color="tab:blue",
            alpha=0.6,
            label="training episodes (rolling mean)" if not drawn else None,
        )
        drawn = True
    npz = run_dir / "evaluations.npz"
    if npz.is_file():
        data = np.load(npz)
        if len(data["timesteps"]):
            mean = data["results"].mean(axis=1)
            n = data["results"].shape[1]
            se = data["results"].std(axis=1, ddof=1) / np.sqrt(n) if n > 1 else np.zeros_like(mean)
            label = f"evaluation ({n} games, ± s.e.)"
            ax.plot(data["timesteps"], mean, "o-", color="tab:orange", label=label)
            ax.fill_between(data["timesteps"], mean - se, mean + se, color="tab:orange", alpha=0.25)
            drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xlabel("environment steps")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)
