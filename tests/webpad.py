"""The game pad served for a test: uvicorn in a thread of the test process, on a free loopback port."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def running_pad(**app_kwargs: Any) -> Iterator[str]:
    """Serve ``create_app(**app_kwargs)`` on 127.0.0.1 until the block ends; yield its address."""
    import uvicorn

    from agents.web.app import create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(**app_kwargs), log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not srv.started:
            assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(timeout=10)
        sock.close()
