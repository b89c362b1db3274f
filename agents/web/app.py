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
``GET /api/rooms/{code}/record``           the game record of a finished game (JSON lines)
``GET /api/rooms/{code}/review``           the review of every decision of a finished game
``WS /api/rooms/{code}/ws``                the room's state, pushed on every change
=========================================  ==========================================================

A seat's secret token travels in the ``X-Seat-Token`` header. Every ``POST`` is checked
before it is read (:mod:`agents.web.guard`): sent from the pad's own page, JSON, small and
shallow. Refusals are JSON ``{"error": message}`` with a status: 400 malformed or illegal,
403 wrong token or another site's page, 404 unknown room, 408 body too slow, 409 not now (not
your turn, not started, game over), 413 body too large, 415 not JSON, 429 the client's solves
fill its share of the solver (try again), 503 full or the solver busy.

Bots move by themselves, ``bot_delay`` seconds apart, in a background task per room. Solves of
tables not in memory run on the solve thread (:class:`agents.web.limits.SolveQueue`), bots' moves
and hints over tables in memory on the move thread, so no room waits for another's solve.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from agents.web import players
from agents.web.guard import MAX_BODY, HostCheck, check_origin, read_json
from agents.web.hints import hint, hint_table
from agents.web.limits import MAX_SOLVES_PER_CLIENT, SolveQueue
from agents.web.protocol import PadError
from agents.web.rooms import Room, RoomManager
from agents.web.views import review_view

__all__ = ["MAX_BODY", "create_app"]

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


