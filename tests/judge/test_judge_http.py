"""The judge against a real HTTP server: concurrency, retries, re-asks and failures, through the openai client.

The loopback server (`metric_plugins.judge.loopback`) decides each reply from markers in the
text being judged (``[[score=N]]``, ``[[fault=500:1]]``...), and counts requests per body, so
every assertion about "asked again" or "not retried" is a count the server made.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
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
    OpenAIChatBackend,
    RetryPolicy,
    XmlScore,
)
from metric_plugins.judge.loopback import UNPARSABLE, LoopbackServer

FAST_RETRY = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture()
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(hang_seconds=3.0) as running:
        yield running


def make_judge(server: LoopbackServer, *, concurrency: int = 4, timeout: float = 5.0, **kwargs) -> Judge:
    backend = OpenAIChatBackend("loopback-judge", base_url=server.url, api_key_env="JUDGE_TEST_KEY", timeout=timeout)
    kwargs.setdefault("cache", JudgeCache.in_memory())
    kwargs.setdefault("retry", FAST_RETRY)
    return Judge(backend, GIMMICK_CKQA, concurrency=concurrency, progress=False, **kwargs)


def item(answer: str, item_id: str = "a") -> JudgeItem:
    return JudgeItem({"GROUND_TRUTH": "Al-Sadu", "GENERATED_ANSWER": answer}, id=item_id)


def only_count(server: LoopbackServer) -> int:
    (count,) = server.counts.values()
    return count


def test_scores_come_back_in_item_order(server):
    items = [item(f"answer [[score={n}]]", str(n)) for n in (90, 10, 55, 0, 100)]
    run = make_judge(server).score_all(items)
    assert [j.score for j in run.judgements] == [90.0, 10.0, 55.0, 0.0, 100.0]
    assert [j.item_id for j in run.judgements] == ["90", "10", "55", "0", "100"]
    assert run.mean().score == 51.0 and run.summary.calls == 5 and run.summary.prompt_tokens > 0


def test_concurrency_overlaps_requests(server):
    n, latency, concurrency = 40, 0.2, 8
    items = [item(f"answer {i} [[latency={latency}]]", str(i)) for i in range(n)]
    start = time.perf_counter()
    run = make_judge(server, concurrency=concurrency).score_all(items)
    elapsed = time.perf_counter() - start
    ideal = n * latency / concurrency  # 1.0 s; one at a time would take 8 s
    assert run.summary.calls == n and server.peak_in_flight == concurrency
    assert ideal * 0.95 <= elapsed <= ideal * 1.6, (elapsed, ideal)


def test_a_rerun_makes_zero_calls(server, tmp_path):
    items = [item(f"answer {i}", str(i)) for i in range(10)]
    first = make_judge(server, cache=tmp_path / "c.sqlite").score_all(items)
    second = make_judge(server, cache=tmp_path / "c.sqlite").score_all(items)
    assert first.summary.calls == 10 and server.total == 10
    assert second.summary.calls == 0 and second.summary.cache_hits == 10
    assert [j.score for j in second.judgements] == [j.score for j in first.judgements]
    assert all(j.cached for j in second.judgements) and not any(j.cached for j in first.judgements)


def test_server_error_then_success_is_retried(server):
    run = make_judge(server).score_all([item("[[fault=500:2]] [[score=70]]")])
    assert run.judgements[0].score == 70.0 and run.judgements[0].attempts == 3
    assert only_count(server) == 3 and run.summary.retries == 2 and run.summary.calls == 3


def test_429_waits_for_retry_after(server):
    start = time.perf_counter()
    run = make_judge(server).score_all([item("[[fault=429:1]] [[retry_after=1]] [[score=40]]")])
    assert time.perf_counter() - start >= 1.0
    assert run.judgements[0].score == 40.0 and only_count(server) == 2 and run.summary.retries == 1


def test_a_timed_out_request_is_retried(server):
    run = make_judge(server, timeout=0.5).score_all([item("[[fault=timeout:1]] [[score=30]]")])
    assert run.judgements[0].score == 30.0 and only_count(server) == 2 and run.summary.retries == 1


@pytest.mark.parametrize("fault", ["badjson", "truncated"])
def test_a_malformed_body_is_retried(server, fault):
    run = make_judge(server).score_all([item(f"[[fault={fault}:1]] [[score=20]]")])
    assert run.judgements[0].score == 20.0 and only_count(server) == 2 and run.summary.retries == 1


def test_transient_errors_give_up_after_max_retries_as_failed_and_uncached(server, tmp_path):
    judge = make_judge(server, cache=tmp_path / "c.sqlite")
    run = judge.score_all([item("[[fault=503]]")])
    (failed,) = run.judgements
    assert failed.failed and not failed.valid and "gave up after 4 attempts" in failed.error
    assert only_count(server) == 1 + FAST_RETRY.max_retries and run.summary.failed == 1
    assert judge.cache.count() == 0  # failures are not stored: the next run asks again
    assert run.mean().n_failed == 1 and run.mean().score is None


@pytest.mark.parametrize("status", [400, 422])  # 401, 403, 404 stop the run: test_judge_faults.py
def test_other_4xx_are_not_retried(server, status):
    run = make_judge(server).score_all([item(f"[[fault={status}]]"), item("[[score=80]]", "b")])
    failed = run.judgements[0]
    assert failed.failed and f"HTTP {status}" in failed.error and failed.attempts == 1
    assert sorted(server.counts.values()) == [1, 1] and run.summary.retries == 0 and run.summary.failed == 1
    assert run.mean().as_dict() == {"score": 80.0, "n_valid": 1, "n_invalid": 0, "n_failed": 1, "policy": "exclude"}


def test_an_unparsable_reply_is_reasked_then_invalid_excluded_and_counted(server, tmp_path):
    judge = make_judge(server, cache=tmp_path / "c.sqlite", reasks=2)
    items = [item("[[fault=unparsable]]", "bad"), item("[[score=60]]", "good")]
    run = judge.score_all(items)
    bad = run.judgements[0]
    assert not bad.valid and not bad.failed and bad.raw == UNPARSABLE and bad.reason == "no <score> tag"
    assert bad.score is None and bad.attempts == 3 and run.summary.reasks == 2
    assert sorted(server.counts.values()) == [1, 3]
    assert run.summary.invalid == 1 and [j.item_id for j in run.invalid] == ["bad"]
    assert run.mean().as_dict() == {"score": 60.0, "n_valid": 1, "n_invalid": 1, "n_failed": 0, "policy": "exclude"}
    assert run.mean("zero").score == 30.0 and run.mean("minus_one").score == 29.5
    # the invalid outcome is final once the re-asks are spent: a re-run pays nothing for it...
    assert judge.score_all(items).summary.calls == 0
    # ...unless asked to try invalid ones again
    again = make_judge(server, cache=tmp_path / "c.sqlite", reasks=0, retry_invalid=True).score_all(items)
    assert again.summary.calls == 1 and again.summary.cache_hits == 1


def test_a_reask_that_parses_is_stored_as_valid(server, tmp_path):
    judge = make_judge(server, cache=tmp_path / "c.sqlite")
    run = judge.score_all([item("[[fault=unparsable:1]] [[score=45]]")])
    assert run.judgements[0].score == 45.0 and only_count(server) == 2 and run.summary.reasks == 1
    (entry,) = judge.cache.get_many([run.judgements[0].key]).values()
    assert entry.valid and entry.scores == {"score": 45.0} and entry.attempts == 2


def test_images_are_sent_as_png_data_urls_in_image_url_parts(server):
    prompt = JudgePrompt("test_image", 1, None, "Is this {THING}? [[score=5]]", XmlScore(), ("THING",))
    judge = Judge(
        OpenAIChatBackend("vlm", base_url=server.url, api_key_env="JUDGE_TEST_KEY"),
        prompt,
        cache=JudgeCache.in_memory(),
        progress=False,
    )
    run = judge.score_all([JudgeItem({"THING": "a flag"}, [Image.new("RGB", (4, 4), (9, 9, 9))])])
    assert run.judgements[0].score == 5.0
    (message,) = json.loads(server.requests[0].body)["messages"]
    image, text = message["content"]
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert text == {"type": "text", "text": "Is this a flag? [[score=5]]"}


def test_the_loopback_server_runs_as_its_own_process():
    repo = Path(metric_plugins.__file__).resolve().parents[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "metric_plugins.judge.loopback", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=repo,
    )
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        backend = OpenAIChatBackend("loopback-judge", base_url=url, api_key_env="JUDGE_TEST_KEY")
        judge = Judge(backend, GIMMICK_CKQA, cache=JudgeCache.in_memory(), progress=False)
        assert judge.score(item("[[score=12]]")).score == 12.0
        with urllib.request.urlopen(url.removesuffix("/v1") + "/stats") as response:
            assert json.load(response)["total"] == 1
    finally:
        process.kill()
        process.wait()
