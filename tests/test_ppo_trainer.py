"""The native PPO trainer (agents.training.ppo): losses, GAE and masking worked out by hand, tiny
runs that learn, products that load everywhere, resume that continues safely."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from agents.training.artifacts import ProgressLog, load_checkpoint  # noqa: E402
from agents.training.config import TrainConfig  # noqa: E402
from agents.training.policy import MASKED_LOGIT, masked_logits, sample_actions  # noqa: E402
from agents.training.ppo import gae, schedule_value, update  # noqa: E402
from dice_envs.rules import ConfigError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs" / "train"


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def _train(cfg: TrainConfig, out: Path, resume: bool = False):
    from agents.training.train import train

    return train(cfg, out=out, resume=resume, command="pytest")  # default torch_threads


# ---------------------------------------------------------------- the algorithm, by hand
def _hand_update(**knobs) -> dict[str, float]:
    """The loss statistics of the trainer's :func:`update` on a hand-made batch of two samples (one
    minibatch, one epoch): a policy whose logits are (0, ln 2, 5) and (0, 0, 0) and whose values
    are 1 and 0 (no hidden layer; one-hot observations pick a row of the heads' weights)."""
    import gymnasium as gym
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    policy = MaskableActorCriticPolicy(
        gym.spaces.Box(0.0, 1.0, (2,)), gym.spaces.Discrete(3), lambda _: 0.0, net_arch=[]
    )
    with torch.no_grad():
        policy.action_net.weight.copy_(torch.tensor([[0.0, 0.0], [math.log(2.0), 0.0], [5.0, 0.0]]))
        policy.value_net.weight.copy_(torch.tensor([[1.0, 0.0]]))
        policy.action_net.bias.zero_()
        policy.value_net.bias.zero_()
    batch = dict(
        obs=torch.eye(2),
        masks=torch.tensor([[True, True, False], [True, True, True]]),
        actions=torch.tensor([1, 0]),
        logprobs=torch.tensor([math.log(0.5), math.log(1 / 3)]),
        values=torch.tensor([0.0, 0.0]),
        advantages=torch.tensor([1.0, -2.0]),
        returns=torch.tensor([2.0, 1.0]),
    )
    cfg = TrainConfig.from_dict({"n_envs": 1, "n_steps": 2, "batch_size": 2, "n_epochs": 1, **knobs})
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.0)
    return update(policy, optimizer, batch, cfg, cfg.ent_coef, torch.Generator().manual_seed(0))


def test_ppo_loss_on_a_hand_made_batch() -> None:
    # sample 1: masked probs (1/3, 2/3, 0), action 1: ratio (2/3)/(1/2) = 4/3, clipped to 1.2, A = +1
    # sample 2: probs (1/3, 1/3, 1/3), action 0: ratio 1, A = -2  ->  policy loss -(1.2 - 2)/2 = 0.4
    # value loss 0.5 * mean((1-2)^2, (0-1)^2) = 0.5; entropies H(1/3, 2/3) and ln 3
    h1 = -(1 / 3 * math.log(1 / 3) + 2 / 3 * math.log(2 / 3))
    entropy = (h1 + math.log(3)) / 2
    stats = _hand_update(
        clip_range=0.2,
        clip_range_vf=None,
        ent_coef=0.01,
        vf_coef=0.5,
        normalize_advantage=False,
    )
    assert stats["policy_loss"] == pytest.approx(0.4, abs=1e-6)
    assert stats["value_loss"] == pytest.approx(0.5, abs=1e-6)
    assert stats["entropy"] == pytest.approx(entropy, abs=1e-6)
    assert stats["loss"] == pytest.approx(0.4 + 0.5 * 0.5 - 0.01 * entropy, abs=1e-6)
    assert stats["clip_fraction"] == pytest.approx(0.5)  # 4/3 is outside [0.8, 1.2], 1 is not
    # approx KL (r - 1) - log r: (1/3 - log 4/3 + 0) / 2
    assert stats["approx_kl"] == pytest.approx((1 / 3 - math.log(4 / 3)) / 2, abs=1e-6)


