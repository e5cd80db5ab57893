"""The authors' Hub repos, simulated offline: a Hugging Face cache holding their files, and a loopback
"Hub" that answers every request as a gated repo does.

`huggingface_hub.snapshot_download`, which the builders use for Hub sources, reads a repo from the
cache when the Hub is unreachable; so the resolution code the tests run is the code users run.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import datasets

FAKE_COMMIT = "0123456789abcdef0123456789abcdef01234567"


def cached_repo(hub_cache: Path, repo_id: str) -> Path:
    """An empty snapshot of dataset repo `repo_id` in a Hugging Face cache (``refs/main`` -> a commit)."""
    repo = hub_cache / f"datasets--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(FAKE_COMMIT)
    snapshot = repo / "snapshots" / FAKE_COMMIT
    snapshot.mkdir(parents=True, exist_ok=True)
    return snapshot


def cache_arabculture_release(hub_cache: Path, records: Iterable[dict[str, Any]]) -> Path:
    """``MBZUAI/ArabCulture`` as the authors lay it out: ``<Country>/test-*.parquet`` and a card listing them."""
    snapshot = cached_repo(hub_cache, "MBZUAI/ArabCulture")
    by_country: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_country.setdefault(record["country"], []).append(record)
    for country, rows in by_country.items():
        (snapshot / country).mkdir(exist_ok=True)
        datasets.Dataset.from_list(rows).to_parquet(snapshot / country / "test-00000-of-00001.parquet")
    configs = "".join(f"- config_name: {c}\n  data_files:\n  - split: test\n    path: {c}/test-*\n" for c in by_country)
    (snapshot / "README.md").write_text(f"---\nlicense: cc-by-nc-sa-4.0\nconfigs:\n{configs}---\n")
    return snapshot


class _Gated(http.server.BaseHTTPRequestHandler):
    """Every request answered as the Hub answers one for a gated repo whose conditions were not accepted."""

    def do_GET(self) -> None:
        self.send_response(403)
        self.send_header("X-Error-Code", "GatedRepo")
        self.send_header("X-Error-Message", "Access to this dataset is restricted.")
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"error": "Access to this dataset is restricted."}')

    do_HEAD = do_GET

    def log_message(self, *args: Any) -> None:  # quiet test output
        pass


@contextmanager
def gated_hub() -> Iterator[str]:
    """A loopback endpoint for ``HF_ENDPOINT`` that answers like a gated repo."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Gated)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
