"""Hyper-parameter sweeps of our own trainer on Ray Tune (``scripts/sweep.py`` is the CLI).

Every trial is one :func:`agents.training.train.train` run with its own run folder
(``<out>/trials/<trial>/``: model zip, model card, progress.csv, learning curve), so a trial's
model is an ordinary model of the project. The sweep file is YAML::

    base: configs/train/tiny_ppo.yaml      # a TrainConfig file (relative to the sweep file or cwd)
    set: {total_timesteps: 4096}           # optional fixed overrides (or [total_timesteps=4096])
    space:                                 # TrainConfig keys -> a distribution or a fixed value
      learning_rate: {loguniform: [1.0e-4, 1.0e-2]}
      n_epochs: {choice: [2, 4]}
    num_samples: 2                         # trials (each grid_search point counts separately)
    metric: eval                           # eval (last periodic evaluation) | final (final table)
    mode: max
    seed: 0                                # seeds the search
    cpus_per_trial: 1

Distributions: ``loguniform [lo, hi]``, ``uniform [lo, hi]``, ``randint [lo, hi)``, ``choice
[...]``, ``grid_search [...]``. :func:`load_sweep` checks the file before Ray starts;
:func:`run_sweep` writes ``summary.csv``, ``summary.md`` and ``trials.png`` into ``out`` and
returns the rows (a failed trial's row has its reason under ``error``).
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from dice_envs.io import atomic_open, atomic_write_text, check_out_dir, occupied
from dice_envs.rules import ConfigError
from dice_envs.rules.config import did_you_mean

__all__ = [
    "DISTRIBUTIONS",
    "METRICS",
    "load_sweep",
    "run_sweep",
    "search_space",
    "space_candidates",
    "trial_error",
    "trial_metric",
]

#: Distributions drawn from a range ``[low, high]``; the others take a list of values.
_RANGES = ("loguniform", "uniform", "randint")
DISTRIBUTIONS = (*_RANGES, "choice", "grid_search")
METRICS = ("eval", "final")
_SWEEP_KEYS = {"base", "set", "space", "num_samples", "metric", "mode", "seed", "cpus_per_trial"}


def load_sweep(path: str | Path) -> dict[str, Any]:
    """Read and check a sweep file before any trial starts (see the module docstring).

    Every value the space can hand a trial, in every combination with the other keys' values
    (each value alone over the base beyond ``_MAX_COMBINATIONS``), goes through training's own
    checks, so a bad value is refused here, by name, and not inside a Ray trial.
    """
    from agents.training.config import TrainConfig, load_config
    from agents.training.recipes import find_config
    from dice_envs.rules.config import yaml_value

    path = Path(path)
    try:
        spec = yaml_value(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        raise ConfigError(f"cannot read sweep file {path}: {text or type(exc).__name__}") from None
    if not isinstance(spec, dict):
        raise ConfigError(f"{path}: a sweep file must be a mapping, got {type(spec).__name__}")
    unknown = sorted(set(spec) - _SWEEP_KEYS, key=str)
    if unknown:
        hint = did_you_mean(unknown[0], _SWEEP_KEYS) if len(unknown) == 1 else ""
        raise ConfigError(f"{path}: unknown sweep key(s) {unknown}{hint}; allowed: {sorted(_SWEEP_KEYS)}")
    seed = spec.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"{path}: seed must be a non-negative integer, got {seed!r}")
    cpus = spec.get("cpus_per_trial", 1)
    if isinstance(cpus, bool) or not isinstance(cpus, (int, float)) or not math.isfinite(cpus) or cpus < 1:
        raise ConfigError(f"{path}: cpus_per_trial must be a number >= 1, got {cpus!r}")
    base = spec.get("base")
    base_path = None
    if base is not None:
        if not isinstance(base, str) or not base.strip():
            raise ConfigError(f"{path}: base must be the path of a training config file, got {base!r}")
        base_path = path.parent / base
        if not base_path.is_file():  # a path from the cwd, or a shipped recipe's name (tiny_ppo)
            try:
                base_path = find_config(base, "train")
            except ConfigError as exc:
                raise ConfigError(f"{path}: base {exc}") from None
    cfg = _apply_set(path, load_config(base_path), spec.get("set"))
    space = spec.get("space") or {}
    if not isinstance(space, dict) or not space:
        raise ConfigError(f"{path}: 'space' must map TrainConfig keys to distributions")
    bad = sorted(set(space) - set(TrainConfig.field_names()), key=str)
    if bad:
        raise ConfigError(f"{path}: space keys {bad} are not training config keys")
    metric = spec.get("metric", "eval")
    if metric not in METRICS:
        raise ConfigError(f"{path}: metric must be one of {', '.join(METRICS)}, got {metric!r}")
    mode = spec.get("mode", "max")
    if mode not in ("max", "min"):
        raise ConfigError(f"{path}: mode must be max or min, got {mode!r}")
    n = spec.get("num_samples", 1)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"{path}: num_samples must be a positive integer, got {n!r}")
    base_dict = cfg.to_dict()
    try:
        candidates = space_candidates(space)  # checks the distributions
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    _check_space(path, {**base_dict, **_TRIAL_FIXED}, candidates)
    return {
        "base": base_dict,
        "space": space,
        "num_samples": n,
        "metric": metric,
        "mode": mode,
        "seed": int(seed),
        "cpus_per_trial": float(cpus),
    }


#: What every trial sets over the base config (:func:`sweep_trial`).
_TRIAL_FIXED: dict[str, Any] = {"progress_bar": False, "torch_threads": 1}
#: Beyond this many combinations of the space's values, each value is checked alone over the base.
_MAX_COMBINATIONS = 4096


def _refusal(values: dict[str, Any]) -> str | None:
    """Why training would refuse a trial with these config ``values`` before its first step (the
    config's validation, then ``train``'s check of its agent specs); None if it would not."""
    from agents.training.config import TrainConfig
    from agents.training.train import check_agent_specs

    try:
        check_agent_specs(TrainConfig.from_dict(values))
    except (TypeError, ValueError) as exc:  # ConfigError, or a value the checks cannot compare
        return str(exc)
    return None


def _check_space(path: Path, base: dict[str, Any], candidates: dict[str, list[tuple[str, Any]]]) -> None:
    """Refuse the first combination of candidate values (:func:`space_candidates`) a trial would
    be refused with; by key and value when that value alone over ``base`` is refused so."""
    if math.prod(len(v) for v in candidates.values()) <= _MAX_COMBINATIONS:
        keys = list(candidates)
        combos: Any = (dict(zip(keys, c, strict=True)) for c in itertools.product(*candidates.values()))
    else:
        combos = ({key: pair} for key, pairs in candidates.items() for pair in pairs)
    for combo in combos:
        reason = _refusal({**base, **{k: v for k, (_, v) in combo.items()}})
        if reason is None:
            continue
        if _refusal(base) != reason:  # else the base and set are refused so, whatever the space holds
            for key, (what, value) in combo.items():
                if len(combo) == 1 or _refusal({**base, key: value}) == reason:
                    raise ConfigError(f"{path}: space.{key}: {what} is refused: {reason}")
        values = ", ".join(f"{k}={v!r}" for k, (_, v) in combo.items())
        raise ConfigError(f"{path}: a trial with {values} (over base and set) is refused: {reason}")


def _apply_set(path: Path, cfg: Any, fixed: Any) -> Any:
    """``cfg`` with the sweep file's ``set``: a mapping, or a list of ``key=value`` strings."""
    from agents.training.config import TrainConfig

    if fixed is None:
        return cfg
    if isinstance(fixed, dict):
        if not all(isinstance(k, str) for k in fixed):
            raise ConfigError(
                f"{path}: set: keys must be training config key names, got {sorted(map(repr, fixed))}"
            )
        try:
            return TrainConfig.from_dict({**cfg.to_dict(), **fixed})
        except ConfigError as exc:
            raise ConfigError(f"{path}: set: {exc}") from None
    if isinstance(fixed, list):
        for entry in fixed:
            if not isinstance(entry, str) or "=" not in entry or not entry.split("=", 1)[0].strip():
                raise ConfigError(
                    f"{path}: set entries must look like key=value (e.g. total_timesteps=4096), got {entry!r}"
                )
        try:
            return cfg.with_overrides(fixed)
        except ConfigError as exc:
            raise ConfigError(f"{path}: set: {exc}") from None
    raise ConfigError(
        f"{path}: set must be a mapping of training config keys (e.g. {{total_timesteps: 4096}}) "
        f"or a list of key=value strings, got {fixed!r}"
    )


