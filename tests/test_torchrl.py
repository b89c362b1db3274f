"""TorchRL drives every env: ``GymWrapper`` over the Gymnasium envs and ``PettingZooWrapper`` (masks)
over the PettingZoo envs, as it would in a user's training loop (infos become tensors)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401
from dice_envs.multiagent import dice_poker_v0, farkle_v1, spiffel_v0, yahtzee_v0

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")
from torchrl.envs.libs.gym import GymWrapper  # noqa: E402
from torchrl.envs.libs.pettingzoo import PettingZooWrapper  # noqa: E402

ENV_IDS = ["dice_envs/Spiffel-v0", "dice_envs/DicePoker-v0", "dice_envs/Yahtzee-v0", "dice_envs/Farkle-v1"]
MODULES = [spiffel_v0, dice_poker_v0, yahtzee_v0, farkle_v1]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gym_wrapper_rollout_with_action_masks(env_id: str) -> None:
    base = gym.make(env_id, opponents=["random"])
    env = GymWrapper(base, categorical_action_encoding=True)
    td = env.reset()
    rng = np.random.default_rng(0)
    steps = 0
    done = False
    while not done:
        legal = np.flatnonzero(base.action_masks())
        td["action"] = torch.tensor(int(rng.choice(legal)))
        td = env.step(td)
        nxt = td["next"]
        done = bool(nxt["done"].item())
        td = nxt
        steps += 1
    assert steps > 10
    assert td["observation"].shape == base.observation_space.shape


@pytest.mark.parametrize("module", MODULES, ids=[m.__name__.split(".")[-1] for m in MODULES])
@pytest.mark.parametrize("players", [1, 2, 3])
def test_pettingzoo_wrapper_with_masks_plays_whole_games(module, players: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs = {"max_turns": 8} if module is farkle_v1 else {}
        env = PettingZooWrapper(env=module.env(num_players=players, **kwargs), use_mask=True, seed=0)
    groups = env.group_map  # group -> agents (TorchRL's default grouping)
    assert sum(len(v) for v in groups.values()) == players
    td = env.reset()
    for group in groups:
        info = td[group]["info"]
        assert {"encoding_version", "game_over", "final_scores", "winners", "truncated"} <= set(info.keys())
        assert info["final_scores"].shape == (len(groups[group]), players)
    rng = np.random.default_rng(players)
    for _ in range(2000):
        for group, members in groups.items():
            mask = td[group]["action_mask"].numpy().astype(bool)
            actions = np.zeros(len(members), dtype=np.int64)
            for i in range(len(members)):
                legal = np.flatnonzero(mask[i])
                actions[i] = rng.choice(legal) if legal.size else 0
            td[group]["action"] = torch.as_tensor(actions)
        td = env.step(td)["next"]
        if bool(td["done"].all()):
            break
    else:
        pytest.fail("the game did not end")
    group = next(iter(groups))
    final = td[group]["info"]["final_scores"][0].tolist()
    assert bool(td[group]["info"]["game_over"].all())
    winners = td[group]["info"]["winners"][0].numpy()
    assert winners.any() and all(final[s] == max(final) for s in np.flatnonzero(winners))
