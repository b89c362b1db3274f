"""The bots shipped in ``agents/pretrained/``, policies (``.zip``) and search value models (``.npz``)
alike: each card's model file is there and is the card's (SHA-256), its recipe is in the repo and
gives the card's config, its lineage adds up, and the bot loads by name and plays."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sb3_contrib")

from tests.test_training import _check_model

ROOT = Path(__file__).resolve().parents[1]
PRETRAINED = ROOT / "agents" / "pretrained"
#: Every shipped card (``measurements.json`` holds the measured figures, not a card).
SHIPPED = sorted(p.stem for p in PRETRAINED.glob("*.json") if p.stem != "measurements")
RECIPE = re.compile(r"(python scripts/train\.py|dice-envs train) --config (configs/train/\S+\.yaml)")


def _recipe(command: str) -> Path:
    """The recipe a training command ran (asserted to be in the repo)."""
    made_by = RECIPE.match(command)
    assert made_by and (ROOT / made_by.group(2)).is_file(), command  # its recipe is in the repo
    return ROOT / made_by.group(2)


def _check_policy(path: Path, card: dict[str, Any]) -> None:
    """A MaskablePPO bot: its recipes (of each ensemble member, of a fine-tuned start) and the
    shipped bot it learned from, if any."""
    members = card.get("ensemble", {}).get("members", [])
    if members:  # merged from runs of recipes in the repo (agents.training.ensemble)
        assert card["command"].startswith("python scripts/merge_models.py ") and len(members) >= 2
        assert card["steps"] == sum(m["steps"] for m in members)
    commands = [m["command"] for m in members] or [card["command"]]
    warm = card.get("evaluation", {}).get("warm_start", {})
    if warm.get("kind") == "model":  # fine-tuned (warm_start: model): its start was made by a recipe too
        assert card["config"]["init_model"] == warm["init_model"] and warm["steps"] > 0
        commands.append(warm["command"])
    expert = warm.get("expert_model")
    if expert:  # cloned a shipped bot (or the planner over one): that very file
        assert warm["expert"] in (expert["model"], f"planner:{expert['model']}")
        assert expert["model"].startswith("pretrained:")
        parent = json.loads((PRETRAINED / f"{expert['model'].split(':', 1)[1]}.json").read_text())
        assert parent["weights_sha256"] == expert["weights_sha256"]
        assert (expert["steps"], expert["wall_time_s"]) == (parent["steps"], parent["wall_time_s"])
        assert card["config"]["warm_start"] == "bc" and card["config"]["bc_expert"] == warm["expert"]
    for command in commands:
        _recipe(command)
    _check_model(path, card["game"], card["n_actions"], card["num_players"], card["steps"], card["command"])


def _check_value_model(path: Path, card: dict[str, Any]) -> None:
    """A search bot: its weights are the card's, its recipe gives the card's config, and the card's
    games, steps, learning curve and evaluation are those of that config."""
    from agents.models.card import card_rules
    from agents.players.search.agent import load_value_model
    from agents.players.search.farkle import FARKLE_FEATURES
    from agents.players.search.value import FEATURES
    from agents.players.search.win import WIN_FEATURES
    from agents.players.search.win_normal import WIN_NORMAL_FEATURES
    from agents.training.recipes import read_recipe
    from agents.training.search.config import SearchConfig

    assert hashlib.sha256(path.read_bytes()).hexdigest() == card["weights_sha256"]
    rules = card_rules(card)
    net, _ = load_value_model(path, rules, card["num_players"])  # the card fits and is read as shipped
    cfg, recipe = card["config"], _recipe(card["command"])
    made = SearchConfig.from_yaml(recipe).to_dict()
    assert set(read_recipe(recipe)) <= set(cfg)  # every key the recipe sets is on the card...
    same = [k for k in cfg if k != "progress_bar"]  # (the progress bar does not change the model)
    assert {k: cfg[k] for k in same} == {k: made[k] for k in same}  # ...with the recipe's value
    win = cfg["reward"] == "win"
    assert (card["trainer"], card["seed"], card["num_players"]) == ("search", cfg["seed"], cfg["num_players"])
    assert card.get("reward", "score") == cfg["reward"] and "no solver values read" in card["learner"]
    farkle = card["game"] == "farkle"
    if cfg.get("leaf") == "normal":  # no win network: the points model's network and a spread
        assert net is None and card["value"]["features"] == WIN_NORMAL_FEATURES
        assert card["value"]["points"]["model"] == cfg["points_model"]
        assert card["games"] == cfg["iterations"] * cfg["games_per_iteration"]
        assert card["learning_curve"] == [] and card["evaluation"]["games"] == cfg["final_eval_games"]
        assert card["evaluation"]["opponent"] == cfg["eval_opponent"]
        return
    assert card["value"]["features"] == (FARKLE_FEATURES if farkle else WIN_FEATURES if win else FEATURES)
    assert card["value"]["hidden"] == cfg["hidden"] == net.hidden
    assert card["games"] == cfg["iterations"] * cfg["games_per_iteration"]
    if farkle:  # a game has at least one decision
        assert card["steps"] >= card["games"]
    else:
        turns = card["games"] * card["num_players"] * len(rules.categories)
        assert turns <= card["steps"] <= turns * rules.num_throws  # one to num_throws actions a turn
    curve = card["learning_curve"]
    assert curve[-1]["games"] == card["games"] and curve[-1]["wall_s"] <= card["wall_time_s"]
    assert card["evaluation"]["games"] == cfg["final_eval_games"]
    if win:
        assert card["evaluation"]["opponent"] == cfg["eval_opponent"]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_bot_loads_plainly_and_by_name(name: str) -> None:
    import agents
    from agents.models.card import card_rules
    from dice_envs.encoding import encode
    from dice_envs.engine import new_game
    from dice_envs.rules import make_rules

    card = json.loads((PRETRAINED / f"{name}.json").read_text())
    files = [p for p in (PRETRAINED / f"{name}.zip", PRETRAINED / f"{name}.npz") if p.is_file()]
    assert len(files) == 1, f"{name}: the card needs its one model file beside it, found {files}"
    (path,) = files
    if path.suffix == ".npz":
        _check_value_model(path, card)
    else:
        _check_policy(path, card)
    # shipped bots play the default rules but for those their recipe changes (a reduced target)
    assert card["rules"] == make_rules(card["game"], **card["config"]["rules"]).to_dict()
    rules = card_rules(card)
    if card.get("reward") != "win":  # a win model is measured by its win rate (its card's evaluation)
        measured = json.loads((PRETRAINED / "measurements.json").read_text())[name]
        assert measured["games"] >= 5000
    players = card["num_players"]
    agent = agents.load(f"pretrained:{name}", game=rules, num_players=players, seed=0)
    game = new_game(rules, players, seed=5)
    for _ in range(30):
        mask = game.action_mask()
        action = agent.act(encode(game, game.current_player), mask)
        assert mask[action] == 1
        game.apply(action)
        if game.done:
            break


def test_shipped_farkle_bot_learned_from_win_optimal_and_is_measured_against_it() -> None:
    path = PRETRAINED / "farkle.json"
    if not path.is_file():
        pytest.skip("farkle.zip not shipped")
    card = json.loads(path.read_text())
    assert card["evaluation"]["warm_start"]["expert"] == "win-optimal"
    assert "win-optimal" in card["config"]["pool_builtin"]
    measured = json.loads((PRETRAINED / "measurements.json").read_text())["farkle"]["vs"]
    row = measured["win-optimal"]
    assert row["games"] >= 5000 and row["wins"] + row["draws"] + row["losses"] == row["games"]
    assert row["win_rate"] == pytest.approx(row["wins"] / row["games"])
