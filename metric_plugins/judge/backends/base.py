"""The one interface every judge backend implements, and the two kinds of error it may raise.

A backend turns chat turns into one reply. It does not retry, cache or parse: the `Judge`
does that the same way for every backend, so what counts as a retry, a re-ask or a failure
is decided in one place. A backend only sorts its errors into "try again later"
(`TransientError`) and "this request will never work" (`RequestRejected`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from metric_plugins.judge.schema import Message, Reply, Sampling


@runtime_checkable
class JudgeBackend(Protocol):
    """Something that answers chat turns: an HTTP endpoint or an in-process model.

    `identity` names the judge in cache keys and results: model and endpoint, never a secret.
    `max_concurrency` caps the judge's worker threads (None: no cap; 1 for in-process models).
    """

    @property
    def identity(self) -> Mapping[str, str]: ...

    @property
    def max_concurrency(self) -> int | None: ...

    def complete(self, messages: Sequence[Message], sampling: Sampling) -> Reply: ...


class BackendError(Exception):
    """A request that produced no usable reply. `status` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TransientError(BackendError):
    """Worth retrying: 429, 5xx, timeouts, dropped connections, malformed bodies.

    `retry_after` is the server's ``Retry-After`` in seconds, when it sent one. `unreachable` is
    True when no connection could be made at all (refused, DNS, connect timeout): the judge stops
    a run whose first requests all end this way instead of retrying a dead endpoint per item.
    """

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None, unreachable: bool = False
    ) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after
        self.unreachable = unreachable


class RequestRejected(BackendError):
    """Not worth retrying: a 4xx other than 429 (bad request, auth, unknown model), or a backend that cannot
    take the request (images sent to a text-only model)."""


class JudgeStopped(RuntimeError):
    """The whole run cannot succeed (dead endpoint, bad key, unknown model): stop it with one message.

    Raised by `Judge.score_all` instead of failing every item the same way; nothing is cached for
    the items not judged, so a re-run after fixing the cause asks for them.
    """
