"""Shared pytest configuration: the hypothesis profile, one solver cache per session, SB3's log
folder and Minari's datasets kept out of the system temp folder and the user's, and the
``one_torch_thread`` fixture of the training tests.

Hypothesis: no per-example deadline (the CI machines are shared and timing is noisy); under
``CI=true`` examples are derandomized so a CI run is reproducible.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

settings.register_profile("dice-envs", deadline=None, derandomize=bool(os.environ.get("CI")))
settings.load_profile("dice-envs")


@pytest.fixture(scope="session", autouse=True)
def solver_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One exact-solver cache for the whole session, shared by all xdist workers.

    A user's ``DICE_ENVS_CACHE`` is respected; otherwise the suite solves into a fresh temporary
    folder (never the user's cache), once per session: the solver's file lock makes parallel
    workers wait for the first one.
    """
    if os.environ.get("DICE_ENVS_CACHE"):
        yield os.environ["DICE_ENVS_CACHE"]
        return
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    path = root / "dice-envs-solver-cache"
    path.mkdir(exist_ok=True)
    os.environ["DICE_ENVS_CACHE"] = str(path)
    yield str(path)
    os.environ.pop("DICE_ENVS_CACHE", None)


@pytest.fixture(scope="session", autouse=True)
def sb3_log_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """SB3's ``learn()`` without a logger makes an empty ``SB3-<date>`` folder in the system temp
    folder on every call; ``SB3_LOGDIR`` points it into the session's temporary folder instead."""
    if os.environ.get("SB3_LOGDIR"):
        yield
        return
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3-logs"))
    yield
    os.environ.pop("SB3_LOGDIR", None)


@pytest.fixture(scope="session", autouse=True)
def minari_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Minari datasets the suite makes (dice-envs datasets, the docs) go to a temporary folder."""
    if os.environ.get("MINARI_DATASETS_PATH"):
        yield
        return
    os.environ["MINARI_DATASETS_PATH"] = str(tmp_path_factory.mktemp("minari"))
    yield
    os.environ.pop("MINARI_DATASETS_PATH", None)


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """Torch on one thread for the test (tiny nets: one thread is fastest, and CI machines are shared).

    Used by the training test modules (``pytestmark = pytest.mark.usefixtures("one_torch_thread")``);
    torch is imported only by the tests that ask for it.
    """
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
