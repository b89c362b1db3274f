"""Model files from strangers: nothing is unpickled, card and weights are bound by checksums.

A crafted zip whose ``data`` or ``policy.pth`` pickle would write a file is loaded through
``agents.load`` and ``gym.make(..., opponents=[path])``: nothing is written; a pickled object in
the weights is refused by name. ``pretrained:<name>`` takes only the shipped names.
"""

from __future__ import annotations

import io
import json
import pickle
import shutil
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import torch
from sb3_contrib import MaskablePPO

import agents
import dice_envs  # noqa: F401
from agents.models.card import card_spaces, make_card, read_card
from agents.models.files import load_policy, save_model, stamp_card
from agents.players.model import PRETRAINED_DIR, pretrained_names
from agents.training.policy import SpacesOnlyEnv
from dice_envs.encoding import encode
from dice_envs.engine import new_game
from dice_envs.layouts import legacy_size
from dice_envs.rules import ConfigError, make_rules


def _spaces(game: str, players: int) -> SpacesOnlyEnv:
    """Just the spaces of a game (MaskablePPO needs an env to build a model)."""
    return SpacesOnlyEnv(*card_spaces(make_card(make_rules(game), players)))


def _model(game: str = "spiffel", players: int = 1, net_arch=(8,), seed: int = 0) -> MaskablePPO:
    return MaskablePPO(
        "MlpPolicy",
        _spaces(game, players),
        policy_kwargs={"net_arch": list(net_arch)},
        n_steps=8,
        batch_size=8,
        seed=seed,
        device="cpu",
    )


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("safe") / "m.zip"
    save_model(_model(), path, make_card(make_rules("spiffel"), 1, command="test"))
    return path


@pytest.fixture(scope="module")
def saved_farkle(tmp_path_factory) -> Path:
    """A 2-player model, so that it can sit in a Gymnasium env as an opponent."""
    path = tmp_path_factory.mktemp("safe") / "f.zip"
    save_model(_model("farkle", 2), path, make_card(make_rules("farkle"), 2, command="test"))
    return path


def _copy(saved: Path, tmp_path: Path, name: str = "m") -> Path:
    dst = tmp_path / f"{name}.zip"
    shutil.copy(saved, dst)
    shutil.copy(saved.with_suffix(".json"), dst.with_suffix(".json"))
    return dst


def _states(game: str, players: int, n: int = 24) -> tuple[np.ndarray, np.ndarray]:
    rules = make_rules(game)
    obs, masks = [], []
    for s in range(n):
        g = new_game(rules, players, seed=s)
        for _ in range(s % 4):
            if not g.done:
                g.apply(g.legal_actions()[s % len(g.legal_actions())])
        if not g.done:
            obs.append(encode(g, g.current_player))
            masks.append(g.action_mask())
    return np.array(obs), np.array(masks)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class _Payload:
    """Unpickling this writes ``marker`` (a stand-in for any code a crafted file could run)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({str(self.marker)!r}, 'w').write('pwned')",))


def _rezip(src: Path, dst: Path, replace: dict[str, bytes]) -> None:
    """``src`` with some members replaced, as ``dst``; its card stamped as its author would."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, replace.get(info.filename, zin.read(info)))
    dst.with_suffix(".json").write_text(json.dumps(read_card(src)))
    stamp_card_unchecked(dst)