def create_app(
    max_rooms: int = 50,
    max_connections: int = 16,
    bot_delay: float = 0.8,
    models: dict[str, Path] | None = None,
    idle_ttl: float = 3600.0,
    allowed_hosts: Collection[str] | None = None,
    allowed_origins: Collection[str] = (),
    compute_wait: float = 30.0,
    solves_per_client: int = MAX_SOLVES_PER_CLIENT,
) -> Starlette:
    """The game-pad app: in-memory rooms, bots ``bot_delay`` seconds per move, bounded counts.

    ``models``: the only model files the server may load, by name. ``allowed_hosts`` /
    ``allowed_origins``: see :mod:`agents.web.guard`. ``compute_wait``: seconds a hint may take;
    ``solves_per_client``: solves a client may have queued or running at once.
    """
    if bot_delay < 0:
        raise ValueError(f"bot_delay must be >= 0 seconds, got {bot_delay}")
    if not compute_wait > 0:
        raise ValueError(f"compute_wait must be > 0 seconds, got {compute_wait}")
    manager = RoomManager(max_rooms, max_connections, idle_ttl, models)
    listeners: dict[str, set[asyncio.Event]] = {}  # by room code: one event per WebSocket
    root = resources.files("agents.web") / "static"
    files = {name: (root / name).read_bytes() for name in STATIC}
    bot_tasks: dict[str, asyncio.Task[None]] = {}
    solves = SolveQueue(solves_per_client)
    mover = ThreadPoolExecutor(1, thread_name_prefix="pad-moves")

    def error(exc: PadError, close: bool = False) -> JSONResponse:
        headers = {"Cache-Control": "no-store", **({"Connection": "close"} if close else {})}
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=headers)

    def ok(data: Any) -> JSONResponse:
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    def token_of(request: Request) -> str | None:
        return request.headers.get("x-seat-token")

    def client_of(request: Request) -> str:
        """Who asks, for the share of the solver: the address the request comes from."""
        return request.client.host if request.client else "unknown"

    def notify(room: Room) -> None:
        for ev in listeners.get(room.code, ()):
            ev.set()

    async def solved(job: Future[Any], what: str) -> Any:
        """The result of a solve on the solve thread; 503 when it takes over ``compute_wait`` s."""
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(job)), compute_wait)
        except asyncio.TimeoutError:
            raise busy(what) from None

    def busy(what: str) -> PadError:
        return PadError(503, f"the solver is busy: no {what} within {compute_wait:g} s; ask again")

    def bot_failed(room: Room, seat: int, exc: Exception) -> None:
        room._note(f"the bot of seat {seat + 1} failed: {exc}", "error")
        room._changed()
        notify(room)

    def changed(room: Room) -> None:
        notify(room)
        g = room.game
        if g is None or g.done or room.seats[g.current_player].kind != "agent":
            return
        task = bot_tasks.get(room.code)
        if task is None or task.done():
            bot_tasks[room.code] = asyncio.create_task(run_bots(room))

    async def run_bots(room: Room) -> None:
        solving: Future[None] | None = room.solving
        if solving is not None:  # the bots' tables, queued when the room started
            try:
                await asyncio.shield(asyncio.wrap_future(solving))
            except Exception as exc:
                bot_failed(room, room.game.current_player if room.game else 0, exc)
                return
            room.solving = None
        while True:
            g = room.game
            if g is None or g.done or room.seats[g.current_player].kind != "agent":
                return
            await asyncio.sleep(bot_delay)
            version = room.version
            try:
                action = await asyncio.get_running_loop().run_in_executor(mover, room.bot_action)
                if action is None or room.version != version:
                    continue
                room.apply(action)
            except Exception as exc:  # a broken bot must not take the server down
                bot_failed(room, g.current_player, exc)
                return
            notify(room)

    def endpoint(fn: Callable[..., Any]) -> Callable[[Request], Any]:
        async def wrapped(request: Request) -> Response:
            try:
                return await fn(request)
            except PadError as exc:
                return error(exc)

        return wrapped

    def changes(fn: Callable[..., Any]) -> Callable[[Request], Any]:
        """A state-changing endpoint: ``fn(request, body)`` with the checked JSON body."""

        async def wrapped(request: Request) -> Response:
            try:
                body = await read_json(request, allowed_origins)
            except PadError as exc:  # the rest of the body may be unread: drop the connection
                return error(exc, close=True)
            return await endpoint(partial(fn, body=body))(request)

        return wrapped

    def seated(room: Room, seat: int | None, token: str, opener: bool) -> JSONResponse:
        return ok({"code": room.code, "token": token, "seat": seat, "opener": opener, "room": room.view()})

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

    @changes
    async def create_room(request: Request, body: dict[str, Any]) -> Response:
        room, token = await asyncio.to_thread(manager.create, body)  # building a bot may load a table
        return seated(room, next((s.index for s in room.seats if s.token == token), None), token, True)

    @endpoint
    async def get_room(request: Request) -> Response:
        return ok(manager.get(request.path_params["code"]).view())

    @changes
    async def join(request: Request, body: dict[str, Any]) -> Response:
        room = manager.get(request.path_params["code"])
        seat, token = room.join(body.get("name"))
        changed(room)
        return seated(room, seat.index, token, False)

    @changes
    async def start(request: Request, body: dict[str, Any]) -> Response:
        room = manager.get(request.path_params["code"])
        room.check_start(token_of(request))  # before any solve is queued
        agents = [s.agent for s in room.seats]
        unsolved = await asyncio.to_thread(players.unsolved, agents)  # reads the disk cache's records
        room.check_start(token_of(request))
        if unsolved:  # solved now, on the solve thread (429 when the client's share is full)
            solve = partial(players.solve_tables, unsolved)
            room.solving = solves.submit(client_of(request), ("win", room.rules), solve)
        room.start(token_of(request))
        changed(room)
        return ok(room.view())

    @changes
    async def move(request: Request, body: dict[str, Any]) -> Response:
        room = manager.get(request.path_params["code"])
        view = room.move(token_of(request), body)
        changed(room)
        return ok(view)

    @changes
    async def hint_route(request: Request, body: dict[str, Any]) -> Response:
        room = manager.get(request.path_params["code"])
        seat = room.seat_of(token_of(request))
        g = room.game
        if g is None or g.done:
            raise PadError(
                409, "there is no move to hint: the game " + ("has not started" if g is None else "is over")
            )
        if g.current_player != seat.index:
            raise PadError(409, "a hint is for your own turn")
        version, game = room.version, g.clone()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + compute_wait
        try:
            table = room.hint_table if room.hint_table is not None else manager.hint_table(room.rules)
            if table is None:  # solved or loaded on the solve thread; the room keeps it
                job = solves.submit(client_of(request), ("hint", room.rules), partial(hint_table, game))
                table = await solved(job, "hint")
            if not room.closed:
                room.hint_table = table
            job = loop.run_in_executor(mover, hint, game, table)
            advice = await asyncio.wait_for(job, max(deadline - loop.time(), 0.01))  # a queued one is dropped
        except asyncio.TimeoutError:
            raise busy("hint") from None
        except (ValueError, ImportError, RuntimeError) as exc:
            raise PadError(409, f"no hint: {exc}") from None
        if room.version != version:
            raise PadError(409, "the game moved on while the hint was computed; ask again")
        return ok(advice)

    def finished(code: str) -> Room:
        room = manager.get(code)
        if room.game is None or not room.game.done or room.record is None:
            raise PadError(409, "the record and the review come once the game is over")
        return room

    @endpoint
    async def record_route(request: Request) -> Response:
        from agents.evaluation.gamerecord import record_text

        room = finished(request.path_params["code"])
        name = f"dice-envs-{room.rules.game}-{room.code}.jsonl"
        headers = {"Cache-Control": "no-store", "Content-Disposition": f'attachment; filename="{name}"'}
        return Response(record_text([room.record]), media_type="application/x-ndjson", headers=headers)  # type: ignore[list-item]

    @endpoint
    async def review_route(request: Request) -> Response:
        room = finished(request.path_params["code"])
        if room.review is None:  # valued on the solve thread (a first solve of the rules may run)
            job = solves.submit(client_of(request), ("review", room.code), partial(review_view, room.record))
            room.review = await solved(job, "review")
        return ok(room.review)

    async def ws_room(websocket: WebSocket) -> None:
        try:
            check_origin(websocket, allowed_origins)
        except PadError:
            await websocket.close(code=4403)  # before accepting: the handshake is refused (HTTP 403)
            return
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
        listeners.setdefault(room.code, set()).add(event)
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
            listeners.get(room.code, set()).discard(event)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        for task in bot_tasks.values():
            task.cancel()
        solves.shutdown()
        mover.shutdown(wait=False, cancel_futures=True)

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
        Route("/api/rooms/{code}/record", record_route),
        Route("/api/rooms/{code}/review", review_route),
        WebSocketRoute("/api/rooms/{code}/ws", ws_room),
    ]
    middleware = [Middleware(HostCheck, hosts=allowed_hosts)]
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    app.state.manager = manager
    return app
