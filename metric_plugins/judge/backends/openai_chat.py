"""Any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, vLLM, TGI, Ollama) through the `openai` client.

The API key is read from an environment variable whose *name* is configured (default
``OPENAI_API_KEY``) when the client is first needed, and lives only inside the client: it is
not an attribute of this object, not in its repr, its identity, its pickled state or any
error message. The client's own retries are off (``max_retries=0``) so every retry goes
through the judge's policy and is counted.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from metric_plugins.judge.backends.base import RequestRejected, TransientError
from metric_plugins.judge.media import data_url
from metric_plugins.judge.retry import parse_retry_after
from metric_plugins.judge.schema import Message, Reply, Sampling, Usage

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
        timeout: seconds per request (connect and read); a timed-out request is retried.
    """

    def __init__(
        self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY", timeout: float = 60.0
    ) -> None:
        if not model:
            raise ValueError("OpenAIChatBackend needs a model name")
        self.model = model
        self.base_url = (base_url or OPENAI_BASE_URL).rstrip("/")
        self.public_url = public_url(self.base_url)
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
        """Pickles and deep copies (lighteval copies metrics) carry the settings, never the client and its key."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_client", "_lock")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _client=None, _lock=threading.Lock())

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai

                key = os.environ.get(self.api_key_env)
                if not key:
                    if self.base_url == OPENAI_BASE_URL:  # a setup error: stop the run, do not fail every item
                        raise RuntimeError(f"${self.api_key_env} is not set; the OpenAI API needs a key")
                    log.info("$%s is not set: sending no key to %s", self.api_key_env, self.public_url)
                    key = NO_KEY
                self._client = openai.OpenAI(api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=0)
            return self._client

    def complete(self, messages: Sequence[Message], sampling: Sampling) -> Reply:
        import openai
        from openai.types.chat import ChatCompletion

        client = self._get_client()
        try:
            response = client.chat.completions.create(
                model=self.model, messages=[_to_openai(m) for m in messages], **_sampling_kwargs(sampling)
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
        except openai.APITimeoutError:
            raise TransientError(f"timed out after {self.timeout}s waiting for {self.public_url}") from None
        except openai.APIConnectionError as error:
            raise TransientError(f"connection to {self.public_url} failed: {_cause(error)}") from None
        except (ValueError, openai.APIResponseValidationError) as error:  # a body that is not a valid completion
            raise TransientError(f"malformed response body from {self.public_url}: {type(error).__name__}") from None
        if not isinstance(response, ChatCompletion) or not response.choices:
            raise TransientError(f"malformed response from {self.public_url}: not a chat completion")
        usage = response.usage
        return Reply(
            text=response.choices[0].message.content or "",
            usage=Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0) if usage else Usage(),
        )


def public_url(url: str) -> str:
    """`url` without user info or query string: what identities, reprs and messages show of an endpoint."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def _to_openai(message: Message) -> dict[str, Any]:
    """A chat turn in the OpenAI format: plain text, or content parts with ``data:`` image URLs."""
    if not message.images:
        return {"role": message.role, "content": message.text}
    images = [{"type": "image_url", "image_url": {"url": data_url(image)}} for image in message.images]
    text = [{"type": "text", "text": message.text}]
    return {"role": message.role, "content": images + text if message.images_first else text + images}


def _sampling_kwargs(sampling: Sampling) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"temperature": sampling.temperature, "max_tokens": sampling.max_tokens}
    if sampling.top_p is not None:
        kwargs["top_p"] = sampling.top_p
    if sampling.seed is not None:
        kwargs["seed"] = sampling.seed
    if sampling.stop:
        kwargs["stop"] = list(sampling.stop)
    if sampling.extra:
        kwargs["extra_body"] = dict(sampling.extra)
    return kwargs


def _error_message(error: Any) -> str:
    """The server's error message (its JSON ``error.message``), short; never request headers."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return str(message)[:200]
    return type(error).__name__


def _cause(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    return type(cause).__name__ if cause else type(error).__name__
