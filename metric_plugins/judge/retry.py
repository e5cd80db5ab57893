"""When to try a failed request again: exponential backoff with full jitter, and the server's Retry-After.

Full jitter (a uniform draw in [0, min(cap, base * 2**n)]) spreads the retries of many worker
threads that failed together, so they do not hit a recovering server in lockstep. A server
that says when to come back (``Retry-After`` on a 429 or 503, in seconds or as an HTTP date,
or OpenAI's ``retry-after-ms``) is waited for at least that long.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import timezone
from email.utils import parsedate_to_datetime
from typing import Any


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait when a request fails transiently.

    Args:
        max_retries: retries per request after the first try (0: never retry).
        base_delay: seconds; the n-th retry waits up to ``base_delay * 2**n``.
        max_delay: the cap on that backoff.
        max_retry_after: a longer ``Retry-After`` is cut to this, so one bad header cannot stall a run.
    """

    max_retries: int = 6
    base_delay: float = 1.0
    max_delay: float = 60.0
    max_retry_after: float = 300.0

    def delay(self, retry_index: int, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number `retry_index` (0-based)."""
        draw = (rng or random).uniform(0.0, min(self.max_delay, self.base_delay * 2**retry_index))
        if retry_after is None:
            return draw
        return max(min(retry_after, self.max_retry_after), draw)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks us to wait, from ``retry-after-ms`` or ``Retry-After``; None if absent or unreadable."""
    lowered = {key.lower(): value for key, value in headers.items()}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = lowered.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / scale)
        except ValueError:
            pass
        if name == "retry-after":
            try:
                when = parsedate_to_datetime(value)
            except (TypeError, ValueError):
                return None
            if when.tzinfo is None:  # HTTP dates are GMT
                when = when.replace(tzinfo=timezone.utc)
            return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return None
