"""The two facts about local files the judge needs, kept here so `metric_plugins` imports nothing of ours.

`user_cache_dir` is where the judge cache lives by default (and, through `arab_mm_tasks.core.sources`,
every other cache of the project); `fingerprint` tells a rebuilt local model folder from the old one.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/arab-mm-tasks`` (``~/.cache/arab-mm-tasks``): built releases, demo, lighteval responses."""
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "arab-mm-tasks"


def fingerprint(folder: Path, recursive: bool = False) -> str:
    """Names, sizes and modification times of a folder's files (hidden ones skipped): changes with its content."""
    files = folder.rglob("*") if recursive else folder.iterdir()
    digest = hashlib.sha256()
    for file in sorted(files):
        relative = file.relative_to(folder)
        if file.is_file() and not any(part.startswith(".") for part in relative.parts):
            stat = file.stat()
            digest.update(f"{relative.as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]
