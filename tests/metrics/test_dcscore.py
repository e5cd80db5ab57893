"""DCScore end to end against the loopback judge server, with scripted replies per stage.

The server answers each request from a script keyed by the stage (recognised from the prompt
text), the caption or reference it is about, and the request's seed, so every number below is
computed by hand from the replies, and every "asked again" or "no call" is a count the server made.
"""

from __future__ import annotations

import base64
import doctest
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from dcscore_fixtures import (
    CANDIDATE,
    CANDIDATE_FACTS,
    EXPECTED,
    REFERENCE,
    REFERENCE_FACTS,
    ScriptedServer,
    as_json,
    caption_in,
    hand_script,
    stage_of,
)
from PIL import Image

import metric_plugins.dcscore as dcscore
from metric_plugins.dcscore import formula, score_captions, trial_scores
from metric_plugins.judge import Judge, JudgeCache, OpenAIChatBackend, RetryPolicy
from metric_plugins.judge.loopback import LoopbackServer
from metric_plugins.judge.prompts import dcscore as dcscore_prompts
from metric_plugins.judge.prompts.dcscore import DCSCORE_PROMPTS, parse_json_reply

FAST_RETRY = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.02)


def make_judge(server: LoopbackServer, cache: JudgeCache | str, *, reasks: int = 1) -> Judge:
    backend = OpenAIChatBackend("loopback-judge", base_url=server.url, api_key_env="JUDGE_TEST_KEY", timeout=5)
    return Judge(
        backend, DCSCORE_PROMPTS["en"][0], cache=cache, progress=False, reasks=reasks, retry=FAST_RETRY, concurrency=4
    )


def image(color: tuple[int, int, int]) -> Image.Image:
    return Image.new("RGB", (16, 12), color)


# the hand-computed caption (its facts, replies and EXPECTED scores, worked out by hand): dcscore_fixtures.py
def test_a_hand_computed_caption_scores_exactly_and_a_rerun_makes_no_calls(tmp_path):
    cache = str(tmp_path / "judge.sqlite")
    picture = image((200, 30, 30))
    with ScriptedServer(hand_script) as server:
        report = score_captions([CANDIDATE], [REFERENCE], [picture], judge=make_judge(server, cache))
        (caption,) = report.captions
        assert caption.status == "valid" and caption.attempts == 1 and len(caption.trials) == 9
        for name, value in EXPECTED.items():
            assert getattr(caption, name) == pytest.approx(100 * float(value), abs=1e-5), name
            assert getattr(report.summary, name) == pytest.approx(100 * float(value), abs=1e-5), name
        assert round(report.summary.f1, 2) == 72.38 and round(report.summary.dcscore, 2) == 63.97
        assert (report.summary.n_valid, report.summary.n_invalid, report.summary.n_failed) == (1, 0, 0)
        assert caption.oracle_facts == REFERENCE_FACTS

        # upstream's sampling: extraction t=1 (candidate and reference), 3 matchings t=1, 3 verifications t=0.3
        sampling = sorted((r["temperature"], r["seed"], stage_of(r["messages"][-1]["content"][-1]["text"]
                           if isinstance(r["messages"][-1]["content"], list) else r["messages"][-1]["content"]))
                          for r in map(lambda q: json.loads(q.body), server.requests))  # fmt: skip
        assert sampling == sorted(
            [(1.0, 0, "extract")] * 2 + [(1.0, s, "match") for s in range(3)] + [(0.3, s, "verify") for s in range(3)]
        )
        assert all(r["max_tokens"] == 2000 for r in map(lambda q: json.loads(q.body), server.requests))

        # the verifier sees the image (first, as upstream) and the reference caption; the others see no image
        for body in server.bodies("verify"):
            system, user = body["messages"]
            assert system == {"role": "system", "content": "You are a helpful assistant."}
            image_part, text_part = user["content"]
            assert image_part["type"] == "image_url" and text_part["type"] == "text"
            png = base64.b64decode(image_part["image_url"]["url"].removeprefix("data:image/png;base64,"))
            assert Image.open(io.BytesIO(png)).convert("RGB").tobytes() == picture.tobytes()
            assert f">>> Reference Caption:\n{REFERENCE}\n" in text_part["text"]
            assert '  {"fact": "There is a cat_0.", "identifier": "cat_0"},\n' in text_part["text"]
        for body in server.bodies("extract") + server.bodies("match"):
            assert isinstance(body["messages"][-1]["content"], str)
        (match_body, *_) = server.bodies("match")
        assert '  {"id": 1, "fact": "There is a mat_0."},\n' in match_body["messages"][-1]["content"]
        assert '"relevance"' not in match_body["messages"][-1]["content"].split(">>> Set of Atomic Facts:")[1]

        calls = server.total
        assert calls == 8
        again = score_captions(
            [CANDIDATE], [REFERENCE], [picture], judge=f"base_url={server.url},model=loopback-judge,cache_path={cache}"
        )
        assert server.total == calls  # every stage from the cache
        assert again.summary.judge["calls"] == 0 and again.summary.judge["cache_hits"] == 8
        assert again.to_dict()["captions"] == report.to_dict()["captions"]


