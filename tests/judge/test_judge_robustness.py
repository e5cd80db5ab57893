"""No single judge reply can stop a run, hang it, or lose finished work (issue 20, judge side).

Every reply shape here comes from a real socket server (`metric_plugins.judge.loopback`, whose
byte-level faults write to the socket what no well-behaved server would), and the corpus runs
through the real `arab-mm-tasks judge` command line: each run must finish, write every
sample, and end each item valid, invalid or failed with its reason named.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from judge_fixtures import TASK, cli_faults, statuses, write_samples

from metric_plugins.judge import (
    GIMMICK_CKQA,
    Judge,
    JudgeCache,
    JudgeConfig,
    JudgeItem,
    OpenAIChatBackend,
    Reply,
    RetryPolicy,
    TransientError,
)
from metric_plugins.judge.backends.openai_chat import read_completion
from metric_plugins.judge.cache import CacheEntry
from metric_plugins.judge.loopback import MALFORMED, ODD, RAW, LoopbackServer

FAST_RETRY = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.02)

# what each reply shape must end as, and a word of the reason a failed one names
OUTCOMES: dict[str, tuple[str, str]] = {
    **{shape: ("failed", "not a chat completion") for shape in MALFORMED},
    **{shape: ("valid", "") for shape in ODD},
    "utf16": ("valid", ""),  # JSON may be UTF-16 (RFC 8259 readers detect it): the reply is read
    "huge_body": ("invalid", ""),  # 5 MB of text: answered, but no score in it
    "deep_json": ("failed", "RecursionError"),
    "sse": ("failed", "malformed response body"),
    "html200": ("failed", "malformed response body"),
    "gzip_header": ("failed", "DecodingError"),
    "redirect_loop": ("failed", "TooManyRedirects"),
    "trickle": ("failed", "timed out"),
    "silent": ("failed", "timed out"),
    "truncated": ("failed", "failed"),
    "badjson": ("failed", "malformed response body"),
    "500": ("failed", "HTTP 500"),
    "unparsable": ("invalid", ""),
}


def run_cli(samples: Path, judge: str, out: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    args = [cli_faults().command(), "judge", str(samples), "--judge", judge, "--out", str(out)]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)


def rows(cache: Path) -> int:
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


# 1. the corpus of reply shapes, through the command line


@pytest.mark.slow
def test_every_reply_shape_ends_counted_and_the_cli_writes_every_sample(tmp_path):
    shapes = sorted(OUTCOMES)
    answers = [f"answer {shape} [[fault={shape}]] [[score=40]]" for shape in shapes]
    answers.append("a generation holding a lone surrogate \ud800 [[score=41]]")  # input side, not the reply
    samples = write_samples(tmp_path, answers)
    with LoopbackServer(hang_seconds=60, trickle_seconds=1.0) as server:
        judge = (f"model=judge,base_url={server.url},timeout=3,max_retries=1,reasks=1,concurrency=16,"
                 f"cache_path={tmp_path / 'judge.sqlite'}")  # fmt: skip
        done = run_cli(samples, judge, tmp_path / "out")
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    expected = [OUTCOMES[shape][0] for shape in shapes] + ["valid"]
    assert statuses(tmp_path / "out" / samples.name) == expected, done.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "results_judged.json").read_text("utf-8"))["summary"]
    assert (report["failed"], report["invalid"]) == (expected.count("failed"), expected.count("invalid"))
    assert done.returncode == 1 and f"{expected.count('failed')} samples failed" in done.stderr
    for index, shape in enumerate(shapes):  # each failed sample is named once, with its reason
        lines = [line for line in done.stderr.splitlines() if f"item {TASK} doc {index} failed" in line]
        if OUTCOMES[shape][0] == "failed":
            assert len(lines) == 1 and OUTCOMES[shape][1] in lines[0], (shape, lines)
        else:
            assert lines == [], (shape, lines)
    # a body trickled at 1 byte/s would take minutes and be accepted; its item failing with "timed out" (checked
    # above, in OUTCOMES) is the deadline at work, whatever the machine's load


def test_timeout_is_a_deadline_for_the_whole_request_body_included():
    with LoopbackServer(trickle_seconds=1.0) as server:
        backend = OpenAIChatBackend("m", base_url=server.url, api_key_env="JUDGE_TEST_KEY", timeout=3)
        judge = Judge(backend, GIMMICK_CKQA, cache=JudgeCache.in_memory(), retry=RetryPolicy(max_retries=0),
                      progress=False)  # fmt: skip
        (judgement,) = judge.score_all(
            [JudgeItem({"GROUND_TRUTH": "x", "GENERATED_ANSWER": "[[fault=trickle]]"})]
        ).judgements
    # the reply is ~400 bytes: at 1 byte/s every read succeeds within the 3 s per-read timeout httpx has, so only a
    # deadline for the whole request fails it (the clock is not measured: the suite must pass at any load)
    assert judgement.failed and "timed out after 3" in judgement.error


# 2. an endpoint that accepts connections and never answers


@pytest.mark.slow
def test_a_silent_endpoint_stops_the_cli_in_one_line_after_unreachable_limit_requests(tmp_path):
    samples = write_samples(tmp_path, [f"answer {i} [[fault=silent]]" for i in range(40)])
    with LoopbackServer(hang_seconds=60) as server:
        judge = (f"model=judge,base_url={server.url},timeout=2,concurrency=4,unreachable_limit=3,"
                 f"cache_path={tmp_path / 'judge.sqlite'}")  # fmt: skip
        done = run_cli(samples, judge, tmp_path / "out", timeout=120)
        asked = server.total
    errors = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert len(errors) == 1 and "unreachable: the first 3 requests could not connect or got no answer" in errors[0]
    assert asked <= 8  # the requests of the first round or two, not 40 items x 7 attempts


def test_unreachable_limit_is_a_judge_setting():
    config = JudgeConfig.from_args("model=m,unreachable_limit=3")
    assert config.unreachable_limit == 3 and config.to_dict()["unreachable_limit"] == 3
    assert config.build_judge(GIMMICK_CKQA, progress=False).unreachable_limit == 3
    assert JudgeConfig.from_env_or_args("model=m", {"ARAB_MM_JUDGE_UNREACHABLE_LIMIT": "5"}).unreachable_limit == 5


# 3. any exception in one item is that item's failure


class RaisingBackend:
    """Raises `error` for requests whose answer contains "bad"; answers the others with a score."""

    max_concurrency = None

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.identity = {"backend": "raising", "model": "m"}

    def complete(self, messages, sampling):
        if "bad" in messages[-1].text:
            raise self.error
        return Reply("<score>70</score>")


# every exception class Python itself defines: the rule is "any exception", not a list of expected ones
EXCEPTIONS = st.sampled_from(
    [kind for kind in vars(builtins).values() if isinstance(kind, type) and issubclass(kind, Exception)]
)


def instance(kind: type[Exception], message: str) -> Exception:
    """An instance of `kind`, whatever arguments its constructor wants (a message, a group, a codec error's five)."""
    codec_args = (("utf-8", b"\xff", 0, 1, message), ("utf-8", "\udcff", 0, 1, message), ("\udcff", 0, 1, message))
    for args in ((message,), (message, [ValueError(message)]), *codec_args):
        try:
            return kind(*args)
        except TypeError:
            continue
    raise AssertionError(f"cannot build a {kind.__name__}")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=EXCEPTIONS, message=st.text(max_size=30))
