"""The game pad in the browser: play any game against people and bots (``python -m agents.web``).

A local web server (Starlette + uvicorn, the ``[web]`` extra) with in-memory rooms and one
static page (no build tools). Open a room for any game and rule parameters, share its code,
others click "Join Game", the opener clicks "Start Game"; every seat is a person or an agent
spec (``optimal``, ``heuristic``, ``max-expected``, ``threshold:N``, ``pretrained:<name>``, a
model name given with ``--model NAME=PATH``, ...). Bots move by themselves at a pace a person
can follow. The hint button shows the exact solver's choice and what each alternative costs.

The pad plays with agents (bots, hints), so it sits in the ``agents`` layer, above
:mod:`dice_envs` (whose rules engine it drives).

* :mod:`agents.web.rooms` — rooms, seats and their secret tokens, turns and the log;
* :mod:`agents.web.protocol` — what a request may say: refusals (``PadError``), names, and
  moves turned into engine actions;
* :mod:`agents.web.views` — the public view the page draws and the log lines of engine events;
* :mod:`agents.web.players` — agent specs, resolved in one place (``agents.load``), and the
  bots' moves;
* :mod:`agents.web.hints` — the hint button's solver advice;
* :mod:`agents.web.app` — the ASGI app (routes, WebSocket live updates, bots' pace).

``dice-envs serve`` calls :func:`main`.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys

from dice_envs.rules import ConfigError

from .players import parse_models

__all__ = ["build_parser", "create_app", "main"]


def create_app(*args, **kwargs):  # type: ignore[no-untyped-def]
    """:func:`agents.web.app.create_app` (imported lazily: it needs the ``[web]`` extra)."""
    from .app import create_app as _create_app

    return _create_app(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m agents.web`` / ``dice-envs serve``."""
    p = argparse.ArgumentParser(
        prog="dice-envs serve",
        description="The dice-envs game pad: play in the browser against people and bots.",
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
        "--idle-ttl", type=float, default=3600.0, help="seconds after which an idle room is dropped"
    )
    p.add_argument(
        "--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"]
    )
    return p


def main(argv: list[str] | None = None) -> int:
    """Start the server; returns the exit status (2 for a bad option, with the reason on stderr)."""
    args = build_parser().parse_args(argv)

    try:
        if not 0 <= args.port <= 65535:
            raise ConfigError(f"--port must be 0-65535, got {args.port}")
        if args.max_rooms < 1 or args.max_connections < 1:
            raise ConfigError("--max-rooms and --max-connections must be at least 1")
        if not 0 <= args.bot_delay <= 60:
            raise ConfigError(f"--bot-delay must be 0-60 seconds, got {args.bot_delay}")
        if args.idle_ttl <= 0:
            raise ConfigError(f"--idle-ttl must be positive, got {args.idle_ttl}")
        models = parse_models(args.model)
        try:
            import uvicorn
        except ImportError:
            raise ConfigError('the game pad needs the web extra: pip install "dice-envs[web]"') from None
        app = create_app(
            max_rooms=args.max_rooms,
            max_connections=args.max_connections,
            bot_delay=args.bot_delay,
            models=models,
            idle_ttl=args.idle_ttl,
        )
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        public = not ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        public = args.host != "localhost"
    if public:
        print(f"warning: listening on {args.host}: anyone who can reach it can open rooms", file=sys.stderr)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"dice-envs game pad: http://{host}:{args.port}/  (Ctrl-C stops it)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
