"""Every env with built-in opponents pickles, mid-game too, and the copy plays on the same game.

An env crosses a process boundary (spawn / forkserver workers, Ray) or is saved mid-game only as
a pickle, so each built-in agent spec of :func:`agents.registry.known_specs` that applies to a
game is tried as an opponent: the Gymnasium env, the native vector env and the PettingZoo envs
are pickled after a few moves, and the copy must show the same observation and answer the same
actions with the same results as the original.
"""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401 - registers the ids
from agents.models.card import read_card
from agents.players.model import pretrained_names, resolve_model_path
from agents.registry import known_specs
from dice_envs.multiagent import dice_poker_v0, farkle_v1, spiffel_v0, yahtzee_v0
from dice_envs.rules import make_rules
from dice_envs.vector import DicePokerVectorEnv, FarkleVectorEnv, SpiffelVectorEnv, YahtzeeVectorEnv

ENV_IDS = {
    "spiffel": "dice_envs/Spiffel-v0",
    "dice_poker": "dice_envs/DicePoker-v0",
    "yahtzee": "dice_envs/Yahtzee-v0",
    "farkle": "dice_envs/Farkle-v1",
}
VECTOR = {
    "spiffel": SpiffelVectorEnv,
    "dice_poker": DicePokerVectorEnv,
    "yahtzee": YahtzeeVectorEnv,
    "farkle": FarkleVectorEnv,
}
AEC = [spiffel_v0, dice_poker_v0, yahtzee_v0, farkle_v1]
#: Specs that are pickled before their first move only: their first move solves a table for
#: minutes (win-optimal, the planner's turn search), or building them does (the exact solitaire
#: optimum of the 15-box games; Spiffel's is tried in play, the same class).
PICKLE_ONLY = {
    "win-optimal",
    "planner:pretrained:farkle-scratch-ppo",
    "search:pretrained:farkle-scratch-ppo",  # a planner over the same model
}
NOT_BUILT = {("optimal", "dice_poker"), ("optimal", "yahtzee")}


def _pretrained(game: str) -> list[str]:
    """The shipped bots of ``game`` that play its default rules (the environments here)."""
    cards = {n: read_card(resolve_model_path(f"pretrained:{n}")) for n in pretrained_names()}
    return [
        f"pretrained:{n}"
        for n, card in cards.items()
        if card["game"] == game and make_rules(game, **card.get("rules", {})) == make_rules(game)
    ]


def builtin_specs(game: str) -> list[str]:
    """The registry's specs for ``game``, placeholders filled in; ``human`` (a person at the
    terminal) and a model path (the pretrained models are model files) left out."""
    specs: list[str] = []
    for spec in known_specs(game):
        if spec == "threshold:N":
            specs.append("threshold:300")
        elif spec == "planner:<model>":
            specs.append("planner:pretrained:farkle-scratch-ppo")
        elif spec == "search:<model>":
            model = "farkle-scratch-ppo" if game == "farkle" else f"{game}-search"
            specs.append(f"search:pretrained:{model}")
        elif spec == "best-response:<spec>":
            specs.append("best-response:greedy")
        elif spec == "pretrained:<name>":
            specs += _pretrained(game)
        elif spec not in ("human", "a path to a .zip model"):
            specs.append(spec)
    return [s for s in specs if (s, game) not in NOT_BUILT]


CASES = [(game, spec) for game in ENV_IDS for spec in builtin_specs(game)]


def _reduced(spec: str) -> dict:
    """A best response is solved at reduced targets only (``TARGET_LIMITS``): it plays to 300
    with a bank minimum of 50 (its solve four times cheaper than at the default minimum)."""
    return {"target": 300, "bank_minimum": 50} if spec.startswith("best-response:") else {}


def _needs_torch(spec: str) -> None:
    if "pretrained:" in spec:
        pytest.importorskip("torch")


def _same(a: tuple, b: tuple) -> None:
    """Two ``step`` / ``reset`` results are equal (arrays compared by value)."""
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        if isinstance(x, dict):
            assert x.keys() == y.keys()
            for k in x:
                np.testing.assert_array_equal(x[k], y[k], err_msg=k)
        else:
            np.testing.assert_array_equal(x, y)


def _random_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A random legal action per row (0 where a row has none)."""
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])


def test_the_spec_list_covers_every_kind_of_builtin_agent() -> None:
    assert {"random", "greedy", "heuristic", "optimal", "pretrained:spiffel"} <= set(builtin_specs("spiffel"))
    farkle = set(builtin_specs("farkle"))
    assert {"max-expected", "threshold:300", "win-optimal", "pretrained:farkle"} <= farkle


@pytest.mark.parametrize(("game", "spec"), CASES, ids=[f"{g}-{s}" for g, s in CASES])
def test_gymnasium_env_pickles_mid_game_and_plays_on(game: str, spec: str) -> None:
    _needs_torch(spec)
    quick = spec not in PICKLE_ONLY
    env = gym.make(ENV_IDS[game], opponents=[spec], seat=None if quick else 0, **_reduced(spec))
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(6 if quick else 0):  # a few moves, the opponent's included
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated or truncated:
            obs, info = env.reset()
    copy = pickle.loads(pickle.dumps(env))
    np.testing.assert_array_equal(copy.unwrapped.action_masks(), info["action_mask"])
    np.testing.assert_array_equal(copy.unwrapped.aec.observe(copy.unwrapped._learner)["observation"], obs)
    for _ in range(8 if quick else 0):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        here, there = env.step(action), copy.step(action)
        _same(here, there)
        obs, info = here[0], here[4]
        if here[2] or here[3]:
            here, there = env.reset(), copy.reset()
            _same(here, there)
            info = here[1]


@pytest.mark.parametrize("game", list(VECTOR))
def test_vector_env_with_opponents_pickles_mid_game_and_plays_on(game: str) -> None:
    specs = [s for s in builtin_specs(game) if s not in PICKLE_ONLY and s != "optimal"]
    for spec in specs:
        _needs_torch(spec)
        env = VECTOR[game](num_envs=3, opponents=[spec], **_reduced(spec))
        _, info = env.reset(seed=5)
        rng = np.random.default_rng(1)
        for _ in range(5):
            _, _, _, _, info = env.step(_random_actions(rng, info["action_mask"]))
        copy = pickle.loads(pickle.dumps(env))
        np.testing.assert_array_equal(copy.action_masks(), env.action_masks())
        for _ in range(6):
            a = _random_actions(rng, info["action_mask"])
            here, there = env.step(a), copy.step(a)
            _same(here, there)
            info = here[4]


@pytest.mark.parametrize("module", AEC, ids=[m.__name__.rsplit(".", 1)[1] for m in AEC])
@pytest.mark.parametrize("wrapped", [False, True], ids=["raw_env", "env"])
def test_pettingzoo_env_pickles_mid_game_and_plays_on(module, wrapped: bool) -> None:
    env = module.env(num_players=2) if wrapped else module.raw_env(num_players=2)
    env.reset(seed=7)
    rng = np.random.default_rng(2)

    def legal(e) -> int:
        return int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])))

    for _ in range(6):
        env.step(legal(env))
    copy = pickle.loads(pickle.dumps(env))
    for _ in range(8):
        assert copy.agent_selection == env.agent_selection
        here, there = env.last(), copy.last()
        np.testing.assert_array_equal(here[0]["observation"], there[0]["observation"])
        np.testing.assert_array_equal(here[0]["action_mask"], there[0]["action_mask"])
        assert here[1:4] == there[1:4]
        if here[2] or here[3]:
            break
        a = legal(env)
        env.step(a)
        copy.step(a)