def test_clipped_value_loss_by_hand() -> None:
    # old V = 0, new V = (1, 0), clip 0.5: clipped V = (0.5, 0); losses max((1-2)^2, (0.5-2)^2) = 2.25
    # and max(1, 1) = 1  ->  0.5 * mean(2.25, 1) = 0.8125
    stats = _hand_update(
        clip_range=0.2,
        clip_range_vf=0.5,
        ent_coef=0.0,
        vf_coef=1.0,
        normalize_advantage=False,
    )
    assert stats["value_loss"] == pytest.approx(0.8125, abs=1e-6)


def test_normalised_advantages_by_hand() -> None:
    # A = (1, -2) normalised: mean -0.5, std (ddof 1) 3/sqrt(2): (0.7071, -0.7071)
    # sample 1: min(4/3 a, 1.2 a) = 1.2 * 0.7071; sample 2: ratio 1 -> -0.7071
    stats = _hand_update(
        clip_range=0.2,
        clip_range_vf=None,
        ent_coef=0.0,
        vf_coef=0.5,
        normalize_advantage=True,
    )
    a = 1 / math.sqrt(2)
    assert stats["policy_loss"] == pytest.approx(-(1.2 * a - a) / 2, abs=1e-5)


def test_gae_by_hand() -> None:
    # T = 3 steps of one game, the episode ends at step 1; gamma 0.9, lambda 0.5, last value 3
    # t=2: 2 + 0.9*3 - 1.5 = 3.2;  t=1 (done): 0 - 1.0 = -1.0;  t=0: 1 + 0.9*1.0 - 0.5 = 1.4,
    # A0 = 1.4 + 0.9*0.5*(-1.0) = 0.95; returns = A + V
    rewards = torch.tensor([[1.0], [0.0], [2.0]])
    values = torch.tensor([[0.5], [1.0], [1.5]])
    dones = torch.tensor([[0.0], [1.0], [0.0]])
    adv, ret = gae(rewards, values, dones, torch.tensor([3.0]), gamma=0.9, lam=0.5)
    assert adv.flatten().tolist() == pytest.approx([0.95, -1.0, 3.2])
    assert ret.flatten().tolist() == pytest.approx([1.45, 0.0, 4.7])


def test_schedules() -> None:
    assert schedule_value(1e-3, 1e-4, "linear", 0.5) == pytest.approx(5.5e-4)
    assert schedule_value(1.0, 0.0, "cosine", 0.5) == pytest.approx(0.5)
    assert schedule_value(1.0, 0.0, "cosine", 1.0) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="unknown schedule 'step'"):
        schedule_value(1.0, 0.0, "step", 0.5)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(2, 50),
    st.integers(0, 2**31 - 1),
    st.floats(0.01, 30.0),
)
def test_masks_never_let_an_illegal_action_be_sampled(rows: int, n: int, seed: int, scale: float) -> None:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, n, generator=g) * scale
    mask = torch.rand(rows, n, generator=g) < 0.3
    mask[torch.arange(rows), torch.randint(n, (rows,), generator=g)] = True  # one legal action a row
    # make the illegal actions the most attractive ones, so only the mask keeps them out
    logits = torch.where(mask, logits, logits.abs() + 100.0)
    for _ in range(20):
        actions = sample_actions(masked_logits(logits, mask), g)
        assert mask[torch.arange(rows), actions].all()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(2, 50), st.integers(0, 2**31 - 1), st.floats(0.01, 1e4))
def test_masked_logits_equal_torch_where_and_pass_no_gradient_to_illegal_actions(
    rows: int, n: int, seed: int, scale: float
) -> None:
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(rows, n, generator=g) * scale).requires_grad_()
    mask = torch.rand(rows, n, generator=g) < 0.5
    got = masked_logits(logits, mask)
    assert torch.equal(got, torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT)))
    upstream = torch.randn(rows, n, generator=g)
    (got * upstream).sum().backward()
    assert torch.equal(logits.grad, torch.where(mask, upstream, torch.zeros_like(upstream)))


