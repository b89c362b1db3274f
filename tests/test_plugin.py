"""Every trained bot plugs in as an opponent anywhere: cards read by agents.load, seat views, specs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import agents
import dice_envs  # noqa: F401
from agents.models.card import fit_card, make_card, read_card
from agents.models.seat_views import seat_view
from agents.players.model import ModelAgent, pretrained_names, resolve_model_path
from agents.players.search.agent import SearchAgent
from agents.players.search.farkle import FarkleSearchAgent
from agents.players.search.win_agent import WinSearchAgent
from dice_envs.encoding import decode, encode, observation_size
from dice_envs.engine import new_game
from dice_envs.layouts import layout
from dice_envs.multiagent import farkle_v1, spiffel_v0
from dice_envs.opponents import register, registered, resolve_opponents
from dice_envs.rules import ConfigError, make_rules
from dice_envs.wrappers import SingleAgentEnv

pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parents[1]
ENV_IDS = {
    "spiffel": "dice_envs/Spiffel-v0",
    "dice_poker": "dice_envs/DicePoker-v0",
    "yahtzee": "dice_envs/Yahtzee-v0",
    "farkle": "dice_envs/Farkle-v1",
}
BOTS = pretrained_names()

#: What a shipped bot loads as: a policy (ModelAgent) or a value model played by search.
PLAYS_A_MODEL = (ModelAgent, SearchAgent, WinSearchAgent, FarkleSearchAgent)


def _card(name: str) -> dict:
    return read_card(resolve_model_path(f"pretrained:{name}"))


def _play(env: gym.Env, seed: int) -> dict:
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        done = terminated or truncated
    return info


def test_bots_are_shipped() -> None:
    assert {"spiffel", "dice_poker", "farkle"} <= set(BOTS)


@pytest.mark.parametrize("name", BOTS)
def test_load_reads_game_rules_and_players_from_the_card(name: str) -> None:
    card = _card(name)
    agent = agents.load(f"pretrained:{name}")  # no game given
    assert isinstance(agent, PLAYS_A_MODEL)
    assert agent.rules == make_rules(card["game"], **card["rules"])
    assert agent.num_players == card["num_players"]
    same = agents.load(f"pretrained:{name}", game=card["game"])
    assert same.rules == agent.rules and same.num_players == agent.num_players


@pytest.mark.parametrize("seats", [2, 3, 8])
@pytest.mark.parametrize("name", BOTS)
def test_every_bot_is_an_opponent_in_2_3_and_8_seat_games(name: str, seats: int) -> None:
    card = _card(name)
    game, default = card["game"], make_rules(card["game"]).to_dict()
    rules = {k: v for k, v in card["rules"].items() if v != default[k]}  # the card's (a reduced target)
    opponents = [f"pretrained:{name}"] * (seats - 1)
    if card.get("reward") == "win" and seats != card["num_players"]:  # a win value model: its seats
        with pytest.raises(ConfigError, match=r"two-player game|trained for \d-player Farkle"):
            gym.make(ENV_IDS[game], opponents=opponents, seat=0, **rules)
        return
    env = gym.make(ENV_IDS[game], opponents=opponents, seat=0, **rules)
    info = _play(env, seed=seats)
    assert len(info["final_scores"]) == seats
    bot = env.unwrapped.opponents[0]
    assert isinstance(bot, PLAYS_A_MODEL) and bot.num_players == seats


@pytest.mark.parametrize("name", ["spiffel", "farkle"])
def test_bots_as_opponents_in_the_native_vector_env(name: str) -> None:
    game = _card(name)["game"]
    envs = gym.make_vec(ENV_IDS[game], num_envs=8, opponents=[f"pretrained:{name}"] * 2)
    obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(15):
        masks = info["action_mask"].astype(bool)
        acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        obs, _, _, _, info = envs.step(acts)
    assert obs.shape == (8, observation_size(make_rules(game), 3))


def test_solitaire_model_sees_its_own_card_as_in_solitaire() -> None:
    rules = make_rules("spiffel")
    bot = agents.load("pretrained:spiffel", num_players=4)
    solo = agents.load("pretrained:spiffel")
    g = new_game(rules, num_players=4, seed=5)
    rng = np.random.default_rng(0)
    checked = 0
    while checked < 60:
        p = g.current_player
        obs = encode(g, p)
        seen = bot.view(obs[None])[0]
        assert seen.shape == (observation_size(rules, 1),)
        # the view is the solitaire observation of the seat's own card
        assert decode(seen, rules, 1).boxes == decode(obs, rules, 4).boxes
        assert bot.act(obs, g.action_mask()) == solo.act(seen, g.action_mask())
        checked += 1
        g.apply(int(rng.choice(g.legal_actions())))


@given(
    st.integers(1, 8),
    st.lists(st.integers(0, 12000), min_size=8, max_size=8),
    st.integers(0, 12000),
    st.integers(0, 7),
)
def test_farkle_view_shows_the_strongest_other_seat(n: int, others: list[int], own: int, seat: int) -> None:
    rules = make_rules("farkle")
    table, model = layout(rules, n), layout(rules, 2)
    seat %= n
    obs = np.zeros(table.size, dtype=np.float32)
    obs[table.index("banked")] = own / rules.target
    for f, v in zip(table.others("banked"), others, strict=False):
        obs[f.start] = v / rules.target
    obs[table.index("lead")] = (max(others[: n - 1]) - own) / rules.target if n > 1 else 0.0
    obs[table.field("seat").start + seat] = 1.0
    seen = seat_view(rules, 2, n)(obs[None])[0]
    assert seen.shape == (model.size,)
    strongest = max(others[: n - 1], default=0)
    view = decode(seen, rules, 2)
    assert view.banked == own and view.others_banked == (strongest,)
    assert seen[model.index("lead")] == pytest.approx((strongest - own) / rules.target, abs=1e-6)
    # the seat shown keeps the turn order: seat 1 exactly when the leader throws earlier in the round
    leader = (seat + 1 + others[: n - 1].index(strongest)) % n if n > 1 else n
    assert seen[model.slice("seat")].tolist() == ([0.0, 1.0] if leader < seat else [1.0, 0.0])
    if n == 2:
        assert (seen == obs).all()


def test_models_that_cannot_play_are_refused_with_what_fits() -> None:
    rules = make_rules("spiffel")
    with pytest.raises(ConfigError, match=r"2-player spiffel model cannot play a 1-player game.*2 to 8"):
        fit_card(make_card(rules, 2), rules, 1)
    with pytest.raises(
        ConfigError,
        match=r"^pretrained:spiffel is a spiffel model, not a yahtzee one; "
        r"models for yahtzee: pretrained:yahtzee-scratch, pretrained:yahtzee-search$",
    ):
        agents.load("pretrained:spiffel", game="yahtzee")
    with pytest.raises(ConfigError, match=r"models for farkle: pretrained:farkle"):
        agents.load("pretrained:spiffel", game="farkle")
    with pytest.raises(ConfigError, match=r"target: the game plays 5000, the model was trained for 10000"):
        agents.load("pretrained:farkle", game=make_rules("farkle", target=5000))
    with pytest.raises(ConfigError, match=r"target: the game plays 5000"):
        gym.make("dice_envs/Farkle-v1", target=5000, opponents=["pretrained:farkle"])
    with pytest.raises(ConfigError, match=r"these rules change what the model sees"):
        agents.load("pretrained:spiffel", rules={"num_throws": 2})
    with pytest.raises(ConfigError, match=r"rules must be a dict"):
        agents.load("pretrained:spiffel", rules=[("joker", False)])


def test_rules_merge_over_the_card() -> None:
    bot = agents.load("pretrained:farkle", rules={"target": 2000})  # once a raw TypeError
    assert bot.rules == make_rules("farkle", target=2000)
    assert bot.num_players == 2
    env = gym.make("dice_envs/Farkle-v1", target=2000, opponents=[bot])
    assert len(_play(env, 0)["final_scores"]) == 2
    # explicit game and merged rules agree
    same = agents.load("pretrained:farkle", game=make_rules("farkle", target=2000), rules={"target": 2000})
    assert same.rules == bot.rules
    assert agents.load("heuristic", game="farkle", rules={"target": 3000}).rules.target == 3000


def test_single_agent_env_takes_the_specs_of_gym_make() -> None:
    env = SingleAgentEnv(farkle_v1.env(), opponents=["heuristic"])  # wrapped AEC env
    assert type(env.opponents[0]).__name__ == "HeuristicFarkleAgent"
    assert len(_play(env, 1)["final_scores"]) == 2
    env = SingleAgentEnv(spiffel_v0.raw_env(num_players=3), ["pretrained:spiffel", "greedy"], seat=2)
    assert len(_play(env, 2)["final_scores"]) == 3
    with pytest.raises(ConfigError, match="unknown agent spec 'heuristc'"):
        SingleAgentEnv(farkle_v1.raw_env(num_players=2), ["heuristc"])


def test_opponent_registry_entry_point_and_custom_factories() -> None:
    assert registered()["default"] == "agents.registry:make_opponent"
    made = []

    def factory(spec, rules, num_players, seed):
        made.append((spec, rules.game, num_players, seed))
        return agents.RandomAgent(seed)

    register("coin", factory)
    try:
        out = resolve_opponents(["coin:heads", "random"], "farkle", 3, seed=10)
        assert made == [("coin:heads", "farkle", 3, 10)]
        assert [type(a).__name__ for a in out] == ["RandomAgent", "RandomAgent"]
    finally:
        from dice_envs import opponents

        opponents._registry.pop("coin")
    with pytest.raises(ConfigError, match="must be 'module:function'"):
        register("bad", "no_colon")
    with pytest.raises(ConfigError, match="opponent 0 must be an agent spec"):
        resolve_opponents([42], "farkle", 2)


def test_play_against_the_shipped_spiffel_bot() -> None:
    lines = [f"s {b}" for b in range(1, 14)]
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "play.py"),
            "--game",
            "spiffel",
            "--opponents",
            "pretrained:spiffel",
            "--seed",
            "4",
        ],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert "round 1 of 13: P2 (pretrained:spiffel)" in out.stdout and "game over" in out.stdout
    assert "P2: score " in out.stdout and "final results" in out.stdout


def test_a_model_of_an_older_farkle_encoding_reads_the_current_observation_cut(tmp_path: Path) -> None:
    """A ``farkle-v2`` model (v3 appended the ``seat`` field to v2) loads, sees the
    first ``48 + N`` values of every v3 observation, plays as an opponent at any table, and
    predicts through plain ``MaskablePPO.load`` on the cut observation; an encoding that is not
    such a prefix is refused, naming what was expected."""
    from sb3_contrib import MaskablePPO

    from agents.models.card import card_spaces
    from agents.models.files import save_model
    from agents.training.policy import SpacesOnlyEnv
    from dice_envs.layouts import legacy_size

    rules = make_rules("farkle")
    cut = legacy_size("farkle-v2", rules, 2)
    assert cut == layout(rules, 2).field("seat").start == 50
    card = dict(
        make_card(rules, 2, command="test"), observation_encoding="farkle-v2", env_id="dice_envs/Farkle-v0"
    )
    obs_space, act_space = card_spaces(card)
    assert obs_space.shape == (cut,)
    spaces_only = SpacesOnlyEnv(obs_space, act_space)
    model = MaskablePPO("MlpPolicy", spaces_only, policy_kwargs={"net_arch": [8]}, seed=0)
    path = save_model(model, tmp_path / "old.zip", card)
    bot = agents.load(str(path), game="farkle", num_players=3, seed=0)
    game = new_game(rules, 3, seed=0)
    obs = encode(game, game.current_player)
    seen = bot.view(obs[None])[0]
    assert seen.shape == (cut,) and (seen == seat_view(rules, 2, 3)(obs[None])[0][:cut]).all()
    plain = MaskablePPO.load(path, device="cpu")
    mask = game.action_mask().astype(bool)
    assert mask[int(plain.predict(obs[:cut], action_masks=mask)[0])]
    env = gym.make("dice_envs/Farkle-v1", opponents=[str(path)])
    env.reset(seed=0)
    done = False
    while not done:  # the last legal action banks whenever banking is allowed
        done = any(env.step(int(np.flatnonzero(env.action_masks())[-1]))[2:4])
    (tmp_path / "old.json").write_text(
        json.dumps(dict(read_card(path), observation_encoding="farkle-v1", env_id="dice_envs/Farkle-v0")),
        encoding="utf-8",
    )
    expected = r"observation_encoding: expected 'farkle-v3', the file holds 'farkle-v1'"
    with pytest.raises(ConfigError, match=expected):
        agents.load(str(path), game="farkle", num_players=2)
