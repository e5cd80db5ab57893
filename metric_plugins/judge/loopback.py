"""A local OpenAI-compatible judge server with latency and fault injection, for tests and benchmarks.

``POST /v1/chat/completions`` answers like a chat-completions endpoint. What it answers is
decided by markers in the last user message, so a test controls each item through the text
it judges:

- ``[[score=73]]``: reply in the GIMMICK XML format with that score. Without a marker the
  score is ``sha256(user text) % 101``, deterministic per request.
- ``[[reply=any text]]``: reply with that text verbatim (JSON, a digit, "I think it's good").
- ``[[latency=0.5]]``: this request's latency in seconds (default: the server's).
- ``[[fault=500:2,429:1]]``: a fault sequence for the first requests with this exact body: here
  the 1st and 2nd get a 500, the 3rd a 429, later ones the normal reply. A count-less entry
  (``[[fault=400]]``) applies for ever. Kinds: an HTTP status (``429`` sends
  ``Retry-After``: ``[[retry_after=2]]``, default 1), ``timeout`` (hang `hang_seconds`),
  ``truncated`` (a body cut short and the connection closed), ``badjson`` (200 with a body
  that is not JSON), ``unparsable`` (200 with "I think it's good"), and 200s that are JSON
  but not a chat completion (`MALFORMED`: ``message_null``, ``choice_empty``, ``choice_null``,
  ``choices_string``, ``usage_string``, ``content_int``, ``content_dicts``, ``usage_huge``:
  10**20 tokens). ``content_parts`` is not a fault: the normal reply as a list of text parts, as
  some compatible servers send it; nor are ``parts_null_text`` (a text part whose text is null),
  ``usage_float`` (counts as ``100.0``), ``surrogate`` (a lone ``\\ud800`` in the content) and
  ``nul`` (NUL characters in it). Byte-level faults, written to the socket as they are (`RAW`):
  ``trickle`` (the normal reply, one byte every `trickle_seconds`), ``silent`` (accept, read the
  request, never answer), ``deep_json`` (arrays nested 100,000 deep), ``sse`` (an event stream
  answering a non-streaming request), ``gzip_header`` (``Content-Encoding: gzip`` on a plain
  body), ``redirect_loop`` (a 307 to itself), ``html200`` (an HTML page with 200), ``huge_body``
  (a 5 MB reply text), ``utf16`` (the normal reply encoded as UTF-16).

The server counts requests per sha256 of the request body and records each request's
path (query string included) and headers (in memory only), so a test can prove which
judgements were asked again and that the API key arrived as a header. ``GET /stats`` returns the counts as JSON.

Run it alone (for a judging process that may be killed, or for the benchmark)::

    python -m metric_plugins.judge.loopback --port 0 --latency 0.1
    # prints its base URL (http://127.0.0.1:PORT/v1) on the first line, then serves until killed
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from metric_plugins.background_server import BackgroundServer

MARKER = re.compile(r"\[\[(\w+)=(.*?)\]\]", re.DOTALL)
UNPARSABLE = "I think it's good"


@dataclass(frozen=True)
class RecordedRequest:
    body_sha256: str
    body: bytes
    headers: dict[str, str]
    user_text: str
    number: int  # 1 for the first request with this body, 2 for the second...
    path: str = ""  # as sent, with the query string


def xml_reply(score: int) -> str:
    """A reply in the format the GIMMICK CKQA prompt asks for."""
    return (
        "<evaluation>\n<analysis>\nLoopback judge.\n</analysis>\n<explanation>\nDeterministic.\n</explanation>\n"
        f"<score>\n{score}\n</score>\n</evaluation>"
    )


def _with_content(completion: dict[str, Any], content: Any) -> dict[str, Any]:
    message = {**completion["choices"][0]["message"], "content": content}
    return {**completion, "choices": [{**completion["choices"][0], "message": message}]}


def _as_parts(completion: dict[str, Any]) -> dict[str, Any]:
    text = completion["choices"][0]["message"]["content"]
    half = len(text) // 2
    parts = [
        {"type": "text", "text": text[:half]},
        {"type": "refusal", "refusal": ""},
        {"type": "text", "text": text[half:]},
    ]
    return _with_content(completion, parts)


# 200 replies that are JSON but not a chat completion, each made from the normal one (seen from real servers)
MALFORMED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "message_null": lambda c: {**c, "choices": [{**c["choices"][0], "message": None}]},
    "choice_empty": lambda c: {**c, "choices": [{}]},
    "choice_null": lambda c: {**c, "choices": [None]},
    "choices_string": lambda c: {**c, "choices": "stop"},
    "usage_string": lambda c: {**c, "usage": "12 tokens"},
    "content_int": lambda c: _with_content(c, 73),
    "content_dicts": lambda c: _with_content(c, [{"type": "text", "text": 73}]),
    "usage_huge": lambda c: {**c, "usage": {**c["usage"], "prompt_tokens": 10**20}},
}
# 200s that are chat completions, if odd ones: each must give its item a judgement
ODD = {
    "content_parts": _as_parts,
    "parts_null_text": lambda c: _with_content(
        c, [{"type": "text", "text": None}, {"type": "text", "text": c["choices"][0]["message"]["content"]}]
    ),
    "usage_float": lambda c: {**c, "usage": {"prompt_tokens": 100.0, "completion_tokens": 20.0}},
    "surrogate": lambda c: _with_content(c, c["choices"][0]["message"]["content"] + "\ud800"),
    "nul": lambda c: _with_content(c, "\x00" * 8 + c["choices"][0]["message"]["content"] + "\x00"),
}
SHAPES = {**MALFORMED, **ODD}
HUGE_REPLY_CHARS = 5 * 1024 * 1024


def fault_for(spec: str, number: int) -> str | None:
    """The fault for the `number`-th request (1-based) under a ``kind:count,kind:count`` sequence."""
    seen = 0
    for part in filter(None, (p.strip() for p in spec.split(","))):
        kind, _, count = part.partition(":")
        if not count:
            return kind
        seen += int(count)
        if number <= seen:
            return kind
    return None


class LoopbackServer(BackgroundServer):
    """The server in a background thread. Use as a context manager, or `start()` / `stop()`."""

    thread_name = "loopback-judge"

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency: float = 0.0,
        hang_seconds: float = 30.0,
        trickle_seconds: float = 1.0,
    ):
        self.latency = latency
        self.hang_seconds = hang_seconds
        self.trickle_seconds = trickle_seconds
        self.counts: dict[str, int] = {}
        self.requests: list[RecordedRequest] = []
        super().__init__(host, port, _handler_for(self))
        self._httpd.loopback = self  # type: ignore[attr-defined]  # what the byte-level faults read their timing from

    @property
    def total(self) -> int:
        with self._lock:
            return len(self.requests)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {"total": len(self.requests), "counts": dict(self.counts), "peak_in_flight": self.peak_in_flight}

    def record(self, body: bytes, headers: dict[str, str], user_text: str, path: str = "") -> RecordedRequest:
        digest = hashlib.sha256(body).hexdigest()
        with self._lock:
            self.counts[digest] = self.counts.get(digest, 0) + 1
            request = RecordedRequest(digest, body, headers, user_text, self.counts[digest], path)
            self.requests.append(request)
        return request


def _handler_for(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the client reuses connections like with a real server
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            if urlsplit(self.path).path.rstrip("/") == "/stats":
                self._send(200, json.dumps(server.stats()).encode())
            else:
                self._send(404, b'{"error": {"message": "not found"}}')

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if urlsplit(self.path).path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._send(404, b'{"error": {"message": "not found"}}')
                return
            try:
                request = json.loads(body)
                user_text = _last_user_text(request["messages"])
            except (ValueError, KeyError, TypeError):
                self._send(400, b'{"error": {"message": "malformed request"}}')
                return
            recorded = server.record(body, dict(self.headers.items()), user_text, self.path)
            markers = dict(MARKER.findall(user_text))
            fault = fault_for(markers.get("fault", ""), recorded.number)
            with server.handling(), contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up
                time.sleep(float(markers.get("latency", server.latency)))
                self._answer(request, user_text, markers, fault)

        def _answer(self, request: dict[str, Any], user_text: str, markers: dict[str, str], fault: str | None) -> None:
            if fault in RAW:
                self.close_connection = True  # the connection is left in no state to reuse
                RAW[fault](self, _completion(request, _text_for(user_text, markers, fault)))
                return
            if fault == "timeout":
                time.sleep(server.hang_seconds)
            elif fault == "truncated":
                payload = json.dumps(_completion(request, xml_reply(50))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload[: len(payload) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            elif fault == "badjson":
                self._send(200, b"<html>upstream error</html>")
                return
            elif fault and fault.isdigit():
                extra = {"Retry-After": markers.get("retry_after", "1")} if fault == "429" else {}
                self._send(int(fault), json.dumps({"error": {"message": f"injected {fault}"}}).encode(), extra)
                return
            completion = _completion(request, _text_for(user_text, markers, fault))
            self._send(200, json.dumps(SHAPES[fault](completion) if fault in SHAPES else completion).encode())

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def _text_for(user_text: str, markers: dict[str, str], fault: str | None) -> str:
    """The reply text a request gets: the marked or hashed score in XML, a given reply, or the unparsable one."""
    if fault == "unparsable":
        return UNPARSABLE
    if "reply" in markers:
        return markers["reply"]
    digest = int(hashlib.sha256(user_text.encode("utf-8", "surrogatepass")).hexdigest(), 16)
    return xml_reply(int(markers["score"]) if "score" in markers else digest % 101)


def _head(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str]) -> None:
    handler.send_response(status)
    handler.send_header("Connection", "close")  # the client must not reuse what a fault leaves of the connection
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.flush()


def _raw(status: int, content_type: str, body: Callable[[dict[str, Any]], bytes], **headers: str) -> Callable:
    """A fault that writes `body(completion)` with the given status and headers (Content-Length added)."""

    def write(handler: BaseHTTPRequestHandler, completion: dict[str, Any]) -> None:
        payload = body(completion)
        _head(handler, status, {"Content-Type": content_type, "Content-Length": str(len(payload)), **headers})
        handler.wfile.write(payload)

    return write


def _trickle(handler: BaseHTTPRequestHandler, completion: dict[str, Any]) -> None:
    """The normal reply, announced in full, then sent one byte at a time (until the client hangs up)."""
    payload = json.dumps(completion).encode()
    _head(handler, 200, {"Content-Type": "application/json", "Content-Length": str(len(payload))})
    server: LoopbackServer = handler.server.loopback  # type: ignore[attr-defined]
    for byte in payload:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(server.trickle_seconds)


def _silent(handler: BaseHTTPRequestHandler, completion: dict[str, Any]) -> None:
    """Accept, read the request, say nothing for `hang_seconds`, hang up."""
    time.sleep(handler.server.loopback.hang_seconds)  # type: ignore[attr-defined]


def _sse(completion: dict[str, Any]) -> bytes:
    text = completion["choices"][0]["message"]["content"]
    chunk = {**completion, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]}
    return f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()


def _redirect_loop(handler: BaseHTTPRequestHandler, completion: dict[str, Any]) -> None:
    _head(handler, 307, {"Location": handler.path, "Content-Length": "0"})


DEPTH = 100_000
# faults written to the socket as bytes, past what `_send` would do
RAW: dict[str, Callable[[BaseHTTPRequestHandler, dict[str, Any]], None]] = {
    "trickle": _trickle,
    "silent": _silent,
    "deep_json": _raw(200, "application/json", lambda c: b"[" * DEPTH + b"]" * DEPTH),
    "sse": _raw(200, "text/event-stream", _sse),
    "gzip_header": _raw(200, "application/json", lambda c: json.dumps(c).encode(), **{"Content-Encoding": "gzip"}),
    "redirect_loop": _redirect_loop,
    "html200": _raw(200, "text/html", lambda c: b"<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>"),
    "huge_body": _raw(200, "application/json", lambda c: json.dumps(_with_content(c, "x" * HUGE_REPLY_CHARS)).encode()),
    "utf16": _raw(200, "application/json", lambda c: json.dumps(c).encode("utf-16")),
}


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    content = next(m for m in reversed(messages) if m["role"] == "user")["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def _completion(request: dict[str, Any], text: str) -> dict[str, Any]:
    prompt_tokens = sum(len(json.dumps(m["content"])) for m in request["messages"]) // 4
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "loopback"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(text) // 4,
            "total_tokens": prompt_tokens + len(text) // 4,
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Loopback OpenAI-compatible judge server (tests, benchmarks).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument("--hang-seconds", type=float, default=30.0, help="how long a 'timeout' fault hangs")
    parser.add_argument("--trickle-seconds", type=float, default=1.0, help="seconds per byte of a 'trickle' fault")
    args = parser.parse_args(argv)
    server = LoopbackServer(
        host=args.host,
        port=args.port,
        latency=args.latency,
        hang_seconds=args.hang_seconds,
        trickle_seconds=args.trickle_seconds,
    )
    print(server.url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
