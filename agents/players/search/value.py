"""A learned value of the scorecard games' turn-start states, read as the solver reads its table.

A turn starts in a state ``(filled-box mask, upper total capped at the bonus threshold,
five-of-a-kind state z)`` (:class:`agents.solver.scorecard.TurnSolver`'s states). The exact solver
fills a table ``V[mask, u, z]`` of expected points still to come by backward induction;
:class:`LearnedValues` stands in for that table with a small network: indexing it with arrays of
states (as :meth:`TurnSolver.box_values_of` does) evaluates the network on the states not seen
yet and keeps their values, so the solver's own turn search (the "widget") runs unchanged over
learned values. A filled card is worth 0 (nothing is left to score), by the rules, not by the
network.

The network (:class:`ValueNet`) is a multilayer perceptron on :func:`state_features`: the open
boxes, the capped upper total (one-hot), the five-of-a-kind state (one-hot), whether the upper
bonus is still within reach, and the share of boxes open. It is kept as plain arrays and
evaluated with numpy in float64; training (:mod:`agents.training.search.learner`) fits a torch copy of it.
Weights are saved as an ``.npz`` of plain arrays (read with ``allow_pickle=False``).

>>> from dice_envs.rules import make_rules
>>> from agents.solver.scorecard import turn_solver
>>> solver = turn_solver(make_rules("spiffel"))
>>> net = ValueNet.random(solver, hidden=(8,), seed=0)
>>> V = LearnedValues(net, solver)
>>> full = (1 << solver.k) - 1
>>> float(V[np.array([full]), np.array([63]), np.array([0])][0])   # a filled card: nothing to come
0.0
>>> V[np.array([0, 5]), np.array([0, 3])].shape                     # every z of each (mask, u)
(2, 3)
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.solver.scorecard import TurnSolver
from dice_envs.rules import ConfigError

__all__ = [
    "FEATURES",
    "VALUE_SCALE",
    "LearnedValues",
    "ValueNet",
    "feature_size",
    "npz_bytes",
    "state_features",
]

#: The name of the feature set :func:`state_features` computes (written on model cards).
FEATURES = "turn-start-v1"
#: The network predicts points / VALUE_SCALE (targets of order 1).
VALUE_SCALE = 100.0


def feature_size(solver: TurnSolver) -> int:
    """Length of a state's feature vector for the rules of ``solver``."""
    return solver.k + solver.U + solver.Z + 2


