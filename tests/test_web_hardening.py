"""The game pad against a hostile client on this machine: requests that would stall, swell or
confuse the server, pages of other sites, and bad ``serve`` options.

Where the behaviour depends on the transport (a chunked body, one room holding up another, the
listening socket) the tests drive a real uvicorn server on 127.0.0.1, in a thread or in a
subprocess, with every wait bounded; elsewhere Starlette's TestClient.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")
pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")
httpx = pytest.importorskip("httpx", reason="the dev extra (httpx) is not installed")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402
from webpad import running_pad  # noqa: E402

from agents.solver import farkle_win  # noqa: E402
from agents.web import players  # noqa: E402
from agents.web.app import MAX_BODY, create_app  # noqa: E402
from agents.web.protocol import PadError  # noqa: E402
from agents.web.rooms import RoomManager  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
JSON = {"Content-Type": "application/json"}
BOTS = [{"kind": "agent", "spec": "heuristic"}, {"kind": "agent", "spec": "greedy"}]
FARKLE_BOTS = {"game": "farkle", "rules": {"target": 1000}, "seats": BOTS, "seed": 1}
TWO_SEATS = {"game": "spiffel", "seats": [{"kind": "person"}] * 2}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The game pad on a free loopback port, in a thread of this process (stopped afterwards)."""
    with running_pad(bot_delay=0.01) as url:
        yield url


