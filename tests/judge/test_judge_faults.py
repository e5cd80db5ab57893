"""The judge against a misbehaving endpoint: malformed 200s, credentials in the base URL, a dead
endpoint, a bad key or model, and what the `arab-mm-tasks judge` command reports.

The fault-injecting server is the loopback (`metric_plugins.judge.loopback`): markers in the
judged text pick each reply (``[[fault=message_null]]``...), and it records every request's
path and headers, so "retried", "stopped after one reply" and "the token reached the server"
are counts and records the server made.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import logging
import pickle
import socket
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arab_mm_tasks.core import judging
from metric_plugins.judge import (
    GIMMICK_CKQA,
    Judge,
    JudgeCache,
    JudgeConfig,
    JudgeItem,
    JudgeStopped,
    OpenAIChatBackend,
    RetryPolicy,
    TransientError,
)
from metric_plugins.judge.backends.openai_chat import read_completion
from metric_plugins.judge.judge import RunState
from metric_plugins.judge.loopback import MALFORMED, LoopbackServer

FAST_RETRY = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05)
TOKEN = "tok-SECRET-4242"
REPO = Path(__file__).resolve().parents[2]  # the checkout (the package itself may be the installed copy)


@pytest.fixture()
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(hang_seconds=2.0) as running:
        yield running


def make_judge(url: str, *, concurrency: int = 4, **kwargs) -> Judge:
    backend = OpenAIChatBackend("loopback-judge", base_url=url, api_key_env="JUDGE_TEST_KEY", timeout=5)
    kwargs.setdefault("cache", JudgeCache.in_memory())
    kwargs.setdefault("retry", FAST_RETRY)
    return Judge(backend, GIMMICK_CKQA, concurrency=concurrency, progress=False, **kwargs)


def item(answer: str, item_id: str = "a") -> JudgeItem:
    return JudgeItem({"GROUND_TRUTH": "Al-Sadu", "GENERATED_ANSWER": answer}, id=item_id)


def closed_port_url() -> str:
    """A loopback URL nothing listens on: the port was free a moment ago and is closed now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# 1. a 200 that is JSON but not a chat completion


@pytest.mark.parametrize("shape", sorted(MALFORMED))
def test_a_malformed_200_fails_its_item_after_retries_and_the_run_goes_on(server, shape):
    run = make_judge(server.url).score_all([item(f"[[fault={shape}]]", "bad"), item("[[score=80]]", "good")])
    bad, good = run.judgements
    assert bad.failed and "not a chat completion" in bad.error and bad.attempts == FAST_RETRY.max_retries + 1
    assert good.valid and good.score == 80.0
    assert run.summary.failed == 1 and run.summary.retries == FAST_RETRY.max_retries


@pytest.mark.parametrize("shape", sorted(MALFORMED))
def test_a_malformed_200_once_is_retried_into_a_valid_judgement(server, shape):
    (judgement,) = make_judge(server.url).score_all([item(f"[[fault={shape}:1]] [[score=42]]")]).judgements
    assert judgement.valid and judgement.score == 42.0 and judgement.attempts == 2


def test_content_as_a_list_of_text_parts_is_read(server):
    (judgement,) = make_judge(server.url).score_all([item("[[fault=content_parts]] [[score=64]]")]).judgements
    assert judgement.valid and judgement.score == 64.0 and judgement.attempts == 1


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
CONTENT = JSON | st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url"]), "text": JSON}))
NEAR_COMPLETION = st.fixed_dictionaries(
    {"choices": st.lists(st.fixed_dictionaries({"message": st.fixed_dictionaries({"content": CONTENT}) | JSON}))},
    optional={"usage": st.fixed_dictionaries({"prompt_tokens": JSON, "completion_tokens": JSON}) | JSON},
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=JSON | NEAR_COMPLETION)
def test_any_json_body_is_a_text_reply_or_a_transient_failure(body):
    try:
        reply = read_completion(body)
    except TransientError as error:
        assert "not a chat completion" in str(error)
        return
    assert isinstance(reply.text, str)
    assert reply.usage.prompt_tokens >= 0 and reply.usage.completion_tokens >= 0