# --- invalid replies: re-asked, then a new attempt, then invalid; never a 0 ----------------------
def fault_script(stage: str, user_text: str, request: dict[str, Any], seen: dict[str, int]) -> str | None:
    key = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
    seen[key] = seen.get(key, 0) + 1
    if stage == "extract" and caption_in(user_text) == "BROKEN caption":
        return "Here are the atomic facts: the cat is white."  # never JSON
    if stage == "verify" and "FLAKY reference" in user_text and request["seed"] == 0 and seen[key] == 1:
        return '```json\n[{"fact": "There is a cat_0.", "verification": 1'  # cut short: re-asked once
    if stage == "verify" and "MISMATCH reference" in user_text:
        return as_json([{"fact": "Some other fact.", "verification": 1}])  # lists other facts than the matching
    if stage == "extract" and caption_in(user_text) not in (CANDIDATE,):
        return as_json(CANDIDATE_FACTS if "caption" in caption_in(user_text) else REFERENCE_FACTS)
    return hand_script(stage, user_text, request)


def test_unparsable_replies_are_reasked_then_the_caption_is_invalid_and_left_out_of_the_means(tmp_path):
    seen: dict[str, int] = {}
    predictions = [CANDIDATE, "BROKEN caption", "FLAKY caption", "MISMATCH caption"]
    references = [REFERENCE, "BROKEN reference", "FLAKY reference", "MISMATCH reference"]
    images = [image((0, 0, 0))] * 4
    with ScriptedServer(lambda *a: fault_script(*a, seen)) as server:
        judge = make_judge(server, JudgeCache(tmp_path / "c.sqlite"), reasks=1)
        report = score_captions(predictions, references, images, judge=judge, max_attempts=2)
        good, broken, flaky, mismatch = report.captions

        # BROKEN: each of the 2 attempts (seeds 0, 1) asked twice (reasks=1), then invalid with the reason
        broken_asks = [
            json.loads(r.body)["seed"]
            for r in server.requests
            if stage_of(r.user_text) == "extract" and caption_in(r.user_text) == "BROKEN caption"
        ]
        assert sorted(broken_asks) == [0, 0, 1, 1]
        assert broken.status == "invalid" and broken.f1 is None and broken.attempts == 2
        assert broken.reason == "extraction: invalid reply: no JSON list in the reply"

        # FLAKY: the cut-short verification was asked again with the identical request and then parsed
        assert flaky.status == "valid" and flaky.attempts == 1 and 2 in seen.values()
        assert flaky.f1 == pytest.approx(good.f1)

        # MISMATCH: the verifier lists other facts than the matching: upstream's assertion fails, so does
        # each attempt
        assert mismatch.status == "invalid" and mismatch.attempts == 2
        assert mismatch.reason == "trial: the matching and the verification list different facts"

        assert (report.summary.n_valid, report.summary.n_invalid, report.summary.n_failed) == (2, 2, 0)
        assert report.summary.f1 == pytest.approx(good.f1)  # the mean of the two valid captions, no zeros


def test_a_request_that_gets_no_reply_is_failed_not_retried_by_more_attempts(tmp_path):
    with ScriptedServer(hand_script) as server:
        judge = make_judge(server, JudgeCache.in_memory())
        report = score_captions(
            [CANDIDATE], ["A reference [[fault=400]]"], [image((1, 2, 3))], judge=judge, max_attempts=3
        )
        (caption,) = report.captions
        assert caption.status == "failed" and caption.attempts == 1
        assert caption.reason.startswith("reference extraction: request failed:") and "400" in caption.reason
        assert (report.summary.n_valid, report.summary.n_failed) == (0, 1)
        assert report.summary.f1 != report.summary.f1  # NaN: nothing valid to average
        assert server.total == 2  # the candidate's and the reference's extraction, once each


