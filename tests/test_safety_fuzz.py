"""Fuzz the edges: arbitrary input to step() / reset() / agents.load / rule configs.

Every outcome is a result or a ``ValueError`` / ``ConfigError`` / ``TypeError`` with a message,
never another exception; a refused input changes no state.
"""

from __future__ import annotations

import gymnasium as gym
import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agents
import dice_envs  # noqa: F401
from dice_envs.multiagent import farkle_v1, spiffel_v0
from dice_envs.rules import GAMES, ConfigError, load_rules, make_rules
from dice_envs.vector import FarkleVectorEnv, SpiffelVectorEnv

ALLOWED = (ValueError, TypeError)  # ConfigError is a ValueError
FUZZ = settings(
    max_examples=40, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)

scalars = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(0, 140),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.binary(max_size=8),
    st.booleans(),
    st.none(),
    st.complex_numbers(),
    st.lists(st.integers(0, 60), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
arrays = hnp.arrays(
    dtype=st.one_of(
        hnp.integer_dtypes(),
        hnp.unsigned_integer_dtypes(),
        hnp.floating_dtypes(),
        hnp.boolean_dtypes(),
        st.just(np.dtype("U3")),
        st.just(np.dtype(object)),
    ),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
)
actions = st.one_of(
    scalars, arrays, st.integers(0, 140).map(np.int64), st.integers(0, 2**64 - 1).map(np.uint64)
)


def _refused(exc: BaseException) -> None:
    assert isinstance(exc, ALLOWED), f"{type(exc).__name__}: {exc}"
    assert str(exc).strip(), f"{type(exc).__name__} without a message"


def _state(game) -> tuple:
    return (repr(game.summary()), tuple(getattr(game, "dice", ())), len(game.history), game.current_player)


# ------------------------------------------------------------------------------ step / reset
@FUZZ
@given(
    seq=st.lists(actions, min_size=1, max_size=6),
    mode=st.sampled_from(["penalize", "raise"]),
    env_id=st.sampled_from(["dice_envs/Spiffel-v0", "dice_envs/Farkle-v1"]),
    seed=st.integers(0, 2**32),
)
def test_scalar_env_step(seq, mode, env_id, seed) -> None:
    env = gym.make(env_id, opponents=["random"], illegal_action=mode)
    env.reset(seed=seed)
    over = False
    for action in seq:
        if over:
            env.reset(seed=seed)
        before = _state(env.unwrapped.game)
        try:
            obs, reward, terminated, truncated, _ = env.step(action)
        except Exception as exc:
            _refused(exc)
            assert _state(env.unwrapped.game) == before
            continue
        assert env.observation_space.contains(obs) and np.isfinite(reward)
        over = terminated or truncated


@FUZZ
@given(
    seq=st.lists(actions, min_size=1, max_size=6),
    module=st.sampled_from([spiffel_v0, farkle_v1]),
    seed=st.integers(0, 2**32),
)
def test_raw_env_step(seq, module, seed) -> None:
    env = module.raw_env(num_players=2)
    env.reset(seed=seed)
    for action in seq:
        if not env.agents or env.terminations[env.agent_selection]:
            env.reset(seed=seed)
        before = _state(env.game)
        try:
            env.step(action)
        except Exception as exc:
            _refused(exc)
            assert _state(env.game) == before


batches = st.one_of(
    actions,
    hnp.arrays(
        dtype=st.one_of(hnp.integer_dtypes(), hnp.unsigned_integer_dtypes(), hnp.floating_dtypes()),
        shape=st.sampled_from([(3,), (3, 1), (1, 3), (2,), (4,), ()]),
        elements=None,
    ),
    st.lists(st.one_of(st.integers(-5, 140), st.floats(), st.text(max_size=2)), min_size=3, max_size=3),
)


@FUZZ
@given(
    seq=st.lists(batches, min_size=1, max_size=5),
    cls=st.sampled_from([SpiffelVectorEnv, FarkleVectorEnv]),
    mode=st.sampled_from(["penalize", "raise"]),
    seed=st.integers(0, 2**32),
)
def test_vector_env_step(seq, cls, mode, seed) -> None:
    env = cls(num_envs=3, opponents=["random"], illegal_action=mode)
    env.reset(seed=seed)
    for acts in seq:
        before = (env.engine.observe(0).tobytes(), env.action_masks().tobytes())
        try:
            obs, rewards, *_ = env.step(acts)
        except Exception as exc:
            _refused(exc)
            assert (env.engine.observe(0).tobytes(), env.action_masks().tobytes()) == before
            continue
        assert obs.shape == (3, env.single_observation_space.shape[0]) and np.isfinite(rewards).all()


@FUZZ
@given(seed=st.one_of(scalars, st.integers(-(2**70), 2**70)), kind=st.sampled_from(["gym", "raw", "vector"]))
def test_reset_seed(seed, kind) -> None:
    env = {
        "gym": lambda: gym.make("dice_envs/Farkle-v1", opponents=["random"]),
        "raw": lambda: farkle_v1.raw_env(num_players=2),
        "vector": lambda: FarkleVectorEnv(num_envs=2),
    }[kind]()
    env.reset(seed=7)
    try:
        env.reset(seed=seed)
    except Exception as exc:
        _refused(exc)


# ------------------------------------------------------------------------------ agents.load
spec_text = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        ["random", "greedy", "heuristic", "max-expected", "threshold:", "pretrained:", "human"]
    ).flatmap(lambda s: st.text(max_size=12).map(lambda t: s + t)),
    st.sampled_from(["../x.zip", "/", ".", "~", "a" * 300, "x.zip", "threshold:-5", "threshold:1e3"]),
)


