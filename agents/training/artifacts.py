"""What a run leaves behind besides the model and its card (:func:`agents.models.files.save_model`):
its progress log (``progress.csv``, TensorBoard, the progress bar), learning curve and checkpoints.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import pickle
import re
import sys
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from agents.training.config import REMOVED_KEYS
from dice_envs.io import atomic_write_bytes, atomic_write_text
from dice_envs.rules import ConfigError

if TYPE_CHECKING:
    from agents.training.config import RunConfig

__all__ = [
    "CHECKPOINT_ERRORS",
    "CHECKPOINT_FORMAT",
    "LOSS_FIELDS",
    "PROGRESS_FIELDS",
    "ProgressLog",
    "RunReporter",
    "check_resume",
    "checkpoints",
    "load_checkpoint",
    "load_tensors",
    "numbered_files",
    "plot_learning_curve",
    "read_checkpoint",
    "resume_point",
    "save_checkpoint",
]

#: The loss statistics of a PPO update (the native trainer's :func:`agents.training.ppo.update`).
LOSS_FIELDS = ("loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction")
#: Columns of ``progress.csv``, one row per update (both PPO trainers).
PROGRESS_FIELDS = [
    "steps",
    "wall_s",
    "steps_per_s",
    "episodes",
    "train_return",
    "train_win_rate",
    "eval",
    "eval_se",
    "learning_rate",
    "ent_coef",
    *LOSS_FIELDS,
    "explained_variance",
]
_CKPT = re.compile(r"^model_(\d+)_steps\.zip$")
_PPO_CKPT = re.compile(r"^ckpt_(\d+)\.pt$")
#: ``format`` of the native trainer's checkpoints (plain tensors and numbers, no pickled objects).
CHECKPOINT_FORMAT = "dice-envs-ppo-checkpoint"


def save_checkpoint(folder: str | Path, steps: int, state: dict[str, Any], keep: int = 3) -> Path:
    """Write ``state`` (tensors and plain values only) as ``ckpt_<steps>.pt``, atomically, with a
    ``.sha256`` beside it; delete all but the ``keep`` newest checkpoints."""
    import torch

    folder = Path(folder)
    buf = io.BytesIO()
    torch.save({"format": CHECKPOINT_FORMAT, "version": 1, **state}, buf)
    data = buf.getvalue()
    path = folder / f"ckpt_{int(steps):012d}.pt"
    atomic_write_bytes(path, data, overwrite=True)  # the run's own files
    digest = hashlib.sha256(data).hexdigest() + "\n"
    atomic_write_text(path.with_name(path.name + ".sha256"), digest, overwrite=True)
    for old in numbered_files(folder, _PPO_CKPT)[:-keep]:
        old.unlink(missing_ok=True)
        old.with_name(old.name + ".sha256").unlink(missing_ok=True)
    return path


def numbered_files(folder: str | Path, pattern: re.Pattern[str]) -> list[Path]:
    """The files of ``folder`` whose names match ``pattern``, by the number of its first group,
    smallest first (none when there is no such folder)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := pattern.match(p.name))]
    return [p for _, p in sorted(found)]


#: What reading a damaged or foreign checkpoint raises: a truncated or altered file, a zip that
#: does not open, a missing key or array of another shape, a pickled object.
CHECKPOINT_ERRORS = (
    OSError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    RuntimeError,
    EOFError,
    zipfile.BadZipFile,
    pickle.UnpicklingError,
)
_T = TypeVar("_T")


def resume_point(ckpt_dir: Path, candidates: list[Path], read: Callable[[Path], _T]) -> tuple[Path, _T]:
    """The rule of ``--resume``, the same for every trainer: the newest of ``candidates`` (oldest
    first) that ``read`` reads whole, with what it read, named on stderr. A newer one that does not
    read is skipped with a warning saying why; when none reads, :class:`ConfigError` (a resume
    never starts over, and its caller has written nothing yet)."""
    skipped: list[str] = []
    for path in reversed(candidates):
        try:
            got = read(path)
        except CHECKPOINT_ERRORS as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            warnings.warn(f"skipping checkpoint {path}: {reason}", stacklevel=2)
            skipped.append(f"{path.name}: {reason}")
            continue
        also = f" (skipped, as it does not read: {'; '.join(skipped)})" if skipped else ""
        print(f"--resume: continuing from {path}, the newest intact checkpoint{also}", file=sys.stderr)
        return path, got
    found = (
        f"no checkpoint in {ckpt_dir} verifies ({'; '.join(skipped)})"
        if skipped
        else f"no checkpoint in {ckpt_dir} to continue from"
    )
    raise ConfigError(
        f"--resume: {found}; a resume never starts over, so nothing in the run folder was touched: "
        "give a new --out to train afresh"
    )


