"""Pearl's model prompts and the judge inputs of each item: pure functions over built records.

The paper prints no prompt for the evaluated model (L133); these are the authors' own, as their
scripts build them (`eval/generate_pearl.py`, `eval/generate_pearl_x.py` in UBC-NLP/pearl@ae6e95d,
specs/pearl.md section 7): one user turn, the image first, then the text.

- multiple choice: ``f"{instruction}\n{question}\n{choices}"``, the choices as released, one per line
  (``"\n".join(choices)``: no letters are added to choices that carry none);
- True/False: ``f"{question}\n{instruction}"`` with the one-word True/False instruction;
- ``long_answer``: the question, then "Answer the question in detail in Arabic language.";
- every other (open-ended) type: the question, then "Please provide brief, clear responses in Arabic language.";
- Pearl-X: each image preceded by ``Image {i}: `` and followed by a newline; multiple choice is
  ``f"{question}\n{choices}\n\n{instruction}"`` (a blank line before the instruction), True/False
  questions go bare.

The judges' ``{question}`` is that text as well, for open-ended items too: the authors' ``score.py``
formats every row's question with the generation prompt's code before filling it in
(docs/fidelity.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from arab_mm_tasks.core.spec import IMAGE_PLACEHOLDER, RecordError, required_field
from arab_mm_tasks.pearl.answers import LETTERED, TRUE_FALSE, parse_true_false

MCQ_INSTRUCTION = (
    "For the given Multiple Choice Question, analyze the question and answer strictly from one of the options "
    "below. Strictly answer the choice only. No additional text."
)
TF_INSTRUCTION = "The above question is a True/False question. Please provide the answer as one word (True or False)"
LONG_INSTRUCTION = "Answer the question in detail in Arabic language."
BRIEF_INSTRUCTION = "Please provide brief, clear responses in Arabic language."

MULTIPLE_CHOICE, OPEN_ENDED = "multiple_choice", "open_ended"
CLOSED_TYPES = (MULTIPLE_CHOICE, TRUE_FALSE)
# The 11 open-ended types of Table B.1 (L451-L465), by the key `question_type_key` gives them.
OPEN_TYPES = (
    "cause_and_effect", "chronological_sequence", "comparative_analysis", "general_qa", "hypothesis_formation",
    "modern_context", "origin_identification", "perspective_shifting", "problem_solving", "role_playing",
    "scenario_completion",
)  # fmt: skip
# Open-ended type names the authors' scorer branches on besides Table B.1's (specs/pearl.md section 7).
EXTRA_OPEN_TYPES = ("long_answer", "short_answer")
_ALIASES = {"mcq": MULTIPLE_CHOICE, "multiple_choice_question": MULTIPLE_CHOICE, "tf": TRUE_FALSE,
            "true_or_false": TRUE_FALSE, "general_q_a": "general_qa", "general_question_answering": "general_qa",
            "general_question_and_answer": "general_qa",
            "cause_effect": "cause_and_effect", "role_play": "role_playing"}  # fmt: skip

LATIN_LETTERS = "ABCDEFGHIJ"


def question_type_key(value: str) -> str:
    """``"Cause and Effect"`` / ``"cause_and_effect"`` / ``"General Q&A"`` -> one snake_case key (not checked)."""
    key = re.sub(r"[^a-z0-9]+", "_", value.strip().lower().replace("&", " and ").replace("/", " or ")).strip("_")
    key = key.replace("q_and_a", "qa")
    return _ALIASES.get(key, key)


def route(question_type: str) -> str:
    """The judge route of a question type: multiple_choice, true_false or open_ended (unknown: ValueError)."""
    key = question_type_key(question_type)
    if key in CLOSED_TYPES:
        return key
    if key in OPEN_TYPES or key in EXTRA_OPEN_TYPES:
        return OPEN_ENDED
    raise ValueError(f"unknown question type {question_type!r}")


def record_name(doc: Mapping[str, Any]) -> str:
    return f"Pearl record {doc.get('id')!r}"


def field(doc: Mapping[str, Any], name: str) -> Any:
    return required_field(doc, name, record_name(doc))


def choice_letters(choices: list[str]) -> list[str]:
    """Each choice's letter: its own prefix (``"B. ..."``, ``"ب) ..."``) when every choice has one, else A, B, C..."""
    prefixes = [LETTERED.match(choice) for choice in choices]
    if all(prefixes):
        return [match.group(1).upper() for match in prefixes if match]
    return list(LATIN_LETTERS[: len(choices)])


def choice_text(choice: str) -> str:
    """A choice without its letter prefix."""
    return LETTERED.sub("", choice, count=1).strip()


