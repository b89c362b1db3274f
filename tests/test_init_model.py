"""Warm start from a trained model (``warm_start: model``, agents.training.init_model): the run
starts with the model's exact weights, its card records what it started from and the totals add
up, a model that does not fit the config is refused by name, and both trainers take it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from agents.models.card import read_card, training_totals  # noqa: E402
from agents.models.files import load_policy  # noqa: E402
from agents.training.config import TrainConfig  # noqa: E402
from agents.training.envs import make_vector_env  # noqa: E402
from agents.training.init_model import start_from_model  # noqa: E402
from agents.training.policy import make_model  # noqa: E402
from dice_envs.rules import ConfigError  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py

TINY = [
    "total_timesteps=1024",
    "n_envs=32",
    "n_steps=16",
    "batch_size=256",
    "n_epochs=1",
    "net_arch=[16, 16]",
    "eval_freq=0",
    "checkpoint_freq=0",
    "final_eval_games=0",
    "progress_bar=false",
    "tensorboard=false",
    "torch_threads=1",
]


def _cfg(*overrides: str, **values) -> TrainConfig:
    return TrainConfig.from_dict({"game": "spiffel", "name": "tiny"}).with_overrides(
        [*TINY, *overrides], **values
    )


def _train(cfg: TrainConfig, out: Path):
    from agents.training.train import train

    return train(cfg, out=out, resume=False, command="pytest")


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny trained Spiffel model (ppo trainer) to start from."""
    return _train(_cfg("seed=3"), tmp_path_factory.mktemp("parent") / "run").model_path


def _fresh_policy(cfg: TrainConfig):
    probe = make_vector_env(cfg, ["random"] * (cfg.num_players - 1), num_envs=1)
    try:
        return make_model(cfg, probe.single_observation_space, probe.single_action_space).policy
    finally:
        probe.close()


def test_the_run_starts_with_the_models_exact_weights(parent: Path) -> None:
    cfg = _cfg("warm_start=model", f"init_model={parent}", "seed=11")
    policy = _fresh_policy(cfg)
    source = load_policy(parent, read_card(parent))
    fresh = policy.state_dict()
    assert any(not torch.equal(fresh[name], tensor) for name, tensor in source.state_dict().items())
    record = start_from_model(policy, cfg)
    for name, tensor in source.state_dict().items():
        assert torch.equal(policy.state_dict()[name], tensor), name
    card = read_card(parent)
    assert record["kind"] == "model" and record["init_model"] == str(parent)
    assert record["weights_sha256"] == card["weights_sha256"]
    assert (record["steps"], record["wall_time_s"]) == training_totals(card) and record["steps"] >= 1024


@pytest.mark.parametrize("trainer", ["ppo", "sb3"])
def test_a_fine_tuned_run_records_its_start_and_the_totals_add_up(
    parent: Path, tmp_path: Path, trainer: str
) -> None:
    import agents

    extra = ["vec_env=native"] if trainer == "sb3" else []
    cfg = _cfg("warm_start=model", f"init_model={parent}", f"trainer={trainer}", "seed=5", *extra)
    result = _train(cfg, tmp_path / "child")
    card = read_card(result.model_path)
    warm = card["evaluation"]["warm_start"]
    parent_card = read_card(parent)
    assert warm["kind"] == "model" and warm["weights_sha256"] == parent_card["weights_sha256"]
    assert card["steps"] >= 1024  # this run's own steps
    steps, wall = training_totals(card)
    assert steps == card["steps"] + parent_card["steps"]
    assert wall == pytest.approx(card["wall_time_s"] + parent_card["wall_time_s"])
    agent = agents.load(str(result.model_path), game="spiffel")  # an ordinary model
    assert agent is not None


def test_a_chain_of_fine_tunes_counts_every_ancestor(parent: Path, tmp_path: Path) -> None:
    child = _train(_cfg("warm_start=model", f"init_model={parent}"), tmp_path / "c").model_path
    grandchild = _train(_cfg("warm_start=model", f"init_model={child}"), tmp_path / "g").model_path
    own = [read_card(p)["steps"] for p in (parent, child, grandchild)]
    assert training_totals(read_card(grandchild))[0] == sum(own)


def test_the_merged_ensemble_counts_fine_tuned_members_in_full(parent: Path, tmp_path: Path) -> None:
    from agents.training.ensemble import merge_model_files

    child = _train(_cfg("warm_start=model", f"init_model={parent}", "seed=9"), tmp_path / "c").model_path
    merged = merge_model_files([parent, child], tmp_path / "ens.zip")
    card = read_card(merged)
    assert card["steps"] == read_card(parent)["steps"] * 2 + read_card(child)["steps"]
    assert [m["steps"] for m in card["ensemble"]["members"]] == [
        training_totals(read_card(p))[0] for p in (parent, child)
    ]


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (["net_arch=[32, 32]"], ["net_arch", "[32, 32]", "[16, 16]", "a config that fits it sets"]),
        (["activation=relu"], ["activation", "relu", "tanh"]),
        (["game=yahtzee"], ["init_model", "game", "yahtzee", "spiffel"]),
        (["rules={upper_bonus: 50}"], ["rules", "upper_bonus"]),
    ],
)
def test_a_model_that_does_not_fit_is_refused_by_name(
    parent: Path, overrides: list[str], words: list[str]
) -> None:
    cfg = _cfg("warm_start=model", f"init_model={parent}", *overrides)
    policy = _fresh_policy(cfg)
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    with pytest.raises(ConfigError) as err:
        start_from_model(policy, cfg)
    for word in words:
        assert word in str(err.value), (word, str(err.value))
    assert all(torch.equal(before[k], v) for k, v in policy.state_dict().items())  # untouched


