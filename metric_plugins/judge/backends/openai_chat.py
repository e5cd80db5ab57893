"""Any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, vLLM, TGI, Ollama) through the `openai` client.

The API key is read from an environment variable whose *name* is configured (default
``OPENAI_API_KEY``) when the client is first needed, and lives only inside the client: it is
not an attribute of this object, not in its repr, its identity, its pickled state or any
error message. The client's own retries are off (``max_retries=0``) so every retry goes
through the judge's policy and is counted.

Credentials in the base URL (``http://user:token@host/v1``, ``?key=token``) are kept the same
way: the client is given the public URL, and an httpx client that adds them to each request
below the layer that logs URLs (`metric_plugins.judge.backends.url_credentials`).

Requests go through the client's generic ``client.post`` (its documented way to call any
endpoint: base URL, auth, headers, timeouts and errors as for ``chat.completions.create``),
with a body we build: the typed method first walks the whole request through openai's
TypedDict transform, which cost about as much CPU as the rest of the request together and
limited 32 threads under one GIL. The 200 reply is read from its JSON by `read_completion`,
not through the client's models, which are built without validation: a server that sends
``"message": null`` or an integer content must fail that one request (retried like a 5xx),
not crash the run with an AttributeError.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from metric_plugins.judge.backends.base import JudgeStopped, RequestRejected, TransientError
from metric_plugins.judge.backends.deadline import no_answer
from metric_plugins.judge.backends.url_credentials import http_module
from metric_plugins.judge.media import data_url
from metric_plugins.judge.retry import parse_retry_after
from metric_plugins.judge.schema import Message, Reply, Sampling, Usage, storable_text

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "no-key"  # vLLM, TGI and Ollama accept any key unless started with one


class OpenAIChatBackend:
    """A chat-completions endpoint.

    Args:
        model: the model name the server knows (``gpt-4o-2024-11-20``, a vLLM ``--served-model-name``).
        base_url: the endpoint up to ``/v1`` (``http://localhost:8000/v1``); None means OpenAI.
        api_key_env: the environment variable holding the key. Unset is fine for a local server,
            an error for OpenAI itself (raised by the first request, which stops the run).
        timeout: seconds for a whole request, from connecting to the last byte of the body
            (`metric_plugins.judge.backends.deadline`); a timed-out request is retried.
    """

    def __init__(
        self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY", timeout: float = 60.0
    ) -> None:
        if not model:
            raise ValueError("OpenAIChatBackend needs a model name")
        self.model = model
        url = (base_url or OPENAI_BASE_URL).rstrip("/")
        self.base_url = self.public_url = public_url(url)
        self._secret_url = url  # with its credentials, if any: used to connect, never shown or pickled
        self.api_key_env = api_key_env
        self.timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": "openai-chat", "model": self.model, "base_url": self.public_url}

    @property
    def max_concurrency(self) -> int | None:
        return None

    def __repr__(self) -> str:
        return (
            f"OpenAIChatBackend(model={self.model!r}, base_url={self.public_url!r}, "
            f"api_key_env={self.api_key_env!r}, timeout={self.timeout})"
        )

    def __getstate__(self) -> dict[str, Any]:
        """Pickles carry the settings, never the client, its key or credentials in the base URL.

        An unpickled backend connects to the public URL; a server that needs the URL's
        credentials then answers 401, which stops the run with the server's message.
        """
        state = {k: v for k, v in self.__dict__.items() if k not in ("_client", "_lock")}
        state["_secret_url"] = self.public_url
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _client=None, _lock=threading.Lock())

    def __deepcopy__(self, memo: dict[int, Any]) -> OpenAIChatBackend:
        """An in-memory copy (lighteval copies metrics) keeps the URL's credentials: nothing is written."""
        clone = object.__new__(OpenAIChatBackend)
        clone.__setstate__({**self.__getstate__(), "_secret_url": self._secret_url})
        return clone

    def prepare(self) -> None:
        """Import openai and build the client now, so a run's timings (and its first requests) do not pay for it."""
        self._get_client()

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai

                key = os.environ.get(self.api_key_env)
                if not key:
                    if self.base_url == OPENAI_BASE_URL:  # a setup error: stop the run, do not fail every item
                        raise JudgeStopped(f"${self.api_key_env} is not set; the OpenAI API needs a key")
                    log.info("$%s is not set: sending no key to %s", self.api_key_env, self.public_url)
                    key = NO_KEY
                from metric_plugins.judge.backends.url_credentials import http_client

                self._client = openai.OpenAI(
                    api_key=key,
                    base_url=self.public_url,
                    timeout=self.timeout,
                    max_retries=0,
                    http_client=http_client(self._secret_url, self.timeout),
                )
            return self._client

    def complete(self, messages: Sequence[Message], sampling: Sampling) -> Reply:
        import openai

        client = self._get_client()
        try:
            response = client.post(
                "/chat/completions", body=_request_body(self.model, messages, sampling), cast_to=http_module().Response
            )
        except openai.APIStatusError as error:
            status = error.status_code
            if status == 429 or status >= 500:
                retry_after = parse_retry_after(error.response.headers)
                raise TransientError(
                    f"HTTP {status} from {self.public_url}", status=status, retry_after=retry_after
                ) from None
            message = f"HTTP {status} from {self.public_url}: {_error_message(error)}"
            raise RequestRejected(message, status=status) from None
        except openai.APITimeoutError as error:
            silent = no_answer(error.__cause__)
            raise TransientError(
                f"timed out after {self.timeout}s waiting for {self.public_url}"
                + (" (connected, no answer)" if silent else ""),
                unreachable=silent or _no_connection(error),
            ) from None
        except openai.APIConnectionError as error:
            raise TransientError(
                f"connection to {self.public_url} failed: {_cause(error)}", unreachable=_no_connection(error)
            ) from None
        return decode_completion(response, self.public_url)


def decode_completion(response: Any, source: str) -> Reply:
    """A 200's reply, or a `TransientError`: any failure to decode its body is this request's, never the run's.

    Broad on purpose: a body can fail in ways no list foresees (RecursionError from JSON nested
    100,000 deep, a codec error, MemoryError on a huge body), and each must fail one request.
    """
    try:
        body = response.json()
    except Exception as error:  # broad on purpose: see the docstring
        raise TransientError(f"malformed response body from {source}: {type(error).__name__}") from None
    return read_completion(body, source)


def read_completion(body: Any, source: str = "the endpoint") -> Reply:
    """The reply text and usage of a chat-completion JSON body, or a `TransientError` saying what is wrong.

    Accepted: ``choices[0].message.content`` as a string, null (an empty reply, which then does
    not parse and is re-asked), or a list of content parts, whose ``text`` parts are joined
    (some OpenAI-compatible servers send ``[{"type": "text", "text": "..."}]``); ``usage``
    absent, null or an object of token counts. Anything else is not a chat completion.
    """
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices:
        raise _malformed(source, "no list of choices")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise _malformed(source, "choices[0] has no message object")
    text = _content_text(message.get("content"))
    if text is None:
        raise _malformed(source, f"message content is {type(message.get('content')).__name__}, not text")
    usage = _usage(body.get("usage"))
    if usage is None:
        raise _malformed(source, f"usage is {_shown(body.get('usage'))}, not token counts")
    return Reply(storable_text(text), usage)


def _content_text(content: Any) -> str | None:
    """A message's text: a string, null as "", or the text parts of a content list; None when it is none of these."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not all(isinstance(part, dict) for part in content):
        return None
    texts = [part.get("text") for part in content if part.get("type") == "text"]
    if not all(isinstance(text, str) or text is None for text in texts):
        return None
    return "".join(text for text in texts if text is not None)  # a null text part is an empty one, like null content


def _usage(usage: Any) -> Usage | None:
    """Token counts from ``usage`` (missing counts are 0), or None when it is not an object of counts."""
    if usage is None:
        return Usage()
    if not isinstance(usage, dict):
        return None
    counts = [_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))]
    if None in counts:
        return None
    return Usage(*counts)  # type: ignore[arg-type]


MAX_TOKENS = 2**53  # far above any real count, and exact in a float and in SQLite's 64-bit INTEGER


def _count(value: Any) -> int | None:
    """A token count: a non-negative integer or integral float (``100.0``, as some servers send) up to
    `MAX_TOKENS`; missing or null is 0; anything else (negative, fractional, 10**20, a string) is None."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():  # also NaN and infinities
        return None
    return int(value) if 0 <= value <= MAX_TOKENS else None


def _shown(value: Any) -> str:
    """How a bad field is named in a message: its type, or the offending counts (short)."""
    if isinstance(value, dict):
        return repr({k: value.get(k) for k in ("prompt_tokens", "completion_tokens")})[:120]
    return type(value).__name__


def _malformed(source: str, what: str) -> TransientError:
    return TransientError(f"malformed response from {source}: not a chat completion ({what})")


def public_url(url: str) -> str:
    """`url` without user info or query string: what identities, reprs and messages show of an endpoint."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def _to_openai(message: Message) -> dict[str, Any]:
    """A chat turn in the OpenAI format: plain text, or content parts with ``data:`` image URLs."""
    body_text = storable_text(message.text)  # a generation may hold a lone surrogate, which no JSON body can send
    if not message.images:
        return {"role": message.role, "content": body_text}
    images = [{"type": "image_url", "image_url": {"url": data_url(image)}} for image in message.images]
    text = [{"type": "text", "text": body_text}]
    return {"role": message.role, "content": images + text if message.images_first else text + images}


def _request_body(model: str, messages: Sequence[Message], sampling: Sampling) -> dict[str, Any]:
    """The chat-completions request: model, turns, sampling; `sampling.extra` as extra top-level fields."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [_to_openai(m) for m in messages],
        "temperature": sampling.temperature,
        "max_tokens": sampling.max_tokens,
    }
    if sampling.top_p is not None:
        body["top_p"] = sampling.top_p
    if sampling.seed is not None:
        body["seed"] = sampling.seed
    if sampling.stop:
        body["stop"] = list(sampling.stop)
    body.update(sampling.extra)
    return body


def _error_message(error: Any) -> str:
    """The server's error message (its JSON ``error.message``), short; never request headers."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return str(message)[:200]
    return type(error).__name__


def _no_connection(error: BaseException) -> bool:
    """True when the request never reached a server (refused, unresolvable, connect timeout)."""
    http = http_module()
    return isinstance(error.__cause__, (http.ConnectError, http.ConnectTimeout))


def _cause(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    return type(cause).__name__ if cause else type(error).__name__
