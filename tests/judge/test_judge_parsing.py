"""Judge reply parsers, Retry-After parsing, and how invalid replies enter (or stay out of) a mean."""

from __future__ import annotations

import doctest
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from metric_plugins.judge import aggregate, parsing
from metric_plugins.judge.aggregate import mean_score
from metric_plugins.judge.parsing import BinaryDigit, JsonScores, XmlScore
from metric_plugins.judge.retry import RetryPolicy, parse_retry_after
from metric_plugins.judge.schema import Judgement, Sampling

GIMMICK_STYLE = """<evaluation>
<analysis>
The answer names the right festival.
</analysis>
<explanation>
Correct but brief.
</explanation>
<score>
85
</score>
</evaluation>"""


@pytest.mark.parametrize(
    "reply, expected",
    [
        (GIMMICK_STYLE, 85.0),
        ("```xml\n" + GIMMICK_STYLE + "\n```", 85.0),
        ("<score>0</score>", 0.0),
        ("<score> 100 </score>", 100.0),
        ("<SCORE>\n\t42\n</SCORE>", 42.0),
        ("<score>**70**</score>", 70.0),
        ("<score><!-- Put your score here --></score>\n...\n<score>60</score>", 60.0),  # echoed template tag
        ("<score>60</score> and again <score>60</score>", 60.0),
    ],
)
def test_xml_score_reads_the_integer_in_the_tag(reply, expected):
    assert XmlScore().parse(reply).scores == {"score": expected}


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("I think it's good", "no <score> tag"),
        ("<score></score>", "no <score> tag"),
        ("<score>75.5</score>", "not an integer"),
        ("<score>high</score>", "not an integer"),
        ("<score>75/100</score>", "not an integer"),
        ("<score>101</score>", "outside [0, 100]"),
        ("<score>-5</score>", "outside [0, 100]"),
        ("<score>40</score><score>90</score>", "conflicting"),
        ("<score>80", "no <score> tag"),  # truncated reply
    ],
)
def test_xml_score_rejects_malformed_replies(reply, reason):
    parsed = XmlScore().parse(reply)
    assert not parsed.valid and parsed.scores is None
    assert reason in parsed.reason


def test_json_scores_read_named_numbers_in_fences_and_prose():
    rubric = JsonScores(("correctness", "detail"), low=0, high=10)
    reply = 'Here you go:\n```json\n{"correctness": 7, "detail": 10, "note": "fine"}\n```'
    assert rubric.parse(reply).scores == {"correctness": 7.0, "detail": 10.0}
    assert JsonScores(("x",), integer=False).parse('{"x": 2.5}').scores == {"x": 2.5}


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("no json here", "no JSON object"),
        ('{"correctness": 7, "detail": }', "malformed JSON"),
        ('{"correctness": 7}', "'detail' is missing"),
        ('{"correctness": 7, "detail": "high"}', "not a number"),
        ('{"correctness": 7, "detail": true}', "not a number"),
        ('{"correctness": 7, "detail": 11}', "outside"),
        ('{"correctness": 7, "detail": 2.5}', "not an integer"),
        ("[1, 2]", "no JSON object"),
    ],
)
def test_json_scores_reject_malformed_replies(reply, reason):
    parsed = JsonScores(("correctness", "detail"), low=0, high=10).parse(reply)
    assert not parsed.valid and reason in parsed.reason


@pytest.mark.parametrize("reply, expected", [("1", 1.0), (" 0 ", 0.0), ("`1`", 1.0), ("1.", 1.0), ("```\n0\n```", 0.0)])
def test_binary_digit_accepts_a_lone_digit(reply, expected):
    assert BinaryDigit().parse(reply).scores == {"score": expected}


@pytest.mark.parametrize("reply", ["10", "0 or 1", "1 (but unsure)", "yes", "", "2"])
def test_binary_digit_rejects_anything_else(reply):
    assert not BinaryDigit().parse(reply).valid


def test_module_examples_run():
    for module in (parsing, aggregate):
        result = doctest.testmod(module)
        assert result.attempted > 1 and result.failed == 0, module.__name__


def judgement(score: float | None, status: str = "valid") -> Judgement:
    valid = status == "valid"
    return Judgement(
        "id", "key", {"score": score} if valid else None, score if valid else None, valid, "raw", False,
        error="HTTP 400" if status == "failed" else None,
    )  # fmt: skip


def test_invalid_replies_are_excluded_by_default_and_counted():
    judged = [judgement(90.0), judgement(70.0), judgement(None, "invalid"), judgement(None, "failed")]
    summary = mean_score(judged)
    assert summary.score == 80.0
    assert (summary.n_valid, summary.n_invalid, summary.n_failed, summary.policy) == (2, 1, 1, "exclude")


def test_invalid_policies_zero_and_minus_one_average_invalid_in_but_never_failures():
    judged = [judgement(1.0), judgement(1.0), judgement(None, "invalid"), judgement(None, "failed")]
    assert mean_score(judged, "zero").score == pytest.approx(2 / 3)
    assert mean_score(judged, "minus_one").score == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="invalid_policy"):
        mean_score(judged, "drop")  # type: ignore[arg-type]


def test_mean_of_nothing_is_none_not_zero():
    assert mean_score([judgement(None, "invalid")]).score is None


def test_retry_after_seconds_milliseconds_and_http_date():
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    now = datetime(2026, 11, 21, 12, 0, 0, tzinfo=timezone.utc)
    date = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=now.timestamp()) == pytest.approx(30.0)
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_is_full_jitter_capped_and_honours_retry_after():
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0, max_retry_after=10.0)
    delays = [policy.delay(5) for _ in range(200)]
    assert all(0.0 <= d <= 8.0 for d in delays) and max(delays) > 4.0
    assert all(policy.delay(0, retry_after=3.0) >= 3.0 for _ in range(50))
    assert policy.delay(0, retry_after=3600.0) == 10.0


def test_sampling_records_only_what_is_set():
    assert Sampling().to_dict() == {"temperature": 0.0, "max_tokens": 1024}
    sampling = Sampling(top_p=0.9, seed=1, stop=("</evaluation>",), extra={"repetition_penalty": 1.1})
    assert Sampling.from_dict(sampling.to_dict()) == sampling
    with pytest.raises(ValueError, match="unknown sampling"):
        Sampling.from_dict({"temperture": 0})