@FUZZ
@given(
    spec=st.one_of(spec_text, scalars),
    game=st.one_of(st.sampled_from([*GAMES, "chess"]), scalars),
    players=st.one_of(st.integers(-3, 12), scalars),
    kwargs=st.dictionaries(st.sampled_from(["device", "deterministic", "target", "x"]), scalars, max_size=2),
)
def test_agents_load(spec, game, players, kwargs) -> None:
    if isinstance(spec, str) and spec.strip().lower() == "optimal":
        return  # a solve of minutes; covered elsewhere
    try:
        agent = agents.load(spec, game=game, num_players=players, seed=0, **kwargs)
    except Exception as exc:
        _refused(exc)
        return
    assert callable(agent.act)


# ------------------------------------------------------------------------------ rule configs
values = st.one_of(scalars, st.integers(-10, 200_000).map(np.int64), st.booleans().map(np.bool_))


@FUZZ
@given(game=st.sampled_from(list(GAMES)), data=st.data())
def test_make_rules(game, data) -> None:
    names = list(make_rules(game).parameter_names())
    params = data.draw(
        st.dictionaries(st.one_of(st.sampled_from(names), st.text(max_size=5)), values, max_size=4)
    )
    try:
        rules = make_rules(game, **params)
    except Exception as exc:
        _refused(exc)
        return
    assert rules == make_rules(game, **rules.to_dict())  # plain values, round trip
    import json

    json.dumps(rules.to_dict())


yaml_bytes = st.one_of(
    st.binary(max_size=60),
    st.text(max_size=60).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.dictionaries(
        st.sampled_from(["target", "bank_minimum", "bankruptcy", "max_turns", "game", "x"]),
        st.one_of(st.integers(-5, 2_000_000), st.booleans(), st.none(), st.text(max_size=4)),
        max_size=4,
    ).map(lambda d: "\n".join(f"{k}: {v!r}" for k, v in d.items()).encode()),
)


@FUZZ
@given(content=yaml_bytes)
def test_rule_files(tmp_path_factory, content) -> None:
    path = tmp_path_factory.mktemp("rules") / "r.yaml"
    path.write_bytes(content)
    try:
        rules = load_rules("farkle", path)
    except ConfigError as exc:
        _refused(exc)
        return
    assert rules == make_rules("farkle", **rules.to_dict())