def test_sampling_follows_the_masked_softmax() -> None:
    g = torch.Generator().manual_seed(0)
    logits = masked_logits(
        torch.tensor([[0.0, math.log(3.0), 9.0]]).repeat(40_000, 1), torch.tensor([[1, 1, 0]]).bool()
    )
    counts = torch.bincount(sample_actions(logits, g), minlength=3).double() / 40_000
    assert counts[2] == 0 and abs(float(counts[1]) - 0.75) < 0.01
    assert MASKED_LOGIT < -1e7


# ---------------------------------------------------------------- runs
def test_a_tiny_run_learns_over_random(tmp_path: Path) -> None:
    from agents import RandomAgent
    from agents.training.score_table import play_games

    cfg = TrainConfig.from_yaml(CONFIGS / "tiny_ppo.yaml").with_overrides(
        [
            "total_timesteps=90000",
            "n_envs=256",
            "n_steps=16",
            "batch_size=1024",
            "net_arch=[64]",
            "learning_rate=0.002",
            "eval_freq=0",
            "checkpoint_freq=0",
            "final_eval_games=200",
            "final_eval_opponents=[]",
            "tensorboard=false",
        ]
    )
    result = _train(cfg, tmp_path / "learn")
    trained = result.evaluation["rows"][0]
    assert trained["agent"] == "trained" and trained["games"] == 200
    from dice_envs.rules import make_rules

    rnd = play_games(RandomAgent(seed=0), make_rules("spiffel"), 200, seed=cfg.seed + 50_000)
    assert trained["mean_score"] > rnd.mean_score + 25, (trained, rnd)
    returns = [
        float(r["train_return"])
        for r in ProgressLog.read(tmp_path / "learn" / "progress.csv")
        if r["train_return"]
    ]
    assert len(returns) > 5 and returns[-1] > returns[0] + 8


def test_products_load_through_agents_and_maskable_ppo(tmp_path: Path) -> None:
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    import agents
    import dice_envs  # noqa: F401

    result = _train(TrainConfig.from_yaml(CONFIGS / "tiny_ppo.yaml"), tmp_path / "run")
    out = tmp_path / "run"
    for name in ("tiny_ppo.zip", "tiny_ppo.json", "config.json", "progress.csv", "learning_curve.png"):
        assert (out / name).is_file(), name
    assert any((out / "tb").iterdir())
    card = result.card_path.read_text()
    assert '"machine"' in card and '"wall_time_s"' in card and '"steps": 4096' in card

    sb3 = MaskablePPO.load(result.model_path, device="cpu")
    agent = agents.load(str(result.model_path), game="spiffel", seed=0)
    env = gym.make("dice_envs/Spiffel-v0", illegal_action="raise")
    obs, info = env.reset(seed=11)
    done = False
    while not done:
        mask = info["action_mask"]
        a_sb3, _ = sb3.predict(obs, action_masks=mask.astype(bool), deterministic=True)
        a_ours = agent.act(obs, mask)
        assert int(a_sb3) == a_ours and mask[a_ours] == 1
        obs, _, term, trunc, info = env.step(a_ours)
        done = term or trunc
    # and as an opponent, by path
    env2 = gym.make("dice_envs/Spiffel-v0", opponents=[str(result.model_path)])
    env2.reset(seed=1)


def test_selfplay_run_on_farkle(tmp_path: Path) -> None:
    import json

    result = _train(TrainConfig.from_yaml(CONFIGS / "tiny_ppo_selfplay.yaml"), tmp_path / "sp")
    card = json.loads(result.card_path.read_text())
    assert card["num_players"] == 2 and card["rules"]["target"] == 2000
    row = card["evaluation"]["rows"][0]
    assert row["wins"] + row["draws"] + row["losses"] == row["games"] == 8
    rows = ProgressLog.read(tmp_path / "sp" / "progress.csv")
    assert all(0.0 <= float(r["train_win_rate"]) <= 1.0 for r in rows if r["train_win_rate"])
    _, state = load_checkpoint(tmp_path / "sp" / "checkpoints")
    assert state["pool"]["steps"] == [3072, 4096]  # snapshots every 1024 steps, newest pool_size kept