# --- Arabic -----------------------------------------------------------------------------------------
AR_CANDIDATE = "قطة بيضاء تجلس على سجادة حمراء."
AR_REFERENCE = "قطة بيضاء فوق سجادة."
AR_FACTS = {
    AR_CANDIDATE: [
        {"fact": "توجد قطة cat_0.", "identifier": "cat_0", "relevance": 1},
        {"fact": "القطة cat_0 بيضاء.", "relevance": 1},
        {"fact": "السجادة rug_0 حمراء.", "identifier": "rug_0", "relevance": 1},
    ],
    AR_REFERENCE: [
        {"fact": "توجد قطة بيضاء cat_0.", "identifier": "cat_0", "relevance": 1},
        {"fact": "توجد سجادة rug_0.", "identifier": "rug_0", "relevance": 1},
    ],
}


def arabic_script(stage: str, user_text: str, request: dict[str, Any]) -> str | None:
    if stage == "extract":
        return as_json(AR_FACTS[caption_in(user_text)])
    facts = [{k: v for k, v in f.items() if k != "relevance"} for f in AR_FACTS[AR_CANDIDATE]]
    if stage == "match":  # cat -> 0, white -> 0, red rug -> 1
        return as_json([{**f, "matched_oracle_id": [0, 0, 1][n]} for n, f in enumerate(facts)])
    return as_json([{**f, "verification": [1, 1, 0][n]} for n, f in enumerate(facts)])  # the rug is not red


def test_arabic_captions_use_the_arabic_prompts_and_keep_the_facts_verbatim():
    with ScriptedServer(arabic_script) as server:
        judge = make_judge(server, JudgeCache.in_memory())
        report = score_captions([AR_CANDIDATE], [AR_REFERENCE], [image((9, 9, 9))], judge=judge, language="ar")
        (caption,) = report.captions
        # P = 2/3; R = (1/2 + 1/2) / 2 = 1/2 (the rug fact is rejected, so O1 gets nothing); F1 = 4/7
        assert caption.precision == pytest.approx(200 / 3) and caption.recall == pytest.approx(50)
        assert caption.f1 == pytest.approx(400 / 7, abs=1e-5) and caption.f1_relevant == pytest.approx(
            400 / 7, abs=1e-5
        )
        assert caption.predicted_facts == AR_FACTS[AR_CANDIDATE]
        extract_text = server.bodies("extract")[0]["messages"][-1]["content"]
        assert "Write every atomic fact in the same language as the caption" in extract_text
        assert '{"fact": "الدلّة dallah_0 نحاسية.", "relevance": 1}' in extract_text  # the Arabic example
        match_text = server.bodies("match")[0]["messages"][-1]["content"]
        assert '  {"fact": "القطة cat_0 بيضاء."},\n' in match_text  # not \\u-escaped
        assert 'copy the "fact" of each atomic fact into your output exactly as it is given' in match_text


# --- inputs, formula, prompts ------------------------------------------------------------------------
def test_bad_input_names_the_item_and_the_field():
    judge = "base_url=http://127.0.0.1:9/v1,model=x"
    with pytest.raises(ValueError, match="2 predictions, 1 references and 2 images"):
        score_captions(["a", "b"], ["r"], [image((0, 0, 0))] * 2, judge=judge)
    with pytest.raises(TypeError, match="item 1: prediction must be a string"):
        score_captions(["a", None], ["r", "r"], [image((0, 0, 0))] * 2, judge=judge)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="item 0: reference must be a non-empty string"):
        score_captions(["a"], ["  "], [image((0, 0, 0))], judge=judge)
    with pytest.raises(ValueError, match="item 0: image is not a PIL image or decodable image bytes"):
        score_captions(["a"], ["r"], [b"not an image"], judge=judge)
    with pytest.raises(ValueError, match="language must be one of"):
        score_captions(["a"], ["r"], [image((0, 0, 0))], judge=judge, language="fr")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="n_trials"):
        score_captions(["a"], ["r"], [image((0, 0, 0))], judge=judge, n_trials=2)


