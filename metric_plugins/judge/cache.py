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

Storing is total: text is made valid UTF-8 (a lone surrogate becomes U+FFFD) and counts are
clamped to SQLite's 64-bit INTEGER, so no reply can make the insert raise.

Several processes on one file pay for each request once: before asking, a process *claims*
the key with a lease row (owner = host:pid:random, an expiry). Another process that finds a
live lease waits for the owner's judgement instead of asking itself; a lease expires at its
time, at once when its owner is a dead process on this host, and is deleted when its owner
stores the judgement or gives the item up.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from metric_plugins.judge.schema import storable_text
from metric_plugins.local_files import user_cache_dir

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
LEASES = """
CREATE TABLE IF NOT EXISTS leases (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires REAL NOT NULL
)
"""
# take the lease if it is free, expired or already ours; a live lease of another owner is left alone
CLAIM = """
INSERT INTO leases (key, owner, expires) VALUES (?, ?, ?)
ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires = excluded.expires
WHERE leases.expires < ? OR leases.owner = excluded.owner
"""
MAX_INTEGER = 2**63 - 1  # SQLite's INTEGER
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
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"  # this object's leases
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
            self._db.execute(LEASES)  # added later, in a table of its own: older files and readers are unaffected
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
            _text(item_id),
            _text(prompt["id"]),
            _int(prompt["version"]),
            _text(prompt["content_hash"]),
            _json(context["backend"]),
            _json(context["sampling"]),
            _json(context["request"]),
            _text(entry.raw),
            _json(entry.scores) if entry.scores is not None else None,
            int(entry.valid),
            _text(entry.reason),
            _int(entry.attempts),
            _int(entry.prompt_tokens),
            _int(entry.completion_tokens),
            datetime.now(timezone.utc).isoformat(timespec="seconds"),
        )
        statement = f"INSERT OR REPLACE INTO judgements ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
        with self._lock:
            self._db.execute(statement, row)
            self._db.execute("DELETE FROM leases WHERE key = ? AND owner = ?", (entry.key, self.owner))

    def claim(self, key: str, seconds: float) -> bool:
        """Take (or renew) the lease on `key` for `seconds`; False while another live owner holds it."""
        now = time.time()
        with self._lock:
            if self._db.execute(CLAIM, (key, self.owner, now + seconds, now)).rowcount == 1:
                return True
            row = self._db.execute("SELECT owner FROM leases WHERE key = ?", (key,)).fetchone()
        if row is None:  # released between the two statements
            return self.claim(key, seconds)
        if not _dead(row[0]):
            return False
        with self._lock:  # the owner was killed: its lease is void now, not at its expiry
            update = "UPDATE leases SET owner = ?, expires = ? WHERE key = ? AND owner = ?"
            return self._db.execute(update, (self.owner, now + seconds, key, row[0])).rowcount == 1

    def release(self, key: str) -> None:
        """Give up this object's lease on `key` (the item failed here: another process may try)."""
        with self._lock:
            self._db.execute("DELETE FROM leases WHERE key = ? AND owner = ?", (key, self.owner))

    def held_elsewhere(self, keys: Iterable[str]) -> set[str]:
        """Those of `keys` on which another owner holds a live lease."""
        keys, now, held = list(dict.fromkeys(keys)), time.time(), set()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT key, owner FROM leases WHERE expires >= ? AND owner != ? AND key IN ({marks})"
            with self._lock:
                rows = self._db.execute(query, [now, self.owner, *chunk]).fetchall()
            held.update(key for key, owner in rows if not _dead(owner))
        return held

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
    return storable_text(json.dumps(value, sort_keys=True, ensure_ascii=False))


def _text(value: str | None) -> str | None:
    return None if value is None else storable_text(str(value))


def _int(value: int) -> int:
    return max(-MAX_INTEGER, min(MAX_INTEGER, int(value)))


def _dead(owner: str) -> bool:
    """True when `owner` (host:pid:token) is a process on this host that no longer exists."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False  # another host's (or this process's) lease lasts until it expires
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by another user
        return False
    return False