def test_reward_shaping_adds_only_potential_differences(tmp_path: Path) -> None:
    """With ``reward_shaping`` each stored reward is the game's reward plus ``gamma * phi(s') - phi(s)``
    (``phi = 0`` after a game ends): taking the potential terms off leaves the +1/-1/0 win reward
    at the games' ends and nothing in between, and the shaping does change the rewards."""
    from agents.training.envs import make_vector_env
    from agents.training.learner import start_learner
    from agents.training.ppo import LeadPotential, Rollout
    from agents.training.selfplay import pool_opponents

    cfg = TrainConfig.from_yaml(CONFIGS / "tiny_ppo_selfplay.yaml").with_overrides(
        ["reward_shaping=2.0", "gamma=0.99", "n_steps=64", "torch_threads=1"]
    )
    learner = start_learner(cfg, tmp_path, resume=False, device="cpu")
    env = make_vector_env(cfg, pool_opponents(cfg, learner.pool, cfg.seed))
    rollout = Rollout(cfg, env, "cpu", seed=cfg.seed)
    rollout.collect(learner.policy, learner.generator)
    buf = rollout.data
    phi = LeadPotential(cfg.rule_config(), 2, coef=2.0)
    obs = np.concatenate([buf["obs"].numpy(), rollout.obs[None]])
    potentials = np.stack([phi(o) for o in obs])  # (n_steps + 1, n_envs)
    done = buf["dones"].numpy().astype(bool)
    shaped = buf["rewards"].numpy().astype(np.float64)
    raw = shaped - cfg.gamma * np.where(done, 0.0, potentials[1:]) + potentials[:-1]
    np.testing.assert_allclose(raw[~done], 0.0, atol=1e-5)
    assert done.sum() > 10 and set(np.round(raw[done], 4)) <= {-1.0, 0.0, 1.0}
    assert np.abs(shaped[~done]).max() > 0.01  # banked and thrown points moved the potential
    with pytest.raises(ConfigError, match=r"'reward_shaping' needs game: farkle, reward: win"):
        TrainConfig.from_dict({"game": "spiffel", "reward_shaping": 1.0})


def test_farkle_learns_from_win_optimal(tmp_path: Path) -> None:
    """The recipe of the shipped Farkle bot at a small target: behaviour cloning of win-optimal
    (with DAgger), then PPO against a pool holding win-optimal; the card says so."""
    import json

    cfg = TrainConfig.from_yaml(CONFIGS / "farkle.yaml").with_overrides(
        [
            "rules={target: 500}",
            "bc_samples=3000",
            "bc_dagger_rounds=1",
            "bc_dagger_samples=1000",
            "bc_epochs=10",
            "total_timesteps=2048",
            "n_envs=64",
            "n_steps=16",
            "batch_size=256",
            "snapshot_freq=1024",
            "eval_freq=0",
            "checkpoint_freq=0",
            "final_eval_games=40",
            "progress_bar=false",
            "tensorboard=false",
        ]
    )
    assert cfg.bc_expert == "win-optimal" and "win-optimal" in cfg.pool_builtin
    result = _train(cfg, tmp_path / "wo")
    card = json.loads(result.card_path.read_text())
    warm = card["evaluation"]["warm_start"]
    assert warm["expert"] == "win-optimal" and warm["samples"] >= 4000
    assert warm["accuracy"] > 0.8, warm  # the exact policy is learnable from the observation
    rows = {r["opponent"]: r for r in card["evaluation"]["rows"]}
    assert set(rows) == {"win-optimal", "max-expected", "heuristic"}
    assert all(r["wins"] + r["draws"] + r["losses"] == r["games"] == 40 for r in rows.values())


def test_pool_seats_draw_members_per_game_and_act_legally() -> None:
    from agents import RandomAgent
    from agents.players.model import ModelAgent
    from agents.training.envs import make_vector_env
    from agents.training.policy import make_model
    from agents.training.selfplay import PoolOpponent, SelfPlayPool

    cfg = TrainConfig.from_yaml(CONFIGS / "tiny_ppo_selfplay.yaml")
    probe = make_vector_env(cfg, ["random"], num_envs=1)
    model = make_model(cfg, probe.single_observation_space, probe.single_action_space)
    pool = SelfPlayPool(size=2, builtin_prob=0.5, latest_prob=0.0)
    pool.add(0, ModelAgent(model.policy, deterministic=False, seed=0))
    pool.add(10, ModelAgent(model.policy, deterministic=False, seed=1))
    seat = PoolOpponent(pool, [RandomAgent(seed=1)], seed=3)
    env = make_vector_env(cfg.with_overrides(["n_envs=256"]), [seat])
    _, info = env.reset(seed=0)
    assert set(np.unique(seat.members[:256]).tolist()) == {-1, 0, 10}  # builtin and both snapshots
    for _ in range(200):  # illegal_action="raise": an illegal opponent move would raise here
        mask = info["action_mask"].astype(bool)
        acts = np.array([np.flatnonzero(m)[0] for m in mask])
        _, _, _, _, info = env.step(acts)


