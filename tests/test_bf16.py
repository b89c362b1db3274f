"""``precision: bfloat16`` in the native trainer: :class:`agents.training.ppo.Bf16Dense` (one hidden
layer's product, bias and activation in bfloat16) against float32 computed by hand, the forward
pass, and a run whose saved model is float32."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from agents.training.config import TrainConfig  # noqa: E402
from agents.training.ppo import Bf16Dense, _hidden  # noqa: E402
from dice_envs.rules import ConfigError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs" / "train"


def _train(cfg: TrainConfig, out: Path):
    from agents.training.train import train

    return train(cfg.with_overrides(["torch_threads=1"]), out=out, command="pytest")


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b).norm() / b.norm())


def _grads(layer, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, upstream: torch.Tensor) -> list:
    for t in (x, w, b):
        t.grad = None
    (layer().float() * upstream).sum().backward()
    assert w.grad.dtype == b.grad.dtype == x.grad.dtype == torch.float32
    return [t.grad.clone() for t in (x, w, b)]


@pytest.mark.parametrize(("act", "tol"), [("tanh", 0.01), ("relu", 0.06)])
def test_bf16_dense_matches_float32_worked_out_by_hand(act: str, tol: float) -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(512, 40, generator=gen, requires_grad=True)
    w = (torch.randn(64, 40, generator=gen) / 6).requires_grad_()
    b = torch.randn(64, generator=gen).requires_grad_()
    upstream = torch.randn(512, 64, generator=gen)
    y = Bf16Dense.apply(x, w, b, act)
    assert y.dtype == torch.bfloat16
    got = _grads(lambda: Bf16Dense.apply(x, w, b, act), x, w, b, upstream)
    # float32 by hand: z = x W^T + b, y = act(z), dz = g act'(z), dW = dz^T x, db = sum dz, dx = dz W
    with torch.no_grad():
        z = x @ w.T + b
        y32 = torch.tanh(z) if act == "tanh" else torch.relu(z)
        dz = upstream * ((1 - y32**2) if act == "tanh" else (z > 0).float())
        by_hand = [dz @ w, dz.T @ x, dz.sum(0)]
    assert _rel(y.detach(), y32) < 0.01  # bfloat16 keeps 8 bits: about 0.4% per value
    # relu: a z that bfloat16 rounds across 0 flips its gate, here for a few % of the gradient
    assert all(_rel(g, h) < tol for g, h in zip(got, by_hand, strict=True))

    def autocast():  # the same layer as torch.autocast runs it: the products in bfloat16
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = torch.nn.functional.linear(x, w, b)
        return torch.tanh(out.float()) if act == "tanh" else torch.relu(out.float())

    reference = _grads(autocast, x, w, b, upstream)
    # the same products; tanh as 1 - 2 sigmoid(-2z) rounded to bfloat16 (autocast: in float32)
    assert all(_rel(g, r) < 0.008 for g, r in zip(got, reference, strict=True))


def test_bf16_hidden_stack_skips_the_input_gradient_and_hands_on_bfloat16() -> None:
    layers = torch.nn.Sequential(
        torch.nn.Linear(10, 16), torch.nn.Tanh(), torch.nn.Linear(16, 8), torch.nn.ReLU()
    )
    obs = torch.rand(32, 10)  # observations need no gradient: the first layer computes none
    out = _hidden(layers, obs, bf16=True)
    assert out.dtype == torch.bfloat16 and out.shape == (32, 8)  # the heads take it as it is
    out.float().sum().backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in layers.parameters())
    ref = layers(obs)
    assert torch.allclose(out.float(), ref, atol=0.03)
    # float32: the same values as the layers' own forward (tanh through FastTanh, within 2e-7)
    assert torch.allclose(_hidden(layers, obs, bf16=False), ref, atol=1e-6)


def test_bfloat16_forward_stays_close_to_float32_and_returns_float32() -> None:
    from agents.training.ppo import forward, make_model
    from dice_envs.vector.env import SpiffelVectorEnv

    env = SpiffelVectorEnv(num_envs=256)
    obs, _ = env.reset(seed=3)
    cfg = TrainConfig.from_dict({"name": "p", "game": "spiffel", "net_arch": [64, 64], "n_envs": 64})
    policy = make_model(cfg, env.single_observation_space, env.single_action_space).policy
    x = torch.as_tensor(obs)
    with torch.no_grad():
        logits32, values32 = forward(policy, x)
        logits16, values16 = forward(policy, x, "bfloat16")
    assert logits16.dtype == values16.dtype == torch.float32  # heads and losses stay float32
    assert not torch.equal(logits16, logits32)  # the hidden layers did run in bfloat16
    assert torch.allclose(logits16, logits32, atol=0.05) and torch.allclose(values16, values32, atol=0.05)
    with pytest.raises(ValueError, match="allowed: float32, bfloat16"):
        forward(policy, x, "float16")


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_bfloat16_gradients_follow_float32_through_both_heads(activation: str) -> None:
    """The whole bfloat16 forward (hidden layers, the action head's bfloat16 product, the value
    head's addmv) gives every parameter nearly float32's gradient for the same loss."""
    from agents.training.ppo import forward, make_model, masked_logits
    from dice_envs.vector.env import SpiffelVectorEnv

    env = SpiffelVectorEnv(num_envs=512)
    obs, info = env.reset(seed=5)
    cfg = TrainConfig.from_dict(
        {"name": "p", "game": "spiffel", "net_arch": [64, 64], "n_envs": 64, "activation": activation}
    )
    policy = make_model(cfg, env.single_observation_space, env.single_action_space).policy
    x, mask = torch.as_tensor(obs), torch.as_tensor(info["action_mask"]).bool()
    gen = torch.Generator().manual_seed(1)
    targets = torch.randn(x.shape[0], generator=gen)

    def grads(precision: str) -> list[torch.Tensor]:
        policy.zero_grad(set_to_none=True)
        logits, values = forward(policy, x, precision)
        logp = torch.log_softmax(masked_logits(logits, mask), -1)
        entropy = -(logp.exp() * logp).sum(-1).mean()
        loss = entropy + logp.max(-1).values.mean() + (values - targets).pow(2).mean()
        loss.backward()
        return [p.grad.clone() for p in policy.parameters()]

    g32, g16 = grads("float32"), grads("bfloat16")
    assert len(g32) == len(g16) == len(list(policy.parameters()))
    errors = [_rel(b, a) for a, b in zip(g32, g16, strict=True)]
    assert all(g.dtype == torch.float32 for g in g16)
    assert max(errors) < 0.02, errors  # measured 0.4% at most; a wrong gradient is off by ~100%


def test_bfloat16_run_trains_and_its_model_is_float32(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    cfg = TrainConfig.from_yaml(CONFIGS / "tiny_ppo.yaml").with_overrides(["precision=bfloat16"])
    result = _train(cfg, tmp_path / "bf")
    assert result.steps >= cfg.total_timesteps
    model = MaskablePPO.load(result.model_path, device="cpu")
    assert all(p.dtype == torch.float32 for p in model.policy.parameters())
    with pytest.raises(ConfigError, match=r"precision.*needs trainer: ppo"):
        cfg.with_overrides(["trainer=sb3"])
