"""Bad input at the edges is refused by name: value-model files from strangers, the forward
model's actions, outcomes and batches, a retired PettingZoo module, a ``planner:`` spec outside
Farkle, an output folder that cannot be written, a recipe ``dice-envs benchmark recipe`` cannot time.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import re
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.commands import benchmark, leaderboard
from agents.players.model import PRETRAINED_DIR
from agents.players.search.value import npz_bytes
from agents.registry import check_spec
from dice_envs.engine import ScorecardGame
from dice_envs.forward import FarkleBatch, FarkleState, ScorecardBatch, ScorecardState, throw_outcomes
from dice_envs.rules import ConfigError, make_rules

SHIPPED = PRETRAINED_DIR / "spiffel-search"


# ---------------------------------------------------------------------------------------------
# value-model files


def _shipped_arrays() -> dict[str, np.ndarray]:
    with np.load(SHIPPED.with_suffix(".npz"), allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _model(path: Path, data: bytes) -> Path:
    """``data`` as a value model at ``path``, with the shipped card stamped with its checksum."""
    path.write_bytes(data)
    card = json.loads(SHIPPED.with_suffix(".json").read_text())
    card["weights_sha256"] = hashlib.sha256(data).hexdigest()
    path.with_suffix(".json").write_text(json.dumps(card))
    return path


def _npy_member(zf: zipfile.ZipFile, name: str, shape: tuple[int, ...], data: bytes | int) -> None:
    """A member ``name.npy`` whose header declares a float64 array of ``shape``, holding ``data``
    (or that many zero bytes, streamed: the test never holds them)."""
    with zf.open(name + ".npy", "w", force_zip64=True) as fh:
        header = {"descr": "<f8", "fortran_order": False, "shape": shape}
        np.lib.format.write_array_header_1_0(fh, header)
        if isinstance(data, bytes):
            fh.write(data)
            return
        chunk = bytes(1 << 20)
        for start in range(0, data, len(chunk)):
            fh.write(chunk[: min(len(chunk), data - start)])


def test_a_value_model_that_unpacks_past_the_limit_is_refused_before_anything_is_allocated(
    tmp_path: Path,
) -> None:
    agents.load("pretrained:spiffel-search")  # the modules a load imports, imported before measuring
    n = 450_000  # 82 x 450k float64 (295 MB, more than the 256 MiB allowed) deflates to 0.3 MB
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        _npy_member(zf, "w0", (82, n), 82 * n * 8)
        _npy_member(zf, "b0", (n,), n * 8)
        _npy_member(zf, "w1", (n, 1), n * 8)
        _npy_member(zf, "b1", (1,), 8)
    path = _model(tmp_path / "bomb.npz", buf.getvalue())
    assert path.stat().st_size < 2**20
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match=rf"{re.escape(str(path))}: its members unpack to \d+ bytes"):
            agents.load(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, peak


def test_an_npy_header_declaring_terabytes_is_refused_by_name(tmp_path: Path) -> None:
    arrays = _shipped_arrays()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        _npy_member(zf, "w0", (2**40, 1), bytes(16))  # 8 TiB declared, 16 bytes held
        for name, array in arrays.items():
            if name != "w0":
                with zf.open(name + ".npy", "w") as fh:
                    np.lib.format.write_array(fh, array)
    path = _model(tmp_path / "big.npz", buf.getvalue())
    with pytest.raises(ConfigError, match=r"member 'w0.npy': its header declares .* it holds 16"):
        agents.load(str(path))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_value_model_with_non_finite_weights_is_refused(tmp_path: Path, bad: float) -> None:
    arrays = _shipped_arrays()
    arrays["w1"][3, 4] = bad
    path = _model(tmp_path / "diverged.npz", npz_bytes(arrays))
    with pytest.raises(ConfigError, match=r"member 'w1.npy' holds non-finite values"):
        agents.load(str(path))
    with pytest.raises(ConfigError, match="non-finite"):
        agents.load(f"search:{path}")


def test_a_truncated_or_damaged_value_model_names_the_file(tmp_path: Path) -> None:
    data = SHIPPED.with_suffix(".npz").read_bytes()
    torn = _model(tmp_path / "torn.npz", data[: len(data) // 2])
    with pytest.raises(ConfigError, match=rf"{re.escape(str(torn))}: not a readable \.npz file"):
        agents.load(str(torn))
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF  # inside w1's data: the member's CRC no longer holds
    damaged = _model(tmp_path / "damaged.npz", bytes(flipped))
    with pytest.raises(ConfigError, match=rf"{re.escape(str(damaged))}: not a readable \.npz file"):
        agents.load(str(damaged))


def test_a_value_model_of_objects_is_refused_without_unpickling(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, zf.open("w0.npy", "w") as fh:
        np.lib.format.write_array(fh, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    path = _model(tmp_path / "objects.npz", buf.getvalue())
    with pytest.raises(ConfigError, match=r"member 'w0.npy' holds object values; allowed: plain numbers"):
        agents.load(str(path))


def test_a_value_model_must_fit_its_card_and_its_game(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    narrow = {
        "w0": rng.normal(size=(82, 8)),
        "b0": np.zeros(8),
        "w1": rng.normal(size=(8, 1)),
        "b1": np.zeros(1),
    }
    path = _model(tmp_path / "narrow.npz", npz_bytes(narrow))  # the card says hidden [256, 256]
    with pytest.raises(
        ConfigError, match=r"narrow.npz: the network's hidden widths \[8\] are not its card's"
    ):
        agents.load(str(path))
    arrays = _shipped_arrays()
    arrays["w0"] = arrays["w0"][:-1]  # 81 features; a Spiffel turn start has 82
    path = _model(tmp_path / "short.npz", npz_bytes(arrays))
    with pytest.raises(ConfigError, match=r"short.npz: the network reads 81 features; .* have 82"):
        agents.load(str(path))


# ---------------------------------------------------------------------------------------------
# the forward model


def _chance_batch(n: int) -> ScorecardBatch:
    return ScorecardBatch.from_states([ScorecardState.new(make_rules("spiffel"))] * n)


@pytest.mark.parametrize("bad", ["66666", b"66666", (6, 6, 6, 6, 6.0), (True, 6, 6, 6, 6), (6, 6, 6, 6, 7)])
def test_an_outcome_is_exactly_k_faces_of_1_to_6(bad: object) -> None:
    state = ScorecardState.new(make_rules("spiffel"))
    with pytest.raises(ValueError, match=r"is not a throw of 5 dice: give 5 faces, each an integer 1-6"):
        state.apply_outcome(bad)  # type: ignore[arg-type]
    assert state.apply_outcome(np.array([6, 6, 6, 6, 6])).game.dice == (6, 6, 6, 6, 6)
    one = state.apply_outcome((6, 6, 6, 6, 2)).afterstate(ScorecardGame.reroll_action([0]))
    with pytest.raises(ValueError, match="not a throw of 1 dice"):  # the 2 re-thrown, as a (1, 1) array
        one.apply_outcome(np.array([[6]]))


def test_a_chance_index_is_an_integer_not_a_bool() -> None:
    state = ScorecardState.new(make_rules("spiffel"))
    with pytest.raises(ValueError, match=r"index 0\.\.251, got True"):
        state.apply_action(True)
    state.apply_action(np.int16(1))  # numpy integers are integers
    assert not state.is_chance_node()


@pytest.mark.parametrize("k", [1.5, 1.0, True, "2", 0, 7])
def test_throw_outcomes_takes_an_integer_count_of_dice(k: object) -> None:
    with pytest.raises(
        ValueError, match=rf"a throw has 1 to 6 dice \(an integer\), got {re.escape(repr(k))}"
    ):
        throw_outcomes(k)  # type: ignore[arg-type]
    assert throw_outcomes(np.int64(2))[0].shape == (21, 2)


@pytest.mark.parametrize(
    "bad",
    [[1.7, 1.7, 1.7, 1.7], np.full(4, 1.7), [True] * 4, [0, 0, 0, True], np.zeros((2, 2), dtype=int), "abcd"],
)
def test_batch_values_are_one_integer_per_row(bad: object) -> None:
    batch = _chance_batch(4)
    for step in (batch.apply_outcomes, batch.apply_actions):
        with pytest.raises(ValueError, match=r"expected 4 .*one integer per row"):
            step(bad)  # type: ignore[arg-type]
    thrown = batch.apply_outcomes([0, 1, 2, 3])
    with pytest.raises(ValueError, match=r"expected 4 actions, one integer per row"):
        thrown.afterstates(bad)  # type: ignore[arg-type]
    assert (thrown.afterstates(np.array([31] * 4, dtype=np.int32)).to_throw == 5).all()


def test_a_batch_holds_one_game_one_set_of_rules_and_one_seat_count() -> None:
    spiffel, yahtzee = (ScorecardState.new(make_rules(g)) for g in ("spiffel", "yahtzee"))
    with pytest.raises(ValueError, match=r"state 1: YahtzeeRules\(.*the batch holds SpiffelRules"):
        ScorecardBatch.from_states([spiffel, yahtzee])
    with pytest.raises(ValueError, match=r"the rows put: YahtzeeRules"):
        ScorecardBatch.from_states([spiffel]).put([0], ScorecardBatch.from_states([yahtzee]))
    usual, short = (FarkleState.new(make_rules("farkle", target=t), 2) for t in (10000, 2000))
    with pytest.raises(
        ValueError, match=r"state 1: FarkleRules\(target=2000.*holds FarkleRules\(target=10000"
    ):
        FarkleBatch.from_states([usual, short])
    batch = FarkleBatch.from_states([usual, usual])
    with pytest.raises(ValueError, match=r"the rows put: FarkleRules\(target=2000"):
        batch.put([0], FarkleBatch.from_states([short]))
    three = FarkleState.new(make_rules("farkle"), 3)
    with pytest.raises(ValueError, match=r"with 3 seat\(s\); the batch holds .* with 2 seat\(s\)"):
        batch.put([0], FarkleBatch.from_states([three]))
    assert batch.put([1], FarkleBatch.from_states([usual])).rules.target == 10000


# ---------------------------------------------------------------------------------------------
# a retired PettingZoo module


def test_every_way_to_reach_a_retired_module_names_its_replacement() -> None:
    multiagent = importlib.import_module("dice_envs.multiagent")
    names = "`dice_envs.multiagent.farkle_v0` is retired .* Please use `dice_envs.multiagent.farkle_v1`"
    with pytest.raises(ImportError, match=names):
        importlib.import_module("dice_envs.multiagent.farkle_v0")
    with pytest.raises(ImportError, match=names):
        exec("import dice_envs.multiagent.farkle_v0", {})
    with pytest.raises(ImportError, match=names):
        exec("from dice_envs.multiagent import farkle_v0", {})
    assert hasattr(multiagent, "farkle_v0") is False
    assert hasattr(multiagent, "chess_v0") is False
    with pytest.raises(AttributeError, match=names):
        multiagent.farkle_v0  # noqa: B018


# ---------------------------------------------------------------------------------------------
# one rule for planner: specs


def test_a_planner_spec_outside_farkle_is_refused_by_load_as_by_the_spec_check() -> None:
    spec = "planner:pretrained:spiffel-search"
    with pytest.raises(ConfigError) as checked:
        check_spec(spec, "spiffel")
    with pytest.raises(ConfigError) as loaded:
        agents.load(spec)
    assert str(loaded.value) == str(checked.value)
    assert "is not available for spiffel" in str(loaded.value)
    assert type(agents.load("search:pretrained:spiffel-search")).__name__ == "SearchAgent"


# ---------------------------------------------------------------------------------------------
# commands


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (a folder no one can write)")
def test_leaderboard_refuses_an_out_it_cannot_write_before_any_game(monkeypatch, capsys) -> None:
    def played(args: object) -> list[str]:
        raise AssertionError("games were played before --out was checked")

    monkeypatch.setattr(leaderboard, "build_page", played)
    for out in ("/proc/leaderboard.md", "/proc/new/folder/leaderboard.md"):
        assert leaderboard.main(["--out", out, "--only", "dice_poker", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --out {out}: ") and "/proc is not writable" in err


def test_benchmark_recipe_says_a_search_recipe_is_not_one_it_times(capsys) -> None:
    assert benchmark.main(["recipe", "--config", "spiffel-search"]) == 2
    err = capsys.readouterr().err
    assert "a trainer: search recipe has no vector env or training loop" in err
    assert "quickstart" in err and "unknown training config key" not in err


def test_benchmark_without_a_subcommand_names_every_benchmark(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        benchmark.main([])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "required: BENCHMARK, one of engine, envs, training, recipe" in err