def test_same_seed_same_model(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    cfg = TrainConfig.from_yaml(CONFIGS / "tiny_ppo_selfplay.yaml").with_overrides(
        ["eval_freq=0", "final_eval_games=0", "total_timesteps=2048", "checkpoint_freq=0"]
    )
    params = []
    for run, seed in (("a", 3), ("b", 3), ("c", 4)):
        result = _train(cfg.with_overrides(seed=seed), tmp_path / run)
        model = MaskablePPO.load(result.model_path, device="cpu")
        params.append(torch.cat([p.detach().flatten() for p in model.policy.parameters()]))
    assert torch.equal(params[0], params[1])
    assert not torch.equal(params[0], params[2])


# ---------------------------------------------------------------- resume
def _snapshot_folder(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_resume_continues_the_step_count_and_the_curve(tmp_path: Path) -> None:
    cfg = TrainConfig.from_yaml(CONFIGS / "tiny_ppo.yaml").with_overrides(["checkpoint_freq=1024"])
    out = tmp_path / "run"
    first = _train(cfg, out)
    assert first.steps == 4096
    before = ProgressLog.read(out / "progress.csv")
    second = _train(cfg.with_overrides(["total_timesteps=8192"]), out, resume=True)
    assert second.resumed_from is not None and second.resumed_from.name == "ckpt_000000004096.pt"
    assert second.steps == 8192 and second.steps_this_run == 4096
    after = ProgressLog.read(out / "progress.csv")
    assert after[: len(before)] == before
    steps = [int(r["steps"]) for r in after]
    assert steps == sorted(steps) and steps[-1] == 8192 and len(after) == 2 * len(before)
    import json

    assert json.loads(second.card_path.read_text())["steps"] == 8192


def test_resume_skips_a_truncated_checkpoint(tmp_path: Path) -> None:
    cfg = TrainConfig.from_yaml(CONFIGS / "tiny_ppo.yaml").with_overrides(
        ["checkpoint_freq=1024", "eval_freq=0", "final_eval_games=0"]
    )
    out = tmp_path / "run"
    _train(cfg, out)
    newest = out / "checkpoints" / "ckpt_000000004096.pt"
    newest.write_bytes(newest.read_bytes()[:100])  # a kill while writing (or a bad disk)
    with pytest.warns(UserWarning, match="skipping checkpoint .*ckpt_000000004096.pt"):
        second = _train(cfg.with_overrides(["total_timesteps=5120"]), out, resume=True)
    assert second.resumed_from.name == "ckpt_000000003072.pt"
    assert second.steps == 5120


def test_resume_from_another_device_kind_reseeds_the_sampler(tmp_path: Path, capsys) -> None:
    """``device`` may change on resume; a CUDA run's sampler state (16 bytes: seed and offset) does
    not fit a CPU generator, so the sampler restarts at seed + steps, the same on every resume."""
    import shutil

    from sb3_contrib import MaskablePPO

    from agents.training.artifacts import save_checkpoint

    cfg = TrainConfig.from_yaml(CONFIGS / "tiny_ppo.yaml").with_overrides(
        ["checkpoint_freq=1024", "eval_freq=0", "final_eval_games=0"]
    )
    _train(cfg, tmp_path / "a")
    path, state = load_checkpoint(tmp_path / "a" / "checkpoints")
    state["generator"] = torch.zeros(16, dtype=torch.uint8)  # what torch.cuda's get_state() gives
    save_checkpoint(tmp_path / "a" / "checkpoints", state["steps"], state)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    weights = []
    for run in ("a", "b"):
        result = _train(cfg.with_overrides(["total_timesteps=5120"]), tmp_path / run, resume=True)
        assert result.resumed_from.name == path.name and result.steps == 5120
        assert f"{path.name}: another device's sampler" in capsys.readouterr().err
        model = MaskablePPO.load(result.model_path, device="cpu")
        weights.append(torch.cat([w.detach().flatten() for w in model.policy.parameters()]))
    assert torch.equal(weights[0], weights[1])


def test_resume_with_another_config_is_refused_and_touches_nothing(tmp_path: Path) -> None:
    cfg = TrainConfig.from_yaml(CONFIGS / "tiny_ppo.yaml").with_overrides(
        ["eval_freq=0", "final_eval_games=0"]
    )
    out = tmp_path / "run"
    _train(cfg, out)
    files = _snapshot_folder(out)
    with pytest.raises(
        ConfigError, match=r"differs from the run's .*config.json in learning_rate, n_epochs"
    ) as exc:
        _train(
            cfg.with_overrides(["learning_rate=0.01", "n_epochs=3", "total_timesteps=9000"]), out, resume=True
        )
    assert "learning_rate: run 0.0003, now 0.01" in str(exc.value)
    assert _snapshot_folder(out) == files
    with pytest.raises(ConfigError, match=r"is finished \(4096 steps >= total_timesteps 4096\)"):
        _train(cfg, out, resume=True)
    assert _snapshot_folder(out) == files


# ---------------------------------------------------------------- knobs refused where they enter
@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"learning_rate": -1e-3}, r"'learning_rate' must be a number in \(0, 1\], got -0.001"),
        ({"learning_rate": "fast"}, r"'learning_rate' must be a number in \(0, 1\], got 'fast'"),
        ({"ent_coef": -0.1}, r"'ent_coef' must be a number in \[0, 10\], got -0.1"),
        ({"clip_range": -1}, r"'clip_range' must be a number in \(0, 10\], got -1"),
        ({"net_arch": 5}, r"'net_arch' must be a non-empty list of layer sizes .* got 5"),
        ({"net_arch": [64, 0]}, r"'net_arch' .* got \[64, 0\]"),
        ({"name": "../victim"}, r"'name' must be a plain run name .* got '../victim'"),
        ({"name": "a/b"}, r"'name' must be a plain run name"),
        ({"seed": -1}, r"'seed' must be an integer in \[0, "),
        ({"gamma": float("nan")}, r"'gamma' must be a number in \[0, 1\], got nan"),
        ({"reward_shaping": -1}, r"'reward_shaping' must be a number in \[0, 1000\], got -1"),
        ({"trainer": "a2c"}, r"'trainer' must be one of ppo, sb3, got 'a2c'"),
        ({"batch_size": 10**6}, r"'batch_size' \(1000000\) must not exceed the rollout size"),
        ({"progress_bar": "yes"}, r"'progress_bar' must be true or false, got 'yes'"),
        ({"opponents": "heuristic"}, r"'opponents' must be a list of agent spec strings, got 'heuristic'"),
    ],
)
def test_training_knobs_are_validated(override: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TrainConfig.from_dict(override)


def test_bad_config_files_are_one_line_errors(tmp_path: Path) -> None:
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00game: spiffel")
    with pytest.raises(ConfigError, match="not a UTF-8 text file"):
        TrainConfig.from_yaml(binary)
    broken = tmp_path / "broken.yaml"
    broken.write_text("game: [spiffel\n")
    with pytest.raises(ConfigError, match=r"not valid YAML \(line"):
        TrainConfig.from_yaml(broken)
    with pytest.raises(ConfigError, match="the value is not valid YAML"):
        TrainConfig.from_dict({}).with_overrides(["net_arch=[1,"])


def test_cuda_without_cuda_leaves_no_run_folder(tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    cfg = TrainConfig.from_yaml(CONFIGS / "tiny_ppo.yaml").with_overrides(["device=cuda"])
    with pytest.raises(ConfigError, match="device 'cuda' was asked for but torch sees no CUDA device"):
        _train(cfg, tmp_path / "cuda")
    assert not (tmp_path / "cuda").exists()