# 2. credentials in the base URL


def test_credentials_in_the_base_url_reach_the_server_and_nothing_else(server, caplog, monkeypatch):
    # lighteval and inspect-ai, imported earlier in a session, reconfigure these loggers (disabled, WARNING);
    # openai >= 3 sends with httpx2, which logs as "httpx2"
    clients = ("httpx", "httpx2", "openai")
    for name in clients:
        monkeypatch.setattr(logging.getLogger(name), "disabled", False)
        monkeypatch.setattr(logging.getLogger(name), "propagate", True)
    url = server.url.replace("http://", f"http://judge-user:{TOKEN}@") + f"?key={TOKEN}&v=2"
    config = JudgeConfig.from_args({"model": "loopback-judge", "base_url": url, "api_key_env": "JUDGE_TEST_KEY"})
    judge = config.build_judge(GIMMICK_CKQA, progress=False)
    judge.cache = JudgeCache.in_memory()
    caplog.set_level(logging.DEBUG)  # openai's and httpx's request logs included
    for name in clients:
        caplog.set_level(logging.DEBUG, logger=name)
    run = judge.score_all([item("[[score=70]]")])
    copied = copy.deepcopy(judge.backend)  # lighteval copies metrics: the copy must still connect with them
    copied_reply = copied.complete(GIMMICK_CKQA.render(item("[[score=71]]")), judge.sampling)
    assert run.judgements[0].score == 70.0 and "71" in copied_reply.text
    for request in server.requests:
        assert request.path.endswith(f"/chat/completions?key={TOKEN}&v=2")
        assert request.headers["Authorization"].startswith("Basic ")  # user info as basic auth, as httpx does
    shown = {
        "config repr": repr(config),
        "config dict": json.dumps(config.to_dict()),
        "judge repr": repr(judge),
        "metadata": json.dumps(judge.metadata),
        "run record": json.dumps(run.to_dict()),
        "pickled backend": pickle.dumps(judge.backend).decode("latin-1"),
        "log": caplog.text,
    }
    assert "HTTP Request: POST" in caplog.text  # the client's request log line was captured, and it is clean
    assert {name: TOKEN in text for name, text in shown.items()} == dict.fromkeys(shown, False)


# 3. a dead endpoint


def test_a_dead_endpoint_stops_the_run_early_with_one_message_and_caches_nothing(tmp_path):
    judge = make_judge(closed_port_url(), cache=tmp_path / "c.sqlite", retry=RetryPolicy(max_retries=6))
    start = time.perf_counter()
    with pytest.raises(JudgeStopped, match="unreachable: the first 8 requests could not connect"):
        judge.score_all([item(f"answer {i}", str(i)) for i in range(50)])
    assert time.perf_counter() - start < 3  # 50 items x 7 attempts with 1 s backoff would take minutes
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM judgements").fetchone() == (0,)


def test_connection_errors_after_the_endpoint_answered_do_not_stop_the_run():
    """Only an endpoint that never answered is dead: one that goes away mid-run fails items, retried per item."""
    refused = TransientError("connection refused", unreachable=True)
    answered = RunState(unreachable_limit=3)
    answered.saw_answer()
    for _ in range(10):
        answered.saw_transient(refused, "http://127.0.0.1:1/v1")
    answered.saw_transient(refused, "http://127.0.0.1:1/v1", last_attempt=True)
    never = RunState(unreachable_limit=3)
    never.saw_transient(refused, "http://127.0.0.1:1/v1")
    never.saw_transient(TransientError("HTTP 503", status=503), "http://127.0.0.1:1/v1")  # an answer, of sorts
    for _ in range(10):
        never.saw_transient(refused, "http://127.0.0.1:1/v1")
    assert answered.error is None and never.error is None


