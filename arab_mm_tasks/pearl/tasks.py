"""
name: Pearl, Pearl-Lite, Pearl-X
dataset: UBC-NLP/PEARL, UBC-NLP/PEARL-LITE, UBC-NLP/PEARL-X (gated, CC-BY-NC-ND-4.0), built by
  `dataset_builders.pearl` (on first use, or from a local copy)
abstract: Arabic culturally-aware visual question answering over 10 domains and 19 Arab countries.
  Pearl: 6,301 items (4,832 closed-form multiple-choice / True-False, 1,469 open-ended over 11
  question types); Pearl-Lite: 893 of them (591 + 302); Pearl-X: 367 closed-form items over
  shared concepts, 177 with one image and 190 with several. Every score comes from an LVLM judge
  (InternVL3.5-38B in the paper): ACC% on closed items, a 4-dimension rubric (COR, COH, DET, FLU,
  and OVR = 0.4 COR + 0.2 (COH + DET + FLU)) and the Cultural Awareness Score CAS% on open items.
languages: arabic
tags: vqa, multi-image, culture, generative, llm-as-judge
paper: Alwajih et al., "Pearl: A Multimodal Culturally-Aware Arabic Instruction Dataset" (2025)

Variants (task names), each a config of the built dataset:
- ``pearl_closed`` / ``pearl_lite_closed``: closed-form items, ``acc`` judged (MCQ and True/False
  prompts of Figure D.10) and ``acc_parsed`` (letter / True-False parsing, no judge; a deviation);
- ``pearl_open`` / ``pearl_lite_open``: open-ended items, ``correctness``, ``coherence``,
  ``detail``, ``fluency`` (0-5), ``overall`` (OVR, Eq. 1) and ``cas`` (%), all judged with the image;
- ``pearl_x_single`` / ``pearl_x_multi``: Pearl-X's one-image and several-image items, scored like
  ``pearl_closed``.
Groups: ``pearl``, ``pearl_lite`` (both halves) and ``pearl_x`` (accuracy over all its items).

    lm_eval --model hf-multimodal --model_args pretrained=Qwen/Qwen2.5-VL-7B-Instruct \\
        --tasks pearl --apply_chat_template --metadata '{"judge": "model=OpenGVLab/InternVL3_5-38B,base_url=..."}'

Judged values are x100 for ACC and CAS (percent, as the paper's tables), raw 0-5 for the rubric.
An invalid judgement counts 0 by default (the paper's full denominators, specs/pearl.md 3.6);
judge setting ``invalid_policy=authors`` reads every reply as the authors' ``score.py`` does (-1 for
each rubric dimension the reply does not give, all four when the reply is not pure JSON; a JSON
reply that is no object leaves the row's rubric out; 0/1 characters for ACC and CAS), ``exclude``
leaves an invalid judgement out.
Per country, question type and domain: ``arab-mm-tasks breakdown`` on the saved samples.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from arab_mm_tasks.core.media import load_image, load_images
from arab_mm_tasks.core.spec import (
    Family,
    Generation,
    GenerativeMetric,
    RecordError,
    Request,
    TaskSpec,
    generative_spec,
)
from arab_mm_tasks.pearl import answers, prompts
from metric_plugins.judge.prompts.pearl import OVERALL_WEIGHTS, RUBRIC

# The authors' decoding: greedy (temperature 0.0), max_tokens 4048, stop at the chat end tokens
# (`eval/generate_pearl.py`); their top_p 0.9 does nothing under greedy decoding and their
# repetition_penalty 1.1 is a model setting (docs/fidelity.md).
GENERATION = Generation(max_new_tokens=4048, until=("<|im_end|>", "<end_of_turn>"))
BREAKDOWN_KEYS = ("country", "question_type", "category")
# 2: choices shown as released, Pearl-X's blank line before its MCQ instruction, the open-ended
# judge's question with its instruction, the authors' CAS prompt.
VERSION = 2
PEARL_X_IMAGES = 6  # columns image1 .. image6
InvalidPolicy = Literal["exclude", "zero", "minus_one"]
INVALID_POLICY: InvalidPolicy = "zero"  # every reported percentage is k / (full subset size), L125-L127
# `invalid_policy=authors`: eval/score.py@ae6e95d scores an unparsable 0/1 reply 0 (ACC, CAS) and a
# rubric dimension missing from the reply's JSON -1 (all four when no JSON parses), averaged in.
AUTHORS_BINARY: InvalidPolicy = "zero"
AUTHORS_RUBRIC: InvalidPolicy = "minus_one"


# ------------------------------------------------------------------------------------- requests


def render_closed(doc: Mapping[str, Any]) -> Request:
    """Pearl / Pearl-Lite closed form: the image, then the authors' MCQ or True/False text."""
    image = load_image(prompts.field(doc, "image"), record=prompts.record_name(doc), field="image", lazy=True)
    text = prompts.closed_text(doc, pearl_x=False)
    return Request(prompts.image_lines(1, labelled=False) + text, target=closed_target(doc), images=[image])


def render_open(doc: Mapping[str, Any]) -> Request:
    image = load_image(prompts.field(doc, "image"), record=prompts.record_name(doc), field="image", lazy=True)
    text = prompts.open_text(doc)
    return Request(prompts.image_lines(1, labelled=False) + text, target=open_target(doc), images=[image])


