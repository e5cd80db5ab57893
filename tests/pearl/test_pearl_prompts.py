"""Pearl's prompts, exactly: what the model sees per question type (both harnesses the same bytes) and
the judge message of one item per route (MCQ, True/False, open-ended rubric, CAS); the prompts pinned."""

from __future__ import annotations

import re

import pytest

from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.core.scoring import score_prediction
from arab_mm_tasks.core.spec import RecordError, without_image_placeholders
from arab_mm_tasks.harness.lighteval_tasks import make_prompt_function
from arab_mm_tasks.testing.synthetic import make_image
from metric_plugins.judge import JudgeItem, get_prompt
from metric_plugins.judge.prompts.pearl import PEARL_PROMPTS

# Real Arabic text from the authors' examples (/work/shared/real/pearl/), shortened.
QUESTION = "ما اسم الطبق التقليدي الظاهر في الصورة؟"
CAPTION = "تظهر الصورة طبق المنسف الأردني."
ANSWER = "المنسف هو الطبق الوطني في الأردن."


def _doc(**fields):
    base = {"id": "7", "question": QUESTION, "augmented_caption": CAPTION, "country": "Jordan", "category": "Food",
            "choices": [], "answer_letter": "", "image": make_image("pearl")}  # fmt: skip
    return {**base, **fields}


MCQ = _doc(question_type="multiple_choice", choices=["A. الكبسة", "B. المنسف", "C. الكسكس"], answer_letter="B",
           answer="المنسف")  # fmt: skip
TF = _doc(question="يقدم المنسف عادة مع الأرز.", question_type="true_false", answer="True")
OPEN = _doc(question_type="Origin Identification", answer=ANSWER)
LONG = _doc(question_type="long_answer", answer=ANSWER)
X_MULTI = {"id": "3", "question": "أي من الصور التالية تُمثِّل الثوب القطري؟", "question_type": "multiple_choice",
           "choices": ["الثوب القطري", "الدشداشة العمانية"], "answer_letter": "A", "answer": "الثوب القطري",
           "images": [make_image(i, size=(8 + i, 8)) for i in range(3)]}  # fmt: skip
X_TF = {**X_MULTI, "question": "صحيح أم خطأ: جميع الصور تُظهر الثوب.", "question_type": "true_false",
        "answer": "False", "images": X_MULTI["images"][:1]}  # fmt: skip
MCQ_INSTRUCTION = (
    "For the given Multiple Choice Question, analyze the question and answer strictly from one of the options "
    "below. Strictly answer the choice only. No additional text."
)

PROMPTS = [
    ("pearl_closed", MCQ, f"<image>\n{MCQ_INSTRUCTION}\n{QUESTION}\nA. الكبسة\nB. المنسف\nC. الكسكس"),
    ("pearl_closed", TF, "<image>\nيقدم المنسف عادة مع الأرز.\nThe above question is a True/False question. "
     "Please provide the answer as one word (True or False)"),
    ("pearl_open", OPEN, f"<image>\n{QUESTION}\nPlease provide brief, clear responses in Arabic language."),
    ("pearl_lite_open", LONG, f"<image>\n{QUESTION}\nAnswer the question in detail in Arabic language."),
    # Pearl-X MCQ: f"{question}\n{choices}\n\n{instruction}"; choices as released, no letters added
    ("pearl_x_multi", X_MULTI, "Image 1: <image>\nImage 2: <image>\nImage 3: <image>\n"
     f"أي من الصور التالية تُمثِّل الثوب القطري؟\nالثوب القطري\nالدشداشة العمانية\n\n{MCQ_INSTRUCTION}"),
    ("pearl_closed", {**MCQ, "choices": ["الكبسة", "المنسف", "الكسكس"]},
     f"<image>\n{MCQ_INSTRUCTION}\n{QUESTION}\nالكبسة\nالمنسف\nالكسكس"),
    ("pearl_x_single", X_TF, "Image 1: <image>\nصحيح أم خطأ: جميع الصور تُظهر الثوب."),
]  # fmt: skip


