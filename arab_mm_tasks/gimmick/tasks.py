"""
name: GIMMICK
dataset: floschne/gimmick-{sivqa,vvqa,coqa}, built by `dataset_builders.gimmick` (on first use, or published
  as arab-mm-tasks/gimmick)
abstract: Globally inclusive cultural knowledge of vision-language and language models, built from
  UNESCO's Intangible Cultural Heritage lists: 728 cultural events or facets (CEFs) from 144
  countries in six macro-regions. Six tasks: image VQA (CIVQA), video VQA (CVVQA, 1 frame per
  second), origin country / region MCQ (COQA_C / COQA_R) and naming / describing a CEF (CKQA_N /
  CKQA_D). English, test only, zero-shot, greedy decoding of at most 512 tokens.
languages: english
tags: vqa, video, multiple-choice, culture, generative, llm-as-judge
paper: Schneider et al., "GIMMICK: Globally Inclusive Multimodal Multitask Cultural Knowledge
  Benchmarking", arXiv:2502.13766 (2025)

Based on the paper's templates (Figure 73, Figures 76-77, Figures 138-139) and, where the paper is
silent, the authors' code (floschne/gimmick); every choice is in docs/fidelity.md.

Variants (task names):
- ``gimmick_civqa_{none,region,country,both}``, ``gimmick_cvvqa_{...}``: the external-cue ("hint")
  settings N / R / C / B of Tables 10 and 14; one image, or the clip's frames at 1 fps.
- ``gimmick_coqa_{c,r}_{image,text,image_text}``: origin country / region MCQ (Tables 15-16);
  the answer is the option letter, generated and scored by relaxed accuracy.
- ``gimmick_ckqa_d_{image,text,image_text}``, ``gimmick_ckqa_n``: describing / naming a CEF, judged
  0-100 by an LLM judge (Table 17 and the CKQA_N table).

Text-only variants run on plain causal LMs (``--model hf``); the others need a vision-language
model (``--model hf-multimodal`` / ``vllm-vlm``, lighteval ``--vision-model``):

    lm_eval --model hf-multimodal --model_args pretrained=Qwen/Qwen2-VL-2B-Instruct \\
        --tasks gimmick_civqa_none --apply_chat_template
    lm_eval --model hf --model_args pretrained=Qwen/Qwen2.5-0.5B-Instruct --tasks gimmick_coqa_c_text

Scores are x100 and reported per region (``relaxed_acc_W`` ...), a sample counting in every region
of its CEF. ``relaxed_acc`` is the paper's "Average": micro over samples for CIVQA/CVVQA, the mean
of the six region scores for COQA (`metric_plugins.region_aggregation`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from arab_mm_tasks.core.media import load_image, load_images, video_frames
from arab_mm_tasks.core.spec import (
    IMAGE_PLACEHOLDER,
    Family,
    Generation,
    GenerativeMetric,
    RecordError,
    Request,
    TaskSpec,
    generative_spec,
    required_field,
)
from arab_mm_tasks.gimmick.vocabulary import REGION_CODES
from metric_plugins.relaxed_accuracy import normalized_relaxed_match, relaxed_match, symmetric_relaxed_match

Hint = Literal["none", "region", "country", "both"]
Modality = Literal["image", "text", "image_text"]

VIDEO_FPS = 1.0  # "we extract one frame per second" (L184)
GENERATION = Generation(max_new_tokens=512)  # greedy, max_new_tokens=512 (L2128-L2134)

# The VQA answer instruction of the authors' code (`add_answer_with_single_word_hint=True`); the
# paper's Figure 73 template ends before it. See docs/fidelity.md.
VQA_INSTRUCTION = "Answer with a single word or phrase."
HINT_PREFIX = "Hint: The question is related to a cultural event or facet from the following"
COQA_INSTRUCTION = "Choose from the following options and output only the corresponding letter."
OPTION_LETTERS = ("A", "B", "C", "D")


def _field(doc: Mapping[str, Any], name: str) -> Any:
    return required_field(doc, name, _record(doc))


def _record(doc: Mapping[str, Any]) -> str:
    return f"GIMMICK record {doc.get('id')!r}"


def _placeholders(count: int) -> str:
    """One ``<image>`` line per image (the paper's <IMAGE_PLACEHOLDER> "replaced N times", L1575)."""
    return "".join(f"{IMAGE_PLACEHOLDER}\n" for _ in range(count))


# ------------------------------------------------------------------------------------- CIVQA / CVVQA


def hints_text(doc: Mapping[str, Any], hint: Hint) -> str:
    """Figure 73's hint lines: regions before countries, each list in single quotes joined by ", "."""
    hints = ""
    if hint in ("region", "both"):
        hints += f"{HINT_PREFIX} region(s): '{', '.join(_field(doc, 'regions'))}'\n"
    if hint in ("country", "both"):
        hints += f"{HINT_PREFIX} country or countries: '{', '.join(_field(doc, 'countries'))}'\n"
    return hints


def vqa_text(doc: Mapping[str, Any], hint: Hint) -> str:
    """``"{QUESTION}\\n{HINTS}\\n"`` (Figure 73, verbatim) followed by the answer instruction."""
    return f"{_field(doc, 'question')}\n{hints_text(doc, hint)}\n{VQA_INSTRUCTION}"


def vqa_answer(doc: Mapping[str, Any]) -> str:
    return str(_field(doc, "answer"))


def render_civqa(doc: Mapping[str, Any], hint: Hint) -> Request:
    """The image, then the question (the authors' code puts a single image before the prompt)."""
    image = load_image(_field(doc, "image"), record=_record(doc), field="image", lazy=True)
    return Request(_placeholders(1) + vqa_text(doc, hint), target=vqa_answer(doc), images=[image])


@dataclass
class FrameSettings:
    """Per-run limits on CVVQA frames; by default none (every 1 fps frame, native resolution).

    Frames are decoded when the request is rendered (to check the clip) and again when the model
    uses them (`lazy=True`): a waiting request holds none, so memory does not grow with the number
    of clips; `max_side` bounds the size of what the model gets (and decoding time). `max_frames`
    keeps that many frames spread over the clip, for models with a small image budget (lm-eval's
    `max_images` would instead keep the *first* frames). Set with lm-eval ``--metadata
    '{"gimmick_max_frames": 8, "gimmick_max_side": 448}'`` or `configure_frames`.
    """

    max_frames: int | None = None
    max_side: int | None = None


FRAMES = FrameSettings()


def configure_frames(max_frames: int | None = None, max_side: int | None = None) -> None:
    FRAMES.max_frames = None if max_frames is None else int(max_frames)
    FRAMES.max_side = None if max_side is None else int(max_side)


def render_cvvqa(doc: Mapping[str, Any], hint: Hint) -> Request:
    """The clip's frames at 1 fps (10 for the 10 s clips), then the question."""
    frames = video_frames(
        _field(doc, "video"),
        record=_record(doc),
        field="video",
        fps=VIDEO_FPS,
        max_frames=FRAMES.max_frames,
        max_side=FRAMES.max_side,
        lazy=True,  # requests wait for the model in their thousands: frames are decoded again when used
    ).images
    return Request(_placeholders(len(frames)) + vqa_text(doc, hint), target=vqa_answer(doc), images=frames)


# ------------------------------------------------------------------------------------- COQA


def coqa_question(doc: Mapping[str, Any], origin: Literal["c", "r"], modality: Modality) -> str:
    """Figures 76-77, except image-only, which uses the self-consistent §D.2 wording (L1715)."""
    kind = "countries" if origin == "c" else "regions"
    if modality == "image":
        return f"In which of the following {kind} does the event shown in the images take place?"
    shown = " shown in the images" if modality == "image_text" else ""
    return (
        f"From which of the following {kind} does the cultural event or facet with the title "
        f"``{_field(doc, 'title')}``{shown} originate?"
    )


def coqa_answer(doc: Mapping[str, Any]) -> str:
    """The gold option letter (the ground truth of relaxed accuracy: "Choice Letter", Figure 1)."""
    answer = str(_field(doc, "answer")).strip()
    if answer not in OPTION_LETTERS:
        raise RecordError(f"{_record(doc)}: field 'answer' is {answer!r}, not one of {list(OPTION_LETTERS)}")
    return answer


def render_coqa(doc: Mapping[str, Any], origin: Literal["c", "r"], modality: Modality) -> Request:
    options, answer = list(_field(doc, "options")), coqa_answer(doc)
    if len(options) != len(OPTION_LETTERS):
        raise RecordError(f"{_record(doc)}: field 'options' has {len(options)} options, expected 4")
    images = load_images(_field(doc, "images"), record=_record(doc), lazy=True) if modality != "text" else []
    lines = [coqa_question(doc, origin, modality), COQA_INSTRUCTION, ""]
    lines += [f"{letter}. {option}" for letter, option in zip(OPTION_LETTERS, options, strict=True)]
    lines += ["", "Your answer letter:"]
    head = _placeholders(len(images)) + "\n" if images else ""
    return Request(head + "\n".join(lines), target=answer, images=images)


# ------------------------------------------------------------------------------------- CKQA

CKQA_N_TASK = "Name the cultural event or facet depicted by the following images. Answer briefly and concisely."
CKQA_D_TASK = {
    "text": "Write a brief essay about the cultural event or facet with the title ``{title}``.",
    "image": "Write a brief essay about the cultural event or facet depicted by the following images.",
    "image_text": "Write a brief essay about the cultural event or facet depicted by the following images. "
    "It has the title ``{title}``.",
}


def ckqa_title(doc: Mapping[str, Any]) -> str:
    """CKQA_N's ground truth: the CEF title (L164; the authors' code uses the description, see fidelity)."""
    return str(_field(doc, "title"))


def ckqa_description(doc: Mapping[str, Any]) -> str:
    """CKQA_D's ground truth: the CEF description (L164)."""
    return str(_field(doc, "description"))


def _ckqa_request(task_text: str, doc: Mapping[str, Any], with_images: bool, target: str) -> Request:
    """Figures 138-139: the task, the CEF's images (one placeholder line each), then "Your answer:"."""
    images = load_images(_field(doc, "images"), record=_record(doc), lazy=True) if with_images else []
    body = f"{task_text}\n\n" + (_placeholders(len(images)) + "\n" if images else "") + "Your answer:"
    return Request(body, target=target, images=images)


def render_ckqa_n(doc: Mapping[str, Any]) -> Request:
    return _ckqa_request(CKQA_N_TASK, doc, True, ckqa_title(doc))


def render_ckqa_d(doc: Mapping[str, Any], modality: Modality) -> Request:
    task_text = CKQA_D_TASK[modality].format(title=ckqa_title(doc)) if modality != "image" else CKQA_D_TASK["image"]
    return _ckqa_request(task_text, doc, modality != "text", ckqa_description(doc))


def judge_fields(prediction: str, target: str) -> dict[str, str]:
    """The CKQA judge's template fields: only the ground truth and the answer (user prompt, L2452-L2470)."""
    return {"GROUND_TRUTH": target, "GENERATED_ANSWER": prediction}


JUDGE_SCORE = GenerativeMetric(
    "judge_score",
    overall="macro",
    by_region=True,
    description="0-100 judge score (GPT-4o in the paper), mean of the six regions",
    judge_prompt="gimmick_ckqa",
    judge_fields=judge_fields,
)


# ------------------------------------------------------------------------------------- task variants

RELAXED_ACC = "relaxed_acc"


def relaxed_metrics(overall: Literal["micro", "macro"]) -> tuple[GenerativeMetric, ...]:
    """The paper's relaxed accuracy per region, plus its normalised and bug-compatible variants overall."""
    return (
        GenerativeMetric(RELAXED_ACC, relaxed_match, overall, by_region=True, description="prediction starts with gt"),
        GenerativeMetric(f"{RELAXED_ACC}_norm", normalized_relaxed_match, overall, by_region=False),
        GenerativeMetric(f"{RELAXED_ACC}_compat", symmetric_relaxed_match, overall, by_region=False),
    )


def _spec(
    name: str, config: str, description: str, render: Callable[[Mapping[str, Any]], Request], *, modality: str, **kw
) -> TaskSpec:
    render.__name__ = f"render_{name}"
    return generative_spec(
        name,
        "gimmick",
        config,
        description,
        render,
        modality=modality,
        generation=GENERATION,
        region_key="region_codes",
        regions=REGION_CODES,
        weight_by_size=False,
        breakdown_keys=("region_codes", "countries"),
        **kw,
    )


def _vqa(task: Literal["civqa", "cvvqa"], hint: Hint) -> TaskSpec:
    render = render_civqa if task == "civqa" else render_cvvqa
    medium = "one image" if task == "civqa" else "video frames at 1 fps"
    return _spec(
        f"gimmick_{task}_{hint}",
        task,
        f"GIMMICK {task.upper()}: {medium} + question, hint {hint}; relaxed accuracy, micro average",
        lambda doc: render(doc, hint),
        modality="image",
        target=vqa_answer,
        generative_metrics=relaxed_metrics("micro"),
    )


def _coqa(origin: Literal["c", "r"], modality: Modality) -> TaskSpec:
    kind = "country" if origin == "c" else "region"
    return _spec(
        f"gimmick_coqa_{origin}_{modality}",
        f"coqa_{origin}",
        f"GIMMICK COQA_{origin.upper()}: origin {kind} MCQ from {modality.replace('_', '+')}; letter relaxed "
        "accuracy, mean of the six regions",
        lambda doc: render_coqa(doc, origin, modality),
        modality="text" if modality == "text" else "image",
        target=coqa_answer,
        generative_metrics=relaxed_metrics("macro"),
    )


def _ckqa_d(modality: Modality) -> TaskSpec:
    return _spec(
        f"gimmick_ckqa_d_{modality}",
        "ckqa",
        f"GIMMICK CKQA_D: a brief essay on a CEF from {modality.replace('_', '+')}; judge score vs the description",
        lambda doc: render_ckqa_d(doc, modality),
        modality="text" if modality == "text" else "image",
        target=ckqa_description,
        generative_metrics=(JUDGE_SCORE,),
    )


CKQA_N = _spec(
    "gimmick_ckqa_n",
    "ckqa",
    "GIMMICK CKQA_N: name the CEF shown in all its images; judge score vs the title",
    render_ckqa_n,
    modality="image",
    target=ckqa_title,
    generative_metrics=(JUDGE_SCORE,),
)

HINTS: tuple[Hint, ...] = ("none", "region", "country", "both")
MODALITIES: tuple[Modality, ...] = ("image", "text", "image_text")

TASKS: list[TaskSpec] = [
    *(_vqa(task, hint) for task in ("civqa", "cvvqa") for hint in HINTS),
    *(_coqa(origin, modality) for origin in ("c", "r") for modality in MODALITIES),
    *(_ckqa_d(modality) for modality in MODALITIES),
    CKQA_N,
]

FAMILIES: list[Family] = [
    *(
        Family(
            f"gimmick_{task}", tuple(f"gimmick_{task}_{h}" for h in HINTS), f"GIMMICK {task.upper()}, all hint settings"
        )
        for task in ("civqa", "cvvqa")
    ),
    *(
        Family(
            f"gimmick_coqa_{origin}",
            tuple(f"gimmick_coqa_{origin}_{m}" for m in MODALITIES),
            f"GIMMICK COQA_{origin.upper()}, mean over image / text / image+text (the paper's Avg.)",
            average=True,
        )
        for origin in ("c", "r")
    ),
    Family(
        "gimmick_ckqa_d",
        tuple(f"gimmick_ckqa_d_{m}" for m in MODALITIES),
        "GIMMICK CKQA_D, mean over image / text / image+text (the paper's Avg.)",
        average=True,
    ),
    Family(
        "gimmick_text",
        ("gimmick_coqa_c_text", "gimmick_coqa_r_text", "gimmick_ckqa_d_text"),
        "GIMMICK's text-only tasks, for language models without vision",
    ),
]