def space_candidates(space: Mapping[str, Any]) -> dict[str, list[tuple[str, Any]]]:
    """Check the YAML search space (see the module docstring); per key, the values a trial can get
    that decide whether it is valid: each ``choice`` / ``grid_search`` entry, both ends of a
    ``uniform`` / ``loguniform`` range (as floats, which Tune draws), ``low`` and ``high - 1``
    of a ``randint`` range, or the fixed value. Each pair is (what it is, naming the value, e.g.
    ``choice value 0 (entry 2 of 2)``; the value)."""
    out: dict[str, list[tuple[str, Any]]] = {}
    for key, value in space.items():
        if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in DISTRIBUTIONS:
            ((dist, args),) = value.items()
            if dist not in _RANGES:
                if not isinstance(args, list) or not args:
                    raise ConfigError(f"space.{key}: {dist} needs a non-empty list, got {args!r}")
                n = len(args)
                out[key] = [(f"{dist} value {a!r} (entry {i} of {n})", a) for i, a in enumerate(args, 1)]
                continue
            if not (
                isinstance(args, list)
                and len(args) == 2
                and all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in args)
                and all(math.isfinite(a) for a in args)
            ):
                raise ConfigError(f"space.{key}: {dist} needs [low, high] (two finite numbers), got {args!r}")
            lo, hi = args
            if dist == "randint":
                if not all(isinstance(a, int) for a in args) or not lo < hi:
                    raise ConfigError(
                        f"space.{key}: randint needs integers low < high ([low, high)), got {args!r}"
                    )
                out[key] = [(f"randint low {lo!r}", lo), (f"randint high - 1 = {hi - 1!r}", hi - 1)]
                continue
            if not lo < hi or (dist == "loguniform" and lo <= 0):
                need = "0 < low < high" if dist == "loguniform" else "low < high"
                raise ConfigError(f"space.{key}: {dist} needs {need}, got {args!r}")
            out[key] = [(f"{dist} low {float(lo)!r}", float(lo)), (f"{dist} high {float(hi)!r}", float(hi))]
        elif isinstance(value, dict):
            raise ConfigError(
                f"space.{key}: unknown distribution {sorted(map(str, value))}; "
                f"known: {', '.join(DISTRIBUTIONS)}"
            )
        else:
            out[key] = [(f"fixed value {value!r}", value)]
    return out