def test_relevant_recall_weights_by_the_counts_over_all_facts_as_upstream():
    # A (relevant) and C (not relevant) both match oracle 0: upstream divides A's credit by k = 2
    # (predict_weights over all facts), not by 1 (predict_weights_relevant, computed but unused).
    facts = [{"fact": "A", "relevance": 1}, {"fact": "C", "relevance": 0}]
    verification = [{"fact": "A", "verification": 1}, {"fact": "C", "verification": 1}]
    scores = trial_scores(facts, [1, 1], verification, {"A": 0, "C": "0"})  # "0" and 0 name the same fact
    assert scores["recall"] == 0.5 and scores["recall_relevant"] == 0.25
    assert scores["precision_relevant"] == 1.0 and scores["total_atomic_facts_relevant"] == 2
    with pytest.raises(formula.TrialError, match="no relevant predicted facts"):
        trial_scores([{"fact": "C", "relevance": 0}], [1], [{"fact": "C", "verification": 1}], {"C": None})
    with pytest.raises(formula.TrialError, match="no oracle facts"):
        trial_scores([{"fact": "C", "relevance": 1}], [], [{"fact": "C", "verification": 0}], {"C": 0})


def test_replies_are_read_as_leniently_as_upstream_and_no_more():
    assert parse_json_reply("```json\n[{'fact': 'x', 'verification': 1}]\n```") == [{"fact": "x", "verification": 1}]
    assert parse_json_reply('```\n[{"fact": "x", "ok": true}]\n```') == [{"fact": "x", "ok": True}]
    assert parse_json_reply('Here:\n[{"fact": "x"}]') is None  # prose before an unfenced list: upstream fails too
    fmt = dcscore_prompts.VERIFY_FORMAT
    assert fmt.parse('[{"fact": "x", "verification": 1}]').scores == {"n_facts": 1.0}
    assert fmt.parse("[]").reason == "the reply's list of atomic facts is empty"
    assert fmt.parse('[{"fact": "x"}]').reason == "element 0 has no 'verification'"
    assert fmt.parse('{"fact": "x", "verification": 1}').reason == "the reply's JSON is a dict, not a list"


# sha256 of upstream's `<prompt>.format(**values)` (MAGAer13/DeCapBench@9f3fb10, eval/evaluation_decapbench.py),
# with each placeholder filled by f"<{NAME.upper()} ٠١ cat_0>", computed from the upstream file once.
UPSTREAM_RENDERED = {
    "dcscore_extract": "0155642cf944b373e3b5b1e8ef5c54d14ce8a6c3c6a5313a9f63ee877c2ba92a",
    "dcscore_match": "931bf63fa7af3086bed6121e5e40fe6134017cdb34034dc86c7e1fe4696af3c1",
    "dcscore_verify": "894c12878c992b826688d55a925d962dedf21d0cfa5b64e59649c823302b929d",
}


def test_english_prompts_render_exactly_upstreams_text_and_arabic_ones_only_add():
    from metric_plugins.judge import JudgeItem

    for english, arabic in zip(DCSCORE_PROMPTS["en"], DCSCORE_PROMPTS["ar"], strict=True):
        item = JudgeItem({name: f"<{name.upper()} ٠١ cat_0>" for name in english.fields})
        system, user = english.render(item)
        assert system.text == "You are a helpful assistant."
        assert hashlib.sha256(user.text.encode("utf-8")).hexdigest() == UPSTREAM_RENDERED[english.id]
        assert arabic.id == english.id + "_ar" and arabic.fields == english.fields
        # every upstream line is still there, in order
        ar_lines = iter(arabic.user_template.split("\n"))
        assert all(line in ar_lines for line in english.user_template.split("\n"))


@pytest.mark.parametrize("module", [dcscore, formula, dcscore_prompts], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    results = doctest.testmod(module)
    assert results.attempted > 0 and results.failed == 0  # a card that lost its examples fails too


def test_the_evaluate_module_scores_through_the_same_pipeline(tmp_path):
    import evaluate

    path = Path(__file__).resolve().parents[2] / "metric_plugins" / "evaluate_modules" / "dcscore.py"
    metric = evaluate.load(str(path))
    assert metric.description == dcscore.__doc__
    with ScriptedServer(hand_script) as server:
        settings = f"base_url={server.url},model=loopback-judge,cache_path={tmp_path / 'judge.sqlite'}"
        got = metric.compute(predictions=[CANDIDATE], references=[REFERENCE], images=[image((5, 5, 5))], judge=settings)
        assert server.total == 8
        with pytest.raises(ValueError, match="needs images"):
            metric.compute(predictions=[CANDIDATE], references=[REFERENCE], judge=settings)
    assert {name: got[name] for name in EXPECTED} == pytest.approx(
        {name: 100 * float(value) for name, value in EXPECTED.items()}, abs=1e-5
    )
    assert (got["n_valid"], got["n_invalid"], got["n_failed"]) == (1, 0, 0)
