"""The game pad's server without a browser: every refused request is refused clearly and changes nothing.

Drives the real ASGI app through Starlette's TestClient (no mocks): rooms, seat tokens, moves
checked by the rules engine, live updates over the WebSocket, bots, hints and the limits.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")
pytest.importorskip("httpx", reason="the dev extra (httpx, for starlette's TestClient) is not installed")

from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from agents import load
from agents.web import main
from agents.web.app import MAX_BODY, create_app
from agents.web.hints import hint
from agents.web.players import parse_models
from agents.web.protocol import PadError
from agents.web.rooms import RoomManager
from dice_envs.encoding import encode

PRETRAINED = Path(__file__).resolve().parents[1] / "agents" / "pretrained"
#: Every state-changing request of the pad's page says it sends JSON (agents.web.guard).
JSON = {"Content-Type": "application/json"}
TWO_PEOPLE = {"game": "spiffel", "seats": [{"kind": "person"}, {"kind": "person"}], "seed": 5, "name": "Ann"}


@pytest.fixture()
def client() -> Any:
    with TestClient(create_app(max_rooms=3, max_connections=2, bot_delay=0.0), headers=JSON) as c:
        yield c


def _open(client: TestClient, body: dict[str, Any]) -> tuple[str, str]:
    r = client.post("/api/rooms", json=body)
    assert r.status_code == 200, r.text
    return r.json()["code"], r.json()["token"]


def _started_pair(client: TestClient) -> tuple[str, str, str]:
    """A started two-person Spiffel room: ``(code, token of seat 0, token of seat 1)``."""
    code, t0 = _open(client, TWO_PEOPLE)
    r = client.post(f"/api/rooms/{code}/join", json={"name": "Bob"})
    assert r.status_code == 200 and r.json()["seat"] == 1
    t1 = r.json()["token"]
    assert client.post(f"/api/rooms/{code}/start", headers={"X-Seat-Token": t0}).status_code == 200
    return code, t0, t1


def _state(client: TestClient, code: str) -> dict[str, Any]:
    r = client.get(f"/api/rooms/{code}")
    assert r.status_code == 200
    return r.json()


def _refused(
    client: TestClient, code: str, path: str, status: int, words: str, token: str | None = None, **kw: Any
) -> None:
    """POST is refused with ``status`` and a message holding ``words``; the room is unchanged."""
    before = _state(client, code)
    headers = {"X-Seat-Token": token} if token is not None else {}
    r = client.post(f"/api/rooms/{code}/{path}", headers=headers, **kw)
    assert r.status_code == status, r.text
    assert words in r.json()["error"]
    assert _state(client, code) == before


# ---------------------------------------------------------------------- refusals, nothing changed
def test_forged_token_is_refused(client: TestClient) -> None:
    code, t0, _ = _started_pair(client)
    for token in ("forged", t0[:-1] + ("A" if t0[-1] != "A" else "B"), ""):
        _refused(client, code, "move", 403, "holds no seat", token, json={"type": "score", "box": "chance"})
    _refused(client, code, "move", 403, "holds no seat", None, json={"type": "score", "box": "chance"})
    _refused(client, code, "hint", 403, "holds no seat", "forged")


def test_another_seats_move_and_another_rooms_token_are_refused(client: TestClient) -> None:
    code, t0, t1 = _started_pair(client)
    assert _state(client, code)["current"] == 0
    _refused(
        client,
        code,
        "move",
        409,
        "it is Ann's turn (seat 1), not yours",
        t1,
        json={"type": "score", "box": "ones"},
    )
    _refused(client, code, "hint", 409, "your own turn", t1)
    other, other_token = _open(client, {"game": "spiffel", "seats": [{"kind": "person"}]})
    _refused(client, code, "move", 403, "holds no seat", other_token, json={"type": "score", "box": "ones"})
    _refused(client, other, "start", 403, "only the opener", t0)
    # the seat-1 player cannot start the game either
    code2, _ = _open(client, TWO_PEOPLE)
    t_b = client.post(f"/api/rooms/{code2}/join", json={}).json()["token"]
    _refused(client, code2, "start", 403, "only the opener", t_b)


def test_move_after_the_game_ended_is_refused(client: TestClient) -> None:
    code, token = _open(client, {"game": "spiffel", "seats": [{"kind": "person"}], "seed": 2})
    assert client.post(f"/api/rooms/{code}/start", headers={"X-Seat-Token": token}).status_code == 200
    for _ in range(13):
        view = _state(client, code)
        box = next(
            c["name"]
            for c, ok in zip(view["scorecard"]["categories"], view["scorecard"]["now"]["legal"], strict=True)
            if ok
        )
        assert (
            client.post(
                f"/api/rooms/{code}/move", headers={"X-Seat-Token": token}, json={"type": "score", "box": box}
            ).status_code
            == 200
        )
    view = _state(client, code)
    assert view["status"] == "over" and view["winners"] == [0]
    assert view["totals"] == [view["scorecard"]["cards"][0]["total"]]
    assert "Grand Total" in view["log"][-1]["text"]
    _refused(client, code, "move", 409, "the game is over", token, json={"type": "score", "box": "chance"})
    _refused(client, code, "hint", 409, "is over", token)


def test_malformed_json_and_bad_bodies_are_refused(client: TestClient) -> None:
    code, t0, _ = _started_pair(client)
    move = "move"
    _refused(client, code, move, 400, "not valid JSON", t0, content=b"{type: score")
    _refused(client, code, move, 400, "must be a JSON object", t0, content=b"[1, 2]")
    _refused(client, code, move, 400, "unknown move type", t0, json={"type": "cheat"})
    _refused(client, code, move, 400, "unknown box 'bogus'", t0, json={"type": "score", "box": "bogus"})
    _refused(client, code, move, 400, "distinct die positions", t0, json={"type": "roll", "hold": [0, 0]})
    _refused(client, code, move, 400, "list of die positions", t0, json={"type": "roll", "hold": "01"})
    _refused(client, code, move, 400, "every die is held", t0, json={"type": "roll", "hold": [0, 1, 2, 3, 4]})
    _refused(client, code, move, 400, "integer action index", t0, json={"action": "7"})
    _refused(client, code, move, 400, "illegal move", t0, json={"action": 0})
    _refused(client, code, move, 413, "larger than", t0, content=b"{" + b" " * MAX_BODY + b"}")
    r = client.post("/api/rooms", content=b"not json")
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]


def test_illegal_moves_get_the_engines_message_and_change_nothing(client: TestClient) -> None:
    code, t0, t1 = _started_pair(client)
    h = {"X-Seat-Token": t0}
    assert (
        client.post(f"/api/rooms/{code}/move", headers=h, json={"type": "score", "box": "chance"}).status_code
        == 200
    )
    hb = {"X-Seat-Token": t1}
    assert (
        client.post(
            f"/api/rooms/{code}/move", headers=hb, json={"type": "score", "box": "chance"}
        ).status_code
        == 200
    )
    # Ann's chance box is filled: the engine refuses, names the legal actions, nothing changes
    _refused(client, code, "move", 400, "legal actions", t0, json={"type": "score", "box": "chance"})
    for _ in range(2):
        assert (
            client.post(f"/api/rooms/{code}/move", headers=h, json={"type": "roll", "hold": []}).status_code
            == 200
        )
    _refused(
        client, code, "move", 400, "illegal move", t0, json={"type": "roll", "hold": [0]}
    )  # no throws left


def test_farkle_moves_are_checked_by_the_engine(client: TestClient) -> None:
    body = {"game": "farkle", "rules": {"target": 3000}, "seats": [{"kind": "person"}], "seed": 11}
    code, token = _open(client, body)
    client.post(f"/api/rooms/{code}/start", headers={"X-Seat-Token": token})
    view = _state(client, code)
    f = view["farkle"]
    assert f["turn_total"] == 0 and f["selections"]
    # every selection the page is offered is legal in the engine; a non-scoring one is refused
    scoring = {tuple(s["faces"]) for s in f["selections"]}
    dice = f["dice"]
    bad = next(
        [i] for i, d in enumerate(dice) if (d,) not in scoring
    )  # a single die that scores nothing (2, 3, 4 or 6)
    _refused(client, code, "move", 400, "illegal move", token, json={"type": "roll", "take": bad})
    _refused(client, code, "move", 400, "select the scoring dice", token, json={"type": "bank", "take": []})
    small = min(f["selections"], key=lambda s: s["points"])
    assert not small["bank"]  # nothing banks from a zero turn total below 350 with one 1 or 5
    take = [dice.index(small["faces"][0])]
    _refused(client, code, "move", 400, "illegal move", token, json={"type": "bank", "take": take})
    r = client.post(
        f"/api/rooms/{code}/move", headers={"X-Seat-Token": token}, json={"type": "roll", "take": take}
    )
    assert r.status_code == 200
    assert any("sets aside" in e["text"] for e in r.json()["log"])


def test_unknown_room_is_refused(client: TestClient) -> None:
    for method, path in [("get", "/api/rooms/NOSUCH"), ("post", "/api/rooms/NOSUCH/join"),
                         ("post", "/api/rooms/NOSUCH/start"), ("post", "/api/rooms/NOSUCH/move"),
                         ("post", "/api/rooms/NOSUCH/hint")]:  # fmt: skip
        r = getattr(client, method)(path)
        assert r.status_code == 404 and "no room 'NOSUCH'" in r.json()["error"]
    with client.websocket_connect("/api/rooms/NOSUCH/ws") as ws:
        assert "no room" in ws.receive_json()["error"]


def test_too_many_rooms_are_refused(client: TestClient) -> None:
    codes = [_open(client, {"game": "farkle", "seats": [{"kind": "person"}]})[0] for _ in range(3)]
    before = [_state(client, c) for c in codes]
    r = client.post("/api/rooms", json={"game": "farkle", "seats": [{"kind": "person"}]})
    assert r.status_code == 503 and "maximum of 3 rooms" in r.json()["error"]
    assert [_state(client, c) for c in codes] == before
    assert len(client.app.state.manager.rooms) == 3


def test_too_many_connections_are_refused(client: TestClient) -> None:
    code, _ = _open(client, TWO_PEOPLE)
    with (
        client.websocket_connect(f"/api/rooms/{code}/ws") as a,
        client.websocket_connect(f"/api/rooms/{code}/ws") as b,
    ):
        assert a.receive_json()["code"] == code and b.receive_json()["code"] == code
        with client.websocket_connect(f"/api/rooms/{code}/ws") as c:
            assert "maximum of 2 connections" in c.receive_json()["error"]


def test_bad_room_requests_are_refused(client: TestClient) -> None:
    cases = [
        ({"game": "chess", "seats": [{"kind": "person"}]}, "unknown game 'chess'"),
        ({"game": "spiffel", "rules": {"upper_bonus": -1}, "seats": [{"kind": "person"}]}, "'upper_bonus'"),
        (
            {"game": "spiffel", "rules": {"bogus": 1}, "seats": [{"kind": "person"}]},
            "unknown rule parameter 'bogus'",
        ),
        ({"game": "spiffel", "seats": []}, "list of 1 to 8 seats"),
        ({"game": "spiffel", "seats": [{"kind": "person"}] * 9}, "list of 1 to 8 seats"),
        ({"game": "spiffel", "seats": [{"kind": "robot"}]}, "seat 1 must be"),
        (
            {"game": "spiffel", "seats": [{"kind": "agent", "spec": "max-expected"}]},
            "not available for spiffel",
        ),
        ({"game": "spiffel", "seats": [{"kind": "person"}], "admin": True}, "unknown fields ['admin']"),
        ({"game": "spiffel", "seats": [{"kind": "person"}], "seed": -1}, "'seed' must be"),
    ]
    for body, words in cases:
        r = client.post("/api/rooms", json=body)
        assert r.status_code == 400 and words in r.json()["error"], (body, r.text)
    assert not client.app.state.manager.rooms


def test_no_disk_path_is_reachable(client: TestClient, tmp_path: Path) -> None:
    model = str(PRETRAINED / "farkle.zip")
    for spec in [
        model,
        "agents/pretrained/farkle.zip",
        "pretrained:../pretrained/farkle",
        "../x",
        "human",
        "C:\\x",
    ]:
        r = client.post(
            "/api/rooms",
            json={"game": "farkle", "seats": [{"kind": "person"}, {"kind": "agent", "spec": spec}]},
        )
        assert r.status_code == 400 and "not allowed" in r.json()["error"], (spec, r.text)
    assert not client.app.state.manager.rooms
    for path in [
        "/static/../pyproject.toml",
        "/static/%2e%2e%2fpyproject.toml",
        "/static/index.html",
        "/static/x",
    ]:
        assert client.get(path).status_code == 404, path
    assert client.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    page = client.get("/")
    assert page.status_code == 200 and "Join Game" in page.text and "Start Game" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]


def test_models_only_from_paths_given_at_startup(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--model mine: model file not found"):
        parse_models([f"mine={tmp_path / 'missing.zip'}"])
    # a file that is not a usable model stops the server at start-up, not when a room opens it
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    (tmp_path / "junk.json").write_bytes((PRETRAINED / "farkle.json").read_bytes())
    with pytest.raises(ValueError, match=r"--model junk: .*junk\.zip: the zip.s sha256"):
        parse_models([f"junk={tmp_path / 'junk.zip'}"])
    with pytest.raises(ValueError, match=r"--model dir: a model file must be a \.zip"):
        parse_models([f"dir={tmp_path}"])
    with pytest.raises(ValueError, match="NAME=PATH"):
        parse_models(["../x=y"])
    models = parse_models([f"mybot={PRETRAINED / 'farkle.zip'}"])
    with TestClient(create_app(bot_delay=0.0, models=models), headers=JSON) as c:
        assert "mybot" in c.get("/api/options").json()["games"]["farkle"]["agents"]
        r = c.post(
            "/api/rooms",
            json={"game": "farkle", "seats": [{"kind": "person"}, {"kind": "agent", "spec": "mybot"}]},
        )
        assert r.status_code == 200, r.text
        assert r.json()["room"]["seats"][1]["spec"] == "mybot"


def test_planner_bots_over_shipped_and_server_models(tmp_path: Path) -> None:
    models = parse_models(
        [f"mine={PRETRAINED / 'farkle-scratch.zip'}", f"spiffy={PRETRAINED / 'spiffel.zip'}"]
    )
    with TestClient(create_app(bot_delay=0.0, models=models), headers=JSON) as c:
        games = c.get("/api/options").json()["games"]
        farkle, spiffel = games["farkle"]["agents"], games["spiffel"]["agents"]
        assert {"planner:pretrained:farkle-scratch", "planner:pretrained:farkle", "planner:mine"} <= set(
            farkle
        )
        assert "planner:spiffy" not in farkle and not any(a.startswith("planner:") for a in spiffel)
        assert "pretrained:farkle-scratch" in farkle and "pretrained:farkle-scratch" not in spiffel
        seats = [
            {"kind": "agent", "spec": "planner:pretrained:farkle-scratch"},
            {"kind": "agent", "spec": "planner:mine"},
        ]
        body = {"game": "farkle", "seed": 4, "seats": seats}  # the rules the model was trained for
        code, watcher = _open(c, body)
        assert [s["spec"] for s in _state(c, code)["seats"]] == [s["spec"] for s in seats]
        c.post(f"/api/rooms/{code}/start", headers={"X-Seat-Token": watcher})
        deadline = time.monotonic() + 120
        while _state(c, code)["status"] != "over":
            assert time.monotonic() < deadline, "the planners did not finish"
            time.sleep(0.05)
        assert max(_state(c, code)["totals"]) >= 10000
        refused = {
            "planner:../x": "not allowed",
            f"planner:{PRETRAINED / 'farkle.zip'}": "not allowed",
            "planner:random": "not allowed",
            "planner:spiffy": "spiffel",
        }
        for spec, why in refused.items():
            r = c.post(
                "/api/rooms",
                json={"game": "farkle", "seats": [{"kind": "person"}, {"kind": "agent", "spec": spec}]},
            )
            assert r.status_code == 400 and why in r.json()["error"], (spec, r.text)
        three = [{"kind": "person"}, {"kind": "person"}, {"kind": "agent", "spec": "planner:mine"}]
        r = c.post("/api/rooms", json={"game": "farkle", "seats": three})
        assert r.status_code == 400 and "two-player" in r.json()["error"], r.text
        r = c.post(
            "/api/rooms", json={"game": "spiffel", "seats": [{"kind": "agent", "spec": "planner:mine"}]}
        )
        assert r.status_code == 400 and "farkle" in r.json()["error"], r.text
        assert len(c.app.state.manager.rooms) == 1  # only the planners' room was opened


# ---------------------------------------------------------------------- seats, start, live updates
def test_join_start_and_live_updates_reach_every_connection(client: TestClient) -> None:
    code, t0 = _open(client, TWO_PEOPLE)
    _refused(client, code, "start", 409, "still free", t0)
    with (
        client.websocket_connect(f"/api/rooms/{code}/ws") as a,
        client.websocket_connect(f"/api/rooms/{code}/ws") as b,
    ):
        assert a.receive_json()["status"] == "waiting" and b.receive_json()["status"] == "waiting"
        t1 = client.post(f"/api/rooms/{code}/join", json={"name": "  Bob\n <b>x</b> "}).json()["token"]
        for ws in (a, b):
            seats = ws.receive_json()["seats"]
            assert seats[1]["taken"] and seats[1]["name"] == "Bob <b>x</b>"  # names are text, shown as text
        assert t1 != t0
        _refused(client, code, "join", 409, "no free seat")
        client.post(f"/api/rooms/{code}/start", headers={"X-Seat-Token": t0})
        assert a.receive_json()["status"] == "playing" and b.receive_json()["status"] == "playing"
        client.post(
            f"/api/rooms/{code}/move", headers={"X-Seat-Token": t0}, json={"type": "score", "box": "chance"}
        )
        for ws in (a, b):
            view = ws.receive_json()
            assert view["current"] == 1 and view["scorecard"]["cards"][0]["boxes"][-1] is not None
        assert all("token" not in json.dumps(s) for s in view["seats"])
    _refused(client, code, "join", 409, "has started")
    _refused(client, code, "start", 409, "already started", t0)


def test_bots_move_by_themselves_to_the_end(client: TestClient) -> None:
    bots = [{"kind": "agent", "spec": "max-expected"}, {"kind": "agent", "spec": "threshold:400"}]
    body = {"game": "farkle", "rules": {"target": 1000}, "seed": 3, "seats": bots}
    code, watcher = _open(client, body)
    assert _state(client, code)["seats"][0]["kind"] == "agent"
    _refused(client, code, "move", 403, "holds no seat", watcher, json={"type": "roll", "take": [0]})
    client.post(f"/api/rooms/{code}/start", headers={"X-Seat-Token": watcher})
    deadline = time.monotonic() + 60
    while _state(client, code)["status"] != "over":
        assert time.monotonic() < deadline, "the bots did not finish"
        time.sleep(0.05)
    view = _state(client, code)
    assert max(view["totals"]) >= 1000 and view["winners"]
    texts = [e["text"] for e in view["log"]]
    assert any("banks" in t for t in texts) and "Winner" in texts[-1]


# ---------------------------------------------------------------------- hints = the exact solvers
def test_scorecard_hint_is_the_optimal_agents_choice(client: TestClient) -> None:
    code, token = _open(client, {"game": "spiffel", "seats": [{"kind": "person"}], "seed": 9})
    client.post(f"/api/rooms/{code}/start", headers={"X-Seat-Token": token})
    room = client.app.state.manager.get(code)
    agent = load("optimal", game="spiffel")
    for _ in range(6):
        g = room.game
        r = client.post(f"/api/rooms/{code}/hint", headers={"X-Seat-Token": token})
        assert r.status_code == 200, r.text
        advice = r.json()
        assert advice["best"]["action"] == agent.act(encode(g, 0), g.action_mask())
        costs = [o["cost"] for o in advice["options"]]
        assert costs[0] == 0 and all(c >= 0 for c in costs) and costs == sorted(costs)
        client.post(
            f"/api/rooms/{code}/move",
            headers={"X-Seat-Token": token},
            json={"action": advice["best"]["action"]},
        )


def test_farkle_hint_is_the_max_expected_choice() -> None:
    rooms = RoomManager()
    room, token = rooms.create(
        {"game": "farkle", "seats": [{"kind": "person"}, {"kind": "person"}], "seed": 4}
    )
    room.join("B")
    room.start(token)
    agent = load("max-expected", game="farkle", num_players=2)
    for _ in range(8):
        g = room.game
        advice = hint(g)
        assert advice["best"]["action"] == agent.act(encode(g, g.current_player), g.action_mask())
        assert advice["options"][0]["cost"] == 0
        room.apply(advice["best"]["action"])


# ---------------------------------------------------------------------- any request: legal or unchanged
_boxes = st.sampled_from(["ones", "chance", "spiffel", "full_house", "pair", "", "ONES"])
_moves = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["roll", "score", "bank", "x"]),
            "hold": st.lists(st.integers(-1, 6), max_size=6),
            "take": st.lists(st.integers(-1, 6), max_size=7),
            "box": _boxes,
        }
    ),
    st.fixed_dictionaries({"action": st.one_of(st.integers(-2, 130), st.booleans(), st.text(max_size=2))}),
)


@settings(max_examples=60)
@given(
    game=st.sampled_from(["spiffel", "farkle"]),
    seed=st.integers(0, 2**16),
    moves=st.lists(_moves, max_size=25),
)
def test_any_move_is_legal_in_the_engine_or_changes_nothing(game: str, seed: int, moves: list[dict]) -> None:
    rooms = RoomManager()
    room, token = rooms.create({"game": game, "seats": [{"kind": "person"}], "seed": seed})
    room.start(token)
    for body in moves:
        before, legal = room.view(), (list(room.game.legal_actions()) if not room.game.done else [])
        try:
            room.move(token, body)
        except PadError as exc:
            assert exc.status in (400, 409) and exc.message
            assert room.view() == before
        else:
            assert legal and room.view()["version"] == before["version"] + 1


def test_main_refuses_bad_options_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--port", "70000"]) == 2
    assert "--port must be 0-65535" in capsys.readouterr().err
    assert main(["--model", "nopath"]) == 2
    assert "NAME=PATH" in capsys.readouterr().err
    assert main(["--bot-delay", "-1"]) == 2
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--model NAME=PATH" in capsys.readouterr().out


def test_agent_seeds_make_bot_games_reproducible() -> None:
    def play(seed: int) -> list[int]:
        rooms = RoomManager()
        room, token = rooms.create(
            {"game": "spiffel", "seed": seed, "seats": [{"kind": "agent", "spec": "random"}]}
        )
        room.start(token)
        while not room.game.done:
            room.apply(room.bot_action())
        return room.game.totals()

    assert play(7) == play(7)
    assert np.unique([play(s)[0] for s in range(4)]).size > 1
