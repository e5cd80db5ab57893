"""A loopback OpenAI-compatible *model* server (not the judge: `metric_plugins.judge.loopback`), for tests and
benchmarks of served-model runs.

``POST /v1/chat/completions`` answers like vLLM / SGLang / TGI serving a vision-language model: the reply is
picked deterministically from the request (a digest of its text parts and of each image's decoded bytes, in
order), so the same request always gets the same answer and a test can recompute every score from the run's
samples. Every request is recorded (`ModelRequest`): its text, its images in order (the sha256 of each data
URL's decoded bytes, and of its pixels once decoded, so a test can compare with the images it expects whatever
the encoding), and the generation settings the harness sent (``max_tokens``, ``temperature``, ``stop``).

``POST /v1/completions`` answers like vLLM's completions endpoint: with ``echo`` and ``logprobs`` (what lm-eval's
``local-completions`` sends for a log-likelihood request, the prompt as token ids) every prompt token after the
first gets a log-probability `token_logprob` computes from the tokens before it, so a test can recompute each
log-likelihood a harness reports; otherwise it answers a text picked like a chat reply. Each is recorded as a
`CompletionRequest`.

Run it alone (a harness in another process, the benchmark)::

    python -m arab_mm_tasks.testing.model_server --port 0 --latency 0.1
    # prints its base URL (http://127.0.0.1:PORT/v1) on the first line, then serves until killed
"""

from __future__ import annotations

import argparse
import base64
import binascii
import contextlib
import hashlib
import io
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from metric_plugins.background_server import BackgroundServer

# short answers a VLM might give: option letters, yes/no, a few Arabic words (GIMMICK, JEEM, Pearl, ARB replies)
DEFAULT_REPLIES = ("A", "B", "C", "D", "نعم", "لا", "مسجد", "القاهرة", "الجواب النهائي: B")


@dataclass(frozen=True)
class SentImage:
    """One image part as it arrived: where it sat among the parts, and digests of what it decodes to."""

    position: int  # index among the user turn's content parts
    sha256: str  # of the data URL's decoded bytes ("" for a plain http URL)
    pixels: str  # sha256 of the decoded RGB pixels and size ("" when the bytes are not an image)
    url_prefix: str  # "data:image/png;base64" for a data URL, else the URL


@dataclass(frozen=True)
class ModelRequest:
    """One chat request as the server saw it."""

    path: str
    model: str | None
    text: str  # the text parts of every message, in order, joined by newlines
    images: tuple[SentImage, ...]
    parts: tuple[str, ...]  # the last user turn's part types in order ("text", "image_url", ...)
    max_tokens: int | None
    temperature: float | None
    stop: Any
    reply: str
    extra: dict[str, Any] = field(default_factory=dict)  # the other payload keys (seed, n, ...)


@dataclass(frozen=True)
class CompletionRequest:
    """One completions request: its prompts (token ids, or text), and whether it asked for echoed logprobs."""

    prompts: tuple[Any, ...]
    echo: bool
    logprobs: Any
    max_tokens: int | None
    temperature: float | None


def token_logprob(before: Sequence[Any], token: Any) -> float:
    """The log-probability the server gives `token` after the tokens `before`: deterministic, in (-10, 0)."""
    digest = hashlib.sha256(json.dumps([list(before), token]).encode()).hexdigest()
    return -(int(digest, 16) % 997 + 1) / 100


def _completion_choice(index: int, prompt: Any, payload: dict[str, Any], replies: Sequence[str]) -> dict[str, Any]:
    tokens = list(prompt) if isinstance(prompt, list) else list(str(prompt))  # a text prompt: one token a character
    if not (payload.get("echo") and payload.get("logprobs")):
        return {"index": index, "text": pick_reply(json.dumps(tokens), [], replies), "finish_reason": "stop"}
    generated = 0  # the one token asked for after the prompt (max_tokens 1), which lm-eval cuts off
    values = [None] + [token_logprob(tokens[:i], tokens[i]) for i in range(1, len(tokens))]
    values.append(token_logprob(tokens, generated))
    seen = [*tokens, generated]
    top = [None] + [{str(token): value} for token, value in zip(seen[1:], values[1:], strict=True)]
    logprobs = {"tokens": [str(t) for t in seen], "token_logprobs": values, "top_logprobs": top}
    return {"index": index, "text": "", "logprobs": logprobs, "finish_reason": "length"}


def pixel_digest(image: Any) -> str:
    """sha256 of a PIL image's RGB pixels and size: equal for two encodings of the same picture."""
    rgb = image.convert("RGB")
    return hashlib.sha256(f"{rgb.size}".encode() + rgb.tobytes()).hexdigest()


