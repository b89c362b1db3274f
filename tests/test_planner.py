"""``planner:<model>`` (agents/players/planner.py): the critic's turn-start table is what the critic says
about the real observations of a turn's first throw, the farkle on that throw is accounted as the
rules say, the planner plays legal, seeded, repeatable moves from it, and bad specs are refused by name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")
pytest.importorskip("numba")

import agents  # noqa: E402
from agents.models.card import card_spaces, make_card  # noqa: E402
from agents.models.files import save_model  # noqa: E402
from agents.players.model import ModelAgent  # noqa: E402
from agents.players.planner import POINTS_PER_TURN, PlannerAgent, critic_start_values, planner_solution  # noqa: E402
from agents.registry import check_spec, known_specs  # noqa: E402
from agents.training.policy import SpacesOnlyEnv  # noqa: E402
from dice_envs.encoding import encode  # noqa: E402
from dice_envs.engine import FarkleGame, new_game  # noqa: E402
from dice_envs.forward import throw_outcomes  # noqa: E402
from dice_envs.rules import ConfigError, make_rules  # noqa: E402
from dice_envs.tables import farkle_tables  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py

RULES = make_rules("farkle", target=2000)


def _save(folder: Path, game: str = "farkle", players: int = 2, seed: int = 0, **rules) -> Path:
    cfg = make_rules(game, **rules)
    card = make_card(cfg, players, command="test")
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy",
        SpacesOnlyEnv(*card_spaces(card)),
        policy_kwargs={"net_arch": [16, 16]},
        n_steps=8,
        batch_size=8,
        seed=seed,
        device="cpu",
    )
    with torch.no_grad():  # a value head with some slope, so that the table is not flat
        model.policy.value_net.weight.mul_(3.0)
    return save_model(model, folder / f"{game}{players}s{seed}.zip", card)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _save(tmp_path_factory.mktemp("planner"), target=2000)


def _critic(agent: ModelAgent, seat: int, own: int, other: int) -> float:
    """The critic's mean value over the real first throws of a turn, as a chance of winning, and
    the chance that the throw is a farkle."""
    ft = farkle_tables()
    total = weight = 0.0
    for roll, p in zip(ft.rolls[6], throw_outcomes(6)[1], strict=True):
        faces = tuple(int(f) for f in roll)
        game = FarkleGame(RULES, num_players=2, opening=faces, seed=0)
        if any(event.kind == "farkle" for event in game.history):
            continue  # the turn passed without a decision
        game.banked = [own, other] if seat == 0 else [other, own]
        game.current_player = seat
        game.turns[seat] = int(np.round((own + other) / 2 / POINTS_PER_TURN)) + seat
        obs = torch.as_tensor(encode(game, seat)[None])
        with torch.no_grad():
            v = float(agent.policy.predict_values(obs)[0, 0])
        total += p * v
        weight += p
    return min(1.0, max(0.0, (total / weight + 1) / 2)), 1.0 - weight  # mean value as a chance


def test_the_table_is_the_critic_on_real_first_throws_with_the_farkle_worked_out(model: Path) -> None:
    agent = ModelAgent.from_file(model, RULES, 2)
    s0, s1 = critic_start_values(agent, RULES, stride=1)
    assert s0.shape == s1.shape == (40, 40)
    # By hand: m[s](own, other) is the critic's mean over scoring first throws; with bankruptcy a
    # farkle (probability pf) hands the other seat its turn against 0, so
    #   x[s](a, b) = (1 - pf) m[s](a, b) + pf (1 - x[1-s](b, 0)),
    # a chain that ends in the pair x[0](0, 0), x[1](0, 0), solved here as a 2x2 linear system.
    a, b = 1250, 600
    m = {(s, o, t): _critic(agent, s, o, t) for s in (0, 1) for o, t in ((a, b), (b, 0), (0, 0))}
    pf = m[0, 0, 0][1]
    assert pf == pytest.approx(0.0231481, abs=1e-6)  # the rule text's figure
    q = 1 - pf
    # x0 = q m0 + pf (1 - x1), x1 = q m1 + pf (1 - x0)
    lhs = np.array([[1.0, pf], [pf, 1.0]])
    x00 = np.linalg.solve(lhs, [q * m[0, 0, 0][0] + pf, q * m[1, 0, 0][0] + pf])
    for seat in (0, 1):
        xb0 = q * m[1 - seat, b, 0][0] + pf * (1 - x00[seat])
        xab = q * m[seat, a, b][0] + pf * (1 - xb0)
        got = s0[a // 50, b // 50] if seat == 0 else s1[b // 50, a // 50]
        assert got == pytest.approx(xab, abs=1e-5), (seat, m, x00, xb0)


@pytest.mark.parametrize("bankruptcy", [True, False])
def test_a_coarser_grid_keeps_the_critics_values_at_its_points(tmp_path: Path, bankruptcy: bool) -> None:
    rules = make_rules("farkle", target=2000, bankruptcy=bankruptcy)
    agent = ModelAgent.from_file(_save(tmp_path, target=2000, bankruptcy=bankruptcy), rules, 2)
    fine = critic_start_values(agent, rules, stride=1)
    coarse = critic_start_values(agent, rules, stride=3)
    grid = np.r_[np.arange(0, 40, 3), 39]
    for f, c in zip(fine, coarse, strict=True):
        np.testing.assert_allclose(c[np.ix_(grid, grid)], f[np.ix_(grid, grid)], atol=1e-6)
        assert np.abs(c - f).max() < 0.05 and c.min() >= 0.0 and c.max() <= 1.0
    # without bankruptcy a farkle keeps the banked total, so the two settings' tables differ
    other = critic_start_values(agent, make_rules("farkle", target=2000, bankruptcy=not bankruptcy), stride=1)
    assert not np.allclose(other[0], fine[0])


def test_the_planner_plays_legal_repeatable_games_and_values_its_actions(model: Path) -> None:
    spec = f"planner:{model}"
    planner = agents.load(spec, game=RULES, num_players=2, seed=0)
    assert isinstance(planner, PlannerAgent) and planner.spec == spec
    sol = planner.solution
    assert sol is planner_solution(str(model), RULES)  # built once per model and rules
    runs = []
    for _ in range(2):
        game, moves = new_game(RULES, 2, seed=9), []
        while not game.done and len(moves) < 400:
            mask = game.action_mask()
            obs = encode(game, game.current_player)
            action = planner.act(obs, mask)
            values = planner.action_values(obs[None], mask[None])[0]
            assert mask[action] == 1 and values[action] == values[np.isfinite(values)].max()
            assert np.isfinite(values[mask == 1]).any() and not np.isfinite(values[mask == 0]).any()
            game.apply(action)
            moves.append(action)
        runs.append(moves)
    assert runs[0] == runs[1] and len(runs[0]) > 5


def test_the_disk_cache_is_used_per_model(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.players import planner as planner_module

    monkeypatch.setenv("DICE_ENVS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(planner_module, "_TABLES", type(planner_module._TABLES)())
    first = planner_solution(str(model), RULES)
    assert len(list((tmp_path / "cache").glob("farkle-planner-*.npy"))) == 1
    monkeypatch.setattr(planner_module, "_TABLES", type(planner_module._TABLES)())
    calls = []
    monkeypatch.setattr(planner_module, "critic_start_values", lambda *a, **k: calls.append(1))
    again = planner_solution(str(model), RULES)
    assert not calls and np.array_equal(again.S0, first.S0) and np.array_equal(again.S1, first.S1)
    other = _save(tmp_path, target=2000, seed=5)  # other weights: its own table
    monkeypatch.setattr(planner_module, "critic_start_values", critic_start_values)
    planner_solution(str(other), RULES)
    assert len(list((tmp_path / "cache").glob("farkle-planner-*.npy"))) == 2


def test_bad_planner_specs_are_refused_by_name(model: Path, tmp_path: Path) -> None:
    assert "planner:<model>" in known_specs("farkle") and "planner:<model>" not in known_specs("spiffel")
    check_spec(f"planner:{model}", "farkle")
    with pytest.raises(ConfigError, match="planner spec needs a two-player Farkle model"):
        agents.load("planner:", game="farkle", num_players=2)
    with pytest.raises(ConfigError, match=r"not found|no such|does not exist"):
        agents.load(f"planner:{tmp_path / 'missing.zip'}", game="farkle", num_players=2)
    with pytest.raises(ConfigError, match="not available for spiffel"):
        check_spec(f"planner:{model}", "spiffel")
    with pytest.raises(ConfigError, match="two-player"):
        agents.load(f"planner:{model}", game=RULES, num_players=3)
    spiffel = _save(tmp_path, game="spiffel", players=1)
    with pytest.raises(ConfigError, match="spiffel"):
        agents.load(f"planner:{spiffel}", game="farkle", num_players=2)
    solo = _save(tmp_path, players=1, target=2000)
    with pytest.raises(ConfigError, match="two-player Farkle model"):
        _ = PlannerAgent(str(solo), RULES).solution
    with pytest.raises(ConfigError, match="target"):  # the model's rules, as for the model itself
        _ = PlannerAgent(str(model), make_rules("farkle", target=3000)).solution


def test_expert_iteration_clones_the_planner_and_its_card_adds_up_the_lineage(tmp_path: Path) -> None:
    """``warm_start: bc`` of ``planner:<model>``: the run's card names the model the planner
    searched over (checksum, recipe, totals) and :func:`training_totals` counts it in."""
    from agents.models.card import read_card, training_totals
    from agents.training.config import TrainConfig
    from agents.training.train import train

    rules = make_rules("farkle", target=2000)
    card = make_card(rules, 2, command="python scripts/train.py --config x.yaml", steps=5000, wall_time_s=7.5)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", SpacesOnlyEnv(*card_spaces(card)), policy_kwargs={"net_arch": [16]}, seed=1, device="cpu"
    )
    parent = save_model(model, tmp_path / "parent.zip", card)
    # Farkle, 2 players, target 2000, the sb3 trainer
    recipe = Path(__file__).resolve().parents[1] / "configs" / "train" / "tiny_selfplay.yaml"
    cfg = TrainConfig.from_yaml(recipe).with_overrides(
        ["warm_start=bc", f"bc_expert=planner:{parent}", "bc_samples=400", "bc_epochs=2", "torch_threads=1"]
    )
    result = train(cfg, out=tmp_path / "run", resume=False, command="pytest")
    child = read_card(result.model_path)
    warm = child["evaluation"]["warm_start"]
    assert warm["kind"] == "bc" and warm["expert"] == f"planner:{parent}" and warm["samples"] >= 400
    lineage = warm["expert_model"]
    assert lineage["model"] == str(parent)
    assert lineage["weights_sha256"] == read_card(parent)["weights_sha256"]
    assert (lineage["steps"], lineage["wall_time_s"], lineage["command"]) == (5000, 7.5, card["command"])
    steps, wall = training_totals(child)
    assert steps == child["steps"] + 5000 and wall == pytest.approx(child["wall_time_s"] + 7.5)
