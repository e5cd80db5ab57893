"""The cache key of a judge request: what must be equal for two requests to get the same judgement.

sha256 over canonical JSON of: the backend identity (backend kind, model, base URL: never a
key), the prompt's id, version and content hash, the fully rendered chat turns (with each
image as the sha256 of its PNG bytes) and the sampling parameters. Change any of them and
the request misses the cache; keep all of them and it hits, whatever the item is called.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from metric_plugins.judge.prompts.base import JudgePrompt
from metric_plugins.judge.schema import Message, Sampling

KEY_SCHEMA = 1  # bump if the composition below changes, so old entries stop matching


def request_record(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The rendered turns as stored next to a judgement: text and image hashes."""
    return [message.key_dict() for message in messages]


def cache_key(
    backend_identity: Mapping[str, str], prompt: JudgePrompt, messages: Sequence[Message], sampling: Sampling
) -> str:
    payload = {
        "schema": KEY_SCHEMA,
        "backend": dict(backend_identity),
        "prompt": prompt.describe(),
        "messages": request_record(messages),
        "sampling": sampling.to_dict(),
    }
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: the same bytes as UTF-8 for any valid text, and a key (not a crash) for a lone surrogate
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