def _image_part(part: dict[str, Any], position: int) -> SentImage:
    url = (part.get("image_url") or {}).get("url", "") if isinstance(part.get("image_url"), dict) else ""
    url = url or str(part.get("image_url") or "")
    if not url.startswith("data:"):
        return SentImage(position, "", "", url)
    prefix, _, data = url.partition(",")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return SentImage(position, "", "", prefix)
    pixels = ""
    with contextlib.suppress(Exception):  # not an image: recorded as bytes only, the reply still deterministic
        from PIL import Image

        pixels = pixel_digest(Image.open(io.BytesIO(raw)))
    return SentImage(position, hashlib.sha256(raw).hexdigest(), pixels, prefix)


def _read(messages: Sequence[dict[str, Any]]) -> tuple[str, tuple[SentImage, ...], tuple[str, ...]]:
    texts: list[str] = []
    images: list[SentImage] = []
    parts: tuple[str, ...] = ()
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            types = ["text"]
        else:
            types = []
            for position, part in enumerate(content or []):
                kind = str(part.get("type", ""))
                types.append(kind)
                if kind == "text":
                    texts.append(str(part.get("text", "")))
                elif kind == "image_url":
                    images.append(_image_part(part, position))
        if message.get("role") == "user":
            parts = tuple(types)
    return "\n".join(texts), tuple(images), parts


def pick_reply(text: str, image_digests: Sequence[str], replies: Sequence[str] = DEFAULT_REPLIES) -> str:
    """The answer to a request: one of `replies`, chosen by a digest of its text and its images in order."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass"))
    for image in image_digests:
        digest.update(image.encode())
    return replies[int(digest.hexdigest(), 16) % len(replies)]


class ModelServer(BackgroundServer):
    """The server in a background thread; a context manager. `latency` delays every answer (seconds)."""

    thread_name = "loopback-model"

    def __init__(
        self, *, host: str = "127.0.0.1", port: int = 0, latency: float = 0.0, replies: Sequence[str] = DEFAULT_REPLIES
    ) -> None:
        self.latency = latency
        self.replies = tuple(replies)
        self.requests: list[ModelRequest] = []
        self.completions: list[CompletionRequest] = []
        super().__init__(host, port, _handler_for(self))

    def answer(self, path: str, payload: dict[str, Any]) -> ModelRequest:
        text, images, parts = _read(payload["messages"])
        reply = pick_reply(text, [image.sha256 for image in images], self.replies)
        known = {"messages", "model", "max_tokens", "temperature", "stop"}
        recorded = ModelRequest(
            path,
            payload.get("model"),
            text,
            images,
            parts,
            payload.get("max_tokens", payload.get("max_completion_tokens")),
            payload.get("temperature"),
            payload.get("stop"),
            reply,
            {key: value for key, value in payload.items() if key not in known},
        )
        with self._lock:
            self.requests.append(recorded)
        return recorded

    def complete(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A completions reply; one choice per prompt (a batch is a list of prompts)."""
        prompt = payload["prompt"]
        single = isinstance(prompt, str) or (isinstance(prompt, list) and prompt and isinstance(prompt[0], int))
        prompts = [prompt] if single else list(prompt)
        recorded = CompletionRequest(
            tuple(tuple(p) if isinstance(p, list) else p for p in prompts),
            bool(payload.get("echo")),
            payload.get("logprobs"),
            payload.get("max_tokens"),
            payload.get("temperature"),
        )
        with self._lock:
            self.completions.append(recorded)
        choices = [_completion_choice(i, p, payload, self.replies) for i, p in enumerate(prompts)]
        return {"id": "cmpl-loopback", "object": "text_completion", "created": int(time.time()),
                "model": payload.get("model") or "loopback-model", "choices": choices}  # fmt: skip


def completion(payload: dict[str, Any], reply: str) -> dict[str, Any]:
    """A chat completion carrying `reply`, shaped like vLLM's."""
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": payload.get("model") or "loopback-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop", "logprobs": None}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _handler_for(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real server
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            if urlsplit(self.path).path.rstrip("/") == "/v1/models":  # what clients probe before they start
                self._send(200, {"object": "list", "data": [{"id": "loopback-model", "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            path = urlsplit(self.path).path.rstrip("/")
            if path in ("/v1/completions", "/completions"):
                self._complete(body)
                return
            if path not in ("/v1/chat/completions", "/chat/completions"):
                self._send(404, {"error": {"message": f"not found: {self.path} (chat completions and completions)"}})
                return
            try:
                payload = json.loads(body)
                if not isinstance(payload.get("messages"), list):
                    raise TypeError("messages")
                with server.handling():
                    recorded = server.answer(self.path, payload)
                    time.sleep(server.latency)
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                self._send(400, {"error": {"message": f"malformed request: {error}"}})
                return
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
                self._send(200, completion(payload, recorded.reply))

        def _complete(self, body: bytes) -> None:
            try:
                payload = json.loads(body)
                with server.handling():
                    answer = server.complete(payload)
                    time.sleep(server.latency)
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                self._send(400, {"error": {"message": f"malformed request: {error}"}})
                return
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._send(200, answer)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    args = parser.parse_args(argv)
    server = ModelServer(port=args.port, latency=args.latency)
    print(server.url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
