"""The game pad shared fairly: one client's solves neither stall other rooms' bots nor pile up,
and the solver's tables do not outlive the rooms that use them.

The timing test drives a real uvicorn server on 127.0.0.1 (in a thread of this process) with a
fresh solver cache, so every win-probability table asked for is a real solve of a second or so.
"""

from __future__ import annotations

import gc
import itertools
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")
pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")
httpx = pytest.importorskip("httpx", reason="the dev extra (httpx) is not installed")
pytest.importorskip("numba", reason="the solver extra (numba) is not installed")

from starlette.testclient import TestClient  # noqa: E402
from webpad import running_pad  # noqa: E402

from agents.solver import farkle_win, scorecard  # noqa: E402
from agents.web.app import create_app  # noqa: E402
from dice_envs.rules import make_rules  # noqa: E402

JSON = {"Content-Type": "application/json"}
BOT_DELAY = 0.25  # seconds between a bot's moves: the gap between moves is about this, unloaded
WIN_ROOMS = [  # 50 distinct small win-probability tables, each a real solve of about a second
    {"target": target, "bank_minimum": bank_minimum}
    for target in (800, 850, 900, 950, 1000)
    for bank_minimum in range(0, 500, 50)
]
WIN_SEATS = [{"kind": "agent", "spec": "win-optimal"}, {"kind": "agent", "spec": "heuristic"}]


class MoveWatch:
    """Polls a room and records when each of its new versions (one per move) is first seen."""

    def __init__(self, url: str, code: str) -> None:
        self.url, self.code = url, code
        self.seen: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        version = None
        with httpx.Client(timeout=10) as c:
            while not self.stop.is_set():
                v = c.get(f"{self.url}/api/rooms/{self.code}").json()["version"]
                if v != version:
                    version = v
                    self.seen.append(time.monotonic())
                time.sleep(0.02)

    def longest_wait(self, start: float, end: float) -> float:
        """The longest time in ``[start, end]`` without a move seen (the open end included)."""
        times = [start, *(t for t in self.seen if start < t < end), end]
        return max(b - a for a, b in itertools.pairwise(times))

    def gaps(self, start: float, end: float) -> list[float]:
        times = [t for t in self.seen if start <= t <= end]
        return [b - a for a, b in itertools.pairwise(times)]


def _post(c: Any, path: str, body: Any = None, token: str | None = None) -> Any:
    headers = {**JSON, **({"X-Seat-Token": token} if token else {})}
    return c.post(path, json={} if body is None else body, headers=headers)


