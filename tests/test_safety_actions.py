"""One action check at the edge of every env: integers in, anything else refused by name, state untouched.

For each env kind (scalar Gymnasium, PettingZoo ``raw_env``, native vector env) a refused action
is followed by a legal one, and the result must equal that of a twin env that never saw the bad
value: same observation, reward, mask and dice (the refused call consumed no randomness either).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401
from dice_envs.checks import as_action, as_actions, check_seed
from dice_envs.multiagent import farkle_v1, spiffel_v0
from dice_envs.rules import ConfigError
from dice_envs.vector import FarkleVectorEnv, SpiffelVectorEnv

#: (bad action, exception, text the message must hold)
BAD_ACTIONS = [
    (32.9, TypeError, "got float 32.9"),
    (33.0, TypeError, "got float 33.0"),
    (np.float32(33), TypeError, "got float32"),
    (np.array([32.9]), TypeError, "array([32.9]) of dtype float64"),
    (np.array(["33"]), TypeError, "array(['33'], dtype='<U2') of dtype <U2"),
    ("33", TypeError, "got str '33'"),
    (True, TypeError, "got the bool True"),
    (np.bool_(True), TypeError, "got the bool"),
    (np.array([True]), TypeError, "of dtype bool"),
    ([33], TypeError, "got list [33]"),
    (None, TypeError, "got NoneType None"),
    (np.uint64(2**63 + 33), ValueError, "action 9223372036854775841 is outside the int64 range"),
    (2**70, ValueError, f"action {2**70} is outside the int64 range"),
    (np.zeros((2, 2), dtype=np.int64), ValueError, "got an array of shape (2, 2)"),
    (np.array([], dtype=np.int64), ValueError, "got an array of shape (0,)"),
]
IDS = [repr(a)[:30] for a, _, _ in BAD_ACTIONS]


def _legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[-1])


def _same(a, b) -> None:
    for x, y in zip(a, b, strict=True):
        if isinstance(x, dict):
            assert x.keys() == y.keys()
            for k in x:
                np.testing.assert_array_equal(np.asarray(x[k]), np.asarray(y[k]))
        else:
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


# ------------------------------------------------------------------------------ the check itself
@pytest.mark.parametrize("good", [33, np.int8(33), np.uint64(33), np.int64(33), np.array(33), np.array([33])])
def test_integer_actions_are_accepted(good) -> None:
    assert as_action(good) == 33 and type(as_action(good)) is int


@pytest.mark.parametrize(("bad", "exc", "text"), BAD_ACTIONS, ids=IDS)
def test_as_action_refuses_by_name(bad, exc, text) -> None:
    with pytest.raises(exc) as err:
        as_action(bad)
    assert text in str(err.value)


# ------------------------------------------------------------------------------ scalar env
@pytest.mark.parametrize("mode", ["penalize", "raise"])
@pytest.mark.parametrize("env_id", ["dice_envs/Spiffel-v0", "dice_envs/Farkle-v1"])
@pytest.mark.parametrize(("bad", "exc", "text"), BAD_ACTIONS, ids=IDS)
def test_scalar_env_refuses_whatever_the_mode(env_id, mode, bad, exc, text) -> None:
    env = gym.make(env_id, opponents=["random"], illegal_action=mode, seat=0)
    twin = gym.make(env_id, opponents=["random"], illegal_action=mode, seat=0)
    env.reset(seed=3)
    twin.reset(seed=3)
    before = env.unwrapped.game.clone()
    with pytest.raises(exc) as err:
        env.step(bad)
    assert text in str(err.value)
    g = env.unwrapped.game
    assert g.summary() == before.summary() and g.dice == before.dice and g.history == before.history
    a = _legal(env.unwrapped.action_masks())
    _same(env.step(a), twin.step(a))  # the episode goes on, as if nothing had happened


@pytest.mark.parametrize(
    "form", [int, np.int16, np.uint64, np.array, lambda a: np.array([a], dtype=np.uint8)]
)
def test_scalar_env_plays_every_integer_form_alike(form) -> None:
    env = gym.make("dice_envs/Spiffel-v0")
    twin = gym.make("dice_envs/Spiffel-v0")
    env.reset(seed=1)
    twin.reset(seed=1)
    for _ in range(6):
        a = _legal(env.unwrapped.action_masks())
        _same(env.step(form(a)), twin.step(a))


def test_out_of_range_integers_stay_illegal_actions() -> None:
    env = gym.make("dice_envs/Spiffel-v0", illegal_reward=-3)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(np.int64(-1))  # an integer: penalized, not a TypeError
    assert reward == -3.0 and terminated and info["illegal_action"] == -1


# ------------------------------------------------------------------------------ PettingZoo raw_env
@pytest.mark.parametrize("module", [spiffel_v0, farkle_v1])
@pytest.mark.parametrize(("bad", "exc", "text"), BAD_ACTIONS, ids=IDS)
def test_raw_env_refuses_by_name(module, bad, exc, text) -> None:
    env, twin = module.raw_env(num_players=2), module.raw_env(num_players=2)
    env.reset(seed=5)
    twin.reset(seed=5)
    before = env.game.clone()
    with pytest.raises(exc) as err:
        env.step(bad)
    assert text in str(err.value)
    assert env.game.summary() == before.summary() and env.game.history == before.history
    a = _legal(env.action_mask())
    env.step(a)
    twin.step(a)
    agent = env.agent_selection
    assert agent == twin.agent_selection and env.rewards == twin.rewards
    _same([env.observe(agent)], [twin.observe(agent)])


@pytest.mark.parametrize("module", [spiffel_v0, farkle_v1])
def test_raw_env_step_before_reset(module) -> None:
    env = module.raw_env(num_players=2)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(33)
    env.reset(seed=0)
    env.step(_legal(env.action_mask()))


# ------------------------------------------------------------------------------ vector env
BAD_BATCHES = [
    (
        np.zeros((2, 2), dtype=np.int64),
        ValueError,
        "expected 4 actions, an integer array of shape (4,), got shape (2, 2)",
    ),
    (np.zeros(3, dtype=np.int64), ValueError, "got shape (3,)"),
    (np.zeros((4, 1), dtype=np.int64), ValueError, "got shape (4, 1)"),
    (np.full(4, 32.9), TypeError, "of dtype float64"),
    (np.array(["33"] * 4), TypeError, "of dtype <U2"),
    (np.ones(4, dtype=bool), TypeError, "of dtype bool"),
    ([1, 2, "3", 4], TypeError, "of dtype <U21"),
    (np.array([1, 2, 2**63 + 33, 4], dtype=np.uint64), ValueError, "action 9223372036854775841 of game 2"),
    (33, ValueError, "got shape ()"),
]


@pytest.mark.parametrize("mode", ["penalize", "raise"])
@pytest.mark.parametrize("cls", [SpiffelVectorEnv, FarkleVectorEnv])
@pytest.mark.parametrize(("bad", "exc", "text"), BAD_BATCHES, ids=[repr(b)[:30] for b, _, _ in BAD_BATCHES])
def test_vector_env_refuses_by_name(cls, mode, bad, exc, text) -> None:
    env = cls(num_envs=4, opponents=["random"], illegal_action=mode)
    twin = cls(num_envs=4, opponents=["random"], illegal_action=mode)
    _, info = env.reset(seed=2)
    twin.reset(seed=2)
    with pytest.raises(exc) as err:
        env.step(bad)
    assert text in str(err.value)
    acts = info["action_mask"].argmax(axis=1)
    _same(env.step(acts), twin.step(acts))


def test_vector_env_takes_any_integer_dtype() -> None:
    env, twin = SpiffelVectorEnv(num_envs=3), SpiffelVectorEnv(num_envs=3)
    _, info = env.reset(seed=0)
    twin.reset(seed=0)
    acts = info["action_mask"].argmax(axis=1)
    _same(env.step(acts.astype(np.uint8)), twin.step(acts.tolist()))
    assert as_actions(np.array([1, 2], dtype=np.uint64), 2).dtype == np.int64


# ------------------------------------------------------------------------------ seeds, illegal_reward
BAD_SEEDS = [(-1, ValueError, "got -1"), (1.5, TypeError, "got float 1.5"), ("7", TypeError, "got str '7'")]


@pytest.mark.parametrize(("seed", "exc", "text"), [*BAD_SEEDS, (True, TypeError, "bool")])
def test_bad_seeds_are_refused_everywhere(seed, exc, text) -> None:
    envs = [
        gym.make("dice_envs/Farkle-v1", opponents=["random"]),
        farkle_v1.raw_env(),
        FarkleVectorEnv(num_envs=2),
    ]
    for env in envs:
        with pytest.raises(exc, match="seed must be None or a non-negative integer") as err:
            env.reset(seed=seed)
        assert text in str(err.value)
    assert check_seed(np.int64(4)) == 4 and check_seed(None) is None


def test_refused_seed_keeps_the_game() -> None:
    env, twin = gym.make("dice_envs/Spiffel-v0"), gym.make("dice_envs/Spiffel-v0")
    env.reset(seed=9)
    twin.reset(seed=9)
    with pytest.raises(ValueError, match="got -1"):
        env.reset(seed=-1)
    a = _legal(env.unwrapped.action_masks())
    _same(env.step(a), twin.step(a))


@pytest.mark.parametrize("value", ["x", None, float("nan"), float("inf"), True, [1]])
def test_illegal_reward_must_be_a_number(value) -> None:
    text = repr(value)
    for make in (
        lambda: gym.make("dice_envs/Spiffel-v0", illegal_reward=value),
        lambda: gym.make_vec("dice_envs/Spiffel-v0", num_envs=2, illegal_reward=value),
        lambda: spiffel_v0.env(illegal_reward=value),
    ):
        with pytest.raises(ConfigError, match="illegal_reward must be a finite number") as err:
            make()
        assert text in str(err.value)
    assert gym.make("dice_envs/Spiffel-v0", illegal_reward=np.int64(-2)).unwrapped.illegal_reward == -2.0


@pytest.mark.parametrize(("bad", "exc", "text"), BAD_ACTIONS[:6], ids=IDS[:6])
def test_wrapped_pettingzoo_env_refuses_by_name(bad, exc, text) -> None:
    env, twin = spiffel_v0.env(num_players=2), spiffel_v0.env(num_players=2)
    env.reset(seed=5)
    twin.reset(seed=5)
    with pytest.raises(exc) as err:
        env.step(bad)
    assert text in str(err.value)
    a = _legal(env.unwrapped.action_mask())
    env.step(np.array([a]))
    twin.step(a)
    agent = env.agent_selection
    assert agent == twin.agent_selection and env.rewards == twin.rewards
    _same([env.observe(agent)], [twin.observe(agent)])


def test_a_large_refused_batch_names_its_shape_and_dtype_once() -> None:
    with pytest.raises(TypeError) as err:
        as_actions(np.full(64, 1.5), 64)
    assert str(err.value).endswith("got array of shape (64,) and dtype float64")
    assert str(err.value).count("float64") == 1
