"""The Farkle afterstate policy head (agents.models.afterstate): its features follow the scoring rules,
and its models train, save and load like any other."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from agents.models.afterstate import FarkleAfterstatePolicy, points_table  # noqa: E402
from agents.training.config import TrainConfig  # noqa: E402
from dice_envs.envs.farkle import FarkleEnv  # noqa: E402
from dice_envs.rules import ConfigError  # noqa: E402
from dice_envs.rules.farkle import BANK_FLAG, dice_to_throw, score  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def _policy() -> tuple[FarkleEnv, FarkleAfterstatePolicy]:
    env = FarkleEnv(opponents=["random"])
    torch.manual_seed(0)
    return env, FarkleAfterstatePolicy(env.observation_space, env.action_space, lambda _: 1e-3)


def test_points_table_matches_the_scoring_function() -> None:
    table = points_table()
    rng = np.random.default_rng(0)
    for _ in range(300):
        dice = sorted(rng.integers(1, 7, size=int(rng.integers(1, 7))).tolist())
        code = sum(7 ** (f - 1) for f in dice)
        assert table[code] == score(dice), dice


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), moves=st.integers(0, 6))
def test_features_are_each_legal_actions_points_and_dice_thrown_next(seed: int, moves: int) -> None:
    env, policy = _policy()
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(moves):  # walk into later throws of the game
        obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            obs, info = env.reset(seed=seed + 1)
    game = env.unwrapped.game
    dice, turn = list(game.dice), game.turn_total
    head = policy.action_net
    feats = head.features(torch.as_tensor(obs[None]))[0].numpy()
    rows = head.afterstates[head.afterstate_index(torch.as_tensor(obs[None]))[0]].numpy()
    for action in np.flatnonzero(info["action_mask"]):
        mask, bank = action % BANK_FLAG, action >= BANK_FLAG
        kept = [d for i, d in enumerate(dice) if mask >> i & 1]
        row = feats[action]
        assert row[0] == float(bank)
        want_next = np.zeros(6)
        if not bank:
            want_next[dice_to_throw(len(dice), len(kept)) - 1] = 1.0
        np.testing.assert_array_equal(row[1:7], want_next)
        assert row[7] == pytest.approx(score(kept) / 1000)
        assert row[8] == pytest.approx((turn + score(kept)) / 1000)
        np.testing.assert_allclose(rows[action], row[:8], rtol=1e-6)  # the afterstate it is scored by


def test_config_refuses_the_head_outside_farkle_ppo() -> None:
    with pytest.raises(ConfigError, match=r"policy_head.*farkle"):
        TrainConfig.from_dict({"game": "spiffel", "policy_head": "afterstate"})
    with pytest.raises(ConfigError, match="policy_head"):
        TrainConfig.from_dict({"game": "farkle", "policy_head": "wide"})


def test_trained_afterstate_model_loads_through_both_loaders(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    import agents
    from agents.training.train import train

    cfg = TrainConfig.from_yaml(ROOT / "configs" / "train" / "tiny_ppo_selfplay.yaml")
    cfg = cfg.with_overrides(["policy_head=afterstate", "head_width=16", "torch_threads=1"])
    result = train(cfg, out=tmp_path / "run", command="pytest")
    card = json.loads(result.card_path.read_text())
    assert card["policy"]["class"] == "FarkleAfterstatePolicy" and card["policy"]["head_width"] == 16

    sb3 = MaskablePPO.load(result.model_path, device="cpu")
    assert type(sb3.policy) is FarkleAfterstatePolicy
    agent = agents.load(str(result.model_path), seed=0)
    env = FarkleEnv(opponents=["random"], target=2000, illegal_action="raise")
    obs, info = env.reset(seed=4)
    for _ in range(40):
        mask = info["action_mask"]
        a_sb3, _ = sb3.predict(obs, action_masks=mask.astype(bool), deterministic=True)
        a_ours = int(agent.act_batch(obs[None], mask[None].astype(bool))[0])
        assert int(a_sb3) == a_ours and mask[a_ours]
        obs, _, term, trunc, info = env.step(a_ours)
        if term or trunc:
            break

    bad = dict(card, policy=dict(card["policy"], head_width=0))
    result.card_path.write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match="head_width"):
        agents.load(str(result.model_path))
    wrong_game = dict(card, policy=dict(card["policy"]), game="spiffel")
    from agents.models.card import network_spec

    with pytest.raises(ConfigError, match="plays farkle only"):
        network_spec(wrong_game, "card")
