"""Model files that are safe to load from strangers: weights only, bound to their card by checksums.

:func:`load_policy` reads only the zip member ``policy.pth`` with ``torch.load(weights_only=True)``,
checks it against the card and rebuilds the network from the card alone (docs/guide/safety.md);
``python -m agents.models.files stamp path/to/model.zip`` stamps the card of a file you trust.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import io
import math
import re
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from agents.models.activations import activation_class, activation_name
from agents.models.card import (
    card_path,
    card_spaces,
    network_spec,
    read_card,
    validate_card,
    write_card,
)
from dice_envs.io import atomic_write_bytes
from dice_envs.rules import ConfigError

__all__ = [
    "MAX_WEIGHTS_BYTES",
    "WEIGHTS_MEMBER",
    "check_model_path",
    "file_sha256",
    "load_policy",
    "policy_spec",
    "read_arrays",
    "save_model",
    "stamp_card",
]

#: The zip member holding the policy's weights (SB3's name).
WEIGHTS_MEMBER = "policy.pth"
#: Largest weights accepted (a guard against zip bombs): a ``policy.pth``; a value model's ``.npz``
#: file, and its arrays together.
MAX_WEIGHTS_BYTES = 256 * 2**20
#: What reading a damaged zip raises (a truncated file, a bad CRC, a broken deflate stream, ...).
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    OSError,
    EOFError,
    ValueError,
    NotImplementedError,
)
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def file_sha256(path: str | Path) -> str:
    """SHA-256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_model_path(path: str | Path) -> Path:
    """A user-given model path, checked: it exists, is a file, ends in ``.zip`` or ``.npz``, has
    its card beside it."""
    p = Path(path).expanduser()
    if p.suffix.lower() not in (".zip", ".npz"):
        raise ConfigError(
            "a model file must be a .zip policy or a .npz value model (with its .json card beside it), "
            f"got {str(path)!r}"
        )
    try:
        exists, is_file, has_card = p.exists(), p.is_file(), card_path(p).is_file()
    except (OSError, ValueError) as exc:  # a name no file can have (too long, NUL byte, ...)
        raise ConfigError(f"model path {str(path)[:200]!r} cannot be used: {exc}") from None
    if not exists:
        raise ConfigError(f"model file not found: {p}")
    if not is_file:
        raise ConfigError(f"model path {p} is not a file")
    if not has_card:
        raise ConfigError(
            f"model card not found: {card_path(p)} (every model needs its card beside it, same stem, .json)"
        )
    return p