def search_space(space: Mapping[str, Any]) -> dict[str, Any]:
    """Ray Tune's search space from the YAML one (see the module docstring)."""
    from ray import tune

    space_candidates(space)  # checks the distributions
    out = dict(space)
    for key, value in space.items():
        if isinstance(value, dict):
            ((dist, args),) = value.items()
            out[key] = getattr(tune, dist)(*args) if dist in _RANGES else getattr(tune, dist)(args)
    return out


def trial_metric(folder: Path, evaluation: Mapping[str, Any], metric: str) -> float:
    """A finished run's metric: its last periodic evaluation, or the trained agent's final row."""
    if metric == "eval":
        from agents.training.artifacts import ProgressLog

        values = [r.get("eval") for r in ProgressLog.read(folder / "progress.csv")]
        values = [float(v) for v in values if v not in (None, "")]
        return values[-1] if values else math.nan
    row = next((r for r in evaluation.get("rows", []) if r.get("agent") == "trained"), None)
    if row is None:
        return math.nan
    return float(row["win_rate"] if "win_rate" in row else row["mean_score"])


def anchored_specs(values: Mapping[str, Any], folder: str | Path) -> dict[str, Any]:
    """``values`` (training config keys) with relative model paths read against ``folder``, the
    sweep's working directory: Tune runs each trial in its own folder."""
    from agents.registry import anchored_spec
    from agents.training.config import AGENT_LIST_KEYS

    out = dict(values)
    for key in (*AGENT_LIST_KEYS, "bc_expert", "init_model"):
        value = out.get(key)
        if isinstance(value, str) and value.strip():
            out[key] = anchored_spec(value, folder)
        elif isinstance(value, list):
            out[key] = [anchored_spec(v, folder) if isinstance(v, str) else v for v in value]
    return out


def sweep_trial(params: dict[str, Any]) -> None:
    """One Tune trial: one training run in its own folder; reports the metric."""
    from ray import tune

    from agents.training.config import TrainConfig
    from agents.training.train import train

    ctx = tune.get_context()
    base, metric, root = params.pop("__base"), params.pop("__metric"), Path(params.pop("__root"))
    cwd = params.pop("__cwd")
    cfg = TrainConfig.from_dict(anchored_specs({**base, **params, **_TRIAL_FIXED}, cwd))
    folder = root / "trials" / ctx.get_trial_name()
    res = train(cfg, out=folder, command=f"scripts/sweep.py trial {ctx.get_trial_name()}")
    tune.report(
        {
            "metric": trial_metric(folder, res.evaluation, metric),
            "run_folder": str(folder),
            "model_path": str(res.model_path),
            "card_path": str(res.card_path),
            "steps": res.steps,
            "wall_time_s": res.wall_time_s,
        }
    )


def check_out(out: str | Path) -> Path:
    """The sweep's output folder, resolved: refused (``ConfigError``) when it is a file, lies
    under a file, cannot be written, or is a folder that is not empty."""
    try:
        out = check_out_dir(out, force=True).resolve()
    except OSError as exc:  # a file in the way, or no permission
        raise ConfigError(f"--out: {exc}") from None
    if occupied(out):
        raise ConfigError(f"output folder {out} is not empty; choose a new one")
    return out


