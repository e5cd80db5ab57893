"""Pearl's ``invalid_policy=authors`` reads judge replies as the authors' ``eval/score.py`` does; the
prediction is stripped under every policy; empty answer letters stay ""."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pearl_fixtures import pearl_x_records, write_pearl_x

from arab_mm_tasks.core import judging
from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.core.scoring import aggregator, score_sample
from arab_mm_tasks.core.sources import DatasetSource, load_split, without_media_decoding
from dataset_builders.pearl import build
from metric_plugins.judge.prompts.pearl import PEARL_CAS, PEARL_OPEN_ENDED, RUBRIC

JSON_STARTS = "{[\"'-0123456789tfnNI"  # prose that is no JSON value's start
PROSE = 'Here are my scores: {"correctness": 4, "coherence": 4, "detail": 3, "fluency": 5, "note": "ok"}'


def _open_values(hub, judge, tmp_path, policy, predictions):
    source = DatasetSource.resolve("pearl", str(hub))
    docs = list(without_media_decoding(load_split(source, "pearl_open", "test")))[: len(predictions)]
    settings_ = {"model": "judge", "base_url": judge.url, "cache_path": str(tmp_path / "j.sqlite"), "reasks": 0}
    judging.configure({**settings_, **({"invalid_policy": policy} if policy else {})})
    spec = get_spec("pearl_open")
    values = [score_sample(spec, d, p, spec.render(d).images) for d, p in zip(docs, predictions, strict=True)]
    for name in (*RUBRIC, "overall", "cas"):  # the first aggregation of each metric judges its values
        _mean(values, name)
    return values


def _mean(values, name):
    unscored = aggregator("unscored")([v[f"{name}_unscored"] for v in values])
    return aggregator("micro")([v[name] for v in values]), unscored


# prose before the JSON: valid for us; json.loads fails in score.py -> -1 for all four dimensions
@pytest.mark.parametrize(("policy", "correctness", "overall"), [(None, 4.0, 4.0), ("authors", -1.0, -1.0)])
def test_prose_before_the_rubric_json(pearl_hub_dir, pearl_judge, tmp_path, policy, correctness, overall):
    values = _open_values(pearl_hub_dir, pearl_judge, tmp_path, policy, [f"<<rubric={PROSE}>> <<cas=1>>"])
    assert values[0]["correctness"]["score"] == correctness
    assert values[0]["overall"]["score"] == pytest.approx(overall)  # 0.4*4 + 0.2*(4+3+5) under ours
    assert values[0]["cas"]["score"] == 100.0


def test_a_bare_number_as_the_rubric_reply(pearl_hub_dir, pearl_judge, tmp_path):
    replies = ["<<rubric=3>> <<cas=1>>", "<<rubric=4,4,4,4>> <<cas=1>>"]
    default = _open_values(pearl_hub_dir, pearl_judge, tmp_path, None, replies)
    assert _mean(default, "correctness") == (pytest.approx(2.0), 1.0)  # invalid, counted 0 (full denominator)
    authors = _open_values(pearl_hub_dir, pearl_judge, tmp_path, "authors", replies)
    # score.py: scores.get on an int raises, the row goes to its error file: no rubric score at all
    for name in (*RUBRIC, "overall"):
        assert _mean(authors, name) == (pytest.approx(4.0), 1.0), name
    # the same reply judged under both policies: one judge call per request, the second run from the cache
    assert len(pearl_judge.requests) == 4


@settings(max_examples=40, deadline=None)
@given(
    scores=st.dictionaries(st.sampled_from(RUBRIC), st.integers(-3, 9) | st.floats(0, 5, allow_nan=False)),
    prose=st.text(min_size=1, max_size=30).filter(lambda t: t.strip() and t.lstrip()[0] not in JSON_STARTS),
    other=st.none() | st.booleans() | st.integers() | st.lists(st.integers(), max_size=3) | st.text(max_size=10),
)
def test_the_authors_rubric_reading_is_score_py(scores, prose, other):
    reading = PEARL_OPEN_ENDED.reply_format.authors
    given_json = json.dumps(scores)
    assert reading(given_json) == {name: float(scores.get(name, -1)) for name in RUBRIC}  # missing -> -1, range kept
    assert reading(f"```json\n{given_json}\n```") == reading(given_json)  # fences removed
    assert reading(f"{prose}{given_json}") == dict.fromkeys(RUBRIC, -1.0)  # prose before: no JSON at all
    assert reading(json.dumps(other)) is None  # JSON that is not an object: the row is dropped


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=40))
def test_the_authors_binary_reading_keeps_the_0_1_characters(reply):
    digits = re.sub("[^01]", "", reply)
    assert PEARL_CAS.reply_format.authors(reply) == {"score": float(int(digits)) if digits else 0.0}


def test_the_prediction_is_stripped_so_the_judge_request_and_its_cache_key_do_not_change(pearl_hub_dir, pearl_judge):
    source = DatasetSource.resolve("pearl", str(pearl_hub_dir))
    doc = next(iter(without_media_decoding(load_split(source, "pearl_open", "test"))))
    spec = get_spec("pearl_open")
    judging.configure({})
    bare, padded = (score_sample(spec, doc, p)["cas"]["judge"]["fields"] for p in ("الجواب", "\n  الجواب \n"))
    assert bare == padded and bare["predicted_answer"] == "الجواب"


def test_an_empty_answer_letter_stays_an_empty_string(tmp_path):
    records = pearl_x_records()
    assert records[2]["answer_letter"] is None and records[2]["question_type"] == "true_false"
    records[3]["answer_letter"] = ""
    build(tmp_path / "out", pearl_x=write_pearl_x(tmp_path / "x.parquet", records))
    source = DatasetSource.resolve("pearl", str(tmp_path / "out"))
    rows = [r for c in ("pearl_x_single", "pearl_x_multi") for r in load_split(source, c, "test")]
    letters = {r["id"]: r["answer_letter"] for r in rows}
    assert letters["2"] == letters["3"] == "" and letters["0"] == "B"
    for row in rows:  # the task reads the built rows: True/False items score without a letter
        task = get_spec("pearl_x_single" if row["n_images"] == 1 else "pearl_x_multi")
        assert task.target(row)
