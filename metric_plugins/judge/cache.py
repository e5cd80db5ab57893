"""The persistent judge cache: one SQLite file, one row per finished judgement, written as it finishes.

Why SQLite: it is in the standard library, and in WAL mode readers never block the writer and
several threads and processes can write one file safely (each write is one short
autocommitted statement; a busy file is waited for, up to `timeout`). A judgement is
committed the moment it is final, so a killed run loses only the requests in flight.

What is stored per key (`metric_plugins.judge.keys`): the raw reply, the parsed scores, validity
and the reason, attempts, token usage, a timestamp, and for auditing the judge identity,
prompt id/version/hash, sampling and the rendered request (image hashes, not images). Never
a credential: nothing that reaches this module carries one.

Only final outcomes are stored: valid judgements, and replies still invalid after every
re-ask. Failed requests (no reply) are not stored, so the next run asks again.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
DEFAULT_FILENAME = "judge.sqlite"

CREATE = """
CREATE TABLE IF NOT EXISTS judgements (
    key TEXT PRIMARY KEY,
    item_id TEXT,
    prompt_id TEXT NOT NULL,
    prompt_version INTEGER NOT NULL,
    prompt_hash TEXT NOT NULL,
    backend TEXT NOT NULL,
    sampling TEXT NOT NULL,
    request TEXT NOT NULL,
    raw TEXT,
    scores TEXT,
    valid INTEGER NOT NULL,
    reason TEXT,
    attempts INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at TEXT NOT NULL
)
"""
COLUMNS = (
    "key", "item_id", "prompt_id", "prompt_version", "prompt_hash", "backend", "sampling", "request",
    "raw", "scores", "valid", "reason", "attempts", "prompt_tokens", "completion_tokens", "created_at",
)  # fmt: skip


@dataclass(frozen=True)
class CacheEntry:
    """One stored judgement. `scores` is None for an invalid reply."""

    key: str
    raw: str | None
    scores: Mapping[str, float] | None
    valid: bool
    reason: str | None
    attempts: int
    prompt_tokens: int
    completion_tokens: int


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/arab-mm-tasks/judge.sqlite`` (``~/.cache/...`` when XDG_CACHE_HOME is unset)."""
    from arab_mm_tasks.core.sources import user_cache_dir

    return user_cache_dir() / DEFAULT_FILENAME


class JudgeCache:
    """A judge cache file. Safe to share between the threads of a judge and between processes.

    Args:
        path: the SQLite file (created with its folder), or ``":memory:"`` for a cache that dies with the object.
        timeout: seconds to wait for another writer before giving up.
    """

    def __init__(self, path: str | Path, *, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.path = str(path) if str(path) == ":memory:" else str(Path(path).expanduser())
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        with self._lock:
            self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = NORMAL")  # durable across a killed process, fast
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise RuntimeError(f"judge cache {self.path} has schema {version}; this code reads {SCHEMA_VERSION}")
            self._db.execute(CREATE)
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @classmethod
    def default(cls) -> JudgeCache:
        return cls(default_cache_path())

    @classmethod
    def in_memory(cls) -> JudgeCache:
        """No persistence: for one-off runs and tests."""
        return cls(":memory:")

    def __repr__(self) -> str:
        return f"JudgeCache({self.path!r})"

    def get_many(self, keys: Iterable[str]) -> dict[str, CacheEntry]:
        """The stored entries among `keys`."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, CacheEntry] = {}
        for start in range(0, len(keys), 500):  # SQLite caps the number of bound parameters
            chunk = keys[start : start + 500]
            query = (
                "SELECT key, raw, scores, valid, reason, attempts, prompt_tokens, completion_tokens "
                f"FROM judgements WHERE key IN ({','.join('?' * len(chunk))})"
            )
            with self._lock:
                rows = self._db.execute(query, chunk).fetchall()
            for key, raw, scores, valid, reason, attempts, prompt_tokens, completion_tokens in rows:
                parsed = json.loads(scores) if scores is not None else None
                found[key] = CacheEntry(
                    key, raw, parsed, bool(valid), reason, attempts, prompt_tokens, completion_tokens
                )
        return found

    def put(self, entry: CacheEntry, *, item_id: str | None, context: Mapping[str, Any]) -> None:
        """Store a final judgement now (one autocommitted statement).

        `context` holds what the key was made from, for auditing: ``prompt`` (id, version,
        content_hash), ``backend``, ``sampling`` and ``request``.
        """
        prompt = context["prompt"]
        row = (
            entry.key,
            item_id,
            prompt["id"],
            prompt["version"],
            prompt["content_hash"],
            _json(context["backend"]),
            _json(context["sampling"]),
            _json(context["request"]),
            entry.raw,
            _json(entry.scores) if entry.scores is not None else None,
            int(entry.valid),
            entry.reason,
            entry.attempts,
            entry.prompt_tokens,
            entry.completion_tokens,
            datetime.now(timezone.utc).isoformat(timespec="seconds"),
        )
        statement = f"INSERT OR REPLACE INTO judgements ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
        with self._lock:
            self._db.execute(statement, row)

    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles (lighteval deep-copies metrics) reopen the same file."""
        return {"path": self.path, "timeout": self.timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], timeout=state["timeout"])  # type: ignore[misc]

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
