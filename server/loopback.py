"""uvicorn on a free 127.0.0.1 port in a thread, and the headless Chromium that talks to it —
shared by the overlay benchmark and the page tests, so both measure the same set-up."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn

from .browser import find_chromium  # noqa: F401 (the page tests and the benchmark import it from here)

# Without the background-networking flags Chromium keeps calling hosts this offline machine refuses.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """`with LiveServer(app) as srv:` serves `app` at `srv.url` until the block ends."""

    def __init__(self, app):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)