def test_missing_or_unpaired_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="warm_start: model needs init_model"):
        _cfg("warm_start=model")
    with pytest.raises(ConfigError, match="init_model is set but warm_start is 'none'"):
        _cfg(f"init_model={tmp_path / 'm.zip'}")
    with pytest.raises(ConfigError, match="no pretrained model 'nope'"):
        start_from_model(_fresh_policy(_cfg()), _cfg("warm_start=model", "init_model=pretrained:nope"))
    missing = tmp_path / "gone.zip"
    with pytest.raises(ConfigError, match="gone"):
        start_from_model(_fresh_policy(_cfg()), _cfg("warm_start=model", f"init_model={missing}"))


def test_a_model_whose_weights_were_changed_is_refused(parent: Path, tmp_path: Path) -> None:
    import zipfile

    copy = tmp_path / "copy.zip"
    with zipfile.ZipFile(parent) as src, zipfile.ZipFile(copy, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "policy.pth":
                data = data[:-1] + bytes([data[-1] ^ 1])
            dst.writestr(info, data)
    card = json.loads(parent.with_suffix(".json").read_text())
    card.pop("zip_sha256", None)
    copy.with_suffix(".json").write_text(json.dumps(card))
    cfg = _cfg("warm_start=model", f"init_model={copy}")
    with pytest.raises(ConfigError, match="sha256"):
        start_from_model(_fresh_policy(cfg), cfg)


def _older_farkle_model(path: Path) -> Path:
    """A 2-player Farkle model of the older encoding farkle-v2 (farkle-v3 less its ``seat`` field),
    made here from a hand-made card and a fresh network (no shipped model reads farkle-v2 any more)."""
    from sb3_contrib import MaskablePPO

    from agents.models.card import card_spaces, make_card
    from agents.models.files import save_model
    from agents.training.policy import SpacesOnlyEnv
    from dice_envs.rules import make_rules

    card = dict(
        make_card(make_rules("farkle"), 2, command="test"),
        observation_encoding="farkle-v2",
        env_id="dice_envs/Farkle-v0",
    )
    policy_kwargs = {"net_arch": [256, 256], "activation_fn": torch.nn.ReLU}
    model = MaskablePPO("MlpPolicy", SpacesOnlyEnv(*card_spaces(card)), policy_kwargs=policy_kwargs, seed=0)
    return save_model(model, path, card)


def test_a_model_of_an_older_encoding_is_widened_and_plays_exactly_as_before(tmp_path: Path) -> None:
    """A farkle-v2 model reads today's observation cut to its first 50 values: its input layers get
    zero columns for the new fields, so the widened network's logits and values on today's
    observations are the model's on the cut ones."""
    from dice_envs.layouts import legacy_size

    path = _older_farkle_model(tmp_path / "older.zip")
    cfg = TrainConfig.from_dict(
        {"game": "farkle", "num_players": 2, "self_play": True, "pool_builtin": ["heuristic"]}
    ).with_overrides(
        [*TINY, "net_arch=[256, 256]", "activation=relu", "warm_start=model", f"init_model={path}"]
    )
    card = read_card(path)
    old = legacy_size(card["observation_encoding"], cfg.rule_config(), 2)
    assert old is not None and card["observation_encoding"] == "farkle-v2"
    policy = _fresh_policy(cfg)
    record = start_from_model(policy, cfg)
    assert record["widened_from_encoding"] == "farkle-v2"
    env = make_vector_env(cfg, ["heuristic"], num_envs=64)
    obs, _ = env.reset(seed=4)
    env.close()
    obs_t = torch.as_tensor(obs, dtype=torch.float32)
    assert obs_t.shape[1] > old and (obs_t[:, old:] != 0).any()  # the new fields carry information
    from agents.training.ensemble import policy_logits

    source = load_policy(path, card)
    with torch.no_grad():
        torch.testing.assert_close(policy_logits(policy, obs_t), policy_logits(source, obs_t[:, :old]))
        torch.testing.assert_close(policy.predict_values(obs_t), source.predict_values(obs_t[:, :old]))


def test_a_resumed_fine_tune_keeps_its_start_and_does_not_reload_it(parent: Path, tmp_path: Path) -> None:
    from agents.training.train import train

    cfg = _cfg("warm_start=model", f"init_model={parent}", "checkpoint_freq=512")
    out = tmp_path / "run"
    first = train(cfg, out=out, resume=False, command="pytest")
    before = read_card(first.model_path)["evaluation"]["warm_start"]
    assert before["weights_sha256"] == read_card(parent)["weights_sha256"]
    (tmp_path / "gone").mkdir()
    moved = tmp_path / "gone" / "parent.zip"
    parent.rename(moved)  # the start is read once: a resume needs only the run's own checkpoint
    parent.with_suffix(".json").rename(moved.with_suffix(".json"))
    try:
        second = train(cfg.with_overrides(["total_timesteps=2048"]), out=out, resume=True, command="pytest")
    finally:
        moved.rename(parent)
        moved.with_suffix(".json").rename(parent.with_suffix(".json"))
    assert second.steps == 2048 and second.resumed_from is not None
    assert read_card(second.model_path)["evaluation"]["warm_start"] == before