def closed_text(doc: Mapping[str, Any], *, pearl_x: bool) -> str:
    """The text of a closed-form item (after its images), as the authors' generation scripts build it."""
    question = str(field(doc, "question"))
    kind = route(str(field(doc, "question_type")))
    if kind == TRUE_FALSE:
        return question if pearl_x else f"{question}\n{TF_INSTRUCTION}"
    choices = "\n".join(field(doc, "choices"))  # as released, like the scripts' "\n".join(choices)
    if pearl_x:
        return f"{question}\n{choices}\n\n{MCQ_INSTRUCTION}"
    return f"{MCQ_INSTRUCTION}\n{question}\n{choices}"


def open_text(doc: Mapping[str, Any]) -> str:
    question = str(field(doc, "question"))
    long = question_type_key(str(field(doc, "question_type"))) == "long_answer"
    return f"{question}\n{LONG_INSTRUCTION if long else BRIEF_INSTRUCTION}"


def image_lines(count: int, *, labelled: bool) -> str:
    """Pearl: one ``<image>`` first. Pearl-X: ``Image {i}: <image>`` then a newline, per image."""
    if labelled:
        return "".join(f"Image {i}: {IMAGE_PLACEHOLDER}\n" for i in range(1, count + 1))
    return f"{IMAGE_PLACEHOLDER}\n" * count


def gold_letter(doc: Mapping[str, Any]) -> str:
    """The MCQ answer letter, checked to be one of the choices' letters."""
    letters = choice_letters(list(field(doc, "choices")))
    letter = str(field(doc, "answer_letter")).strip().rstrip(".").upper()
    if letter not in letters:
        raise RecordError(f"{record_name(doc)}: field 'answer_letter' is {letter!r}, not one of {letters}")
    return letter


def ground_truth(doc: Mapping[str, Any]) -> str:
    """``{ground_truth}`` of the judge: MCQ ``"{answer_letter}. {answer}"`` (the authors' scorer); else the answer."""
    answer = str(field(doc, "answer"))
    if route(str(field(doc, "question_type"))) == MULTIPLE_CHOICE:
        return f"{gold_letter(doc)}. {choice_text(answer)}"
    return answer


def closed_target(doc: Mapping[str, Any], *, pearl_x: bool) -> str:
    """A closed item's target: a JSON object with what its judge and the parsed-answer metric need.

    ``question`` is the text the model saw (question with options: the paper's "Question with
    options", L777; the authors' scorer sends its formatted prompt).
    """
    kind = route(str(field(doc, "question_type")))
    target: dict[str, Any] = {
        "route": kind,
        "question": closed_text(doc, pearl_x=pearl_x),
        "ground_truth": ground_truth(doc),
    }
    if kind == MULTIPLE_CHOICE:
        choices = list(field(doc, "choices"))
        target["answer_letter"] = gold_letter(doc)
        target["letters"] = choice_letters(choices)
        target["choices"] = [choice_text(choice) for choice in choices]
    else:
        target["label"] = true_false_label(str(field(doc, "answer")), doc)
    return json.dumps(target, ensure_ascii=False, sort_keys=True)


def open_target(doc: Mapping[str, Any]) -> str:
    """An open item's target: gold answer, question and augmented caption (the judge's image description).

    ``question`` is the text the model saw, its instruction included, as the authors' scorer fills
    the rubric prompt's ``Question:`` (it formats every row with the generation prompt's code).
    """
    target = {
        "route": OPEN_ENDED,
        "question": open_text(doc),
        "ground_truth": str(field(doc, "answer")),
        "image_description": str(field(doc, "augmented_caption")),
    }
    return json.dumps(target, ensure_ascii=False, sort_keys=True)


def true_false_label(answer: str, doc: Mapping[str, Any] | None = None) -> bool:
    """A True/False gold answer (English or Arabic) as a bool; anything else is a bad record."""
    label = parse_true_false(answer)
    if label is None:
        where = record_name(doc) if doc is not None else "Pearl record"
        raise RecordError(f"{where}: field 'answer' is {answer!r}, not True/False (or صحيح/خطأ)")
    return label


def judge_fields(prediction: str, target: str) -> dict[str, str]:
    """The judge template fields of one answer: the target's inputs and ``{predicted_answer}``."""
    gold = json.loads(target)
    fields = {"question": gold["question"], "ground_truth": gold["ground_truth"], "predicted_answer": prediction}
    if "image_description" in gold:
        fields["image_description"] = gold["image_description"]
    return fields


def judge_route(target: str) -> str:
    """The judge prompt of a closed item: ``pearl_multiple_choice`` or ``pearl_true_false``."""
    return f"pearl_{json.loads(target)['route']}"
