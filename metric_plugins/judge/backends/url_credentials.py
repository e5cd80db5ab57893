"""Credentials in a base URL, sent with every request and shown nowhere.

``http://user:token@host/v1?key=token`` is how some gateways take a key. The openai client and
httpx put the URL they are given into their log lines (httpx logs every request's URL at INFO),
so the client gets the public URL and this httpx client adds the credentials back:

- user info as HTTP basic auth (what httpx itself does with user info in a URL; it overrides
  the ``Authorization`` header the openai client sets, as it did before),
- the query string in a transport wrapper, i.e. after httpx has logged the request's URL.

The openai client is built on httpx (openai < 3) or httpx2 (openai >= 3), which share this API;
`http_module` picks the one the installed client uses. `QueryTransport` is used only for a
base URL that carries credentials. Every client is built by `http_client`, which also gives each
request its total deadline (`metric_plugins.judge.backends.deadline`).
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType, TracebackType
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit


@functools.cache  # asked on every request
def http_module() -> ModuleType:
    """``httpx`` or ``httpx2``: the package the installed openai client sends requests with."""
    import openai

    client = next(c for c in openai.DefaultHttpxClient.__mro__[1:] if c.__name__ == "Client")
    return importlib.import_module(client.__module__.partition(".")[0])


class QueryTransport:
    """Adds fixed query parameters to each request on its way to the network, below the client's logging.

    Implements the transport interface (``handle_request``, ``close``) of httpx and httpx2 alike.
    """

    def __init__(self, http: ModuleType, inner: Any, params: list[tuple[str, str]]) -> None:
        self.http = http
        self.inner = inner
        self.params = params

    def handle_request(self, request: Any) -> Any:
        outgoing = self.http.Request(
            request.method,
            request.url.copy_merge_params(self.params),
            headers=request.headers,
            stream=request.stream,
            extensions=request.extensions,
        )
        return self.inner.handle_request(outgoing)

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> QueryTransport:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def http_client(url: str, timeout: float) -> Any:
    """An http client with openai's defaults (connection limits, redirects) whose requests each end within
    `timeout` seconds, body included (`DeadlineTransport`), and that sends `url`'s credentials, if any."""
    import openai

    from metric_plugins.judge.backends.deadline import DeadlineTransport

    http = http_module()
    parts = urlsplit(url)
    auth = http.BasicAuth(unquote(parts.username or ""), unquote(parts.password or "")) if parts.username else None
    params = parse_qsl(parts.query, keep_blank_values=True)
    # the stock transport with openai's connection limits (a custom transport replaces the client's pool settings)
    transport: Any = http.HTTPTransport(limits=openai.DEFAULT_CONNECTION_LIMITS)
    if params:
        transport = QueryTransport(http, transport, params)
    return openai.DefaultHttpxClient(auth=auth, transport=DeadlineTransport(http, transport, timeout), timeout=timeout)
