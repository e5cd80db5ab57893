"""Pearl's judged metrics on hand-made judge replies: ACC (MCQ and True/False routes), the rubric,
OVR and CAS, invalid replies included, under each invalid-reply policy; and the judge-free parser."""

from __future__ import annotations

import json

import pytest

from arab_mm_tasks.core import judging
from arab_mm_tasks.core.lazy_image import LazyImage
from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.core.scoring import _PENDING_IMAGES, aggregator, score_sample
from arab_mm_tasks.core.sources import DatasetSource, load_split, without_media_decoding
from arab_mm_tasks.pearl.answers import parse_letter, parse_true_false, parsed_answer_score


def _docs(hub, config):
    return list(load_split(DatasetSource.resolve("pearl", str(hub)), config, "test"))


def _judge(pearl_judge, tmp_path, policy):
    settings = {
        "model": "judge",
        "base_url": pearl_judge.url,
        "cache_path": str(tmp_path / "judge.sqlite"),
        "reasks": 0,
    }
    judging.configure({**settings, **({"invalid_policy": policy} if policy else {})})


def _values(task, docs, predictions):
    spec = get_spec(task)
    return [score_sample(spec, doc, p, spec.render(doc).images) for doc, p in zip(docs, predictions, strict=True)]


def _aggregate(values, name):
    return aggregator("micro")([v[name] for v in values]), aggregator("unscored")(
        [v[f"{name}_unscored"] for v in values]
    )


CLOSED_REPLIES = ["<<acc=1>>", "<<acc=0>>", "<<acc=1>>", "<<acc=maybe>>", "<<acc=1>>", "<<acc=0>>"]


@pytest.mark.parametrize(
    ("policy", "acc"),
    [(None, 300 / 6), ("zero", 300 / 6), ("minus_one", 200 / 6), ("exclude", 300 / 5), ("authors", 300 / 6)],
)  # the authors' score.py scores a reply with no 0/1 in it 0
def test_closed_accuracy_routes_mcq_and_true_false_and_counts_invalid_replies(
    pearl_hub_dir, pearl_judge, tmp_path, policy, acc
):
    docs = _docs(pearl_hub_dir, "pearl_closed")
    assert [d["question_type"] for d in docs] == ["multiple_choice"] * 4 + ["true_false"] * 2
    _judge(pearl_judge, tmp_path, policy)
    values = _values("pearl_closed", docs, CLOSED_REPLIES)
    assert _aggregate(values, "acc") == (pytest.approx(acc), 1.0)  # the paper's default: full denominator
    prompts = [json.loads(r.body)["messages"][0]["content"] for r in pearl_judge.requests]
    assert all(isinstance(c, str) for c in prompts)  # closed-form judge calls are text only
    tasks = [c.split("\n")[1] for c in prompts]
    assert sum(t.startswith(" TASK: Decide if the candidate's choice") for t in tasks) == 4  # MCQ prompt
    assert sum(t.startswith(" TASK: Compare the candidate's short answer") for t in tasks) == 2  # True/False


OPEN_REPLIES = [
    "<<rubric=4,3,5,2>> <<cas=1>>",
    '<<rubric={"correctness": 1, "detail": 2}>> <<cas=0>>',  # JSON without coherence and fluency: invalid
    "<<rubric=5,5,5,5>> <<cas=yes>>",
    "<<rubric=bad>> <<cas=1>>",
]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("zero", {"correctness": 9 / 4, "fluency": 7 / 4, "overall": 8.6 / 4, "cas": 200 / 4}),
        ("minus_one", {"correctness": 7 / 4, "fluency": 5 / 4, "overall": 6.6 / 4, "cas": 100 / 4}),
        ("exclude", {"correctness": 9 / 2, "fluency": 7 / 2, "overall": 8.6 / 2, "cas": 200 / 3}),
        # the authors' score.py: -1 for each dimension the reply's JSON lacks (all four when none parses),
        # the ones it gives kept (OVR of the second item 0.4 * 1 + 0.2 * (-1 + 2 - 1) = 0.4); CAS "yes" is 0
        ("authors", {"correctness": 9 / 4, "detail": 11 / 4, "fluency": 5 / 4, "overall": 8.0 / 4, "cas": 200 / 4}),
    ],
)
def test_open_rubric_overall_and_cas_under_each_policy(pearl_hub_dir, pearl_judge, tmp_path, policy, expected):
    # undecoded documents, as the harnesses hold them: the judge's images wait as lazy images, not pixels
    source = DatasetSource.resolve("pearl", str(pearl_hub_dir))
    docs = list(without_media_decoding(load_split(source, "pearl_open", "test")))[:4]
    _judge(pearl_judge, tmp_path, policy)
    values = _values("pearl_open", docs, OPEN_REPLIES)
    kept = [_PENDING_IMAGES[v["cas"]["judge"]["images"]].images for v in values]
    assert all(len(images) == 1 and isinstance(images[0], LazyImage) for images in kept)
    for name, score in expected.items():  # invalid judgements counted under every policy: 2 rubric, 1 CAS
        assert _aggregate(values, name) == (pytest.approx(score), 1.0 if name == "cas" else 2.0), name
    # OVR per item = 0.4 COR + 0.2 (COH + DET + FLU) (Eq. 1): 3.6 for (4, 3, 5, 2)
    assert values[0]["overall"]["score"] == pytest.approx(3.6)
    assert values[1]["overall"]["judge_status"] == "invalid"
    # the rubric and CAS judges see the image first, then the text; one request per item and prompt
    bodies = [json.loads(r.body) for r in pearl_judge.requests]
    assert len(bodies) == 8
    for body in bodies:
        parts = body["messages"][0]["content"]
        assert [p["type"] for p in parts] == ["image_url", "text"]
    for name in ("coherence", "detail"):  # the last metrics of the samples: their images are released
        _aggregate(values, name)
    assert not _PENDING_IMAGES
    assert len(pearl_judge.requests) == 8  # the other rubric dimensions came from the same (cached) judgements