@contextmanager
def serve_process(tmp_path: Path, *args: str) -> Iterator[str]:
    """``python -m agents.web`` in a subprocess on a free loopback port (killed afterwards)."""
    port = _free_port()
    env = {**os.environ, "DICE_ENVS_CACHE": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "agents.web", "--port", str(port), *args]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
            assert time.monotonic() < deadline, "the server did not start"
            try:
                if httpx.get(f"{url}/api/options", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        yield url
    finally:
        proc.kill()
        proc.communicate(timeout=30)


def _post(c: Any, path: str, body: Any = None, token: str | None = None) -> Any:
    headers = {**JSON, **({"X-Seat-Token": token} if token else {})}
    return c.post(path, json={} if body is None else body, headers=headers)


def _open_and_start(c: Any, body: dict[str, Any]) -> str:
    r = _post(c, "/api/rooms", body)
    assert r.status_code == 200, r.text
    assert _post(c, f"/api/rooms/{r.json()['code']}/start", token=r.json()["token"]).status_code == 200
    return str(r.json()["code"])


# ---------------------------------------------------------------------- one room must not stall the rest
def test_a_huge_win_optimal_room_is_refused_and_other_rooms_keep_playing(tmp_path: Path) -> None:
    huge = {
        "game": "farkle",
        "rules": {"target": 200_000},
        "seats": [{"kind": "agent", "spec": "win-optimal"}, {"kind": "agent", "spec": "heuristic"}],
    }
    with serve_process(tmp_path, "--bot-delay", "0.01") as url, httpx.Client(base_url=url, timeout=15) as c:
        refused = _post(c, "/api/rooms", huge)
        if refused.status_code == 200:  # let its bot start the solve, as a player would
            _post(c, f"/api/rooms/{refused.json()['code']}/start", token=refused.json()["token"])
            time.sleep(1.0)
        code = _open_and_start(c, FARKLE_BOTS)
        deadline = time.monotonic() + 30  # the bots finish a game to 1000 in a second or two
        while c.get(f"/api/rooms/{code}").json()["status"] != "over" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert c.get(f"/api/rooms/{code}").json()["status"] == "over", "the other room's bots stalled"
    assert refused.status_code == 400, refused.text
    assert "limited to targets <= 2500" in refused.json()["error"]
    assert "got 200000" in refused.json()["error"]


def test_win_optimal_limits_name_themselves_and_allow_solved_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.solver.farkle_win import solve_farkle_win
    from agents.web import limits
    from dice_envs.rules import make_rules

    rooms = RoomManager()
    for spec in ("win-optimal", "win_optimal"):
        for rules, words in [
            ({"target": 200_000}, "got 200000"),
            ({"target": 1000, "bank_minimum": 5000, "max_turns": 100}, "bank minimums <= 2000"),
        ]:
            body = {
                "game": "farkle",
                "rules": rules,
                "seats": [{"kind": "person"}, {"kind": "agent", "spec": spec}],
            }
            with pytest.raises(PadError) as err:
                rooms.create(body)
            assert err.value.status == 400 and words in err.value.message
            assert "win-optimal bots and win hints are limited to targets <= 2500" in err.value.message
    assert not rooms.rooms
    # a table already in the solver's disk cache costs no solve: it is used beyond the limit
    monkeypatch.setenv("DICE_ENVS_CACHE", str(tmp_path))
    monkeypatch.setattr(farkle_win, "_SOLUTIONS", OrderedDict())  # nothing solved in this process
    monkeypatch.setattr(limits, "MAX_WIN_TARGET", 400)
    body = {
        "game": "farkle",
        "rules": {"target": 500},
        "seats": [{"kind": "agent", "spec": "win-optimal"}] * 2,
    }
    with pytest.raises(PadError, match="limited to targets <= 400"):
        rooms.create(body)
    assert not farkle_win.is_solved(make_rules("farkle", target=500))
    solve_farkle_win(make_rules("farkle", target=500))
    assert farkle_win.is_solved(make_rules("farkle", target=500, max_turns=80))
    room, _ = rooms.create(body)
    assert room.seats[0].spec == "win-optimal"


def _in_thread(fn: Any, timeout: float) -> tuple[bool, Any]:
    """``(finished within timeout, result)`` of ``fn()`` run in a daemon thread (its error raised)."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(fn())
        except Exception as exc:  # reported to the test
            out.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    if out and isinstance(out[0], Exception):
        raise out[0]
    return (not t.is_alive()), (out[0] if out else None)


def test_rooms_open_and_hints_answer_while_a_long_solve_holds_the_compute_lock() -> None:
    app = create_app(max_rooms=50, bot_delay=0.0, compute_wait=0.5)
    with TestClient(app, headers=JSON) as c:
        hint_room = c.post("/api/rooms", json={"game": "spiffel", "seats": [{"kind": "person"}]}).json()
        c.post(f"/api/rooms/{hint_room['code']}/start", json={}, headers={"X-Seat-Token": hint_room["token"]})
        with players.COMPUTE_LOCK:  # as a legitimately long solve of one room would hold it

            def open_rooms() -> Any:
                for _ in range(40):  # rooms whose bots wait for the solver (more than a default thread pool)
                    _open_and_start(c, {"game": "spiffel", "seats": BOTS})
                time.sleep(0.3)
                return c.post("/api/rooms", json=FARKLE_BOTS)

            done, r = _in_thread(open_rooms, timeout=30)
            assert done, "opening a room waited for another room's solve"
            assert r.status_code == 200, r.text
            token = {"X-Seat-Token": hint_room["token"]}
            hint_path = f"/api/rooms/{hint_room['code']}/hint"
            done, r = _in_thread(lambda: c.post(hint_path, json={}, headers=token), 5)
            assert done, "a hint waited for another room's solve"
            assert r.status_code == 503 and "busy" in r.json()["error"], r.text
        deadline = time.monotonic() + 120  # the waiting bots' moves first, then the hint's first solve
        while (r := c.post(hint_path, json={}, headers=token)).status_code == 503:
            assert time.monotonic() < deadline, "the solver stayed busy"
        assert r.status_code == 200, r.text


# ---------------------------------------------------------------------- the body: bounded as it arrives
def test_an_oversized_chunked_body_is_refused_before_it_is_read(server: str) -> None:
    sent = 0
    total = 64 * 2**20

    def body() -> Iterator[bytes]:
        nonlocal sent
        chunk = b" " * 65536
        while sent < total:
            sent += len(chunk)
            yield chunk

    with httpx.Client(timeout=30) as c:
        r = c.post(f"{server}/api/rooms", content=body(), headers=JSON)
    assert r.status_code == 413 and f"larger than {MAX_BODY} bytes" in r.json()["error"]
    assert sent < total // 4, f"the server read {sent} bytes of a refused body"
    assert httpx.get(f"{server}/api/options", timeout=10).status_code == 200


def test_a_content_length_over_the_limit_is_refused_unread(server: str) -> None:
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(
            b"POST /api/rooms HTTP/1.1\r\nHost: " + f"{host}:{port}".encode() + b"\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{"
        )
        answer = s.recv(65536)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


# ---------------------------------------------------------------------- JSON: nesting and shapes
@pytest.fixture()
def client() -> Iterator[TestClient]:
    with TestClient(create_app(bot_delay=0.0), headers=JSON, raise_server_exceptions=False) as c:
        yield c


def test_deeply_nested_json_is_refused_with_a_400(client: TestClient) -> None:
    for raw in (
        "[" * 5000 + "]" * 5000,
        '{"a":' * 2000 + "1" + "}" * 2000,
        '{"rules": ' + "[" * 100 + "]" * 100 + "}",
    ):
        r = client.post("/api/rooms", content=raw.encode())
        assert r.status_code == 400, r.text
        assert "not valid JSON: nested too deeply" in r.json()["error"]
    r = client.post(
        "/api/rooms", content=b'{"name": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "seats": 1}'
    )
    assert r.status_code == 400 and "'seats'" in r.json()["error"]  # brackets inside a string are text


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_fields = st.sampled_from(["game", "rules", "seats", "name", "seed", "type", "hold", "take", "box", "action"])


@settings(max_examples=150)
@given(
    path=st.sampled_from(["", "/join", "/start", "/move", "/hint"]),
    body=_json | st.dictionaries(_fields, _json, max_size=5),
)
def test_json_of_any_shape_is_answered_without_a_server_error(path: str, body: Any) -> None:
    with TestClient(create_app(bot_delay=0.0), headers=JSON, raise_server_exceptions=False) as c:
        room = c.post("/api/rooms", json={"game": "farkle", "seats": [{"kind": "person"}] * 2}).json()
        c.post(f"/api/rooms/{room['code']}/join", json={})
        c.post(f"/api/rooms/{room['code']}/start", json={}, headers={"X-Seat-Token": room["token"]})
        target = "/api/rooms" if not path else f"/api/rooms/{room['code']}{path}"
        headers = {"X-Seat-Token": room["token"]}
        r = c.post(target, content=json.dumps(body).encode(), headers=headers)
        assert r.status_code < 500, (body, r.text)
        if r.status_code >= 400:
            assert r.json()["error"]
        if not isinstance(body, dict):
            assert r.status_code == 400 and "must be a JSON object" in r.json()["error"]


# ---------------------------------------------------------------------- other sites' pages (CSRF)
def test_state_changes_from_another_origin_are_refused(client: TestClient) -> None:
    code = client.post("/api/rooms", json=TWO_SEATS).json()["code"]
    before = client.get(f"/api/rooms/{code}").json()
    for origin in ("http://evil.example", "null", "http://testserver.evil.example", "https://testserver"):
        for path in ("/api/rooms", f"/api/rooms/{code}/join", f"/api/rooms/{code}/start"):
            r = client.post(path, json=FARKLE_BOTS, headers={"Origin": origin})
            assert r.status_code == 403, (origin, path, r.text)
            assert f"origin {origin!r}" in r.json()["error"] and "http://testserver" in r.json()["error"]
    assert client.get(f"/api/rooms/{code}").json() == before and len(client.app.state.manager.rooms) == 1
    r = client.post("/api/rooms", json=FARKLE_BOTS, headers={"Origin": "http://testserver"})
    assert r.status_code == 200, r.text  # the pad's own page


def test_state_changes_need_a_json_content_type(client: TestClient) -> None:
    code = client.post("/api/rooms", json=TWO_SEATS).json()["code"]
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""):
        for path in ("/api/rooms", f"/api/rooms/{code}/join"):
            r = client.post(
                path,
                content=b'{"game": "spiffel", "seats": [{"kind": "person"}]}',
                headers={"Content-Type": ctype},
            )
            assert r.status_code == 415, (ctype, r.text)
            assert "Content-Type: application/json" in r.json()["error"]
    assert len(client.app.state.manager.rooms) == 1
    r = client.post(
        f"/api/rooms/{code}/join", json={}, headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert r.status_code == 200, r.text


def test_websockets_from_another_origin_are_refused(client: TestClient) -> None:
    code = client.post("/api/rooms", json={"game": "spiffel", "seats": [{"kind": "person"}]}).json()["code"]
    evil = {"Origin": "http://evil.example"}
    with (
        pytest.raises(WebSocketDisconnect) as err,
        client.websocket_connect(f"/api/rooms/{code}/ws", headers=evil),
    ):
        pass
    assert err.value.code == 4403
    with client.websocket_connect(f"/api/rooms/{code}/ws", headers={"Origin": "http://testserver"}) as ws:
        assert ws.receive_json()["code"] == code


def test_only_the_servers_own_host_names_are_answered() -> None:
    app = create_app(bot_delay=0.0, allowed_hosts=["127.0.0.1", "localhost"])
    with TestClient(app, base_url="http://localhost:8000", headers=JSON) as c:
        assert c.get("/api/options").status_code == 200
        own = {"Origin": "http://localhost:8000"}
        assert c.post("/api/rooms", json=FARKLE_BOTS, headers=own).status_code == 200
        rebound = {"Host": "attacker.example:8000", "Origin": "http://attacker.example:8000"}
        for r in (
            c.get("/api/options", headers=rebound),
            c.post("/api/rooms", json=FARKLE_BOTS, headers=rebound),
        ):
            assert r.status_code == 400 and "attacker.example" in r.json()["error"]
        assert len(app.state.manager.rooms) == 1


# ---------------------------------------------------------------------- dice-envs serve
def _serve(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "agents.web", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-5", "0.5", "1e300", "soon"])
def test_serve_refuses_an_idle_ttl_that_is_not_a_sensible_number_of_seconds(value: str) -> None:
    with socket.socket() as busy:  # should the option pass, the server stops on the busy port
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        r = _serve(f"--idle-ttl={value}", "--port", str(busy.getsockname()[1]))
    assert r.returncode == 2, r.stderr
    assert "argument --idle-ttl: must be a number of seconds from 1 to 604800" in r.stderr
    assert "http://" not in r.stdout


def test_serve_on_a_busy_port_says_so_in_one_line_and_exits_1() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = _serve("--port", str(port))
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "http://" not in r.stdout
    assert r.stderr.strip() == (
        f"error: cannot listen on 127.0.0.1:{port}: address already in use (choose another --port)"
    )


def test_serve_on_port_0_prints_the_port_it_listens_on(tmp_path: Path) -> None:
    env = {**os.environ, "DICE_ENVS_CACHE": str(tmp_path)}
    cmd = [sys.executable, "-m", "agents.web", "--port", "0"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        done, line = _in_thread(proc.stdout.readline, timeout=120)  # type: ignore[union-attr]
        assert done and line.startswith("dice-envs game pad: http://127.0.0.1:"), line
        url = line.split()[3].rstrip("/")
        assert not url.endswith(":0")
        assert httpx.get(f"{url}/api/options", timeout=10).status_code == 200
    finally:
        proc.kill()
        proc.communicate(timeout=30)
