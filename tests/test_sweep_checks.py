"""``scripts/sweep.py`` / ``agents.ray.sweep``: what is refused before Ray starts, and how a failed
trial is reported (no Ray session: the run-time side is in ``tests/test_ray.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from agents.ray.sweep import _cell, load_sweep, trial_error
from dice_envs.rules import ConfigError

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "train" / "tiny_ppo.yaml"  # spiffel solitaire
FARKLE2 = "set: {game: farkle, num_players: 2, opponents: [random], final_eval_opponents: [random]}\n"


def _sweep(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(f"base: {TINY}\n{body}\n")
    return path


def _script():
    spec = importlib.util.spec_from_file_location("sweep_script", ROOT / "scripts" / "sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KNOWN_SPIFFEL = "known: random, greedy, heuristic, optimal"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "space: {final_eval_opponents: {choice: [[random], [randm]]}}",
            "space.final_eval_opponents: choice value ['randm'] (entry 2 of 2) is refused: config "
            f"'final_eval_opponents': unknown agent spec 'randm' for spiffel; {KNOWN_SPIFFEL}",
        ),
        (
            FARKLE2 + "space: {opponents: {grid_search: [[random], [heuristic, optimal]]}}",
            "space.opponents: grid_search value ['heuristic', 'optimal'] (entry 2 of 2) is refused: config "
            "'opponents': agent spec 'optimal' is not available for farkle; known: random, greedy",
        ),
        (
            "set: {num_players: 2, self_play: true}\n"
            "space: {pool_builtin: {choice: [[heuristic], [optimus]]}}",
            "space.pool_builtin: choice value ['optimus'] (entry 2 of 2) is refused: config 'pool_builtin': "
            f"unknown agent spec 'optimus' for spiffel; {KNOWN_SPIFFEL}",
        ),
        (
            "space: {warm_start: {choice: [bc]}, bc_expert: {choice: [optimal, randm]}}",
            "space.bc_expert: choice value 'randm' (entry 2 of 2) is refused: config 'bc_expert': "
            f"unknown agent spec 'randm' for spiffel; {KNOWN_SPIFFEL}",
        ),
        (  # each value is fine alone; the trial that draws both is not
            FARKLE2 + "space: {game: {choice: [farkle, spiffel]}, "
            "final_eval_opponents: {choice: [[random], [max-expected]]}}",
            "a trial with game='spiffel', final_eval_opponents=['max-expected'] (over base and set) is "
            "refused: config 'final_eval_opponents': agent spec 'max-expected' is not available for spiffel",
        ),
        (  # a bad spec in the base (set), whatever the space holds
            "set: {final_eval_opponents: [randm]}\nspace: {n_epochs: {choice: [2, 3]}}",
            "a trial with n_epochs=2 (over base and set) is refused: config 'final_eval_opponents': "
            "unknown agent spec 'randm'",
        ),
        (  # item 4: the value, and which entry it is
            "space: {n_epochs: {choice: [2, 0]}}",
            "space.n_epochs: choice value 0 (entry 2 of 2) is refused: config 'n_epochs' must be an "
            "integer in [1, 1000], got 0",
        ),
    ],
)
def test_every_trial_is_checked_as_training_checks_it_before_ray(tmp_path, body, message) -> None:
    ray_before = "ray" in sys.modules
    path = _sweep(tmp_path, body)
    with pytest.raises(ConfigError) as err:
        load_sweep(path)
    text = str(err.value)
    assert text.startswith(f"{path}: {message}"), text
    assert "\n" not in text
    if not ray_before:  # refused before Ray is even imported
        assert "ray" not in sys.modules


def test_a_mistyped_sweep_key_is_named_with_its_likely_meaning(tmp_path) -> None:
    path = _sweep(tmp_path, "space: {n_epochs: {choice: [1, 2]}}\nnum_sample: 2")
    with pytest.raises(ConfigError, match=r"\['num_sample'\] \(did you mean 'num_samples'\?\); allowed: \["):
        load_sweep(path)


def test_values_valid_together_are_not_refused_one_by_one(tmp_path) -> None:
    # over the base alone, num_players 1 clashes with reward win; every trial also gets reward score
    path = _sweep(
        tmp_path,
        "set: {num_players: 2, reward: win, opponents: [random]}\n"
        "space: {num_players: {choice: [1]}, reward: {choice: [score]}}",
    )
    assert load_sweep(path)["space"]["num_players"] == {"choice": [1]}


def test_script_refuses_a_bad_spec_choice_before_ray_starts(tmp_path, capsys) -> None:
    path = _sweep(tmp_path, "space: {final_eval_opponents: {choice: [[random], [randm]]}}")
    out = tmp_path / "out"
    assert _script().main([str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "space.final_eval_opponents: choice value ['randm'] (entry 2 of 2) is refused" in err
    assert not out.exists()


def test_trial_error_unwraps_ray_and_strips_colour() -> None:
    exceptions = pytest.importorskip("ray.exceptions")
    cause = ConfigError("device 'cuda' was asked for but torch sees no CUDA device; use --device cpu or auto")
    head = (
        "\x1b[36mray::ImplicitFunc.train()\x1b[39m (pid=17913, ip=192.0.2.2, actor_id=0b60, repr=sweep_trial)"
    )
    tb = f'{head}\n  File "agents/training/train.py", line 68\ndice_envs.rules.config.ConfigError: {cause}'
    kw = {"proctitle": "ray::ImplicitFunc.train()", "pid": 17913, "ip": "192.0.2.2"}
    error = exceptions.RayTaskError("train", tb, cause, **kw).as_instanceof_cause()  # what Tune hands back
    assert isinstance(error, ConfigError) and str(error).startswith(head)  # the old error column
    assert trial_error(error) == f"ConfigError: {cause}"
    nested = exceptions.RayTaskError("train", tb, error, **kw)
    assert trial_error(nested) == f"ConfigError: {cause}"
    no_cause = exceptions.RayTaskError("train", f"{head}\n  File ...\nValueError: boom", None, **kw)
    assert trial_error(no_cause) == "ValueError: boom"  # the traceback's last line
    assert trial_error(RuntimeError("two\n  lines")) == "RuntimeError: two lines"
    assert _cell("must be tanh | relu") == "must be tanh \\| relu"  # a markdown table cell