def test_no_judge_leaves_scores_unscored_and_holds_no_images(pearl_hub_dir, monkeypatch):
    monkeypatch.delenv("ARAB_MM_JUDGE_MODEL", raising=False)
    judging.configure({})
    values = _values("pearl_open", _docs(pearl_hub_dir, "pearl_open")[:2], ["x", "y"])
    score, unscored = _aggregate(values, "overall")
    assert score != score and unscored == 2  # NaN: nothing to average
    for name in ("correctness", "coherence", "detail", "fluency", "cas"):
        _aggregate(values, name)
    assert not _PENDING_IMAGES


def test_the_parser_docstring_examples_run():
    import doctest

    from arab_mm_tasks.pearl import answers

    result = doctest.testmod(answers)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    ("reply", "label"),
    [("True", True), ("false.", False), ("صحيح", True), ("خطأ", False), ("الإجابة: صح", True),
     ("العبارة خاطئة", False), ("نعم", None), ("", None),
     # feminine forms, diacritics, tatweel, other inflections: one word each
     ("العبارة صحيحة", True), ("صَحِيح", True), ("صحيـــحة", True), ("خَطَأ", False), ("خاطئ", False),
     ("خاطئة.", False), ("الجواب خطأ", False), ("غير صحيح", False), ("This is not true.", False),
     # an echo of the question's options is no verdict; the final verdict counts, or the one after "answer"
     ("True or False? False", False), ("صحيح أم خطأ: خطأ", False), ("True/False: True", True),
     ("It looks true at first, but the statement is false", False), ("The answer is: True. False cases exist", True),
     ("**False**", False)],
)  # fmt: skip
def test_true_false_parsing_reads_english_and_arabic(reply, label):
    assert parse_true_false(reply) is label


@pytest.mark.parametrize(
    ("reply", "letter"),
    [("B", "B"), ("(C)", "C"), ("D. المنسف", "D"), ("  a) x", "A"), ("المنسف", "C"), ("E", None), ("نعم", None),
     ("Answer: B", "B"), ("**B**", "B"), ("The answer is B", "B"), ("The answer is **C**. المنسف", "C"),
     ("الإجابة: D", "D"), ("Option (A)", "A"), ("The answer is a castle", None), ("The answer is E", None),
     ("المَنْسَف", "C")],
)  # fmt: skip
def test_letter_parsing_takes_a_leading_or_announced_letter_or_one_named_choice(reply, letter):
    assert parse_letter(reply, ["A", "B", "C", "D"], ["الكعبة", "القلعة", "المنسف", "العود"]) == letter


def test_parsed_accuracy_scores_against_the_gold_letter_and_label(pearl_hub_dir):
    spec = get_spec("pearl_closed")
    mcq, tf = _docs(pearl_hub_dir, "pearl_closed")[0], _docs(pearl_hub_dir, "pearl_closed")[4]
    letter, label = mcq["answer_letter"], tf["answer"]
    assert parsed_answer_score(f"{letter}.", spec.target(mcq)) == 100.0
    assert parsed_answer_score("Z", spec.target(mcq)) == 0.0
    assert parsed_answer_score({"True": "صحيح", "False": "خطأ"}[label], spec.target(tf)) == 100.0