def test_any_exception_from_one_request_fails_that_item_after_retries_and_the_run_goes_on(kind, message):
    error = instance(kind, message)
    judge = Judge(RaisingBackend(error), GIMMICK_CKQA, cache=JudgeCache.in_memory(), retry=FAST_RETRY, progress=False)
    run = judge.score_all([JudgeItem({"GROUND_TRUTH": "x", "GENERATED_ANSWER": a}, id=a) for a in ("bad", "good")])
    bad, good = run.judgements
    assert good.valid and good.score == 70.0
    assert bad.failed and kind.__name__ in bad.error and bad.attempts == FAST_RETRY.max_retries + 1


class RaisingFormat:
    """GIMMICK's reply format whose parser has a bug: it raises on every reply."""

    score_names = GIMMICK_CKQA.reply_format.score_names

    def parse(self, text: str):
        raise RecursionError("maximum recursion depth exceeded")

    def spec(self):
        return GIMMICK_CKQA.reply_format.spec()


def test_a_parser_that_raises_makes_the_reply_invalid_with_the_reason():
    prompt = dataclasses.replace(GIMMICK_CKQA, reply_format=RaisingFormat())
    judge = Judge(RaisingBackend(ValueError()), prompt, cache=JudgeCache.in_memory(), progress=False, reasks=1)
    (judgement,) = judge.score_all([JudgeItem({"GROUND_TRUTH": "x", "GENERATED_ANSWER": "fine"})]).judgements
    assert judgement.status == "invalid" and judgement.reason.startswith("the reply parser failed: RecursionError")
    assert judgement.attempts == 2  # asked, re-asked once, then counted


ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40)  # surrogates included


@settings(max_examples=50, deadline=None)
@given(raw=ANY_TEXT, reason=ANY_TEXT, item_id=ANY_TEXT, tokens=st.integers(min_value=-(10**30), max_value=10**30))
def test_storing_a_judgement_never_raises_and_keeps_what_utf8_can_hold(raw, reason, item_id, tokens):
    cache = JudgeCache.in_memory()
    entry = CacheEntry("k", raw, {"score": 1.0}, True, reason, 1, tokens, tokens)
    context = {"prompt": GIMMICK_CKQA.describe(), "backend": {}, "sampling": {}, "request": [{"text": raw}]}
    cache.put(entry, item_id=item_id, context=context)
    stored = cache.get_many(["k"])["k"]
    stored.raw.encode("utf-8")  # valid UTF-8 now: the samples and results files can hold it
    assert len(stored.raw) <= len(raw)  # a lone surrogate became one U+FFFD, a pair its one character
    if raw == raw.encode("utf-8", "ignore").decode("utf-8"):  # encodable text is kept as it is
        assert stored.raw == raw
    assert abs(stored.prompt_tokens) <= 2**63 - 1


