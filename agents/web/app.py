"""The ASGI app of the game pad (Starlette): one page, a small JSON API and a WebSocket per room.

=========================================  ==========================================================
route                                      what it does
=========================================  ==========================================================
``GET /``                                  the game pad (``static/index.html``; ``/static/app.js``,
                                           ``/static/style.css``: the only files ever served)
``GET /api/options``                       games, rule parameters with defaults, agent specs
``POST /api/rooms``                        open a room (``{"game", "rules", "seats", "name"}``)
``GET /api/rooms/{code}``                  the room's public state
``POST /api/rooms/{code}/join``            "Join Game": the first free person seat and its token
``POST /api/rooms/{code}/start``           "Start Game" (the opener's token)
``POST /api/rooms/{code}/move``            a move of the token's seat, checked by the rules engine
``POST /api/rooms/{code}/hint``            the exact solver's advice for the token's seat
``WS /api/rooms/{code}/ws``                the room's state, pushed on every change
=========================================  ==========================================================

A seat's secret token travels in the ``X-Seat-Token`` header. Refusals are JSON
``{"error": message}`` with a status: 400 malformed or illegal, 403 wrong token, 404 unknown
room, 409 not now (not your turn, not started, game over), 413 body too large, 503 full.
Bots move by themselves, ``bot_delay`` seconds apart, in a background task per room; their
decisions are computed in a worker thread so the server stays responsive.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from .hints import hint
from .protocol import PadError
from .rooms import Room, RoomManager

__all__ = ["MAX_BODY", "create_app"]

#: Largest request body accepted (bytes).
MAX_BODY = 16_384
STATIC = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; connect-src 'self' ws: wss:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def _static_files() -> dict[str, bytes]:
    root = resources.files("agents.web") / "static"
    return {name: (root / name).read_bytes() for name in STATIC}


class _Hub:
    """Who listens to which room: one event per WebSocket, set on every change of the room."""

    def __init__(self) -> None:
        self.listeners: dict[str, set[asyncio.Event]] = {}

    def notify(self, room: Room) -> None:
        for ev in self.listeners.get(room.code, ()):
            ev.set()


def create_app(
    max_rooms: int = 50,
    max_connections: int = 16,
    bot_delay: float = 0.8,
    models: dict[str, Path] | None = None,
    idle_ttl: float = 3600.0,
) -> Starlette:
    """The game-pad app: in-memory rooms, bots ``bot_delay`` seconds per move, bounded counts.

    ``models`` maps model names to the model files the server may load (``--model NAME=PATH``);
    no other file is ever opened on a request's behalf.
    """
    if bot_delay < 0:
        raise ValueError(f"bot_delay must be >= 0 seconds, got {bot_delay}")
    manager = RoomManager(max_rooms, max_connections, idle_ttl, models)
    hub = _Hub()
    files = _static_files()
    bot_tasks: dict[str, asyncio.Task[None]] = {}

    def error(exc: PadError) -> JSONResponse:
        return JSONResponse(
            {"error": exc.message}, status_code=exc.status, headers={"Cache-Control": "no-store"}
        )

    def ok(data: Any) -> JSONResponse:
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    async def read_json(request: Request) -> Any:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            raise PadError(413, f"the request body is larger than {MAX_BODY} bytes")
        raw = await request.body()
        if len(raw) > MAX_BODY:
            raise PadError(413, f"the request body is larger than {MAX_BODY} bytes")
        if not raw.strip():
            return {}
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise PadError(400, "the request body is not valid JSON") from None
        if not isinstance(data, dict):
            raise PadError(400, f"the request body must be a JSON object, got {type(data).__name__}")
        return data

    def token_of(request: Request) -> str | None:
        return request.headers.get("x-seat-token")

    def changed(room: Room) -> None:
        hub.notify(room)
        g = room.game
        if g is None or g.done or room.seats[g.current_player].kind != "agent":
            return
        task = bot_tasks.get(room.code)
        if task is None or task.done():
            bot_tasks[room.code] = asyncio.create_task(run_bots(room))

    async def run_bots(room: Room) -> None:
        while True:
            g = room.game
            if g is None or g.done or room.seats[g.current_player].kind != "agent":
                return
            await asyncio.sleep(bot_delay)
            version = room.version
            try:
                action = await asyncio.to_thread(room.bot_action)
                if action is None or room.version != version:
                    continue
                room.apply(action)
            except Exception as exc:  # a broken bot must not take the server down
                room._note(f"the bot of seat {g.current_player + 1} failed: {exc}", "error")
                room._changed()
                hub.notify(room)
                return
            hub.notify(room)

    def endpoint(fn: Callable[..., Any]) -> Callable[[Request], Any]:
        async def wrapped(request: Request) -> Response:
            try:
                return await fn(request)
            except PadError as exc:
                return error(exc)

        return wrapped

    async def page(request: Request) -> Response:
        return Response(files["index.html"], media_type=STATIC["index.html"], headers=SECURITY_HEADERS)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in files or name == "index.html":
            return JSONResponse({"error": f"no file {name!r}"}, status_code=404)
        return Response(files[name], media_type=STATIC[name], headers=SECURITY_HEADERS)

    @endpoint
    async def options(request: Request) -> Response:
        return ok(manager.options())

    @endpoint
    async def create_room(request: Request) -> Response:
        body = await read_json(request)
        room, token = await asyncio.to_thread(manager.create, body)  # building a bot may load a table
        seat = next((s.index for s in room.seats if s.token == token), None)
        return ok({"code": room.code, "token": token, "seat": seat, "opener": True, "room": room.view()})

    @endpoint
    async def get_room(request: Request) -> Response:
        return ok(manager.get(request.path_params["code"]).view())

    @endpoint
    async def join(request: Request) -> Response:
        room = manager.get(request.path_params["code"])
        body = await read_json(request)
        seat, token = room.join(body.get("name"))
        changed(room)
        return ok(
            {"code": room.code, "token": token, "seat": seat.index, "opener": False, "room": room.view()}
        )

    @endpoint
    async def start(request: Request) -> Response:
        room = manager.get(request.path_params["code"])
        await read_json(request)
        room.start(token_of(request))
        changed(room)
        return ok(room.view())

    @endpoint
    async def move(request: Request) -> Response:
        room = manager.get(request.path_params["code"])
        body = await read_json(request)
        view = room.move(token_of(request), body)
        changed(room)
        return ok(view)

    @endpoint
    async def hint_route(request: Request) -> Response:
        room = manager.get(request.path_params["code"])
        await read_json(request)
        seat = room.seat_of(token_of(request))
        g = room.game
        if g is None or g.done:
            raise PadError(
                409, "there is no move to hint: the game " + ("has not started" if g is None else "is over")
            )
        if g.current_player != seat.index:
            raise PadError(409, "a hint is for your own turn")
        version = room.version
        try:
            advice = await asyncio.to_thread(hint, g.clone())
        except (ValueError, ImportError) as exc:
            raise PadError(409, f"no hint: {exc}") from None
        if room.version != version:
            raise PadError(409, "the game moved on while the hint was computed; ask again")
        return ok(advice)

    async def ws_room(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            room = manager.get(websocket.path_params["code"])
        except PadError as exc:
            await websocket.send_json({"error": exc.message})
            await websocket.close(code=4404)
            return
        if room.connections >= manager.max_connections:
            await websocket.send_json(
                {"error": f"room {room.code} has its maximum of {manager.max_connections} connections"}
            )
            await websocket.close(code=4429)
            return
        room.connections += 1
        event = asyncio.Event()
        hub.listeners.setdefault(room.code, set()).add(event)
        receiver = asyncio.create_task(websocket.receive())
        try:
            await websocket.send_json(room.view())
            while True:
                waiter = asyncio.create_task(event.wait())
                done, _ = await asyncio.wait({receiver, waiter}, return_when=asyncio.FIRST_COMPLETED)
                if receiver in done:
                    waiter.cancel()
                    if receiver.result().get("type") == "websocket.disconnect":
                        return
                    receiver = asyncio.create_task(websocket.receive())  # client messages are ignored
                    continue
                event.clear()
                await websocket.send_json(room.view())
        except (WebSocketDisconnect, RuntimeError):
            return
        finally:
            receiver.cancel()
            room.connections -= 1
            hub.listeners.get(room.code, set()).discard(event)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        for task in bot_tasks.values():
            task.cancel()

    routes = [
        Route("/", page),
        Route("/static/{name}", static),
        Route("/api/options", options),
        Route("/api/rooms", create_room, methods=["POST"]),
        Route("/api/rooms/{code}", get_room),
        Route("/api/rooms/{code}/join", join, methods=["POST"]),
        Route("/api/rooms/{code}/start", start, methods=["POST"]),
        Route("/api/rooms/{code}/move", move, methods=["POST"]),
        Route("/api/rooms/{code}/hint", hint_route, methods=["POST"]),
        WebSocketRoute("/api/rooms/{code}/ws", ws_room),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.manager = manager
    app.state.bot_delay = bot_delay
    return app
