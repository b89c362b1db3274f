"""Rule configurations: defaults from RULES.md, validation, YAML files and the game registry."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dice_envs.engine import new_game
from dice_envs.rules import (
    GAMES,
    ConfigError,
    DicePokerRules,
    FarkleRules,
    SpiffelRules,
    YahtzeeRules,
    load_rules,
    make_rules,
    rules_class,
)

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs" / "rules"

#: The defaults as written in RULES.md.
RULES_MD_DEFAULTS = {
    "spiffel": {
        "upper_bonus_threshold": 63,
        "upper_bonus": 35,
        "spiffel_bonus": 100,
        "spiffel_bonus_limit": 1,
        "joker": True,
        "num_throws": 3,
    },
    "dice_poker": {
        "upper_bonus_threshold": 64,
        "upper_bonus": 35,
        "poker_bonus": 100,
        "poker_bonus_limit": None,
        "joker": True,
        "num_throws": 3,
    },
    "yahtzee": {
        "upper_bonus_threshold": 63,
        "upper_bonus": 35,
        "yahtzee_bonus": 100,
        "yahtzee_bonus_limit": None,
        "joker": True,
        "num_throws": 3,
        "joker_rule": "forced",  # the official forced joker; "verhoeff" is the other convention
    },
    "farkle": {"target": 10_000, "bank_minimum": 350, "bankruptcy": True, "max_turns": 100},
}


@pytest.mark.parametrize("game", list(GAMES))
def test_defaults_match_rules_md(game: str) -> None:
    cls = rules_class(game)
    assert cls().to_dict() == RULES_MD_DEFAULTS[game]
    assert cls.game == game
    assert make_rules(game) == cls() == load_rules(game)


def test_structure_of_each_game() -> None:
    assert SpiffelRules.categories[11] == "spiffel" and len(SpiffelRules.categories) == 13
    assert YahtzeeRules.categories[11] == "yahtzee" and len(YahtzeeRules.categories) == 13
    assert DicePokerRules.categories[13] == "poker" and DicePokerRules().num_boxes == 15
    assert (SpiffelRules.joker_order, SpiffelRules.joker_trigger) == ("free", "bonus")
    assert (DicePokerRules.joker_order, DicePokerRules.joker_trigger) == ("forced", "bonus")
    assert (YahtzeeRules().joker_order, YahtzeeRules().joker_trigger) == ("forced", "filled")
    verhoeff = YahtzeeRules(joker_rule="verhoeff")
    assert (verhoeff.joker_order, verhoeff.joker_trigger) == ("free", "filled_upper")
    assert DicePokerRules().five_kind_bonus == 100 and DicePokerRules().five_kind_bonus_limit is None
    assert SpiffelRules().five_kind_bonus_limit == 1


@pytest.mark.parametrize("game", list(GAMES))
def test_unknown_key_names_the_key_and_the_allowed_keys(game: str) -> None:
    with pytest.raises(ConfigError) as err:
        make_rules(game, bogus_key=1)
    message = str(err.value)
    assert "'bogus_key'" in message
    for name in RULES_MD_DEFAULTS[game]:
        assert name in message
    # the same through from_dict and replace
    with pytest.raises(ConfigError, match="bogus_key"):
        rules_class(game).from_dict({"bogus_key": 1})
    with pytest.raises(ConfigError, match="bogus_key"):
        rules_class(game)().replace(bogus_key=1)
    assert "number of players" not in message and "did you mean" not in message  # nothing close
    name = rules_class(game).parameter_names()[0]
    with pytest.raises(ConfigError, match=rf"'{name[:-1]}' for {game} \(did you mean '{name}'\?\); allowed"):
        make_rules(game, **{name[:-1]: 2})
    # the seat count, the rule a user most often tries, says where it is set instead
    with pytest.raises(ConfigError, match=r"'num_players'.*the number of players is not a rule.*--players"):
        make_rules(game, num_players=3)


@pytest.mark.parametrize(
    ("game", "params", "name"),
    [
        ("spiffel", {"upper_bonus_threshold": -1}, "upper_bonus_threshold"),
        ("spiffel", {"upper_bonus_threshold": 200}, "upper_bonus_threshold"),
        ("spiffel", {"upper_bonus_threshold": 63.0}, "upper_bonus_threshold"),
        ("spiffel", {"upper_bonus": "35"}, "upper_bonus"),
        ("spiffel", {"joker": "yes"}, "joker"),
        ("spiffel", {"joker": 1}, "joker"),
        ("spiffel", {"spiffel_bonus_limit": -1}, "spiffel_bonus_limit"),
        ("spiffel", {"spiffel_bonus": True}, "spiffel_bonus"),
        ("spiffel", {"num_throws": 0}, "num_throws"),
        ("dice_poker", {"poker_bonus_limit": "none"}, "poker_bonus_limit"),
        ("dice_poker", {"joker": None}, "joker"),
        ("yahtzee", {"yahtzee_bonus": -100}, "yahtzee_bonus"),
        ("farkle", {"target": "10000"}, "target"),
        ("farkle", {"target": 0}, "target"),
        ("farkle", {"bank_minimum": -50}, "bank_minimum"),
        ("farkle", {"bankruptcy": "false"}, "bankruptcy"),
        ("farkle", {"max_turns": 0}, "max_turns"),
        ("farkle", {"max_turns": 2.5}, "max_turns"),
    ],
)
def test_bad_values_raise_config_error(game: str, params: dict, name: str) -> None:
    with pytest.raises(ConfigError) as err:
        make_rules(game, **params)
    message = str(err.value)
    assert repr(name) in message
    assert repr(next(iter(params.values()))) in message
    assert isinstance(err.value, ValueError)
    # direct construction validates too
    with pytest.raises(ConfigError):
        rules_class(game)(**params)


def test_bonus_limit_may_cover_every_round() -> None:
    # Dice Poker has 15 boxes: after the poker box, 14 more pokers can each earn a bonus
    assert make_rules("dice_poker", poker_bonus_limit=14).poker_bonus_limit == 14
    assert make_rules("yahtzee", yahtzee_bonus_limit=12).yahtzee_bonus_limit == 12
    with pytest.raises(ConfigError, match="poker_bonus_limit"):
        make_rules("dice_poker", poker_bonus_limit=15)


def test_configs_are_frozen_hashable_and_round_trip() -> None:
    rules = make_rules("farkle", target=5000, bankruptcy=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.target = 1  # type: ignore[misc]
    assert hash(rules) == hash(FarkleRules(target=5000, bankruptcy=False))
    assert FarkleRules.from_dict(rules.to_dict()) == rules
    assert rules.replace(target=6000).target == 6000 and rules.target == 5000
    assert make_rules(rules) is rules
    assert make_rules(rules, bank_minimum=0).bank_minimum == 0
    with pytest.raises(ConfigError, match="target"):
        rules.replace(target=-5)


def test_unknown_game_names_the_games() -> None:
    with pytest.raises(ConfigError) as err:
        make_rules("chess")
    for name in GAMES:
        assert name in str(err.value)
    assert rules_class("Dice-Poker") is DicePokerRules


@pytest.mark.parametrize("game", list(GAMES))
def test_yaml_files_load_and_equal_the_defaults(game: str) -> None:
    path = CONFIG_DIR / f"{game}.yaml"
    assert rules_class(game).from_yaml(path) == rules_class(game)()
    assert load_rules(game, path) == rules_class(game)()
    assert load_rules(game, str(path)) == rules_class(game)()


def test_load_rules_applies_overrides() -> None:
    rules = load_rules("spiffel", CONFIG_DIR / "spiffel.yaml", num_throws=2)
    assert rules.num_throws == 2 and rules.upper_bonus_threshold == 63  # type: ignore[attr-defined]
    assert load_rules("farkle", target=3000).target == 3000  # type: ignore[attr-defined]


@pytest.mark.parametrize(("game", "other"), [("spiffel", "dice_poker"), ("farkle", "yahtzee")])
def test_yaml_of_another_game_is_rejected(game: str, other: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_rules(game, CONFIG_DIR / f"{other}.yaml")
    assert repr(other) in str(err.value) and repr(game) in str(err.value)


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match="not found") as err:
        load_rules("spiffel", missing)
    assert str(missing) in str(err.value)


def test_yaml_content_errors(tmp_path: Path) -> None:
    bad = tmp_path / "list.yaml"
    bad.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_rules("spiffel", bad)
    typo = tmp_path / "typo.yaml"
    typo.write_text("game: spiffel\nupper_bonus_treshold: 60\n")
    with pytest.raises(ConfigError, match="upper_bonus_treshold"):
        load_rules("spiffel", typo)
    value = tmp_path / "value.yaml"
    value.write_text("target: ten thousand\n")
    with pytest.raises(ConfigError, match="target"):
        load_rules("farkle", value)
    broken = tmp_path / "broken.yaml"
    broken.write_text("target: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML") as err:
        load_rules("farkle", broken)
    assert str(broken) in str(err.value)
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert load_rules("dice_poker", empty) == DicePokerRules()
    gameless = tmp_path / "gameless.yaml"
    gameless.write_text("bank_minimum: 0\n")
    assert load_rules("farkle", gameless).bank_minimum == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("n", [0, 9, -1, "2", 1.5, True])
def test_new_game_rejects_bad_player_counts(n: object) -> None:
    for game in GAMES:
        with pytest.raises(ConfigError, match="num_players"):
            new_game(game, num_players=n)  # type: ignore[arg-type]