@pytest.mark.parametrize("usage", [{"prompt_tokens": 100.0, "completion_tokens": 20.0}, {"prompt_tokens": 7}])
def test_token_counts_as_integral_floats_are_accepted(usage):
    body = {"choices": [{"message": {"content": "<score>5</score>"}}], "usage": usage}
    reply = read_completion(body)
    expected = (int(usage["prompt_tokens"]), int(usage.get("completion_tokens", 0)))
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == expected


@pytest.mark.parametrize("count", [10**20, -1, 1.5, float("inf"), float("nan"), "12", True])
def test_token_counts_that_are_not_counts_make_the_reply_malformed(count):
    body = {"choices": [{"message": {"content": "<score>5</score>"}}], "usage": {"prompt_tokens": count}}
    with pytest.raises(TransientError, match="not token counts"):
        read_completion(body)


def test_the_byte_level_faults_are_all_in_the_corpus():
    assert set(RAW) | set(MALFORMED) | set(ODD) <= set(OUTCOMES)


# 4. restarts make progress when the failing items come first


def _asked_twice(requests: list) -> bool:
    """Whether some request body was sent more than once among `requests` (a retry)."""
    bodies = [r.body_sha256 for r in requests]
    return len(set(bodies)) < len(bodies)


@pytest.mark.slow
def test_kill_and_restart_with_always_failing_items_first_grows_the_cache_every_round_then_finishes(tmp_path):
    # each failing item is told to come back in 12 s (429 + Retry-After): retried in place, 24 of them would hold
    # all 8 workers for over a minute before any other item is asked, so no round would add anything
    failing, good = 24, 120
    answers = [f"answer {i} [[fault=429]][[retry_after=12]]" for i in range(failing)]
    answers += [f"answer {i}" for i in range(good)]
    samples = write_samples(tmp_path, answers)
    cache = tmp_path / "judge.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with LoopbackServer(latency=0.25) as server:
        judge = f"model=judge,base_url={server.url},timeout=5,max_retries=2,concurrency=8,cache_path={cache}"
        args = [cli_faults().command(), "judge", str(samples), "--judge", judge, "--out", str(tmp_path / "out")]
        seen = [0]
        for _ in range(3):  # killed as soon as it has added a judgement, or once a failing item is asked again
            start = len(server.requests)
            proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            # Ordered by events, not by the clock (the suite must pass at any load): the round must add a judgement
            # before any failing item of this round is retried. Retried in place, the failing items would be
            # retried first and nothing added; the safety limit only keeps a broken run from hanging the suite.
            safety = time.monotonic() + 600
            while rows(cache) <= seen[-1] and not _asked_twice(server.requests[start:]) and proc.poll() is None:
                assert time.monotonic() < safety, "the judge process neither judged nor retried for 10 minutes"
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
            seen.append(rows(cache))
            assert seen[-1] > seen[-2], f"round {len(seen) - 1} added nothing to the cache: {seen}"
        final = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert final.returncode == 1 and f"{failing} samples failed" in final.stderr, final.stderr[-3000:]
    assert statuses(tmp_path / "out" / samples.name) == ["failed"] * failing + ["valid"] * good
    assert rows(cache) == good


# 5. no lock is held while a reply is parsed


class SlowFormat:
    """GIMMICK's reply format whose parser, on the reply to "slow", waits until the other item is in the cache."""

    score_names = GIMMICK_CKQA.reply_format.score_names

    def __init__(self, cache: JudgeCache) -> None:
        self.cache = cache
        self.others_stored_meanwhile = False

    def parse(self, text: str):
        if "slow" in text:
            # a guard, not a speed bound: with a lock held while parsing, "fast" could never be stored and this would
            # wait for ever; 60 s is far past what storing one item takes at any load
            deadline = time.monotonic() + 60
            while self.cache.count() < 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            self.others_stored_meanwhile = self.cache.count() == 1
        return GIMMICK_CKQA.reply_format.parse(text)

    def spec(self):
        return GIMMICK_CKQA.reply_format.spec()


class EchoBackend:
    """Answers each request with a score and the judged answer in the reply."""

    max_concurrency = None

    def __init__(self) -> None:
        self.identity = {"backend": "echo", "model": "m"}

    def complete(self, messages, sampling):
        return Reply(f"<score>60</score> {'slow' if 'slow' in messages[-1].text else 'fast'}")


def test_a_slow_parse_holds_up_no_other_worker_or_the_cache():
    cache = JudgeCache.in_memory()
    reply_format = SlowFormat(cache)
    prompt = dataclasses.replace(GIMMICK_CKQA, reply_format=reply_format)
    judge = Judge(EchoBackend(), prompt, cache=cache, concurrency=2, progress=False)
    items = [JudgeItem({"GROUND_TRUTH": "x", "GENERATED_ANSWER": a}, id=a) for a in ("slow", "fast")]
    run = judge.score_all(items)
    assert [j.score for j in run.judgements] == [60.0, 60.0]
    assert reply_format.others_stored_meanwhile  # "fast" was asked, parsed and stored while "slow" was parsing