def state_features(solver: TurnSolver, mask: np.ndarray, u: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Features ``(n, feature_size)`` float64 of states ``(mask, u, z)`` (each ``(n,)`` int).

    Open boxes (1 = open), the capped upper total one-hot, the five-of-a-kind state one-hot, the
    upper bonus still within reach (the open upper boxes at five dice each would reach the
    threshold, or it is reached) and the share of boxes still open.
    """
    mask, u, z = (np.asarray(a, dtype=np.int64) for a in (mask, u, z))
    n, k = len(mask), solver.k
    out = np.zeros((n, feature_size(solver)))
    open_ = (mask[:, None] >> np.arange(k)) & 1 == 0
    out[:, :k] = open_
    rows = np.arange(n)
    out[rows, k + u] = 1.0
    out[rows, k + solver.U + z] = 1.0
    room = open_[:, solver.upper_idx] @ (5 * np.array([solver.face[b] for b in solver.upper_idx]))
    out[:, -2] = u + room >= solver.T
    out[:, -1] = open_.mean(axis=1)
    return out


@dataclass
class ValueNet:
    """A multilayer perceptron (ReLU) from :func:`state_features` to points / :data:`VALUE_SCALE`.

    ``weights[i]`` is ``(in, out)``, ``biases[i]`` ``(out,)``; the last layer has one output
    (a Farkle value net one per seat: :mod:`agents.players.search.farkle`).
    """

    weights: list[np.ndarray]
    biases: list[np.ndarray]

    @classmethod
    def random(
        cls,
        solver: TurnSolver | None,
        hidden: Sequence[int] = (256, 256),
        seed: int = 0,
        inputs: int | None = None,
        outputs: int = 1,
    ) -> ValueNet:
        """Random initial weights (He-uniform, zero biases) for the rules of ``solver``, reading
        ``inputs`` features (default: :func:`feature_size`), with ``outputs`` outputs."""
        rng = np.random.default_rng(seed)
        if inputs is None:
            assert solver is not None, "ValueNet.random needs a solver or inputs"
            inputs = feature_size(solver)
        sizes = [inputs, *[int(h) for h in hidden], outputs]
        weights = [rng.uniform(-1, 1, (a, b)) * np.sqrt(6.0 / a) for a, b in itertools.pairwise(sizes)]
        weights[-1] *= 0.1  # a small first output: values start near 0
        return cls(weights, [np.zeros(b) for b in sizes[1:]])

    @property
    def hidden(self) -> list[int]:
        """Widths of the hidden layers."""
        return [w.shape[1] for w in self.weights[:-1]]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Points ``(n,)`` of feature rows ``x`` ``(n, in)``."""
        return self.outputs(x)[:, 0] * VALUE_SCALE

    def outputs(self, x: np.ndarray) -> np.ndarray:
        """The last layer's outputs ``(n, out)`` of feature rows ``x`` ``(n, in)``."""
        h = x
        for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
            h = np.maximum(h @ w + b, 0.0)
        return h @ self.weights[-1] + self.biases[-1]

    def arrays(self) -> dict[str, np.ndarray]:
        """The weights as named arrays (what :meth:`save` writes)."""
        out = {}
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            out[f"w{i}"], out[f"b{i}"] = w, b
        return out

    @classmethod
    def from_arrays(cls, arrays: Any, where: str = "value weights", outputs: int = 1) -> ValueNet:
        """The network of named arrays ``w0, b0, w1, b1, ...`` with ``outputs`` outputs
        (``ConfigError`` if they do not chain)."""
        n = len([k for k in arrays if str(k).startswith("w")])
        try:
            weights = [np.asarray(arrays[f"w{i}"], dtype=np.float64) for i in range(n)]
            biases = [np.asarray(arrays[f"b{i}"], dtype=np.float64) for i in range(n)]
        except KeyError as exc:
            raise ConfigError(
                f"{where}: missing array {exc.args[0]} (expected w0, b0, w1, b1, ...)"
            ) from None
        for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
            ok = (
                w.ndim == 2 and b.shape == (w.shape[1],) and (i == 0 or w.shape[0] == weights[i - 1].shape[1])
            )
            if not ok:
                raise ConfigError(f"{where}: layer {i} has shapes {w.shape} / {b.shape} that do not chain")
        if not n or weights[-1].shape[1] != outputs:
            raise ConfigError(f"{where}: the last layer must have {outputs} output(s)")
        return cls(weights, biases)

    def to_bytes(self) -> bytes:
        """The ``.npz`` bytes of the weights (the caller writes them atomically)."""
        return npz_bytes(self.arrays())

    @classmethod
    def load(
        cls, path: str | Path, card: dict[str, Any] | None = None, inputs: int | None = None, outputs: int = 1
    ) -> ValueNet:
        """Read weights written from :meth:`to_bytes` (:func:`agents.models.files.read_arrays`:
        size limits checked first, plain finite numbers, nothing unpickled), checked against the
        model's ``card`` (the file's SHA-256, the hidden widths) and the feature width ``inputs``
        of the game it plays and its ``outputs``. ``ConfigError`` names the file and what is wrong."""
        from agents.models.files import read_arrays

        sha256 = None if card is None else str(card.get("weights_sha256"))
        net = cls.from_arrays(read_arrays(path, sha256), str(path), outputs)
        if card is not None:
            hidden = (card.get("value") or {}).get("hidden")
            if net.hidden != hidden:
                raise ConfigError(
                    f"{path}: the network's hidden widths {net.hidden} are not its card's {hidden!r}"
                )
        if inputs is not None and net.weights[0].shape[0] != inputs:
            raise ConfigError(
                f"{path}: the network reads {net.weights[0].shape[0]} features; "
                f"the game's turn starts have {inputs}"
            )
        return net


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An ``.npz`` of ``arrays`` whose bytes depend on the arrays only (``np.savez`` stamps the
    time of writing into each member): the same weights always have the same SHA-256."""
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, arr in arrays.items():
            with zf.open(zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0)), "w") as fh:
                np.lib.format.write_array(fh, np.asarray(arr), allow_pickle=False)
    return buf.getvalue()


class LearnedValues:
    """The value table ``V[mask, u, z]`` of a :class:`ValueNet`, filled as it is read.

    Index it as the solver indexes its table: ``V[masks, us, zs]`` with integer arrays that
    broadcast, or ``V[masks, us]`` for every five-of-a-kind state (a trailing axis of ``Z``).
    Values of states read once are kept (a dense array, NaN where not computed yet); a filled
    card is worth 0.
    """

    def __init__(self, net: ValueNet, solver: TurnSolver) -> None:
        if net.weights[0].shape[0] != feature_size(solver):
            raise ConfigError(
                f"the value network reads {net.weights[0].shape[0]} features; "
                f"{solver.rules.game} states have {feature_size(solver)}"
            )
        self.net, self.solver = net, solver
        self.full = (1 << solver.k) - 1
        self.shape = (1 << solver.k, solver.U, solver.Z)
        self._table = np.full(self.shape, np.nan)
        self._table[self.full] = 0.0

    def __getitem__(self, index: tuple[Any, ...]) -> np.ndarray:
        if len(index) == 2:
            mask, u = (np.asarray(a)[..., None] for a in index)
            z: Any = np.arange(self.solver.Z)
        else:
            mask, u, z = index
        mask, u, z = np.broadcast_arrays(np.asarray(mask), np.asarray(u), np.asarray(z))
        out = self._table[mask, u, z]
        missing = np.isnan(out)
        if missing.any():
            flat = np.ravel_multi_index((mask[missing], u[missing], z[missing]), self.shape)
            todo = np.unique(flat)
            m, uu, zz = np.unravel_index(todo, self.shape)
            self._table.flat[todo] = self.net(state_features(self.solver, m, uu, zz))
            out = self._table[mask, u, z]
        return out

    def values(self, states: np.ndarray) -> np.ndarray:
        """Values ``(n,)`` of states ``(n, 3)`` of ``(mask, u, z)``."""
        states = np.asarray(states, dtype=np.int64).reshape(-1, 3)
        return self[states[:, 0], states[:, 1], states[:, 2]]
