"""Ensembles merged into one network (agents.training.ensemble, scripts/merge_models.py): the merged logits
and values are the members' means, its greedy action is the product of experts' choice, and the
merged file is an ordinary model for every loader; misfits are refused by name."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import gymnasium as gym
import torch
import torch.nn as nn
from hypothesis import given, settings
from hypothesis import strategies as st
from sb3_contrib import MaskablePPO

import agents
import dice_envs  # noqa: F401
from agents.models.afterstate import FarkleAfterstatePolicy
from agents.models.card import card_spaces, make_card, read_card
from agents.models.files import save_model
from agents.players.model import ModelAgent
from agents.training.ensemble import merge_model_files, merge_policies, policy_logits
from agents.training.policy import SpacesOnlyEnv
from dice_envs.rules import ConfigError, make_rules

ROOT = Path(__file__).resolve().parents[1]


def _env(game: str = "farkle", players: int = 2) -> SpacesOnlyEnv:
    return SpacesOnlyEnv(*card_spaces(make_card(make_rules(game), players)))


def _model(net_arch, seed: int, game: str = "farkle", players: int = 2, activation=nn.ReLU) -> MaskablePPO:
    return MaskablePPO(
        "MlpPolicy",
        _env(game, players),
        policy_kwargs={"net_arch": net_arch, "activation_fn": activation},
        n_steps=8,
        batch_size=8,
        seed=seed,
        device="cpu",
    )


def _values(policy, obs: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return policy.predict_values(obs).reshape(-1)


@settings(max_examples=12, deadline=None)
@given(
    widths=st.lists(st.tuples(st.integers(1, 9), st.integers(1, 9)), min_size=2, max_size=4),
    tanh=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_merged_network_computes_the_members_mean_logits_and_value(widths, tanh, seed) -> None:
    activation = nn.Tanh if tanh else nn.ReLU
    members = [_model(list(w), seed + i, activation=activation).policy for i, w in enumerate(widths)]
    for p in members:  # non-zero biases, so that their averaging is tested too
        for name, param in p.named_parameters():
            if name.endswith("bias"):
                param.data.uniform_(-1, 1)
    merged = merge_policies(members)
    assert type(merged) is type(members[0])
    assert merged.net_arch == {"pi": [sum(w[0] for w in widths), sum(w[1] for w in widths)]} | {
        "vf": [sum(w[0] for w in widths), sum(w[1] for w in widths)]
    }
    obs = torch.rand(16, members[0].observation_space.shape[0], generator=torch.Generator().manual_seed(seed))
    mean_logits = torch.stack([policy_logits(p, obs) for p in members]).mean(0)
    mean_values = torch.stack([_values(p, obs) for p in members]).mean(0)
    torch.testing.assert_close(policy_logits(merged, obs), mean_logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(_values(merged, obs), mean_values, atol=1e-5, rtol=1e-5)


def test_merged_model_plays_the_product_of_experts_and_never_an_illegal_action() -> None:
    members = [_model([32, 32], s).policy for s in range(3)]
    merged = merge_policies(members)
    rng = np.random.default_rng(0)
    obs = torch.rand(200, members[0].observation_space.shape[0])
    masks = rng.random((200, 128)) < 0.1
    masks[np.arange(200), rng.integers(0, 128, 200)] = True
    log_probs = sum(
        p.get_distribution(obs, action_masks=masks).distribution.logits.detach().numpy() for p in members
    )
    want = np.where(masks, log_probs, -np.inf).argmax(1)
    agent = ModelAgent(merged)
    got = agent.act_batch(obs.numpy(), masks)
    assert masks[np.arange(200), got].all()
    np.testing.assert_array_equal(got, want)


@pytest.fixture(scope="module")
def member_files(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("members")
    rules = make_rules("farkle")
    paths = []
    for s in range(2):
        card = make_card(rules, 2, steps=1000 * (s + 1), wall_time_s=10.0 * (s + 1), seed=s, command=f"m{s}")
        paths.append(save_model(_model([16, 16], s), folder / f"m{s}.zip", card))
    return paths


def test_merged_file_loads_everywhere_and_its_card_names_the_members(member_files, tmp_path) -> None:
    out = merge_model_files(member_files, tmp_path / "ens.zip", command="merge")
    card = read_card(out)
    assert card["steps"] == 3000 and card["wall_time_s"] == pytest.approx(30.0)
    assert [m["seed"] for m in card["ensemble"]["members"]] == [0, 1]
    assert [m["file"] for m in card["ensemble"]["members"]] == [str(p) for p in member_files]
    assert card["policy"]["net_arch"] == {"pi": [32, 32], "vf": [32, 32]}
    with zipfile.ZipFile(out) as zf:  # saved deflated: the zeros between the members cost little
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_DEFLATED}

    agent = agents.load(str(out))
    env = gym.make("dice_envs/Farkle-v1", opponents=[str(out)])  # the ensemble as an opponent
    obs, info = env.reset(seed=3)
    model = MaskablePPO.load(out, device="cpu")
    for _ in range(30):
        mask = info["action_mask"]
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert int(action) == agent.act(obs, mask) and mask[int(action)]
        obs, _, term, trunc, info = env.step(int(action))
        if term or trunc:
            obs, info = env.reset()
    members = [agents.load(str(p)) for p in member_files]
    batch = np.random.default_rng(1).random((64, obs.shape[0])).astype(np.float32)
    mean = sum(policy_logits(m.policy, torch.as_tensor(batch)) for m in members) / 2
    torch.testing.assert_close(
        policy_logits(agent.policy, torch.as_tensor(batch)), mean, atol=1e-5, rtol=1e-5
    )


def test_merge_refuses_misfits_and_never_overwrites(member_files, tmp_path) -> None:
    out = tmp_path / "ens.zip"
    merge_model_files(member_files, out)
    before = out.read_bytes()
    with pytest.raises(FileExistsError, match="already exists"):
        merge_model_files(member_files, out)
    assert out.read_bytes() == before
    with pytest.raises(ConfigError, match="at least 2"):
        merge_model_files(member_files[:1], tmp_path / "one.zip")
    spiffel = save_model(
        _model([16, 16], 0, "spiffel", 1), tmp_path / "s.zip", make_card(make_rules("spiffel"), 1)
    )
    with pytest.raises(ConfigError, match="game 'spiffel' differs"):
        merge_model_files([member_files[0], spiffel], tmp_path / "x.zip")
    env = _env()
    head = FarkleAfterstatePolicy(env.observation_space, env.action_space, lambda _: 1e-3, net_arch=[8])
    with pytest.raises(ConfigError, match="only flat MLP policies"):
        merge_policies([_model([8], 0).policy, head])
    with pytest.raises(ConfigError, match="hidden layers"):
        merge_policies([_model([8], 0).policy, _model([8, 8], 1).policy])
    with pytest.raises(ConfigError, match="activation"):
        merge_policies([_model([8], 0).policy, _model([8], 1, activation=nn.Tanh).policy])
    assert not (tmp_path / "x.zip").exists() and not (tmp_path / "one.zip").exists()


def test_merge_script(member_files, tmp_path) -> None:
    out = tmp_path / "cli" / "ens.zip"
    cmd = [
        sys.executable,
        str(ROOT / "scripts" / "merge_models.py"),
        *map(str, member_files),
        "--out",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.with_suffix(".json").read_text())["command"].startswith(
        "python scripts/merge_models.py"
    )
    again = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert again.returncode == 2 and "--force" in again.stderr
    forced = subprocess.run([*cmd, "--force"], capture_output=True, text=True, check=False)
    assert forced.returncode == 0, forced.stderr
    member_files[0].with_name("progress.csv").write_text("steps,eval\n100,0.4\n200,0.5\n")
    png = tmp_path / "curves.png"
    curve = subprocess.run(
        [*cmd, "--force", "--curve", str(png)], capture_output=True, text=True, check=False
    )
    assert curve.returncode == 0, curve.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
