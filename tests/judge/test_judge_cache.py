"""The judge cache: what makes two requests the same judgement, and several writers sharing one file."""

from __future__ import annotations

import dataclasses
import io
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from PIL import Image

import metric_plugins
from metric_plugins.judge import (
    GIMMICK_CKQA,
    Judge,
    JudgeCache,
    JudgeItem,
    JudgePrompt,
    Reply,
    Sampling,
    Usage,
    XmlScore,
    default_cache_path,
)
from metric_plugins.judge.cache import CacheEntry
from metric_plugins.judge.schema import Message

REPO = Path(metric_plugins.__file__).resolve().parents[1]
IMAGE_PROMPT = JudgePrompt("test_image", 1, None, "Is this {THING}?", XmlScore(), ("THING",))


class FakeBackend:
    """Answers every request with a fixed score and counts the requests; no network."""

    def __init__(self, model: str = "judge-a", base_url: str = "http://a/v1") -> None:
        self.model, self.base_url = model, base_url
        self.calls: list[Sequence[Message]] = []
        self._lock = threading.Lock()

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": "fake", "model": self.model, "base_url": self.base_url}

    @property
    def max_concurrency(self) -> int | None:
        return None

    def complete(self, messages: Sequence[Message], sampling: Sampling) -> Reply:
        with self._lock:
            self.calls.append(messages)
        return Reply("<score>50</score>", Usage(10, 3))


def png(color: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buffer, format="PNG")
    return buffer.getvalue()


def calls_for(tmp_path: Path, items: list[JudgeItem], **changes) -> int:
    """Requests a judge with `changes` sends for `items` against the shared cache file."""
    backend = FakeBackend(**{k: v for k, v in changes.items() if k in ("model", "base_url")})
    prompt = changes.get("prompt", GIMMICK_CKQA)
    sampling = changes.get("sampling", Sampling())
    judge = Judge(backend, prompt, cache=tmp_path / "judge.sqlite", sampling=sampling, progress=False)
    run = judge.score_all(items)
    assert run.summary.calls == len(backend.calls)
    return len(backend.calls)


def ckqa(answer: str, item_id: str = "a") -> JudgeItem:
    return JudgeItem({"GROUND_TRUTH": "Al-Sadu", "GENERATED_ANSWER": answer}, id=item_id)


def test_same_inputs_hit_and_each_ingredient_of_the_key_misses(tmp_path):
    items = [ckqa("Weaving"), ckqa("Pottery", "b")]
    assert calls_for(tmp_path, items) == 2
    assert calls_for(tmp_path, items) == 0
    assert calls_for(tmp_path, [ckqa("Weaving", item_id="renamed")]) == 0  # the id only labels the item
    assert calls_for(tmp_path, [ckqa("Weaving!")]) == 1  # another prediction
    assert calls_for(tmp_path, items, model="judge-b") == 2
    assert calls_for(tmp_path, items, base_url="http://b/v1") == 2
    assert calls_for(tmp_path, items, prompt=dataclasses.replace(GIMMICK_CKQA, version=2)) == 2
    assert calls_for(tmp_path, items, sampling=Sampling(temperature=0.7)) == 2
    assert calls_for(tmp_path, items, sampling=Sampling(max_tokens=50)) == 2
    assert calls_for(tmp_path, items, sampling=Sampling(seed=3)) == 2
    assert calls_for(tmp_path, items) == 0  # all of the above left the original entries alone


def test_image_bytes_are_keyed_by_hash(tmp_path):
    red, blue = png((255, 0, 0)), png((0, 0, 255))
    assert calls_for(tmp_path, [JudgeItem({"THING": "a flag"}, [red])], prompt=IMAGE_PROMPT) == 1
    assert calls_for(tmp_path, [JudgeItem({"THING": "a flag"}, [red])], prompt=IMAGE_PROMPT) == 0
    assert calls_for(tmp_path, [JudgeItem({"THING": "a flag"}, [blue])], prompt=IMAGE_PROMPT) == 1
    assert calls_for(tmp_path, [JudgeItem({"THING": "a flag"}, [red, red])], prompt=IMAGE_PROMPT) == 1
    decoded = Image.open(io.BytesIO(red))
    assert calls_for(tmp_path, [JudgeItem({"THING": "a flag"}, [decoded])], prompt=IMAGE_PROMPT) == 0  # same pixels