# 4. bad key, unknown model


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_rejected_key_or_model_stops_the_run_after_the_first_reply(server, status):
    items = [item(f"answer {i} [[fault={status}]]", str(i)) for i in range(40)]
    with pytest.raises(JudgeStopped, match=f"HTTP {status} from .*: injected {status}"):
        make_judge(server.url, concurrency=4).score_all(items)
    assert server.total <= 4  # at most the requests already in flight, not one per item


def test_the_harness_path_reports_a_stopped_judge_as_one_line_and_leaves_samples_unscored(server, caplog, tmp_path):
    values = [
        {"score": None, "regions": ["A"], "judge": {"fields": item(f"{i} [[fault=401]]").fields}} for i in range(5)
    ]
    cache = tmp_path / "c.sqlite"
    config = JudgeConfig.from_args({"model": "m", "base_url": server.url, "cache_path": cache, "concurrency": 1})
    judging.judge_values("gimmick_ckqa", values, config)  # an lm-eval aggregation: must not raise
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None and "injected 401" in errors[0].getMessage()
    assert [v["judge_status"] for v in values] == ["not_judged"] * 5 and server.total == 1


# 5. the command line


def _cli_faults():
    spec = importlib.util.spec_from_file_location("judge_cli_faults", REPO / "benchmarks" / "judge_cli_faults.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_cli_finishes_a_faulty_run_prints_the_summary_names_samples_and_exits_1(tmp_path):
    result = _cli_faults().run(200, tmp_path, timeout=120)
    summary = result["report"]["summary"]
    assert result["returncode"] == 1, result["stderr"][-3000:]
    assert (summary["failed"], summary["invalid"]) == (result["expected"]["failed"], result["expected"]["invalid"])
    assert summary["items"] == 200 and summary["retries"] > 0 and result["summary"].startswith("200 items: ")
    assert f"{summary['failed']} failed" in result["summary"] and "samples failed" in result["stderr"]
    assert "item gimmick_ckqa_n doc 0 failed" not in result["stderr"]  # doc 0's fault (500:1) clears
    assert "item gimmick_ckqa_n doc 55 failed" in result["stderr"]  # content_int on every request
    assert "item None" not in result["stderr"] and "Traceback" not in result["stderr"]
    assert result["token_sent"] and result["token_leaked"] == []
    assert result["report"]["judge"]["base_url"].endswith("/v1")  # results_judged.json: the public URL


@pytest.mark.slow
def test_the_cli_exits_0_when_replies_are_only_invalid_and_1_with_one_line_when_the_endpoint_is_dead(tmp_path):
    cli = _cli_faults()
    samples = cli.write_samples(tmp_path, 3)
    text = samples.read_text().replace("answer 1", "answer 1 [[fault=unparsable]]")
    samples.write_text(text)
    with LoopbackServer() as server:
        ok = _run_cli(cli, samples, server.url, tmp_path / "out")
    assert ok.returncode == 0 and "1 invalid, 0 failed" in ok.stdout, ok.stderr[-2000:]
    dead = _run_cli(cli, samples, closed_port_url(), tmp_path / "out2", cache="dead.sqlite")
    errors = [line for line in dead.stderr.splitlines() if "error" in line.lower()]
    assert dead.returncode == 1 and "Traceback" not in dead.stderr, dead.stderr[-2000:]
    assert len(errors) == 1 and errors[0].startswith("arab-mm-tasks judge: error: the judge endpoint"), errors


def _run_cli(cli, samples: Path, url: str, out: Path, cache: str = "judge.sqlite") -> subprocess.CompletedProcess:
    judge = f"model=judge,base_url={url},max_retries=1,cache_path={samples.parent / cache}"
    return subprocess.run(
        [cli.command(), "judge", str(samples), "--judge", judge, "--out", str(out)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
