"""What a request must be before the game pad acts on it: from the pad's own page, JSON, small.

The pad listens on this machine, and every web page the user visits runs in a browser on this
machine too. A page of another site must not open rooms, take seats or start bots on the local
pad (cross-site request forgery), and no client may make the server read, hold or parse more
than a room needs. A state-changing request (``POST``) therefore

* names no other site: a browser says in ``Origin`` which page sent a request; one that is
  not the pad's own address (the scheme and ``Host`` the request came to, or an address the
  server was configured with) is refused with 403. A WebSocket handshake is checked the same way;
* says ``Content-Type: application/json`` (415 otherwise): a page of another site can send
  that header only after asking the server first (a CORS preflight, which the pad never
  grants), so a plain HTML form or a simple ``fetch`` from elsewhere never reaches a room;
* carries at most :data:`MAX_BODY` bytes, counted as they arrive: a larger ``Content-Length``
  is refused unread, and a body without one (chunked) is cut off as soon as it passes the
  limit (413); the whole body must arrive within :data:`BODY_TIMEOUT_S` seconds (408);
* holds one JSON object nested at most :data:`MAX_DEPTH` levels deep (the parser recurses:
  deeper nesting would exhaust Python's stack), else 400 saying what is wrong.

:class:`HostCheck` turns away requests addressed to other names (DNS rebinding) before any route.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection
from typing import Any

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from agents.web.protocol import PadError

__all__ = [
    "BODY_TIMEOUT_S",
    "MAX_BODY",
    "MAX_DEPTH",
    "HostCheck",
    "check_origin",
    "host_name",
    "json_depth",
    "parse_json",
    "read_json",
]

#: Largest request body accepted (bytes).
MAX_BODY = 16_384
#: Deepest nesting of JSON arrays and objects accepted (a move or a room needs 3).
MAX_DEPTH = 32
#: Seconds a whole request body may take to arrive.
BODY_TIMEOUT_S = 10.0


def host_name(host: str | None) -> str | None:
    """The name part of a ``Host`` header, lower case, without port or brackets.

    >>> host_name("LocalHost:8000"), host_name("[::1]:8000"), host_name("127.0.0.1"), host_name("")
    ('localhost', '::1', '127.0.0.1', None)
    """
    if not host:
        return None
    host = host.strip().lower()
    if host.startswith("["):
        name, _, _ = host[1:].partition("]")
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name.rstrip(".") or None


def check_origin(conn: HTTPConnection, allowed_origins: Collection[str] = ()) -> None:
    """403 when the request names an ``Origin`` other than the server's own address.

    The own address is the scheme (``http`` for ``ws``, ``https`` for ``wss``) and ``Host``
    of the request itself, or one of ``allowed_origins`` (``scheme://host[:port]``). A request
    without ``Origin`` (not sent by a page in a browser) passes.
    """
    origin = conn.headers.get("origin")
    if origin is None:
        return
    scheme = {"ws": "http", "wss": "https"}.get(conn.url.scheme, conn.url.scheme)
    host = conn.headers.get("host", "")
    own = f"{scheme}://{host}".lower()
    if origin.strip().lower().rstrip("/") in {own, *(o.lower().rstrip("/") for o in allowed_origins)}:
        return
    raise PadError(
        403,
        f"requests from origin {origin[:100]!r} are refused: only the game pad's own page ({own}) "
        "may change rooms",
    )


def check_content_type(request: Request) -> None:
    """415 unless the request says its body is JSON."""
    ctype = request.headers.get("content-type", "")
    if ctype.split(";", 1)[0].strip().lower() != "application/json":
        raise PadError(
            415,
            f"a request that changes a room must say Content-Type: application/json, got {ctype[:80]!r}",
        )


async def _body(request: Request) -> bytes:
    """The body, refused with 413 as soon as more than :data:`MAX_BODY` bytes arrived."""
    length = request.headers.get("content-length")
    if length is not None and (not length.strip().isdigit() or int(length) > MAX_BODY):
        raise PadError(413, f"the request body is larger than {MAX_BODY} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise PadError(413, f"the request body is larger than {MAX_BODY} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def json_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """How deep arrays and objects nest in the JSON ``text`` (counting stops past ``limit``).

    Brackets inside strings are text, not nesting:

    >>> json_depth('{"a": [1, {"b": "[[["}]}'), json_depth("[" * 50 + "]" * 50, limit=5)
    (3, 6)
    """
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_json(raw: bytes) -> dict[str, Any]:
    """The JSON object of a request body (an empty body is ``{}``); 400 saying what is wrong.

    >>> parse_json(b'{"type": "bank", "take": [0]}')
    {'type': 'bank', 'take': [0]}
    >>> parse_json(b"[" * 40 + b"]" * 40)
    Traceback (most recent call last):
    ...
    agents.web.protocol.PadError: the request body is not valid JSON: nested too deeply (more than 32 levels)
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PadError(400, "the request body is not valid JSON: it is not UTF-8 text") from None
    if not text.strip():
        return {}
    if json_depth(text) > MAX_DEPTH:
        raise PadError(
            400, f"the request body is not valid JSON: nested too deeply (more than {MAX_DEPTH} levels)"
        )
    try:
        data = json.loads(text)
    except RecursionError:  # pragma: no cover - json_depth bounds the nesting first
        raise PadError(400, "the request body is not valid JSON: nested too deeply") from None
    except ValueError as exc:
        raise PadError(400, f"the request body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PadError(400, f"the request body must be a JSON object, got {type(data).__name__}")
    return data


async def read_json(request: Request, allowed_origins: Collection[str] = ()) -> dict[str, Any]:
    """The checked JSON object of a state-changing request (the module docstring's order)."""
    check_origin(request, allowed_origins)
    check_content_type(request)
    try:
        raw = await asyncio.wait_for(_body(request), BODY_TIMEOUT_S)
    except asyncio.TimeoutError:
        raise PadError(408, f"the request body did not arrive within {BODY_TIMEOUT_S:g} seconds") from None
    return parse_json(raw)


class HostCheck:
    """ASGI middleware: requests whose ``Host`` is not one of ``hosts`` get 400 (HTTP) or a
    refused handshake (WebSocket); ``hosts=None`` lets every request through."""

    def __init__(self, app: ASGIApp, hosts: Collection[str] | None = None) -> None:
        self.app = app
        self.hosts = None if hosts is None else {h for h in (host_name(x) for x in hosts) if h}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.hosts is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = HTTPConnection(scope).headers.get("host")
        if host_name(host) in self.hosts:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await receive()  # the handshake; closing before accepting refuses it (HTTP 403)
            await send({"type": "websocket.close", "code": 4403})
            return
        names = ", ".join(sorted(self.hosts))
        response = JSONResponse(
            {"error": f"this server answers to {names}, not to the host {str(host)[:100]!r}"},
            status_code=400,
            headers={"Connection": "close"},
        )
        await response(scope, receive, send)
