"""An HTTP server in a background thread: what the loopback judge (`metric_plugins.judge.loopback`) and the loopback
model server (`arab_mm_tasks.testing.model_server`) share, each with its own request handler."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a hanging request never blocks shutdown
    request_queue_size = 256  # the default backlog of 5 drops connections when many clients start at once


_Server = TypeVar("_Server", bound="BackgroundServer")


class BackgroundServer:
    """`handler` served on `host`:`port` (0: a free port) in a background thread named `thread_name`. Use as a
    context manager, or `start()` / `stop()`; `serve_forever()` serves in the calling thread instead.

    `handling()` counts the requests being answered (`in_flight`) and the most at once (`peak_in_flight`: the
    concurrency the client reached).
    """

    thread_name = "loopback"

    def __init__(self, host: str, port: int, handler: type[BaseHTTPRequestHandler]) -> None:
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self._httpd = _HTTPServer((host, port), handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @contextlib.contextmanager
    def handling(self) -> Iterator[None]:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._lock:
                self.in_flight -= 1

    def serve_forever(self) -> None:
        """Serve in this thread until `stop()` is called from another one (or the process ends)."""
        self._httpd.serve_forever(poll_interval=0.05)

    def start(self: _Server) -> _Server:
        self._thread = threading.Thread(target=self.serve_forever, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self: _Server) -> _Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