def test_the_cache_stores_hashes_not_image_bytes(tmp_path):
    red = png((255, 0, 0))
    calls_for(tmp_path, [JudgeItem({"THING": "a flag"}, [red])], prompt=IMAGE_PROMPT)
    data = b"".join(path.read_bytes() for path in tmp_path.glob("judge.sqlite*"))
    assert red[16:64] not in data


def test_duplicates_in_one_run_are_judged_once(tmp_path):
    backend = FakeBackend()
    judge = Judge(backend, GIMMICK_CKQA, cache=JudgeCache.in_memory(), progress=False)
    run = judge.score_all([ckqa("x", "1"), ckqa("x", "2"), ckqa("y", "3")])
    assert len(backend.calls) == 2 and run.summary.duplicates == 1
    assert [j.item_id for j in run.judgements] == ["1", "2", "3"]
    assert run.judgements[0].score == run.judgements[1].score == 50.0


def test_stored_rows_record_what_the_key_was_made_of(tmp_path):
    judge = Judge(FakeBackend(), GIMMICK_CKQA, cache=tmp_path / "c.sqlite", progress=False)
    judge.score_all([ckqa("Weaving", "doc-1")])
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        db.row_factory = sqlite3.Row
        row = dict(db.execute("SELECT * FROM judgements").fetchone())
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert row["item_id"] == "doc-1" and row["prompt_id"] == "gimmick_ckqa" and row["prompt_version"] == 1
    assert row["prompt_hash"] == GIMMICK_CKQA.content_hash and row["valid"] == 1
    assert row["raw"] == "<score>50</score>" and row["scores"] == '{"score": 50.0}'
    assert '"model": "judge-a"' in row["backend"] and '"temperature": 0.0' in row["sampling"]
    assert "Weaving" in row["request"] and (row["prompt_tokens"], row["completion_tokens"]) == (10, 3)


def test_default_location_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "arab-mm-tasks" / "judge.sqlite"
    judge = Judge(FakeBackend(), GIMMICK_CKQA, progress=False)
    assert Path(judge.cache.path) == default_cache_path() and default_cache_path().exists()


WRITER = """
import sys
from metric_plugins.judge.cache import CacheEntry, JudgeCache
cache = JudgeCache(sys.argv[1])
context = {"prompt": {"id": "p", "version": 1, "content_hash": "h"}, "backend": {}, "sampling": {}, "request": []}
for i in range(int(sys.argv[3])):
    cache.put(CacheEntry(f"{sys.argv[2]}-{i}", "r", {"score": 1.0}, True, None, 1, 1, 1), item_id=None, context=context)
"""


def test_threads_and_processes_write_one_file_concurrently(tmp_path):
    path = tmp_path / "shared.sqlite"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"proc{n}", "150"], env=env, cwd=REPO)
        for n in range(3)
    ]
    cache = JudgeCache(path)
    context = {"prompt": {"id": "p", "version": 1, "content_hash": "h"}, "backend": {}, "sampling": {}, "request": []}

    def write(prefix: str) -> None:
        for i in range(100):
            cache.put(CacheEntry(f"{prefix}-{i}", "r", None, False, "x", 1, 0, 0), item_id=None, context=context)

    threads = [threading.Thread(target=write, args=(f"thread{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(process.wait(timeout=60) == 0 for process in processes)
    assert cache.count() == 3 * 150 + 4 * 100


def test_a_cache_survives_pickling_by_reopening_its_file(tmp_path):
    import pickle

    cache = JudgeCache(tmp_path / "p.sqlite")
    context = {"prompt": {"id": "p", "version": 1, "content_hash": "h"}, "backend": {}, "sampling": {}, "request": []}
    cache.put(CacheEntry("k", "r", {"score": 1.0}, True, None, 1, 0, 0), item_id=None, context=context)
    assert pickle.loads(pickle.dumps(cache)).get_many(["k"])["k"].scores == {"score": 1.0}


def test_a_cache_from_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "future.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(RuntimeError, match="schema 99"):
        JudgeCache(path)
