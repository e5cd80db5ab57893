"""A judging process killed with SIGKILL resumes without asking again for any finished judgement,
and the API key reaches the server as a header but no file, log or repr.

The loopback server lives in the test process, so it outlives the killed judging process and
its per-body request counts span both runs.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import metric_plugins
from metric_plugins.judge import GIMMICK_CKQA, Judge, JudgeConfig, JudgeItem, JudgeStopped, OpenAIChatBackend
from metric_plugins.judge.loopback import LoopbackServer

SECRET = "sk-test-SECRET123"
REPO = Path(metric_plugins.__file__).resolve().parents[1]
ITEMS, CONCURRENCY = 40, 4

JUDGING = """
import json, logging, sys
from metric_plugins.judge import GIMMICK_CKQA, Judge, JudgeItem, OpenAIChatBackend
logging.basicConfig(level=logging.DEBUG)  # every library's debug log goes to stderr, which the test searches
url, cache, out, n, concurrency = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
backend = OpenAIChatBackend("loopback-judge", base_url=url, api_key_env="JUDGE_TEST_KEY", timeout=10)
judge = Judge(backend, GIMMICK_CKQA, cache=cache, concurrency=concurrency)
print(repr(judge), repr(backend), file=sys.stderr)
items = [JudgeItem({"GROUND_TRUTH": "Al-Sadu", "GENERATED_ANSWER": f"answer {i}"}, id=str(i)) for i in range(n)]
run = judge.score_all(items)
with open(out, "w") as f:
    json.dump(run.to_dict(), f)
print(run.summary)
"""


def rows(cache: Path) -> int:
    if not cache.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not created yet
        return 0


def test_sigkill_mid_run_then_resume_repeats_no_finished_judgement(tmp_path):
    cache, results = tmp_path / "judge.sqlite", tmp_path / "results.json"
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "JUDGE_TEST_KEY": SECRET,
        "OPENAI_LOG": "debug",
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
    }
    logs: list[str] = []
    with LoopbackServer(latency=0.1) as server:
        args = [sys.executable, "-c", JUDGING, server.url, str(cache), str(results), str(ITEMS), str(CONCURRENCY)]
        first = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while rows(cache) < 12 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        first.send_signal(signal.SIGKILL)
        out, err = first.communicate(timeout=30)
        logs += [out, err]
        assert first.returncode == -signal.SIGKILL, "the judging process finished before it could be killed"
        time.sleep(0.3)  # let requests already on the wire reach the server's counts
        finished = rows(cache)
        before_kill = dict(server.counts)
        assert 12 <= finished < ITEMS and not results.exists()
        assert set(before_kill.values()) == {1}
        in_flight = len(before_kill) - finished
        assert 0 <= in_flight <= CONCURRENCY

        second = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        logs += [second.stdout, second.stderr]
        assert second.returncode == 0, second.stderr[-3000:]
        after = dict(server.counts)
        asked_twice = [body for body, count in after.items() if count == 2]
        assert len(after) == ITEMS and set(after.values()) <= {1, 2}
        assert set(asked_twice) <= set(before_kill)  # only requests the killed run had sent...
        assert len(asked_twice) <= in_flight  # ...and never one whose judgement it had committed
        summary = json.loads(results.read_text())["summary"]
        assert summary["cache_hits"] == finished and summary["calls"] == ITEMS - finished

        third = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        logs += [third.stdout, third.stderr]
        assert third.returncode == 0 and server.counts == after  # a complete cache: no request at all
        assert json.loads(results.read_text())["summary"]["calls"] == 0

        headers = [{k.lower(): v for k, v in request.headers.items()} for request in server.requests]
        assert all(h["authorization"] == f"Bearer {SECRET}" for h in headers)  # the key went where it should

    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert {p.name for p in written} >= {"judge.sqlite", "results.json"}
    for path in written:
        assert b"SECRET123" not in path.read_bytes(), path
    assert "DEBUG" in "".join(logs)
    for text in logs:
        assert "SECRET123" not in text


def test_the_key_is_in_no_repr_pickle_config_or_log(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("JUDGE_TEST_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    with LoopbackServer() as server:
        config = JudgeConfig.from_args(
            {"model": "loopback-judge", "base_url": server.url, "api_key_env": "JUDGE_TEST_KEY", "reasks": 0,
             "cache_path": str(tmp_path / "judge.sqlite")}
        )  # fmt: skip
        judge = config.build_judge(GIMMICK_CKQA, progress=False)
        with pytest.raises(JudgeStopped, match="HTTP 401"):  # the rejection's message and log carry no key
            judge.score_all([JudgeItem({"GROUND_TRUTH": "x", "GENERATED_ANSWER": "[[fault=401]]"})])
        run = judge.score_all([JudgeItem({"GROUND_TRUTH": "x", "GENERATED_ANSWER": "y"}, id="1")])
        assert run.judgements[0].valid and server.requests[-1].headers["authorization"] == f"Bearer {SECRET}"
    backend = judge.backend
    assert isinstance(backend, OpenAIChatBackend) and backend._client is not None
    shown = [repr(judge), repr(backend), repr(config), str(config.to_dict()), json.dumps(run.to_dict())]
    shown += [str(judge.metadata), caplog.text]
    for text in shown:
        assert "SECRET123" not in text
    assert b"SECRET123" not in pickle.dumps(backend)
    assert b"SECRET123" not in b"".join(path.read_bytes() for path in tmp_path.glob("judge.sqlite*"))
    assert copy.deepcopy(backend)._client is None  # a copy (lighteval copies metrics) rebuilds its client lazily


def test_a_run_against_openai_without_a_key_stops_at_once(monkeypatch, tmp_path):
    monkeypatch.delenv("JUDGE_TEST_KEY", raising=False)
    backend = OpenAIChatBackend("gpt-4o", api_key_env="JUDGE_TEST_KEY")
    judge = Judge(backend, GIMMICK_CKQA, cache=tmp_path / "c.sqlite", progress=False)
    with pytest.raises(RuntimeError, match=r"\$JUDGE_TEST_KEY is not set"):
        judge.score_all([JudgeItem({"GROUND_TRUTH": "x", "GENERATED_ANSWER": str(i)}) for i in range(20)])
