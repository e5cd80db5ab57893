"""The records a judge passes around: items in, messages to a backend, replies back, judgements out.

They are plain frozen dataclasses with no dependency on a backend or a harness, so a harness
adapter can build `JudgeItem`s from its own documents and read `Judgement`s back without
importing openai or transformers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class Sampling:
    """Decoding parameters sent with every judge request; recorded in results and in the cache key.

    The default is greedy decoding (temperature 0): a paper's judge should be as reproducible as
    the server allows. `extra` carries server-specific parameters (vLLM's ``repetition_penalty``,
    ``top_k``), sent as extra body fields and keyed like the others.
    """

    temperature: float = 0.0
    max_tokens: int = 1024
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Set parameters only: a field added later with a None default leaves existing cache keys valid."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or (f.name == "extra" and not value):
                continue
            if f.name == "extra":
                value = dict(sorted(value.items()))
            elif f.name == "stop":
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sampling:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown sampling parameter(s) {unknown}; known: {sorted(known)}")
        values = dict(data)
        if values.get("stop") is not None:
            values["stop"] = tuple(values["stop"])
        return cls(**values)


@dataclass(frozen=True)
class Usage:
    """Tokens a request cost, as the server reported them (0 when it reports nothing)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)


@dataclass(frozen=True)
class Reply:
    """What a backend returns for one request: the reply text and what it cost."""

    text: str
    usage: Usage = Usage()


@dataclass(frozen=True, repr=False)
class ImageRef:
    """An image as the judge receives it: PNG bytes plus their sha256, which is what cache keys use."""

    png: bytes
    sha256: str

    def __repr__(self) -> str:
        return f"ImageRef(sha256={self.sha256[:12]}..., {len(self.png)} bytes)"


@dataclass(frozen=True)
class Message:
    """One chat turn: text plus the images shown with it (before or after the text)."""

    role: str
    text: str
    images: tuple[ImageRef, ...] = ()
    images_first: bool = True

    def key_dict(self) -> dict[str, Any]:
        """The turn as it enters a cache key and the cache's request column: image hashes, never bytes."""
        out: dict[str, Any] = {"role": self.role, "text": self.text}
        if self.images:
            out["images"] = [image.sha256 for image in self.images]
            out["images_first"] = self.images_first
        return out


@dataclass(frozen=True)
class JudgeItem:
    """One thing to judge: the prompt's template fields, the images the judge should see, an id for reports.

    `images` are PIL images or encoded image bytes (PNG, JPEG, ...). The id only labels the
    judgement: two items with the same fields and images are the same request and share a
    cache entry.
    """

    fields: Mapping[str, str]
    images: Sequence[Any] = ()
    id: str | None = None


@dataclass(frozen=True)
class Judgement:
    """The outcome for one item.

    Exactly one of three states: valid (`scores` set), invalid (the judge replied but the reply
    did not parse after the re-asks: `reason` says why, `raw` holds the last reply) or failed
    (no reply: `error` says why; failures are never cached, so a re-run asks again).
    """

    item_id: str | None
    key: str
    scores: Mapping[str, float] | None
    score: float | None  # the prompt's primary score, None unless valid
    valid: bool
    raw: str | None
    cached: bool
    reason: str | None = None
    error: str | None = None
    attempts: int = 0  # requests sent for this judgement in this run, re-asks and retries included
    usage: Usage = Usage()

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def status(self) -> str:
        return "valid" if self.valid else "failed" if self.failed else "invalid"

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "key": self.key,
            "status": self.status,
            "score": self.score,
            "scores": dict(self.scores) if self.scores is not None else None,
            "raw": self.raw,
            "cached": self.cached,
            "reason": self.reason,
            "error": self.error,
            "attempts": self.attempts,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
        }


def storable_text(text: str) -> str:
    """`text` with lone surrogates (JSON may carry ``"\\ud800"``) replaced by U+FFFD: valid UTF-8 everywhere after.

    A lone surrogate cannot be encoded as UTF-8, so SQLite, the samples files and results JSON
    would all refuse it; a surrogate pair becomes the character it encodes.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