# ---------------------------------------------------------------------------------------------- spec
def policy_spec(model: Any) -> dict[str, Any]:
    """The ``policy`` card entry describing ``model``'s network (a MaskablePPO or its policy)."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import FlattenExtractor

    from agents.models.afterstate import FarkleAfterstatePolicy

    policy = getattr(model, "policy", model)
    if type(policy) not in (MaskableActorCriticPolicy, FarkleAfterstatePolicy):
        raise ConfigError(
            "save_model stores MaskableActorCriticPolicy (MlpPolicy) and FarkleAfterstatePolicy networks, "
            f"got {type(policy).__name__}"
        )
    if not isinstance(policy.features_extractor, FlattenExtractor):
        raise ConfigError(
            f"save_model needs the flat features extractor, got {type(policy.features_extractor).__name__}"
        )
    arch = policy.net_arch  # sb3 fills in its default: never None
    spec = {
        "class": type(policy).__name__,
        "observation_size": int(policy.observation_space.shape[0]),
        "n_actions": int(policy.action_space.n),
        "net_arch": {k: [int(x) for x in v] for k, v in arch.items()}
        if isinstance(arch, dict)
        else [int(x) for x in arch],
        "activation": activation_name(policy.activation_fn),
        "share_features_extractor": bool(policy.share_features_extractor),
    }
    if isinstance(policy, FarkleAfterstatePolicy):
        spec["head_width"] = policy.head_width
    return spec


# ---------------------------------------------------------------------------------------------- save
def save_model(model: Any, path: str | Path, card: dict[str, Any], *, overwrite: bool = False) -> Path:
    """Write ``model`` (a sb3-contrib ``MaskablePPO``) as a deflated SB3 zip plus ``card`` stamped with
    ``weights_sha256``, ``zip_sha256`` and ``policy``, both atomically; return the zip. An existing
    zip or card is a :class:`FileExistsError` unless ``overwrite``.
    """
    p = Path(path)
    if p.suffix.lower() != ".zip":
        raise ConfigError(f"a model file must end in .zip, got {str(path)!r}")
    cp = card_path(p)
    if not overwrite:
        for q in (p, cp):
            if q.exists():
                raise FileExistsError(f"{q} already exists; pass overwrite=True to replace it")
    validate_card(card, str(cp))
    spec = policy_spec(model)
    card_spaces(dict(card, policy=spec), str(cp))  # the model fits the card's game
    buf = io.BytesIO()
    model.save(buf)  # SB3 writes its zip to a file object as well as to a path
    data = _deflated(buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        weights = zf.read(WEIGHTS_MEMBER)
    stamped = copy.deepcopy(card)
    stamped.update(weights_sha256=_sha(weights), zip_sha256=_sha(data), policy=spec)
    atomic_write_bytes(p, data, overwrite=overwrite)
    write_card(p, stamped, overwrite=overwrite)
    return p


def _deflated(data: bytes) -> bytes:
    """The zip ``data`` with every member deflate-compressed (SB3 stores them uncompressed; merged
    ensembles' block-diagonal weights are mostly zeros). Names, dates and contents are kept."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            member = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            member.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(member, src.read(info))
    return out.getvalue()


def stamp_card(path: str | Path) -> Path:
    """Add ``weights_sha256`` / ``zip_sha256`` / ``policy`` to the card of a model *you trust* (the
    network is rebuilt from the card first, so a card that does not fit is refused); return its path.
    """
    p = check_model_path(path)
    card = read_card(p)
    weights = _read_weights(p)
    card.update(weights_sha256=_sha(weights), zip_sha256=file_sha256(p))
    policy = load_policy(p, card)
    card["policy"] = policy_spec(policy)
    write_card(p, card, overwrite=True)
    return card_path(p)


# ---------------------------------------------------------------------------------------------- load
def _read_weights(path: Path) -> bytes:
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                info = zf.getinfo(WEIGHTS_MEMBER)
            except KeyError:
                raise ConfigError(
                    f"{path}: the zip holds no {WEIGHTS_MEMBER} (not an SB3 model file)"
                ) from None
            if info.file_size > MAX_WEIGHTS_BYTES:
                raise ConfigError(
                    f"{path}: {WEIGHTS_MEMBER} is {info.file_size} bytes, "
                    f"more than the {MAX_WEIGHTS_BYTES} allowed"
                )
            return zf.read(info)
    except _ZIP_ERRORS as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{path}: not a readable zip file ({exc})") from exc


def read_arrays(path: str | Path, sha256: str | None = None) -> dict[str, np.ndarray]:
    """The arrays of the ``.npz`` file ``path`` (a value model's weights), read as safely as a
    policy's: the SHA-256 checked (``sha256``, when given), plain numbers only, sizes checked
    before anything is allocated, every float finite; else ``ConfigError`` naming what is wrong.
    """
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_WEIGHTS_BYTES:
            raise ConfigError(f"{p}: the file is {size} bytes, more than the {MAX_WEIGHTS_BYTES} allowed")
        if sha256 is not None and file_sha256(p) != sha256:
            raise ConfigError(f"{p}: the weights do not match the SHA-256 on the card (changed or torn file)")
        with zipfile.ZipFile(p) as zf:
            infos = zf.infolist()
            unpacked = sum(info.file_size for info in infos)
            if unpacked > MAX_WEIGHTS_BYTES:
                raise ConfigError(
                    f"{p}: its members unpack to {unpacked} bytes, more than the {MAX_WEIGHTS_BYTES} allowed"
                )
            return {info.filename.removesuffix(".npy"): _read_npy(zf, info, p) for info in infos}
    except _ZIP_ERRORS as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{p}: not a readable .npz file ({exc})") from None


def _read_npy(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> np.ndarray:
    """The array of member ``info`` (an ``.npy`` of plain numbers, its header checked first)."""
    where = f"{path}: member {info.filename!r}"
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version not in readers or not info.filename.endswith(".npy"):
            raise ConfigError(f"{where} is not an .npy array of format version 1.0 or 2.0")
        shape, fortran, dtype = readers[version](fh)
        if dtype.kind not in "biuf":
            raise ConfigError(f"{where} holds {dtype} values; allowed: plain numbers (bool, int, float)")
        data = fh.read()
    want = math.prod(shape) * dtype.itemsize
    if len(data) != want:
        raise ConfigError(
            f"{where}: its header declares a {shape} {dtype} array of {want} bytes; it holds {len(data)}"
        )
    array = np.frombuffer(data, dtype).reshape(shape, order="F" if fortran else "C").copy()
    if dtype.kind == "f" and not np.isfinite(array).all():
        raise ConfigError(f"{where} holds non-finite values (NaN/inf; a diverged training run saves such)")
    return array


def load_policy(path: str | Path, card: dict[str, Any], device: str = "cpu") -> Any:
    """The ``MaskableActorCriticPolicy`` of model zip ``path``, rebuilt from ``card``, in eval mode.

    Reads only the zip member ``policy.pth`` and never unpickles; ``ConfigError`` naming what is
    wrong (checksum, zip, non-tensor or non-finite weights, a network that does not fit the card).
    """
    p = check_model_path(path)
    where = str(p)
    if not isinstance(card, dict):
        raise ConfigError(f"{where}: the model card must be an object, got {type(card).__name__}")
    want = card.get("weights_sha256")
    if not isinstance(want, str) or not _HEX64.match(want):
        raise ConfigError(
            f"{where}: its card has no valid weights_sha256 checksum (got {want!r}), so the weights "
            "cannot be checked; if you trust this file, stamp its card with: "
            f"python -m agents.models.files stamp {p}"
        )
    zip_want = card.get("zip_sha256")
    if zip_want is not None and zip_want != file_sha256(p):
        raise ConfigError(
            f"{where}: the zip's sha256 {file_sha256(p)} differs from its card's zip_sha256 {zip_want!r} "
            "(the file was changed or damaged after it was saved)"
        )
    weights = _read_weights(p)
    got = _sha(weights)
    if got != want:
        raise ConfigError(
            f"{where}: {WEIGHTS_MEMBER} has sha256 {got}, its card says {want} "
            "(the weights were changed or damaged after the card was written)"
        )
    spec = network_spec(card, where)
    obs_space, act_space = card_spaces(card, where)
    try:
        import torch
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ConfigError(
            "loading a trained model needs the training extras: pip install 'dice-envs[train]'"
        ) from exc
    try:
        state = torch.load(io.BytesIO(weights), map_location=device, weights_only=True)
    except Exception as exc:
        raise ConfigError(
            f"{where}: {WEIGHTS_MEMBER} is not a plain tensor file and was refused "
            f"(torch.load weights_only=True: {_load_reason(exc)[:300]})"
        ) from None
    if not isinstance(state, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        raise ConfigError(f"{where}: {WEIGHTS_MEMBER} must hold a mapping of names to tensors")
    for name, tensor in state.items():  # a diverged run saves NaN/inf: refuse it here, by name
        if (tensor.is_floating_point() or tensor.is_complex()) and not bool(torch.isfinite(tensor).all()):
            raise ConfigError(
                f"{where}: weights hold non-finite values (NaN/inf) in {name[:200]}; "
                "(a diverged training run saves such weights)"
            )
    activation = activation_class(spec["activation"])
    kwargs: dict[str, Any] = {}
    cls: Any = MaskableActorCriticPolicy
    if spec["class"] == "FarkleAfterstatePolicy":
        from agents.models.afterstate import FarkleAfterstatePolicy

        cls = FarkleAfterstatePolicy
        kwargs = {"head_width": spec["head_width"], "num_players": int(card["num_players"])}
    policy = cls(
        obs_space,
        act_space,
        lambda _: 0.0,
        net_arch=copy.deepcopy(spec["net_arch"]),
        activation_fn=activation,
        share_features_extractor=spec["share_features_extractor"],
        **kwargs,
    )
    try:
        policy.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise ConfigError(
            f"{where}: the weights do not fit the network its card describes "
            f"(net_arch {spec['net_arch']!r}, activation {spec['activation']!r}): {str(exc)[:500]}"
        ) from None
    policy.to(device)
    policy.set_training_mode(False)
    return policy


#: The general lines of torch's weights-only refusal, and its advice (load with ``weights_only=False``,
#: or allowlist the class), which is not advice for a file from a stranger; what is left names
#: what the file holds.
_TORCH_BOILERPLATE = (
    "Weights only load failed",
    "Please file an issue",
    "Check the documentation",
    "(1)",
    "(2)",
)


def _load_reason(exc: BaseException) -> str:
    """The specific line of a ``torch.load`` error, without terminal colour codes or advice.

    >>> _load_reason(RuntimeError(
    ...     "Weights only load failed. \\x1b[1mdo those steps only if you trust it\\x1b[0m.\\n"
    ...     "\\tWeightsUnpickler error: Unsupported global: GLOBAL os.system was not an allowed "
    ...     "global by default. Please use `torch.serialization.add_safe_globals([system])` ..."))
    'Unsupported global: GLOBAL os.system was not an allowed global by default.'
    """
    lines = [re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", line).strip() for line in str(exc).splitlines()]
    lines = [line.split("WeightsUnpickler error:")[-1].split(" Please use ")[0].strip() for line in lines]
    specific = [line for line in lines if line and not line.startswith(_TORCH_BOILERPLATE)]
    return (specific or [line for line in lines if line] or [type(exc).__name__])[0]


def main(argv: list[str] | None = None) -> int:
    """``python -m agents.models.files stamp MODEL.zip ...``: stamp the cards of models you trust."""
    ap = argparse.ArgumentParser(prog="python -m agents.models.files", description=main.__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    st = sub.add_parser("stamp", help="add checksums to the cards of model files you trust")
    st.add_argument("models", nargs="+", type=Path)
    args = ap.parse_args(argv)
    status = 0
    for m in args.models:
        try:
            print(f"stamped {stamp_card(m)}")
        except (ConfigError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