@pytest.fixture(scope="module")
def flood(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One client starts 50 rooms whose win-optimal bots each need a table solved, while the bots
    of another room play on; what the client was answered and how the other room's bots moved."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DICE_ENVS_CACHE", str(tmp_path_factory.mktemp("cache")))  # nothing solved yet
        mp.setattr(farkle_win, "_SOLUTIONS", OrderedDict())
        with (
            running_pad(bot_delay=BOT_DELAY, max_rooms=60) as url,
            httpx.Client(base_url=url, timeout=30) as c,
        ):
            other = _post(
                c,
                "/api/rooms",
                {
                    "game": "farkle",
                    "rules": {"target": 10_000},  # a long game: it is still on when the test ends
                    "seats": [{"kind": "agent", "spec": "heuristic"}, {"kind": "agent", "spec": "greedy"}],
                    "seed": 5,
                },
            ).json()
            assert _post(c, f"/api/rooms/{other['code']}/start", token=other["token"]).status_code == 200
            watch = MoveWatch(url, other["code"])
            time.sleep(0.5)
            base_start = time.monotonic()
            time.sleep(1.5)
            base_end = time.monotonic()

            def open_win_room(rules: dict[str, int]) -> Any:
                return _post(c, "/api/rooms", {"game": "farkle", "rules": rules, "seats": WIN_SEATS})

            def start(room: dict[str, Any]) -> Any:
                return _post(c, f"/api/rooms/{room['code']}/start", token=room["token"])

            with ThreadPoolExecutor(10) as pool:  # all at once, as a client flooding the pad would
                opened = list(pool.map(open_win_room, WIN_ROOMS))
                assert all(r.status_code == 200 for r in opened), [r.text for r in opened]
                flood_start = time.monotonic()
                answers = list(pool.map(start, [r.json() for r in opened]))
            time.sleep(2.5)
            flood_end = time.monotonic()
            watch.stop.set()
            watch.thread.join(10)
            status = c.get(f"/api/rooms/{other['code']}").json()["status"]
            yield {
                "watch": watch,
                "baseline": (base_start, base_end),
                "flood": (flood_start, flood_end),
                "answers": [(a.status_code, a.json()) for a in answers],
                "other_status": status,
            }


def test_another_rooms_bot_moves_within_a_second_while_a_client_queues_50_win_solves(
    flood: dict[str, Any],
) -> None:
    watch = flood["watch"]
    baseline = watch.gaps(*flood["baseline"])
    assert len(baseline) >= 4, f"the bots hardly moved before any solve: {baseline}"
    assert np.median(baseline) < 0.6, f"the bots move every {BOT_DELAY} s unloaded, measured {baseline}"
    assert flood["other_status"] == "playing"
    waited = watch.longest_wait(*flood["flood"])
    print(
        f"bot move gaps: before the solves median {np.median(baseline):.3f} s, max {max(baseline):.3f} s; "
        f"during them longest wait {waited:.3f} s"
    )
    assert waited <= 1.0, (
        f"the other room's bot waited {waited:.2f} s for a move while the solves ran "
        f"(median gap {np.median(baseline):.2f} s before them)"
    )


def test_the_clients_solves_beyond_its_share_are_answered_busy(flood: dict[str, Any]) -> None:
    answers = flood["answers"]
    accepted = [a for a in answers if a[0] == 200]
    busy = [a for a in answers if a[0] == 429]
    assert len(accepted) + len(busy) == len(answers), [a for a in answers if a[0] not in (200, 429)]
    assert 2 <= len(accepted) <= 4, f"{len(accepted)} of 50 solves were queued"
    for _, body in busy:
        assert "the solver is busy" in body["error"] and "try again" in body["error"], body


def test_solve_queue_shares_a_solve_and_counts_each_client_apart() -> None:
    from agents.web.limits import SolveQueue
    from agents.web.protocol import PadError

    queue = SolveQueue(per_client=2)
    gate = threading.Event()
    try:
        first = queue.submit("a", "t1", gate.wait)
        second = queue.submit("a", "t2", lambda: 2)
        assert queue.submit("a", "t1", lambda: 0) is first  # the same table: shared, no new share
        with pytest.raises(PadError) as err:
            queue.submit("a", "t3", lambda: 3)
        assert err.value.status == 429 and "try again" in err.value.message
        other = queue.submit("b", "t3", lambda: 3)  # another client has its own share
        gate.set()
        assert (first.result(10), second.result(10), other.result(10)) == (True, 2, 3)
        deadline = time.monotonic() + 10
        while True:  # the share frees once the solves are done
            try:
                assert queue.submit("a", "t4", lambda: 4).result(10) == 4
                break
            except PadError:
                assert time.monotonic() < deadline, "the client's share stayed full"
                time.sleep(0.01)
    finally:
        gate.set()
        queue.shutdown()


# ---------------------------------------------------------------------- the solver's tables
@pytest.fixture()
def quick_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scorecard tables made at once (zeros of the right shape, nothing on disk) and an empty memo:
    the memo's keeping and freeing are under test here, not the solver's numbers."""
    monkeypatch.setattr(scorecard, "_solve", lambda rules: np.zeros(scorecard._table_shape(rules)))
    monkeypatch.setattr(scorecard, "cached_array", lambda key, compute, meta, **kw: (compute(), False))
    monkeypatch.setattr(scorecard, "_SOLUTIONS", OrderedDict())


def _memo_bytes() -> int:
    return sum(s.values.nbytes for s in scorecard._SOLUTIONS.values())


def test_the_scorecard_memo_stays_within_its_bound_over_many_rule_sets(quick_tables: None) -> None:
    bound = getattr(scorecard, "MEMO_BYTES", 128 * 2**20)
    for bonus in range(30):  # 30 rule sets of 12 MB tables each
        rules = make_rules("spiffel", upper_bonus=bonus)
        sol = scorecard.solve_scorecard(rules)
        assert scorecard.solve_scorecard(rules) is sol  # the newest one is held
        assert _memo_bytes() <= bound, f"{len(scorecard._SOLUTIONS)} tables, {_memo_bytes() / 2**20:.0f} MiB"
    assert len(scorecard._SOLUTIONS) >= 2
    recent = make_rules("spiffel", upper_bonus=28)
    scorecard.solve_scorecard(recent)  # a use makes a table the most recent
    scorecard.solve_scorecard(make_rules("spiffel", upper_bonus=99))
    assert recent in scorecard._SOLUTIONS


def test_the_pad_frees_the_tables_of_closed_rooms(quick_tables: None) -> None:
    rules = {"upper_bonus": 7}
    room = {"game": "spiffel", "rules": rules, "seats": [{"kind": "person"}], "seed": 1}
    key = make_rules("spiffel", **rules)
    with TestClient(create_app(bot_delay=0.0, idle_ttl=5.0), headers=JSON) as c:
        manager = c.app.state.manager
        opened = []
        for _ in range(3):
            r = _post(c, "/api/rooms", room).json()
            assert _post(c, f"/api/rooms/{r['code']}/start", token=r["token"]).status_code == 200
            hint = _post(c, f"/api/rooms/{r['code']}/hint", token=r["token"])
            assert hint.status_code == 200, hint.text
            opened.append(r)
        assert list(scorecard._SOLUTIONS) == [key], "rooms of the same rules share one table"
        table = weakref.ref(scorecard._SOLUTIONS[key])
        # the first room's game ends: the others still use the table
        code, token = opened[0]["code"], opened[0]["token"]
        for box in make_rules("spiffel").categories:
            assert (
                _post(c, f"/api/rooms/{code}/move", {"type": "score", "box": box}, token).status_code == 200
            )
        assert c.get(f"/api/rooms/{code}").json()["status"] == "over"
        gc.collect()
        assert table() is not None and key in scorecard._SOLUTIONS
        # the other two rooms are dropped when idle: nothing holds the table any more
        for r in opened[1:]:
            manager.get(r["code"]).last_active -= 60
        manager.expire()
        assert len(manager.rooms) == 1
        gc.collect()
        assert key not in scorecard._SOLUTIONS
        assert table() is None, f"the table of closed rooms is still held by {gc.get_referrers(table())}"