def stamp_card_unchecked(path: Path) -> None:
    """A stranger's card with correct checksums (what an attacker can always write)."""
    import hashlib

    with zipfile.ZipFile(path) as zf:
        weights = zf.read("policy.pth")
    card = json.loads(path.with_suffix(".json").read_text())
    card["weights_sha256"] = hashlib.sha256(weights).hexdigest()
    card["zip_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    path.with_suffix(".json").write_text(json.dumps(card))


# ------------------------------------------------------------------------------ save / load
def test_save_model_writes_sb3_zip_and_stamped_card(saved: Path) -> None:
    card = read_card(saved)
    assert len(card["weights_sha256"]) == 64 and len(card["zip_sha256"]) == 64
    assert card["policy"] == {
        "class": "MaskableActorCriticPolicy",
        "observation_size": 86,
        "n_actions": 45,
        "net_arch": [8],
        "activation": "tanh",
        "share_features_extractor": True,
    }
    sb3 = MaskablePPO.load(saved, device="cpu")  # our own file: sb3 users can still load it
    policy = load_policy(saved, card)
    assert not policy.training
    obs, masks = _states("spiffel", 1)
    ours, _ = policy.predict(obs.astype(np.float32), action_masks=masks > 0, deterministic=True)
    theirs, _ = sb3.predict(obs.astype(np.float32), action_masks=masks > 0, deterministic=True)
    assert ours.tolist() == theirs.tolist()
    assert all(m[a] for a, m in zip(ours, masks, strict=True))


def test_save_model_never_overwrites_unasked(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    before = _snapshot(tmp_path)
    card = make_card(make_rules("spiffel"), 1)
    with pytest.raises(FileExistsError, match=r"m\.zip already exists"):
        save_model(_model(net_arch=(4,)), path, card)
    path.unlink()
    with pytest.raises(FileExistsError, match=r"m\.json already exists"):  # the card alone counts too
        save_model(_model(net_arch=(4,)), path, card)
    assert not path.exists()
    save_model(_model(net_arch=(4,)), path, card, overwrite=True)
    assert read_card(path)["policy"]["net_arch"] == [4]
    assert _snapshot(tmp_path).keys() == before.keys()  # no temporary file left behind


def test_save_model_refuses_a_model_for_another_game(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="observation_size 86 does not fit"):
        save_model(_model("spiffel"), tmp_path / "x.zip", make_card(make_rules("farkle"), 2))
    with pytest.raises(ConfigError, match=r"must end in \.zip, got .*x\.pt"):
        save_model(_model(), tmp_path / "x.pt", make_card(make_rules("spiffel"), 1))
    assert list(tmp_path.iterdir()) == []


def test_relu_and_separate_arch_round_trip(tmp_path: Path) -> None:
    model = MaskablePPO(
        "MlpPolicy",
        _spaces("farkle", 2),
        policy_kwargs={"net_arch": {"pi": [8, 4], "vf": [6]}, "activation_fn": torch.nn.ReLU},
        n_steps=8,
        batch_size=8,
        seed=1,
        device="cpu",
    )
    path = save_model(model, tmp_path / "f.zip", make_card(make_rules("farkle"), 2))
    card = read_card(path)
    assert card["policy"]["net_arch"] == {"pi": [8, 4], "vf": [6]} and card["policy"]["activation"] == "relu"
    obs, masks = _states("farkle", 2)
    agent = agents.load(str(path), game="farkle", num_players=2)
    expect, _ = model.predict(obs.astype(np.float32), action_masks=masks > 0, deterministic=True)
    assert agent.act_batch(obs, masks).tolist() == expect.tolist()


# ------------------------------------------------------------------------------ crafted files
def test_the_payload_is_live(tmp_path: Path) -> None:
    """The crafted pickles below really do run code when unpickled the usual way."""
    marker = tmp_path / "pwned"
    pickle.loads(pickle.dumps(_Payload(marker)))
    assert marker.read_text() == "pwned"
    marker.unlink()
    buf = io.BytesIO()
    torch.save({"w": _Payload(marker)}, buf)
    torch.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert marker.exists()


def test_pickled_data_member_is_never_read(saved_farkle: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.zip"
    _rezip(saved_farkle, evil, {"data": pickle.dumps(_Payload(marker))})
    agent = agents.load(
        str(evil), game="farkle", num_players=2
    )  # the weights are fine: it loads, runs nothing
    obs, masks = _states("farkle", 2, 4)
    assert agent.act_batch(obs, masks).shape == (len(obs),)
    env = gym.make("dice_envs/Farkle-v1", opponents=[str(evil)])
    env.reset(seed=0)
    env.close()
    assert not marker.exists()


def test_pickled_weights_are_refused(saved_farkle: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    buf = io.BytesIO()
    torch.save({"mlp_extractor.policy_net.0.weight": _Payload(marker)}, buf)
    evil = tmp_path / "evil.zip"
    _rezip(saved_farkle, evil, {"policy.pth": buf.getvalue(), "data": pickle.dumps(_Payload(marker))})
    before = _snapshot(tmp_path)
    with pytest.raises(
        ConfigError, match=r"evil\.zip: policy\.pth is not a plain tensor file and was refused"
    ) as err:
        agents.load(str(evil), game="farkle", num_players=2)
    # the reason names what the file holds (the payload calls exec), not torch's advice to load it anyway
    text = str(err.value)
    assert "GLOBAL exec " in text and "\x1b" not in text and "weights_only` set to `False" not in text
    with pytest.raises(ConfigError, match="not a plain tensor file"):
        gym.make("dice_envs/Farkle-v1", opponents=[str(evil)])
    with pytest.raises(ConfigError, match="not a plain tensor file"):
        gym.make_vec("dice_envs/Farkle-v1", num_envs=2, opponents=[str(evil)]).reset(seed=0)
    assert not marker.exists()
    assert _snapshot(tmp_path) == before


# ------------------------------------------------------------------------------ checksums
def test_changed_weights_or_zip_are_refused(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01  # one flipped bit
    path.write_bytes(bytes(data))
    with pytest.raises(
        ConfigError, match=r"m\.zip: the zip's sha256 [0-9a-f]{64} differs from its card's zip_sha256"
    ):
        agents.load(str(path), game="spiffel")
    # weights swapped for other (valid) weights of the same network, the card left as it was
    other = save_model(_model(seed=5), tmp_path / "other.zip", make_card(make_rules("spiffel"), 1))
    card = read_card(saved)
    card.pop("zip_sha256")
    with zipfile.ZipFile(other) as zf:
        swapped_weights = zf.read("policy.pth")
    swapped = tmp_path / "swapped.zip"
    with zipfile.ZipFile(saved) as zin, zipfile.ZipFile(swapped, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, swapped_weights if info.filename == "policy.pth" else zin.read(info))
    swapped.with_suffix(".json").write_text(json.dumps(card))
    with pytest.raises(
        ConfigError, match=r"policy\.pth has sha256 [0-9a-f]{64}, its card says " + card["weights_sha256"]
    ):
        agents.load(str(swapped), game="spiffel")


def test_card_without_checksum_is_refused_with_how_to_stamp(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    card = read_card(path)
    for key in ("weights_sha256", "zip_sha256", "policy"):
        del card[key]
    path.with_suffix(".json").write_text(json.dumps(card))
    zip_before = path.read_bytes()
    with pytest.raises(
        ConfigError,
        match=r"no valid weights_sha256 checksum \(got None\).*python -m agents\.models\.files stamp",
    ):
        agents.load(str(path), game="spiffel")
    # the card's config says [64, 64] (sb3's default) but the weights are [8]: stamping refuses
    with pytest.raises(
        ConfigError, match=r"do not fit the network its card describes \(net_arch \{'pi': \[64, 64\]"
    ):
        stamp_card(path)
    card["config"] = {"net_arch": [8], "activation": "tanh"}
    path.with_suffix(".json").write_text(json.dumps(card))
    from agents.models.files import main

    assert main(["stamp", str(path)]) == 0
    assert path.read_bytes() == zip_before  # stamping never touches the weights
    assert read_card(path)["weights_sha256"] == read_card(saved)["weights_sha256"]
    agents.load(str(path), game="spiffel")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"net_arch": 5}, "net_arch must be a list of layer sizes .* got 5"),
        ({"net_arch": [8, -1]}, r"got \[8, -1\]"),
        ({"activation": "sigmoid"}, "activation must be one of tanh, relu, got 'sigmoid'"),
        ({"net_arch": [16]}, r"do not fit the network its card describes \(net_arch \[16\]"),
        ({"share_features_extractor": "yes"}, "share_features_extractor must be true or false, got 'yes'"),
        ({"observation_size": 50}, "policy observation_size 50 does not fit the card's game"),
    ],
)
def test_card_policy_entry_is_checked(saved: Path, tmp_path: Path, change: dict, message: str) -> None:
    path = _copy(saved, tmp_path)
    card = read_card(path)
    card["policy"] = {**card["policy"], **change}
    with pytest.raises(ConfigError, match=message):
        load_policy(path, card)


def test_not_a_zip_and_no_weights(saved: Path, tmp_path: Path) -> None:
    path = _copy(saved, tmp_path)
    path.write_bytes(b"PK\x03\x04 not really a zip")
    stamp_card_unchecked_raw = read_card(path)
    stamp_card_unchecked_raw.pop("zip_sha256")
    with pytest.raises(ConfigError, match=r"m\.zip: not a readable zip file"):
        load_policy(path, stamp_card_unchecked_raw)
    nozip = tmp_path / "n.zip"
    with zipfile.ZipFile(nozip, "w") as zf:
        zf.writestr("data", "{}")
    shutil.copy(saved.with_suffix(".json"), nozip.with_suffix(".json"))
    card = read_card(nozip)
    card.pop("zip_sha256")
    with pytest.raises(ConfigError, match=r"n\.zip: the zip holds no policy\.pth"):
        load_policy(nozip, card)


# ------------------------------------------------------------------------------ names and paths
@pytest.mark.parametrize(
    "name",
    ["../spiffel", "../pretrained/spiffel", "/etc/passwd", "..\\spiffel", "spiffel.zip", "", "sp/iffel"],
)
def test_pretrained_takes_only_shipped_names(name: str) -> None:
    with pytest.raises(ConfigError) as err:
        agents.load(f"pretrained:{name}", game="spiffel")
    msg = str(err.value)
    assert f"no pretrained model {name!r}" in msg and "available: " + ", ".join(pretrained_names()) in msg


def test_pretrained_outside_the_shipped_folder_is_not_reached(saved: Path) -> None:
    """A ``../`` walk from the shipped folder to a real model file elsewhere is refused."""
    walk = "../" * len(PRETRAINED_DIR.parts) + str(saved.with_suffix("")).lstrip("/")
    assert (PRETRAINED_DIR / f"{walk}.zip").resolve() == saved.resolve()  # the walk does lead there
    with pytest.raises(ConfigError, match="no pretrained model"):
        agents.load(f"pretrained:{walk}", game="spiffel")


def test_model_paths_are_checked(saved: Path, tmp_path: Path) -> None:
    (tmp_path / "dir.zip").mkdir()
    with pytest.raises(ConfigError, match=r"model path .*dir\.zip is not a file"):
        agents.load(str(tmp_path / "dir.zip"), game="spiffel")
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ConfigError, match=r"must be a \.zip .* got '.*notes\.txt'"):
        agents.load(str(text), game="spiffel")
    lone = tmp_path / "lone.zip"
    shutil.copy(saved, lone)
    with pytest.raises(ConfigError, match=r"model card not found: .*lone\.json"):
        agents.load(str(lone), game="spiffel")


def test_shipped_bots_load_weights_only_and_act_as_sb3_does() -> None:
    for name, players in (("spiffel", 1), ("farkle", 2)):
        if name not in pretrained_names():
            continue
        path = PRETRAINED_DIR / f"{name}.zip"
        agent = agents.load(f"pretrained:{name}", game=name, num_players=players)
        sb3 = MaskablePPO.load(path, device="cpu")  # a file we ship and trust
        obs, masks = _states(name, players, 16)
        card = read_card(path)  # an older encoding reads the current observation cut
        cut = legacy_size(card["observation_encoding"], make_rules(name), players) or obs.shape[1]
        expect, _ = sb3.predict(obs[:, :cut].astype(np.float32), action_masks=masks > 0, deterministic=True)
        assert agent.act_batch(obs, masks).tolist() == expect.tolist()
