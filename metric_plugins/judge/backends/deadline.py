"""A total deadline for one HTTP request, body included, and "did the server answer at all".

httpx's timeouts are per network operation: a server that trickles one byte a second never
trips a 3-second read timeout, and holds a worker for as long as it likes. `DeadlineTransport`
wraps the stock transport (public transport API, so httpx and httpx2 alike): every operation
waits at most the time left until ``start + total``, the response stream is checked against
the deadline after each chunk it yields, and headers that complete after the deadline are
refused. A request past its deadline raises the client's own ``ReadTimeout``, which the openai
client reports as ``APITimeoutError`` like any other timeout.

A read timeout raised before any response headers arrived is marked ``no_answer``: the server
accepted the connection and said nothing, which the judge counts like a refused connection
towards its `unreachable_limit` (`metric_plugins.judge.judge.RunState`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from types import ModuleType, TracebackType
from typing import Any


def no_answer(error: BaseException | None) -> bool:
    """True for a timeout this transport raised before the server sent any response headers."""
    return bool(getattr(error, "no_answer", False))


class _DeadlineStream:
    """A response body stream that raises ``ReadTimeout`` once the request's deadline has passed."""

    def __init__(self, http: ModuleType, inner: Any, deadline: float, total: float, request: Any) -> None:
        self.http, self.inner, self.deadline, self.total, self.request = http, inner, deadline, total, request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner:
            if time.monotonic() > self.deadline:
                raise self.http.ReadTimeout(
                    f"the response body was not complete within the {self.total}s request deadline",
                    request=self.request,
                )
            yield chunk

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()


@functools.cache
def _stream_class(http: ModuleType) -> type:
    """`_DeadlineStream` as the client's ``SyncByteStream`` (which the client checks a body stream is)."""
    return type("DeadlineStream", (_DeadlineStream, http.SyncByteStream), {})


class DeadlineTransport:
    """Gives each request `total` seconds from start to last body byte (transport interface of httpx/httpx2)."""

    def __init__(self, http: ModuleType, inner: Any, total: float) -> None:
        self.http = http
        self.inner = inner
        self.total = total

    def handle_request(self, request: Any) -> Any:
        deadline = time.monotonic() + self.total
        timeouts = dict(request.extensions.get("timeout") or {})
        # each network operation may wait at most the whole budget (the stream check enforces what is left)
        request.extensions["timeout"] = {
            name: self.total if timeouts.get(name) is None else min(float(timeouts[name]), self.total)
            for name in ("connect", "read", "write", "pool")
        }
        try:
            response = self.inner.handle_request(request)
        except self.http.ReadTimeout as error:
            error.no_answer = True  # accepted, then silence: no status line within the deadline
            raise
        if time.monotonic() > deadline:  # headers trickled in past the deadline
            response.close()
            raise self.http.ReadTimeout(f"no response headers within the {self.total}s request deadline",
                                        request=request)  # fmt: skip
        response.stream = _stream_class(self.http)(self.http, response.stream, deadline, self.total, request)
        return response

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> DeadlineTransport:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