def run_sweep(sweep: Mapping[str, Any], out: str | Path, address: str | None = None) -> list[dict[str, Any]]:
    """Run a checked sweep (:func:`load_sweep`) on Ray Tune; write the summary; return its rows."""
    from ray import tune
    from ray.tune.search import BasicVariantGenerator

    from agents.evaluation.pool import ensure_ray

    out = check_out(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the output folder {out}: {exc.strerror or exc}") from None
    started = ensure_ray(address)
    try:
        space = {
            **search_space(sweep["space"]),
            "__base": sweep["base"],
            "__metric": sweep["metric"],
            "__root": str(out),
            "__cwd": str(Path.cwd()),
        }
        tuner = tune.Tuner(
            tune.with_resources(sweep_trial, {"cpu": sweep["cpus_per_trial"]}),
            param_space=space,
            tune_config=tune.TuneConfig(
                num_samples=sweep["num_samples"],
                search_alg=BasicVariantGenerator(random_state=sweep["seed"]),
                metric="metric",
                mode=sweep["mode"],
            ),
            run_config=tune.RunConfig(name="tune", storage_path=str(out), verbose=0),
        )
        grid = tuner.fit()
    finally:
        if started:
            import ray

            ray.shutdown()
    keys = list(sweep["space"])
    rows = []
    for result in grid:
        m, error = result.metrics, result.error
        row = {"trial": Path(result.path if error is not None else m["run_folder"]).name}
        row.update({k: result.config.get(k) for k in keys})
        if error is not None:
            row.update(metric=math.nan, error=trial_error(error))
        else:
            row.update({k: m[k] for k in ("metric", "steps", "wall_time_s", "run_folder", "model_path")})
            row["wall_time_s"] = round(float(m["wall_time_s"]), 2)
        rows.append(row)
    reverse = sweep["mode"] == "max"
    rows.sort(key=lambda r: (math.isnan(r["metric"]), -r["metric"] if reverse else r["metric"]))
    columns = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(out / "summary.csv", buf.getvalue(), overwrite=True)
    md = [f"| {' | '.join(columns)} |", f"|{'---|' * len(columns)}"]
    md += ["| " + " | ".join(_cell(r.get(c)) for c in columns) + " |" for r in rows]
    failed = sum("error" in r for r in rows)
    title = f"Sweep: {len(rows)} trials{f' ({failed} failed)' if failed else ''}, "
    title += f"metric {sweep['metric']} ({sweep['mode']})\n\n"
    atomic_write_text(out / "summary.md", title + "\n".join(md) + "\n", overwrite=True)
    _plot(rows, keys, sweep, out / "trials.png")
    return rows


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def trial_error(error: BaseException) -> str:
    """A failed trial's reason on one line, ``Type: message`` of the exception the trial raised:
    Ray's ``RayTaskError`` wrapper unwrapped to its cause, ANSI colour codes stripped."""
    for _ in range(10):  # RayTaskError(ConfigError) -> the ConfigError raised in the trial
        cause = getattr(error, "cause", None)
        if not isinstance(cause, BaseException) or cause is error:
            break
        error = cause
    lines = [line.strip() for line in _ANSI.sub("", str(error)).splitlines() if line.strip()]
    name = type(error).__name__
    if name.startswith("RayTaskError") or (lines and lines[0].startswith("ray::")):
        return lines[-1] if len(lines) > 1 else name  # no cause: the traceback's last line
    return f"{name}: {' '.join(lines)}" if lines else name


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "" if v is None else " ".join(str(v).split()).replace("|", "\\|")


def _plot(rows: list[dict[str, Any]], keys: list[str], sweep: Mapping[str, Any], path: Path) -> Path:
    """The metric of every trial against each swept parameter (log axis for loguniform ones)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3.2), squeeze=False)
    for ax, key in zip(axes[0], keys, strict=True):
        xs = [r.get(key) for r in rows]
        ys = [r["metric"] for r in rows]
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs):
            ax.scatter(xs, ys)
            if isinstance(sweep["space"][key], dict) and "loguniform" in sweep["space"][key]:
                ax.set_xscale("log")
        else:  # one tick per trial, labelled with its value
            ax.scatter(range(len(xs)), ys)
            ax.set_xticks(range(len(xs)), [str(x) for x in xs], rotation=30)
        ax.set_xlabel(key)
        ax.set_ylabel(sweep["metric"])
        ax.grid(alpha=0.3)
    fig.suptitle(f"{len(rows)} trials")
    fig.tight_layout()
    with atomic_open(path, "wb", overwrite=True) as fh:
        fig.savefig(fh, dpi=100, format="png")
    plt.close(fig)
    return path