def load_tensors(source: Any) -> Any:
    """``torch.load(source, weights_only=True)`` on the CPU: tensors and plain values only. A file
    that holds any other pickled object raises ``ValueError`` saying so (nothing of it is run)."""
    import torch

    try:
        return torch.load(source, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise ValueError("it holds pickled objects, not only tensors and plain values (not read)") from None


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The state of a native checkpoint whose ``.sha256`` matches and that holds a
    :data:`CHECKPOINT_FORMAT` mapping; else one of :data:`CHECKPOINT_ERRORS` saying why."""
    data = path.read_bytes()
    want = path.with_name(path.name + ".sha256").read_text(encoding="utf-8").strip()
    if hashlib.sha256(data).hexdigest() != want:
        raise ValueError("its sha256 does not match the .sha256 file beside it")
    state = load_tensors(io.BytesIO(data))
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"not a {CHECKPOINT_FORMAT} file")
    return state


def load_checkpoint(folder: str | Path) -> tuple[Path, dict[str, Any]]:
    """The newest native checkpoint of ``folder`` that verifies, with its state (:func:`resume_point`)."""
    folder = Path(folder)
    return resume_point(folder, numbered_files(folder, _PPO_CKPT), read_checkpoint)


class ProgressLog:
    """The run's ``progress.csv``, one row per update; a resumed run's rows past its checkpoint
    (``resume_steps``) are dropped, the file rewritten atomically."""

    def __init__(self, path: str | Path, fields: list[str], resume_steps: int | None = None) -> None:
        self.path = Path(path)
        self.fields = fields
        rows = self.read(self.path) if resume_steps is not None else []
        rows = [r for r in rows if int(float(r["steps"])) <= (resume_steps or 0)]
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        atomic_write_text(self.path, out.getvalue(), overwrite=True)

    def append(self, row: dict[str, Any]) -> None:
        """Add one row (numbers formatted compactly; missing fields left empty)."""
        cells = {k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()}
        with self.path.open("a", encoding="utf-8", newline="") as fh:
            csv.DictWriter(fh, fieldnames=self.fields, extrasaction="ignore", lineterminator="\n").writerow(
                cells
            )

    @staticmethod
    def read(path: str | Path) -> list[dict[str, str]]:
        """The complete rows of a progress file (a torn last line is ignored)."""
        path = Path(path)
        if not path.is_file():
            return []
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        return [r for r in rows if r.get("steps") and None not in r.values()]


class RunReporter:
    """Where each update's row goes: ``progress.csv`` (:class:`ProgressLog`), TensorBoard scalars
    under ``out/tb`` and a tqdm progress bar. ``steps`` is where the run starts; with ``resumed``
    the rows and TensorBoard events past it are dropped."""

    def __init__(
        self,
        out: Path,
        fields: list[str],
        *,
        steps: int,
        resumed: bool,
        total_timesteps: int,
        tensorboard: bool,
        progress_bar: bool,
        unit: str = "step",
    ) -> None:
        self.log = ProgressLog(out / "progress.csv", fields, resume_steps=steps if resumed else None)
        self.writer: Any = None
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:  # pragma: no cover - tensorboard is in the train extra
                print("(tensorboard is not installed: no TensorBoard logs)", file=sys.stderr)
            else:
                # the row logged at the checkpoint's own step stays: purge only the steps after it
                self.writer = SummaryWriter(str(out / "tb"), purge_step=steps + 1 if resumed else None)
        self.bar: Any = None
        if progress_bar:
            from tqdm.auto import tqdm

            self.bar = tqdm(
                total=total_timesteps, initial=steps, unit=unit, unit_scale=unit == "step", dynamic_ncols=True
            )

    def report(self, row: dict[str, Any], samples: int) -> None:
        """Log ``row`` (one update of ``samples`` steps)."""
        self.log.append(row)
        if self.writer is not None:
            for key, value in row.items():
                if key != "steps" and value is not None:
                    self.writer.add_scalar(f"train/{key}", value, row["steps"])
        if self.bar is not None:
            self.bar.update(samples)
            shown = {k: f"{row[k]:.4g}" for k in ("train_return", "eval") if k in row}
            self.bar.set_postfix(shown, refresh=False)

    def close(self) -> None:
        """Close the bar and the TensorBoard writer."""
        if self.bar is not None:
            self.bar.close()
        if self.writer is not None:
            self.writer.close()


def checkpoints(checkpoint_dir: str | Path) -> list[Path]:
    """The sb3 trainer's checkpoints (``model_<steps>_steps.zip``) of a folder, oldest first."""
    return numbered_files(checkpoint_dir, _CKPT)


def plot_learning_curve(
    run_dir: str | Path,
    path: str | Path,
    title: str,
    ylabel: str,
    references: dict[str, float] | None = None,
    *,
    x: str = "steps",
    train: bool = True,
) -> Path | None:
    """Plot a run's ``progress.csv``: the evaluations (± s.e.) and, with ``train``, the training
    games' results against the column ``x``, with ``references`` as labelled lines; ``None``
    (nothing written) when there is nothing to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    if not _plot_progress(ax, ProgressLog.read(Path(run_dir) / "progress.csv"), x, train):
        plt.close(fig)
        return None
    styles = ["--", ":", "-."]
    for i, (label, value) in enumerate((references or {}).items()):
        ax.axhline(value, color="0.3", ls=styles[i % len(styles)], lw=1, label=f"{label} ({value:.4g})")
    xlabel = {"steps": "environment steps", "games": "games played"}.get(x, x)
    return save_curve_figure(fig, ax, path, title, ylabel, xlabel=xlabel)


def save_curve_figure(
    fig: Any,
    ax: Any,
    path: str | Path,
    title: str,
    ylabel: str,
    title_size: int = 12,
    xlabel: str = "environment steps",
) -> Path:
    """Label a learning-curve figure, write it to ``path`` as PNG atomically, close it."""
    import matplotlib.pyplot as plt

    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=title_size)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, dpi=100, format="png")
    plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue(), overwrite=True)


def _plot_progress(ax: Any, rows: list[dict[str, str]], x_key: str, train: bool) -> bool:
    """Draw the rows' training results (with ``train``) and evaluations; whether anything was."""

    def column(name: str) -> tuple[np.ndarray, np.ndarray]:
        pts = [(float(r[x_key]), float(r[name])) for r in rows if r.get(name) not in (None, "", "nan")]
        arr = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
        return arr[:, 0], arr[:, 1]

    drawn = False
    x, y = column("train_win_rate")  # multi-player: the same measure as the evaluation
    label = "training games' win rate (sampled actions, vs the pool)"
    if not x.size:
        x, y = column("train_return")
        label = "training games (the learner's own play)"
    if x.size and train:
        ax.plot(x, y, color="tab:blue", alpha=0.6, label=label)
        drawn = True
    x, y = column("eval")
    if x.size:
        _, se = column("eval_se")
        ax.plot(x, y, "o-", color="tab:orange", ms=3, label="evaluation (± s.e.)")
        if se.size == y.size:
            ax.fill_between(x, y - se, y + se, color="tab:orange", alpha=0.25)
        drawn = True
    return drawn


def check_resume(cfg: RunConfig, out: Path) -> None:
    """Refuse to resume ``out`` under a config that differs from its ``config.json`` in anything
    but the config's ``RESUMABLE`` keys, naming each key with both values. A removed key
    (:data:`~agents.training.config.REMOVED_KEYS`) saved at the value every run had before it
    existed does not count."""
    saved_path = out / "config.json"
    if not saved_path.is_file():
        raise ConfigError(f"--resume: {out} holds no config.json, so it is not a run folder made by train.py")
    try:
        saved = json.loads(saved_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--resume: cannot read {saved_path}: {exc}") from None
    if not isinstance(saved, dict):
        raise ConfigError(f"--resume: {saved_path} is not a mapping of config keys")
    now = cfg.to_dict()
    saved = {k: v for k, v in saved.items() if not (k in REMOVED_KEYS and v == REMOVED_KEYS[k][0])}
    differ = [
        k
        for k in sorted(set(now) | set(saved))
        if k not in cfg.RESUMABLE and now.get(k) != saved.get(k, now.get(k))
    ]
    if differ:
        detail = "; ".join(f"{k}: run {saved.get(k)!r}, now {now.get(k)!r}" for k in differ)
        raise ConfigError(
            f"--resume: the config differs from the run's {saved_path} in {', '.join(differ)} ({detail}); "
            f"only {', '.join(cfg.RESUMABLE)} may change on resume"
        )
