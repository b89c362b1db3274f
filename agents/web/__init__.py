"""The game pad in the browser: play any game against people and bots (``dice-envs serve``, :func:`main`).

A local Starlette + uvicorn server (the ``[web]`` extra; ``docs/guide/webpad.md``): rooms live in
:mod:`agents.web.rooms`, requests are checked by :mod:`agents.web.protocol` and
:mod:`agents.web.guard`, and :mod:`agents.web.app` is the ASGI app.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import math
import socket
import sys

from agents.web.players import parse_models
from dice_envs.rules import ConfigError

__all__ = ["MAX_IDLE_TTL", "build_parser", "create_app", "main"]

#: Longest ``--idle-ttl`` accepted: a week (rooms live in memory; a server runs for a session).
MAX_IDLE_TTL = 604_800.0


def create_app(*args, **kwargs):  # type: ignore[no-untyped-def]
    """:func:`agents.web.app.create_app` (imported lazily: it needs the ``[web]`` extra)."""
    from agents.web.app import create_app as _create_app

    return _create_app(*args, **kwargs)


def _idle_ttl(text: str) -> float:
    """``--idle-ttl``: seconds from 1 to :data:`MAX_IDLE_TTL` (``nan``, ``inf`` and the like refused)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 1 <= value <= MAX_IDLE_TTL):
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds from 1 to {MAX_IDLE_TTL:.0f} (a week), got {text!r}"
        )
    return value


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (uvicorn serves it); ``OSError`` when it cannot.

    Connections made as soon as the URL is printed wait in its backlog until uvicorn accepts them.
    """
    family, kind, proto, _, addr = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a port in TIME_WAIT, not one in use
        sock.bind(addr)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def _listen_error(exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return "address already in use (choose another --port)"
    if isinstance(exc, socket.gaierror):
        return f"unknown host ({exc.strerror or exc})"
    return (exc.strerror or str(exc)).lower()


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m agents.web`` / ``dice-envs serve``."""
    p = argparse.ArgumentParser(
        prog="dice-envs serve",
        description="The dice-envs game pad: play in the browser against people and bots.",
        epilog="examples:\n"
        "  dice-envs serve                        # then open http://127.0.0.1:8000/\n"
        "  dice-envs serve --port 8080 --bot-delay 0.3\n"
        "  dice-envs serve --model mybot=runs/quickstart/quickstart.npz   # seat it as mybot",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="allow a trained model file as the agent NAME (repeatable); only these files are ever loaded",
    )
    p.add_argument("--max-rooms", type=int, default=50, help="rooms held at once (default 50)")
    p.add_argument("--max-connections", type=int, default=16, help="live connections per room (default 16)")
    p.add_argument("--bot-delay", type=float, default=0.8, help="seconds between a bot's moves (default 0.8)")
    p.add_argument(
        "--idle-ttl",
        type=_idle_ttl,
        default=3600.0,
        help=f"seconds after which an idle room is dropped (1 to {MAX_IDLE_TTL:.0f}; default 3600)",
    )
    p.add_argument(
        "--log-level",
        default="warning",
        choices=["critical", "error", "warning", "info", "debug"],
        help="the server's log level (default warning)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    """Start the server; returns the exit status (2 for a bad option, 1 when the address cannot
    be listened on, with the reason on stderr). The socket is bound before the URL is printed."""
    args = build_parser().parse_args(argv)

    try:
        if not 0 <= args.port <= 65535:
            raise ConfigError(f"--port must be 0-65535, got {args.port}")
        if args.max_rooms < 1 or args.max_connections < 1:
            raise ConfigError("--max-rooms and --max-connections must be at least 1")
        if not 0 <= args.bot_delay <= 60:
            raise ConfigError(f"--bot-delay must be 0-60 seconds, got {args.bot_delay}")
        models = parse_models(args.model)
        try:
            import uvicorn
        except ImportError:
            raise ConfigError('the game pad needs the web extra: pip install "dice-envs[web]"') from None
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        loopback = ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        loopback = args.host == "localhost"
    host = f"[{args.host}]" if ":" in args.host else args.host
    try:
        sock = _listen(args.host, args.port)
    except OSError as exc:
        print(f"error: cannot listen on {host}:{args.port}: {_listen_error(exc)}", file=sys.stderr)
        return 1
    port = sock.getsockname()[1]
    url = f"http://{host}:{port}"
    app = create_app(
        max_rooms=args.max_rooms,
        max_connections=args.max_connections,
        bot_delay=args.bot_delay,
        models=models,
        idle_ttl=args.idle_ttl,
        # on this machine only: answer to its loopback names alone (a foreign site's name that
        # resolves here, DNS rebinding, is turned away); elsewhere any name the network uses
        allowed_hosts=[args.host, "localhost", "127.0.0.1", "::1"] if loopback else None,
        allowed_origins=[url],
    )
    if not loopback:
        print(f"warning: listening on {args.host}: anyone who can reach it can open rooms", file=sys.stderr)
    print(f"dice-envs game pad: {url}/  (Ctrl-C stops it)", flush=True)
    with sock:
        uvicorn.Server(uvicorn.Config(app, log_level=args.log_level)).run(sockets=[sock])
    return 0
