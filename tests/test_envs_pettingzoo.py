"""PettingZoo AEC envs: API conformance, seeding, masks, turn keeping, rewards, illegal actions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, seed_test

from dice_envs.encoding import ENCODING_VERSION, encode, encoding_id, family
from dice_envs.engine import FarkleGame
from dice_envs.multiagent import dice_poker_v0, farkle_v1, spiffel_v0, win_rewards, yahtzee_v0
from dice_envs.rules import ConfigError
from dice_envs.rules.scorecard import N_REROLL_ACTIONS

MODULES = [spiffel_v0, dice_poker_v0, yahtzee_v0, farkle_v1]
IDS = [m.__name__.rsplit(".", 1)[-1] for m in MODULES]


def small(module):
    """Rule parameters that keep Farkle games short in tests."""
    return {"target": 1500} if module is farkle_v1 else {}


@pytest.mark.parametrize("module", MODULES, ids=IDS)
@pytest.mark.parametrize("num_players", [1, 2, 3])
def test_api_and_seed(module, num_players):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's notes on dict observations (as for classic envs)
        api_test(module.env(num_players=num_players, **small(module)), num_cycles=200)
        seed_test(lambda: module.env(num_players=num_players, **small(module)), num_cycles=200)


def play_random(env, seed, rng=None):
    """Play a raw env to the end with uniformly random legal actions; return per-agent reward sums."""
    rng = rng or np.random.default_rng(seed)
    env.reset(seed=seed)
    sums = dict.fromkeys(env.possible_agents, 0.0)
    checked = 0
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        obs = env.observe(agent)
        g = env.game
        seat = env.seat(agent)
        assert seat == g.current_player
        assert obs["action_mask"].dtype == np.int8
        assert np.flatnonzero(obs["action_mask"]).tolist() == g.legal_actions()
        np.testing.assert_array_equal(obs["observation"], encode(g, seat))
        for other in env.possible_agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        checked += 1
        for a, r in env.rewards.items():
            sums[a] += r
    assert checked > 0
    return sums


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_score_rewards_sum_to_final_totals(module):
    env = module.raw_env(num_players=3, reward="score", **small(module))
    for seed in range(3):
        sums = play_random(env, seed)
        totals = env.game.totals()
        assert [sums[a] for a in env.possible_agents] == [float(t) for t in totals]


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_win_rewards_at_the_end(module):
    env = module.raw_env(num_players=2, **small(module))
    assert env.reward_mode == "win"
    sums = play_random(env, 5)
    assert [sums[a] for a in env.possible_agents] == win_rewards(env.game.totals())


@pytest.mark.parametrize("module", MODULES, ids=IDS)
def test_final_infos(module):
    env = module.raw_env(num_players=2, **small(module))
    env.reset(seed=3)
    start = env.infos["player_0"]
    assert env.encoding == env.metadata["encoding"] == encoding_id(env.rules)
    assert start["encoding_version"] == ENCODING_VERSION[family(env.rules)]
    assert start["game_over"] is False and start["truncated"] is False
    assert start["final_scores"].tolist() == [0, 0] and start["winners"].tolist() == [False, False]
    while not any(env.terminations.values()) and not any(env.truncations.values()):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]))
    for a in env.agents:
        info = env.infos[a]
        assert set(info) == set(start)  # the same keys from reset on (RL libraries batch them)
        assert info["game_over"] is True
        assert info["final_scores"].tolist() == env.game.totals()
        assert np.flatnonzero(info["winners"]).tolist() == list(env.game.winners())
        assert info["truncated"] is env.game.__dict__.get("truncated", False)


def test_agent_keeps_the_turn_for_all_throws():
    env = spiffel_v0.raw_env(num_players=2)
    env.reset(seed=0)
    assert env.agent_selection == "player_0"
    env.step(31)  # re-throw all: still player_0
    assert env.agent_selection == "player_0"
    env.step(31)
    assert env.agent_selection == "player_0"
    mask = env.observe("player_0")["action_mask"]
    assert not mask[1:N_REROLL_ACTIONS].any()  # third throw: must score
    env.step(int(np.flatnonzero(mask)[0]))
    assert env.agent_selection == "player_1"


def test_farkle_bankruptcy_reward_goes_to_the_bankrupt_seat():
    env = farkle_v1.raw_env(num_players=2, reward="score")
    env.reset(seed=0)
    env.game = FarkleGame(env.rules, num_players=2, seed=0, opening=(1, 1, 1, 1, 2, 3))
    # player_1's opening throw, then player_0's next opening throw: a farkle
    env.game.dice_source.inject(1, 1, 1, 1, 2, 3, 2, 2, 3, 3, 4, 6)
    env.agent_selection = "player_0"
    env.step(FarkleGame.action([0, 1, 2, 3], bank=True))  # player_0 banks 2000
    assert env.rewards == {"player_0": 2000.0, "player_1": 0.0}
    assert env.agent_selection == "player_1"
    env.step(FarkleGame.action([0, 1, 2, 3], bank=True))  # player_1 banks; player_0 goes bankrupt
    assert env.rewards == {"player_0": -2000.0, "player_1": 2000.0}
    assert env.game.banked == [0, 2000]
    assert env.agent_selection == "player_1"  # player_0's turn was played by the engine
    _, reward, *_ = env.last()  # player_1: its 2000 since its last action
    assert reward == 2000.0
    # player_0's rewards since its last action: +2000 banked, -2000 bankrupt
    assert env._cumulative_rewards["player_0"] == 0.0


def test_raw_env_illegal_action_raises_and_keeps_state():
    env = dice_poker_v0.raw_env(num_players=2)
    env.reset(seed=1)
    before = env.game.clone()
    with pytest.raises(ValueError, match=r"illegal action 0 .*legal actions: \["):
        env.step(0)
    assert env.game.summary() == before.summary() and env.game.dice == before.dice
    assert env.agent_selection == "player_0" and env.game.throw == before.throw


def test_wrapped_env_illegal_action_ends_game_with_penalty():
    env = spiffel_v0.env(num_players=2)
    env.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(0)  # never legal
    assert all(env.terminations.values())
    assert not any(env.truncations.values())  # ended by the env's rule, not cut (dice_envs.outcome)
    assert env.rewards["player_0"] == -1.0 and env.rewards["player_1"] == 0.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"upper_bonus_treshold": 60}, "allowed: upper_bonus_threshold"),
        ({"num_players": 9}, "num_players"),
        ({"reward": "points"}, "allowed: score, win"),
        ({"num_players": 1, "reward": "win"}, "at least 2 players"),
        ({"render_mode": "rgb_arr"}, "allowed: None, ansi, human, rgb_array"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        spiffel_v0.raw_env(**kwargs)


def test_rule_parameters_reach_the_engine():
    env = farkle_v1.env(num_players=2, target=500, bank_minimum=0)
    env.reset(seed=0)
    assert env.unwrapped.rules.target == 500 and env.unwrapped.rules.bank_minimum == 0
    assert spiffel_v0.raw_env(num_players=1).reward_mode == "score"


def test_spaces_built_once():
    env = yahtzee_v0.env(num_players=3)
    assert env.observation_space("player_1") is env.observation_space("player_1")
    assert env.action_space("player_2") is env.action_space("player_2")
    assert env.observation_space("player_0")["observation"].shape == (86 + 2 * 15,)


@given(st.lists(st.integers(-5, 1000), min_size=2, max_size=8))
@settings(max_examples=200, deadline=None)
def test_win_rewards_properties(totals):
    r = win_rewards(totals)
    assert abs(sum(r)) < 1e-9
    best = max(totals)
    winners = [i for i, t in enumerate(totals) if t == best]
    if len(winners) == len(totals):
        assert r == [0.0] * len(totals)
    else:
        assert all(r[i] == pytest.approx(1 / len(winners)) for i in winners)
        assert all(r[i] < 0 for i in range(len(totals)) if i not in winners)
        assert max(r) <= 1.0 and min(r) >= -1.0


def _seat_specs(game: str) -> list[str]:
    from agents.registry import known_specs

    not_seats = {"human", "pretrained:<name>", "a path to a .zip model"}
    examples = {
        "threshold:N": "threshold:500",
        "planner:<model>": "planner:pretrained:farkle-scratch",
        "search:<model>": "search:pretrained:" + ("farkle-scratch" if game == "farkle" else f"{game}-search"),
        "best-response:<spec>": "best-response:greedy",
    }
    specs = [examples.get(s, s) for s in known_specs(game) if s not in not_seats]
    return specs + (["pretrained:farkle"] if game == "farkle" else [])


@pytest.mark.parametrize(
    ("module", "spec"),
    [(m, s) for m in MODULES for s in _seat_specs(m.raw_env.game_name)],
    ids=lambda v: v if isinstance(v, str) else v.__name__.rsplit(".", 1)[-1],
)
def test_every_builtin_agent_plays_a_whole_game(module, spec):
    """Each built-in agent (and the shipped 2-player bot) takes a seat of the AEC env beside a
    random agent and plays the game to its end with legal actions only."""
    import agents

    rules = {} if spec.startswith(("pretrained:", "planner:", "search:")) else small(module)
    if spec.startswith("best-response:"):
        rules = {"target": 300, "bank_minimum": 50}  # solved at reduced targets only (TARGET_LIMITS)
    env = module.env(num_players=2, **rules)
    env.reset(seed=5)
    game = module.raw_env.game_name
    seats = {
        "player_0": agents.load(spec, game=env.unwrapped.rules, num_players=2, seed=1),
        "player_1": agents.load("random", game=game, num_players=2, seed=2),
    }
    moves = dict.fromkeys(seats, 0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = seats[agent].act(obs["observation"], obs["action_mask"])
        assert obs["action_mask"][action] == 1
        moves[agent] += 1
        env.step(action)
    assert env.unwrapped.game.done and moves["player_0"] > 0
