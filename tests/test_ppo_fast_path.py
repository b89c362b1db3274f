"""The native trainer's fast path: FastTanh and the fused Adam compute what SB3 and plain Adam do."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from agents.training.config import TrainConfig  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_trainer_forward_matches_the_saved_policy_and_its_gradients(activation: str) -> None:
    """The trainer's forward (FastTanh for nn.Tanh) is SB3's own network: same logits, values and
    parameter gradients within float32 rounding, so what it trains is what the saved model plays."""
    from agents.training.ppo import FastTanh, forward, make_model
    from dice_envs.vector.env import SpiffelVectorEnv

    env = SpiffelVectorEnv(num_envs=128)
    obs, _ = env.reset(seed=5)
    cfg = TrainConfig.from_dict(
        {"name": "p", "game": "spiffel", "net_arch": [32, 32], "activation": activation}
    )
    policy = make_model(cfg, env.single_observation_space, env.single_action_space).policy
    x = torch.as_tensor(obs)

    def outputs_and_grads(fn):
        policy.zero_grad()
        logits, values = fn()
        (logits.square().sum() + values.sum()).backward()
        return logits.detach(), values.detach(), [p.grad.clone() for p in policy.parameters()]

    def sb3():
        latent_pi, latent_vf = policy.mlp_extractor(policy.extract_features(x, policy.pi_features_extractor))
        return policy.action_net(latent_pi), policy.value_net(latent_vf).squeeze(-1)

    ours, theirs = outputs_and_grads(lambda: forward(policy, x)), outputs_and_grads(sb3)
    assert torch.allclose(ours[0], theirs[0], atol=1e-5) and torch.allclose(ours[1], theirs[1], atol=1e-5)
    for g_ours, g_theirs in zip(ours[2], theirs[2], strict=True):
        assert torch.allclose(g_ours, g_theirs, rtol=1e-4, atol=1e-4)
    z = torch.linspace(-12.0, 12.0, 2001, dtype=torch.float32, requires_grad=True)
    FastTanh.apply(z).sum().backward()
    assert torch.allclose(FastTanh.apply(z.detach()), torch.tanh(z.detach()), atol=2e-7)
    assert torch.allclose(z.grad, 1.0 - torch.tanh(z.detach()) ** 2, atol=1e-6)


def test_the_optimizer_steps_as_plain_adam() -> None:
    from agents.training.ppo import make_optimizer

    torch.manual_seed(0)
    ours = [torch.nn.Parameter(torch.randn(7, 5)), torch.nn.Parameter(torch.randn(5))]
    plain = [torch.nn.Parameter(p.detach().clone()) for p in ours]
    start = [p.detach().clone() for p in ours]
    opt_ours, opt_plain = make_optimizer(ours, 0.01, 1e-5), torch.optim.Adam(plain, lr=0.01, eps=1e-5)
    for step in range(5):
        for a, b in zip(ours, plain, strict=True):
            grad = torch.sin(a.detach() * (step + 1))
            a.grad, b.grad = grad.clone(), grad.clone()
        opt_ours.step()
        opt_plain.step()
    for a, b, a0 in zip(ours, plain, start, strict=True):
        assert torch.allclose(a, b, atol=1e-6) and (a - a0).abs().max() > 0.02  # five steps moved them
    assert opt_ours.param_groups[0]["lr"] == 0.01 and opt_ours.param_groups[0]["eps"] == 1e-5