@pytest.mark.parametrize(("task", "doc", "expected"), PROMPTS)
def test_the_model_prompt_per_question_type_is_the_authors_and_both_harnesses_send_it(task, doc, expected):
    spec = get_spec(task)
    request = spec.render(doc)
    assert request.query == expected
    assert len(request.images) == expected.count("<image>")
    lighteval = make_prompt_function(spec)(doc, task)
    assert lighteval.query == without_image_placeholders(expected)  # the same words; lighteval places the images
    assert lighteval.query == expected.split("<image>\n")[-1]
    assert len(lighteval.images) == len(request.images)


def _judge_text(task, doc, prediction, metric):
    spec = get_spec(task)
    value = score_prediction(spec, prediction, spec.target(doc), [])[metric]["judge"]
    (message,) = get_prompt(value["prompt"]).render(JudgeItem(value["fields"]))
    return value["prompt"], message.text


def test_the_mcq_judge_message_is_figure_d10_with_the_authors_ground_truth():
    prompt, text = _judge_text("pearl_closed", MCQ, "B", "acc")
    assert prompt == "pearl_multiple_choice"
    assert text == (
        " You are an impartial evaluator.\n"
        " TASK: Decide if the candidate's choice is correct **ignoring surface form** (letter, synonym,\n"
        ' capitalisation). Return ONLY "1" for correct, "0" for incorrect.\n'
        " Question with options:\n"
        f"{MCQ_INSTRUCTION}\n{QUESTION}\nA. الكبسة\nB. المنسف\nC. الكسكس\n"
        " Gold correct answer:\n"
        "B. المنسف\n"
        " Candidate's chosen answer:\n"
        "B\n"
        " Reply with 1 or 0 - nothing else."
    )


def test_the_pearl_x_judge_message_has_the_question_as_the_pearl_x_model_saw_it():
    prompt, text = _judge_text("pearl_x_multi", X_MULTI, "الثوب القطري", "acc")
    assert prompt == "pearl_multiple_choice"
    assert text.split(" Question with options:\n")[1] == (
        f"أي من الصور التالية تُمثِّل الثوب القطري؟\nالثوب القطري\nالدشداشة العمانية\n\n{MCQ_INSTRUCTION}\n"
        " Gold correct answer:\n"
        "A. الثوب القطري\n"
        " Candidate's chosen answer:\n"
        "الثوب القطري\n"
        " Reply with 1 or 0 - nothing else."
    )


def test_the_true_false_judge_message_is_figure_d10():
    prompt, text = _judge_text("pearl_closed", TF, "صحيح", "acc")
    assert prompt == "pearl_true_false"
    assert text == (
        "You are an impartial evaluator.\n"
        " TASK: Compare the candidate's short answer with the gold answer. If they express the **same\n"
        ' fact** (allowing synonyms, paraphrase, spelling variants) return "1". Otherwise return "0".\n'
        " Give no explanation.\n"
        " Statement:\n"
        "يقدم المنسف عادة مع الأرز.\n"
        "The above question is a True/False question. Please provide the answer as one word (True or False)\n"
        " Gold label (True/False):\n"
        "True\n"
        " Candidate label:\n"
        "صحيح\n"
        " Reply with 1 or 0 - nothing else."
    )


