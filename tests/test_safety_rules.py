"""Rule knobs validated where they enter: numpy values, untrusted YAML files, Farkle rules that cannot end."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401
from dice_envs.rules import ConfigError, FarkleRules, SpiffelRules, load_rules, make_rules

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------ numpy values
def test_numpy_scalars_are_plain_rule_values() -> None:
    r = make_rules("spiffel", upper_bonus=np.int64(40), joker=np.bool_(False), num_throws=np.uint8(2))
    assert r == make_rules("spiffel", upper_bonus=40, joker=False, num_throws=2)
    assert hash(r) == hash(make_rules("spiffel", upper_bonus=40, joker=False, num_throws=2))
    assert type(r.upper_bonus) is int and type(r.joker) is bool and type(r.num_throws) is int
    assert json.loads(json.dumps(r.to_dict()))["upper_bonus"] == 40  # JSON-safe (model cards, results)
    env = gym.make("dice_envs/Farkle-v1", target=np.int32(2000), max_turns=np.int64(30))
    assert env.unwrapped.rules.target == 2000 and type(env.unwrapped.rules.max_turns) is int


@pytest.mark.parametrize("value", [np.float64(40.0), 40.0, "40", np.array([40]), True])
def test_non_integers_are_refused_by_name(value) -> None:
    with pytest.raises(ConfigError, match=r"'upper_bonus' must be an integer in \[0, 1000\], got") as err:
        make_rules("spiffel", upper_bonus=value)
    assert repr(value) in str(err.value)


def test_rule_mapping_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match=r"rule parameters of spiffel must be a mapping .* got \[1, 2\]"):
        SpiffelRules.from_dict([1, 2])  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ YAML files
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe target: 5000\n", r"not UTF-8 text \(byte 0xff at offset 0\)"),
        (b"target: 5000\nbank_minimum: \xe9\n", r"not UTF-8 text \(byte 0xe9 at offset 27\)"),
        (b"target: [5000\n", "not valid YAML"),
        (b"target: 5000\ntarget: 6000\n", "not valid YAML: key 'target' is given twice"),
        (b"- 1\n- 2\n", "expected a mapping of rule parameters, got list"),
        (b"target: 1e3\n", r"'target' must be an integer in \[50, 1000000\], got 1000.0"),
        (b"[" * 5000 + b"]" * 5000, "not valid YAML"),
        (b"? [1, 2]\n: 3\n", "not valid YAML: unhashable key"),
        (b"game: spiffel\n", "holds rules for game 'spiffel', expected 'farkle'"),
    ],
    ids=["bom", "latin-1", "unclosed", "duplicate", "list", "float", "deep", "unhashable", "other-game"],
)
def test_bad_rule_files_are_refused_by_name(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "rules.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message) as err:
        load_rules("farkle", path)
    assert str(path) in str(err.value) or "must be an integer" in str(err.value)


def test_yaml_tags_run_no_code(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "rules.yaml"
    path.write_text(f"target: !!python/object/apply:os.system ['touch {marker}']\n")
    with pytest.raises(ConfigError, match="not valid YAML: could not determine a constructor"):
        load_rules("farkle", path)
    assert not marker.exists()


def test_rule_file_paths_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="rule config file is a folder, not a file"):
        load_rules("farkle", tmp_path)
    with pytest.raises(ConfigError, match="rule config file not found"):
        load_rules("farkle", tmp_path / "none.yaml")
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (2 << 20))
    with pytest.raises(ConfigError, match="too large for a rule config"):
        load_rules("farkle", big)


def test_shipped_rule_files_still_load() -> None:
    for path in sorted((ROOT / "configs" / "rules").glob("*.yaml")):
        assert load_rules(path.stem, path) == make_rules(path.stem)


# ------------------------------------------------------------------------------ games that cannot end
def test_farkle_rules_that_cannot_end_are_refused() -> None:
    with pytest.raises(
        ConfigError, match=r"bank_minimum=100000 with max_turns=None: .* set max_turns"
    ) as err:
        make_rules("farkle", bank_minimum=100_000, max_turns=None)
    assert "bank_minimum <= 2000" in str(err.value)
    with pytest.raises(ConfigError, match=r"target=1000000 with bankruptcy=True and max_turns=None"):
        make_rules("farkle", target=1_000_000, max_turns=None)
    # with a turn cap every game ends (by truncation at worst); without bankruptcy a long race ends too
    assert make_rules("farkle", bank_minimum=100_000, max_turns=50).max_turns == 50
    assert make_rules("farkle", target=1_000_000, bankruptcy=False, max_turns=None).max_turns is None
    assert FarkleRules(bank_minimum=2000, max_turns=None).bank_minimum == 2000


def test_evaluate_refuses_endless_rules_before_playing(tmp_path: Path, capsys) -> None:
    main = runpy.run_path(str(ROOT / "scripts" / "evaluate.py"))["main"]
    out = tmp_path / "e"
    args = [
        "--game",
        "farkle",
        "--agents",
        "random",
        "heuristic",
        "--out",
        str(out),
        "--quiet",
        "--workers",
        "1",
    ]
    assert main([*args, "--rules", "bank_minimum=100000", "max_turns=none"]) == 2
    assert "bank_minimum=100000 with max_turns=None" in capsys.readouterr().err
    assert not out.exists()
