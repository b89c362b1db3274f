"""The one step-outcome rule (dice_envs.outcome) and the four faces that call it.

The PettingZoo env, the Gymnasium env, the native vector env and the RLlib env must give the same
``(reward, terminated, truncated)`` for an illegal action and at the end of a game, each equal to
what :func:`dice_envs.outcome.step_outcome` says for that game.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dice_envs  # noqa: F401 - registers the ids
from dice_envs.games import game_spec, load_object, vector_env_class
from dice_envs.outcome import batch_win_rewards, legal, step_outcome, win_rewards

#: Each game once; Farkle cut at a few turns so some of its games end truncated.
CASES = [
    ("spiffel", {}),
    ("dice_poker", {}),
    ("yahtzee", {}),
    ("farkle", {"max_turns": 3}),
]
IDS = [game for game, _ in CASES]
PENALTY = -2.5


def _rllib_env(game: str, **config: Any) -> Any:
    pytest.importorskip("ray.rllib")
    from agents.ray.rllib.env import DiceMultiAgentEnv

    return DiceMultiAgentEnv({"game": game, **config})


def _illegal_action(mask: np.ndarray) -> int:
    """A masked-out action where there is one, else one past the action space."""
    masked = np.flatnonzero(np.asarray(mask) == 0)
    return int(masked[0]) if masked.size else len(mask)


def _random_legal(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


# ------------------------------------------------------------------------------- illegal action
def _pettingzoo_illegal(game: str, action: int | None) -> tuple[float, bool, bool]:
    env = load_object(game_spec(game).aec_module).env(num_players=2, illegal_reward=PENALTY)
    env.reset(seed=0)
    agent = env.agent_selection
    assert agent == "player_0"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's illegal-move warning
        env.step(_illegal_action(env.unwrapped.action_mask(agent)) if action is None else action)
    assert env.rewards == {a: (PENALTY if a == agent else 0.0) for a in env.possible_agents}
    return env.rewards[agent], env.terminations[agent], env.truncations[agent]


def _gym_illegal(game: str, action: int | None) -> tuple[float, bool, bool]:
    env = gym.make(game_spec(game).env_id, opponents=["random"], seat=0, illegal_reward=PENALTY)
    env.reset(seed=0)
    a = _illegal_action(env.unwrapped.action_masks()) if action is None else action
    _, reward, terminated, truncated, _ = env.step(a)
    return reward, terminated, truncated


def _vector_illegal(game: str, action: int | None) -> tuple[float, bool, bool]:
    env = vector_env_class(game)(num_envs=1, opponents=["random"], seat=0, illegal_reward=PENALTY)
    env.reset(seed=0)
    a = _illegal_action(env.action_masks()[0]) if action is None else action
    _, rewards, terms, truncs, info = env.step(np.array([a]))
    assert info["illegal_action"][0]
    return float(rewards[0]), bool(terms[0]), bool(truncs[0])


def _rllib_illegal(game: str, action: int | None) -> tuple[float, bool, bool]:
    env = _rllib_env(game, illegal_reward=PENALTY)
    obs, _ = env.reset(seed=0)
    assert list(obs) == ["player_0"]
    a = _illegal_action(obs["player_0"]["action_mask"]) if action is None else action
    _, rewards, terms, truncs, _ = env.step({"player_0": a})
    assert terms["player_0"] == terms["__all__"] and truncs["player_0"] == truncs["__all__"]
    return rewards["player_0"], terms["player_0"], truncs["player_0"]


FACES = {
    "pettingzoo": _pettingzoo_illegal,
    "gymnasium": _gym_illegal,
    "vector": _vector_illegal,
    "rllib": _rllib_illegal,
}


@pytest.mark.parametrize("action", [None, -1], ids=["masked", "out-of-range"])
@pytest.mark.parametrize("game", IDS)
def test_every_face_ends_an_illegal_action_by_the_one_rule(game: str, action: int | None) -> None:
    rule = step_outcome(2, illegal=True, actor=0, illegal_reward=PENALTY)
    expected = (float(rule.rewards[0]), bool(rule.terminated), bool(rule.truncated))
    assert expected == (PENALTY, True, False)  # the module's stated semantics
    got = {face: play(game, action) for face, play in FACES.items()}
    assert got == dict.fromkeys(FACES, expected)


# ------------------------------------------------------------------------------- a game's end
def _expected_end(totals: Any, cut: bool) -> tuple[np.ndarray, bool, bool]:
    rule = step_outcome(len(totals), over=True, cut=cut, totals=np.asarray(totals), reward="win")
    return rule.rewards, bool(rule.terminated), bool(rule.truncated)


def _pettingzoo_end(game: str, params: dict[str, Any], seed: int) -> list[tuple[float, bool, bool]]:
    env = load_object(game_spec(game).aec_module).env(num_players=2, **params)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    raw = env.unwrapped
    while not raw.game.done:
        env.step(_random_legal(rng, raw.action_mask(env.agent_selection)))
    rewards, term, trunc = _expected_end(raw.game.totals(), bool(getattr(raw.game, "truncated", False)))
    got = [(env.rewards[a], env.terminations[a], env.truncations[a]) for a in env.possible_agents]
    return [(got[i], (float(rewards[i]), term, trunc)) for i in range(2)]


def _gym_end(game: str, params: dict[str, Any], seed: int) -> list[tuple[Any, Any]]:
    env = gym.make(game_spec(game).env_id, opponents=["random"], seat=0, **params)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while True:
        _, reward, terminated, truncated, info = env.step(_random_legal(rng, env.unwrapped.action_masks()))
        if terminated or truncated:
            break
    rewards, term, trunc = _expected_end(info["final_scores"], bool(info["truncated"]))
    return [((reward, terminated, truncated), (float(rewards[0]), term, trunc))]


def _vector_end(game: str, params: dict[str, Any], seed: int) -> list[tuple[Any, Any]]:
    env = vector_env_class(game)(num_envs=1, opponents=["random"], seat=0, **params)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while True:
        _, r, terms, truncs, info = env.step(np.array([_random_legal(rng, env.action_masks()[0])]))
        if terms[0] or truncs[0]:
            break
    cut = bool(env.engine.truncated[0])  # next-step autoreset: the finished game is still there
    rewards, term, trunc = _expected_end(info["final_scores"][0], cut)
    return [((float(r[0]), bool(terms[0]), bool(truncs[0])), (float(rewards[0]), term, trunc))]


def _rllib_end(game: str, params: dict[str, Any], seed: int) -> list[tuple[Any, Any]]:
    env = _rllib_env(game, **params)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while True:
        ((agent, o),) = obs.items()
        obs, rewards, terms, truncs, _ = env.step({agent: _random_legal(rng, o["action_mask"])})
        if terms["__all__"] or truncs["__all__"]:
            break
    game_state = env.aec.game
    want, term, trunc = _expected_end(game_state.totals(), bool(getattr(game_state, "truncated", False)))
    return [
        ((rewards[a], terms[a], truncs[a]), (float(want[i]), term, trunc))
        for i, a in enumerate(env.possible_agents)
    ]


@pytest.mark.parametrize(("game", "params"), CASES, ids=IDS)
def test_every_face_ends_a_game_by_the_one_rule(game: str, params: dict[str, Any]) -> None:
    flags = set()
    for seed in range(3):
        for play in (_pettingzoo_end, _gym_end, _vector_end, _rllib_end):
            for got, expected in play(game, params, seed):
                assert got == expected, (play.__name__, seed)
                flags.add(expected[1:])
    assert flags == ({(False, True)} if game == "farkle" else {(True, False)})  # Farkle: cut at 3 turns


# ------------------------------------------------------------------------------- the rule itself
@given(
    st.integers(1, 5).flatmap(
        lambda p: st.lists(
            st.tuples(
                st.booleans(),
                st.booleans(),
                st.booleans(),
                st.lists(st.integers(-300, 300), min_size=p, max_size=p),
                st.integers(0, p - 1),
            ),
            min_size=1,
            max_size=6,
        )
    ),
    st.sampled_from(["score", "win"]),
)
@settings(max_examples=150, deadline=None)
def test_a_batch_is_decided_as_each_game_alone(rows: list[tuple[Any, ...]], reward: str) -> None:
    over, cut, illegal, totals, actor = (np.array(col) for col in zip(*rows, strict=True))
    p = totals.shape[1]
    batch = step_outcome(
        p, over=over, cut=cut, illegal=illegal, totals=totals, actor=actor, reward=reward, illegal_reward=-1.0
    )
    for i, (o, c, bad, t, who) in enumerate(rows):
        one = step_outcome(
            p, over=o, cut=c, illegal=bad, totals=t, actor=who, reward=reward, illegal_reward=-1.0
        )
        assert batch.rewards[i].tolist() == one.rewards.tolist()
        assert (batch.terminated[i], batch.truncated[i], batch.penalized[i]) == (
            one.terminated,
            one.truncated,
            one.penalized,
        )
        assert not (one.terminated and one.truncated)  # never both: a cut is not an end by rule
        assert bool(one.terminated or one.truncated) == bool(bad or o)
        if bad:
            assert one.rewards.tolist() == [-1.0 if s == who else 0.0 for s in range(p)]
        elif o and reward == "win":
            assert one.rewards.tolist() == win_rewards(t) == batch_win_rewards(np.array(t)).tolist()
        else:
            assert not one.rewards.any()


def test_legality_is_an_index_with_its_mask_set() -> None:
    masks = np.array([[0, 1, 1], [1, 0, 0]], dtype=bool)
    assert legal(np.array([1, 0]), masks).tolist() == [True, True]
    assert legal(np.array([0, 3]), masks).tolist() == [False, False]
    assert legal(np.array([-1, 2]), masks).tolist() == [False, False]


def test_the_rule_asks_for_what_it_needs() -> None:
    with pytest.raises(ValueError, match="totals"):
        step_outcome(2, over=True, reward="win")
    with pytest.raises(ValueError, match="actor"):
        step_outcome(2, illegal=True)