def test_the_open_ended_judge_message_is_figure_d10_with_single_braces_the_caption_and_the_model_prompt():
    prompt, text = _judge_text("pearl_open", OPEN, "إنه المنسف.", "overall")
    assert prompt == "pearl_open_ended"
    assert text == (
        " You are an **impartial multimodal evaluator** for Arabic cultural benchmark.\n"
        " Your task is to grade the candidate's Arabic answer to a culture-focused question, using\n"
        " **both** the reference text and the attached image.\n"
        "***Output ONE JSON object only*** in this schema:\n"
        '{ "correctness": <0-5>, "coherence": <0-5>, "detail": <0-5>, "fluency": <0-5> }\n'
        " ### Scoring rubric (0= very poor,5= excellent)\n"
        " \u2022 **Correctness 40% - factual agreement with the gold reference *and* visual evidence.\n"
        " - **Coherence 20%** - logical, no contradictions, clear progression.\n"
        "\n"
        "    **Detail 20%** - culturally specific names, dates, artefacts, dialect terms (text or image).\n"
        "    **Fluency 20%** - smooth Arabic (or requested dialect), correct grammar & style.\n"
        "\n"
        " Image description:\n"
        f"{CAPTION}\n"
        f" Question: {QUESTION}\nPlease provide brief, clear responses in Arabic language.\n"
        " Gold reference answer:\n"
        f"{ANSWER}\n"
        " Candidate answer:\n"
        "إنه المنسف.\n"
        " Respond with the JSON object only- **no additional text**"
    )


def test_the_cas_judge_message_is_the_authors_score_py_prompt_as_sent():
    """`cas_prompt` of eval/score.py (UBC-NLP/pearl@ae6e95d) after `.strip()`: its 8-space indentation kept."""
    prompt, text = _judge_text("pearl_open", OPEN, "إنه المنسف.", "cas")
    assert prompt == "pearl_cas"
    pad = " " * 8
    assert text == (
        "You are checking **Cultural Awareness** for Arabic cultural benchmark item.\n"
        f"{pad}\n"
        f'{pad}Return **"1"** if the candidate answer explicitly mentions at least one culturally specific\n'
        f"{pad}element (e.g., festival, landmark, dialect term) that is central to the gold reference\n"
        f"{pad}**or clearly visible/implied in the image**.  \n"
        f'{pad}Return **"0"** otherwise.\n'
        f"{pad}\n{pad}\n"
        f"{pad}*Image description:* {CAPTION}\n"
        f"{pad}\n"
        f"{pad}### Textual inputs  \n"
        f"{pad}Gold reference:\n"
        f"{pad}{ANSWER}\n"
        f"{pad}\n"
        f"{pad}Candidate answer:\n"
        f"{pad}إنه المنسف.\n"
        f"{pad}\n"
        f"{pad}Reply with **1** or **0** \u2014 nothing else."
    )


def test_the_judge_prompts_parse_their_replies():
    mcq, _, rubric, cas = PEARL_PROMPTS
    assert mcq.parse("1").scores == {"score": 1.0} and not mcq.parse("10").valid
    assert rubric.parse('```json\n{"correctness": 0, "coherence": 4.5, "detail": 3, "fluency": 5}\n```').valid
    assert rubric.parse('{"correctness": 6, "coherence": 4, "detail": 3, "fluency": 5}').reason == (
        "correctness 6 outside [0, 5]"
    )
    assert not rubric.parse('{"correctness": 4}').valid and not cas.parse("yes").valid


@pytest.mark.parametrize(
    ("task", "doc", "message"),
    [
        ("pearl_open", MCQ, "field 'question_type' is 'multiple_choice', not an open-ended type"),
        ("pearl_closed", OPEN, "field 'question_type' is 'Origin Identification', not a closed-form type"),
        ("pearl_closed", {**MCQ, "answer_letter": "D"}, "field 'answer_letter' is 'D', not one of ['A', 'B', 'C']"),
        ("pearl_closed", {**TF, "answer": "ربما"}, "field 'answer' is 'ربما', not True/False"),
        ("pearl_open", {**OPEN, "augmented_caption": None}, "field 'augmented_caption' is missing or empty"),
    ],
)
def test_a_record_in_the_wrong_task_or_with_a_bad_field_is_named(task, doc, message):
    with pytest.raises(RecordError, match=re.escape(f"Pearl record '7': {message}")):
        get_spec(task).render(doc)