def render_pearl_x(doc: Mapping[str, Any]) -> Request:
    """Pearl-X: every image of the item, in order, each after ``Image {i}: ``, then the question."""
    images = load_images(prompts.field(doc, "images"), record=prompts.record_name(doc), lazy=True)
    text = prompts.closed_text(doc, pearl_x=True)
    return Request(prompts.image_lines(len(images), labelled=True) + text, target=pearl_x_target(doc), images=images)


def closed_target(doc: Mapping[str, Any]) -> str:
    _check_route(doc, closed=True)
    return prompts.closed_target(doc, pearl_x=False)


def pearl_x_target(doc: Mapping[str, Any]) -> str:
    _check_route(doc, closed=True)
    return prompts.closed_target(doc, pearl_x=True)


def open_target(doc: Mapping[str, Any]) -> str:
    _check_route(doc, closed=False)
    return prompts.open_target(doc)


def _check_route(doc: Mapping[str, Any], *, closed: bool) -> None:
    kind = str(prompts.field(doc, "question_type"))
    try:
        found = prompts.route(kind)
    except ValueError as error:
        raise RecordError(f"{prompts.record_name(doc)}: field 'question_type' {error}") from None
    if (found != prompts.OPEN_ENDED) != closed:
        want = "a closed-form" if closed else "an open-ended"
        raise RecordError(f"{prompts.record_name(doc)}: field 'question_type' is {kind!r}, not {want} type")


# ------------------------------------------------------------------------------------- metrics

CLOSED_METRICS = (
    GenerativeMetric(
        "acc",
        by_region=False,
        description="ACC%: the judge's relaxed match (Figure D.10 MCQ / True-False prompts), x100",
        judge_prompt="pearl_multiple_choice",
        judge_fields=prompts.judge_fields,
        judge_route=prompts.judge_route,
        judge_weights={"score": 100.0},
        invalid_policy=INVALID_POLICY,
        authors_invalid=AUTHORS_BINARY,
    ),
    GenerativeMetric(
        "acc_parsed",
        answers.parsed_answer_score,
        by_region=False,
        description="judge-free: parsed letter / True-False (صحيح/خطأ) vs gold, x100 (a deviation)",
    ),
)


def _rubric(name: str, weights: Mapping[str, float], description: str) -> GenerativeMetric:
    return GenerativeMetric(
        name,
        by_region=False,
        description=description,
        judge_prompt="pearl_open_ended",
        judge_fields=prompts.judge_fields,
        judge_weights=weights,
        judge_images=True,
        invalid_policy=INVALID_POLICY,
        authors_invalid=AUTHORS_RUBRIC,
    )


OPEN_METRICS = (
    *(_rubric(name, {name: 1.0}, f"rubric {name} (0-5)") for name in RUBRIC),
    _rubric("overall", OVERALL_WEIGHTS, "OVR = 0.4 COR + 0.2 COH + 0.2 DET + 0.2 FLU (Eq. 1)"),
    GenerativeMetric(
        "cas",
        by_region=False,
        description="CAS%: culturally specific element mentioned (judge, with the image), x100",
        judge_prompt="pearl_cas",
        judge_fields=prompts.judge_fields,
        judge_weights={"score": 100.0},
        judge_images=True,
        invalid_policy=INVALID_POLICY,
        authors_invalid=AUTHORS_BINARY,
    ),
)


# ------------------------------------------------------------------------------------- variants


def _spec(
    name: str,
    description: str,
    render: Callable[[Mapping[str, Any]], Request],
    target: Callable[[Mapping[str, Any]], str],
    metrics: tuple[GenerativeMetric, ...],
) -> TaskSpec:
    return generative_spec(
        name,
        "pearl",
        name,  # one config per task: the builder splits each release by question kind
        description,
        render,
        modality="image",
        generation=GENERATION,
        target=target,
        generative_metrics=metrics,
        breakdown_keys=BREAKDOWN_KEYS,
        version=VERSION,
    )


TASKS: list[TaskSpec] = [
    *(
        _spec(
            f"{release}_closed",
            f"{title}: closed-form MCQ and True/False items; judged ACC% and a judge-free parsed accuracy",
            render_closed,
            closed_target,
            CLOSED_METRICS,
        )
        for release, title in (("pearl", "Pearl"), ("pearl_lite", "Pearl-Lite"))
    ),
    *(
        _spec(
            f"{release}_open",
            f"{title}: open-ended items (11 types); judged COR/COH/DET/FLU (0-5), OVR and CAS%",
            render_open,
            open_target,
            OPEN_METRICS,
        )
        for release, title in (("pearl", "Pearl"), ("pearl_lite", "Pearl-Lite"))
    ),
    _spec(
        "pearl_x_single",
        "Pearl-X: one-image MCQ / True-False items; judged ACC%",
        render_pearl_x,
        pearl_x_target,
        CLOSED_METRICS,
    ),
    _spec(
        "pearl_x_multi",
        "Pearl-X: several-image MCQ / True-False items (all images, in order); judged ACC%",
        render_pearl_x,
        pearl_x_target,
        CLOSED_METRICS,
    ),
]

FAMILIES: list[Family] = [
    Family("pearl", ("pearl_closed", "pearl_open"), "Pearl (Table 2): ACC% on closed items, rubric/OVR/CAS on open"),
    Family("pearl_lite", ("pearl_lite_closed", "pearl_lite_open"), "Pearl-Lite (Table 3): as Pearl"),
    Family(
        "pearl_x",
        ("pearl_x_single", "pearl_x_multi"),
        "Pearl-X (Table 4): accuracy over all its items, single- and multi-image",
        average=True,
        weight_by_size=True,
    ),
]
