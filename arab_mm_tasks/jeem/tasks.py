"""
name: JEEM
dataset: toloka/JEEM (gated; column layout unpublished), built by `dataset_builders.jeem` from the Hub
  release or a documented local JSON layout (or published as arab-mm-tasks/jeem)
abstract: Vision-language understanding in four Arabic dialects: detailed image captioning in
  Jordanian, Emirati, Egyptian and Moroccan Arabic and in MSA, and open visual question answering
  in the four dialects. 2,196 images from the four countries, one dialect and one MSA caption per
  image, five dialect questions with answers. Test only, zero-shot.
languages: arabic (MSA, Jordanian, Emirati, Egyptian, Moroccan)
tags: captioning, vqa, dialects, culture, generative, llm-as-judge
paper: Kadaoui et al., "JEEM: Vision-Language Understanding in Four Arabic Dialects",
  arXiv:2503.21910 (2025)

Based on the paper (papers/jeem.txt); no code of the authors is public. Every choice on an open
question is in docs/fidelity.md.

Variants (task names):
- ``jeem_caption_{msa,jordanian,emirati,egyptian,moroccan}``: Table 3 on the full data: BLEU, CIDEr,
  ROUGE-L and BERTScore recall (CAMeLBERT-mix) against the variety's reference caption, ALDi of
  the generated dialect captions, the Figure 9 judge's four criteria (three for MSA) and DCScore
  precision / recall / F1 when a judge is configured.
- ``jeem_caption_<variety>_eval350``: the human-evaluation sample (100 images each for JO, EG, MA,
  50 for AE; L186-188), on which the paper reports the judge and DCScore (L178): the Figure 9
  judge, the Figure 10 reference-only judge (Table 9) and DCScore.
- ``jeem_vqa_{jordanian,emirati,egyptian,moroccan}``: Table 4: one row per question, judged by the
  Figure 11 judge's four criteria (L210; the paper has no other VQA metric).

    lm_eval --model hf-multimodal --model_args pretrained=Qwen/Qwen2-VL-2B-Instruct \\
        --tasks jeem_caption --apply_chat_template \\
        --metadata '{"judge": "model=gpt-4-turbo-2024-04-09"}'

Scores are x100 (BLEU, CIDEr-D, ROUGE-L, BERTScore, ALDi, DCScore) or 1-5 (judge), one row per
subset; the paper has no cross-dialect average (section 3.10 of specs/jeem.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from arab_mm_tasks.core.media import load_image
from arab_mm_tasks.core.spec import (
    IMAGE_PLACEHOLDER,
    Family,
    Generation,
    GenerativeMetric,
    Request,
    TaskSpec,
    generative_spec,
    required_field,
)
from arab_mm_tasks.jeem.prompts import PROMPT_VERSION, caption_instruction, vqa_instruction
from arab_mm_tasks.jeem.vocabulary import DIALECTS, VARIETIES, Variety
from metric_plugins.judge.parsing import criterion_key
from metric_plugins.judge.prompts.jeem import CRITERIA

# References average 41-63 words (Table 1); Arabic runs at 2-4 tokens a word in VLM tokenizers, and
# the paper counts "incomplete" captions as errors (L253): 512 new tokens leave room for ~150 words.
CAPTION_GENERATION = Generation(max_new_tokens=512)
VQA_GENERATION = Generation(max_new_tokens=256)  # "Aim for 2-3 sentences" (L558)
EVAL_SUBSET = "eval350"
CRITERION_ABBREVIATIONS = {"Consistency": "con", "Relevance": "rel", "Fluency": "flu", "Dialect Authenticity": "dauth"}


def _record(doc: Mapping[str, Any]) -> str:
    return f"JEEM record {doc.get('id')!r}"


def _field(doc: Mapping[str, Any], name: str) -> Any:
    return required_field(doc, name, _record(doc))


def reference(doc: Mapping[str, Any]) -> str:
    """The variety's reference caption, or the question's reference answer (one per item, L74-78)."""
    return str(_field(doc, "reference"))


def _image(doc: Mapping[str, Any]) -> Any:
    return load_image(_field(doc, "image"), record=_record(doc), field="image", lazy=True)  # no pixels while queued


def render_caption(doc: Mapping[str, Any], variety: Variety) -> Request:
    """The image, then the captioning instruction naming the variety (`arab_mm_tasks.jeem.prompts`)."""
    query = f"{IMAGE_PLACEHOLDER}\n{caption_instruction(variety)}"
    return Request(query, target=reference(doc), images=[_image(doc)])


def render_vqa(doc: Mapping[str, Any], variety: Variety) -> Request:
    """The image, the dialect question as released, then the answer instruction."""
    query = f"{IMAGE_PLACEHOLDER}\n{_field(doc, 'question')}\n{vqa_instruction(variety)}"
    return Request(query, target=reference(doc), images=[_image(doc)])


def question_context(doc: Mapping[str, Any]) -> dict[str, str]:
    """Figure 11's ``{question}``: the judge sees the question asked."""
    return {"question": str(_field(doc, "question"))}


# ------------------------------------------------------------------------------------- metrics


def judge_fields(variety: Variety) -> Callable[[str, str], dict[str, str]]:
    """The judge's ``{reference}``, ``{generated}`` and, for a dialect, ``{country}``."""

    def fields(prediction: str, target: str) -> dict[str, str]:
        country = {"country": variety.judge_country} if variety.judge_country else {}
        return {**country, "reference": target, "generated": prediction}

    fields.__name__ = f"judge_fields_{variety.key}"
    return fields


def judge_metrics(
    prefix: str, prompt: str, variety: Variety, *, images: bool, what: str
) -> tuple[GenerativeMetric, ...]:
    """One metric per criterion of the prompt (DAuth dropped for MSA, L677), sharing one judgement per sample."""
    criteria = CRITERIA if variety.is_dialect else CRITERIA[:3]
    return tuple(
        GenerativeMetric(
            f"{prefix}_{CRITERION_ABBREVIATIONS[criterion]}",
            by_region=False,
            description=f"{what}: {criterion}, 1-5",
            judge_prompt=prompt,
            judge_fields=judge_fields(variety),
            judge_score=criterion_key(criterion),
            judge_images=images,
        )
        for criterion in criteria
    )


def caption_judge(variety: Variety) -> tuple[GenerativeMetric, ...]:
    prompt = "jeem_caption" if variety.is_dialect else "jeem_caption_msa"
    return judge_metrics("judge", prompt, variety, images=True, what="Figure 9 judge (image + reference)")


def reference_only_judge(variety: Variety) -> tuple[GenerativeMetric, ...]:
    prompt = "jeem_caption_refonly" if variety.is_dialect else "jeem_caption_refonly_msa"
    return judge_metrics("judge_ro", prompt, variety, images=False, what="Figure 10 judge (reference only)")


DCSCORE = tuple(
    GenerativeMetric(
        f"dcscore_{measure}",
        batch=f"arab_mm_tasks.core.judging:dcscore_{measure}",
        batch_images=True,
        by_region=False,
        description=f"DCScore {measure} x100 (DeCapBench with the run's judge)",
    )
    for measure in ("precision", "recall", "f1")
)

LEXICAL = (
    GenerativeMetric("bleu", corpus="metric_plugins.bleu:corpus_score", by_region=False, description="BLEU x100"),
    GenerativeMetric("cider", corpus="metric_plugins.cider:corpus_score", by_region=False, description="CIDEr-D x100"),
    GenerativeMetric("rougeL", batch="metric_plugins.rouge:sentence_scores", by_region=False, description="ROUGE-L"),
    GenerativeMetric(
        "bertscore",
        batch="metric_plugins.bertscore:sentence_scores",
        encoder="bertscore",
        by_region=False,
        description="BERTScore recall x100, CAMeLBERT-mix (L150)",
    ),
)
ALDI = GenerativeMetric(
    "aldi",
    batch="metric_plugins.aldi:sentence_scores",
    encoder="aldi",
    by_region=False,
    description="ALDi x100 of the caption (L184)",
)


def caption_metrics(variety: Variety) -> tuple[GenerativeMetric, ...]:
    """Table 3's columns for the full data: no ALDi for MSA (its rows are "-", L156-159)."""
    aldi = (ALDI,) if variety.is_dialect else ()
    return (*LEXICAL, *aldi, *caption_judge(variety), *DCSCORE)


# ------------------------------------------------------------------------------------- task variants


def _spec(name: str, config: str, description: str, render: Callable[..., Request], **kw: Any) -> TaskSpec:
    """A generative image task on one config, scored against `reference`."""
    render.__name__ = f"render_{name}"
    shared = {"modality": "image", "target": reference, "version": PROMPT_VERSION}
    keys = ("country", "image_origin_country", "is_shared_pool")
    return generative_spec(name, "jeem", config, description, render, breakdown_keys=keys, **shared, **kw)


def _caption(variety: Variety) -> TaskSpec:
    return _spec(
        f"jeem_caption_{variety.key}",
        f"captioning_{variety.key}",
        f"JEEM captioning in {variety.code}, full data: BLEU, CIDEr, ROUGE-L, BERTScore recall"
        + (", ALDi" if variety.is_dialect else "")
        + ", judge (Fig. 9) and DCScore",
        lambda doc: render_caption(doc, variety),
        generation=CAPTION_GENERATION,
        generative_metrics=caption_metrics(variety),
    )


def _caption_eval(variety: Variety) -> TaskSpec:
    return _spec(
        f"jeem_caption_{variety.key}_{EVAL_SUBSET}",
        f"captioning_{variety.key}_{EVAL_SUBSET}",
        f"JEEM captioning in {variety.code}, the 350-image evaluation sample: judge (Fig. 9), "
        "reference-only judge (Fig. 10), DCScore",
        lambda doc: render_caption(doc, variety),
        generation=CAPTION_GENERATION,
        generative_metrics=(*caption_judge(variety), *reference_only_judge(variety), *DCSCORE),
    )


def _vqa(variety: Variety) -> TaskSpec:
    return _spec(
        f"jeem_vqa_{variety.key}",
        f"vqa_{variety.key}",
        f"JEEM VQA in {variety.code}: one row per question, judge (Fig. 11)",
        lambda doc: render_vqa(doc, variety),
        generation=VQA_GENERATION,
        generative_metrics=judge_metrics("judge", "jeem_vqa", variety, images=True, what="Figure 11 judge"),
        judge_context=question_context,
    )


TASKS: list[TaskSpec] = [
    *(_caption(v) for v in VARIETIES),
    *(_caption_eval(v) for v in VARIETIES),
    *(_vqa(d) for d in DIALECTS),
]

FAMILIES: list[Family] = [
    Family(
        "jeem_caption", tuple(f"jeem_caption_{v.key}" for v in VARIETIES), "JEEM captioning, MSA and the four dialects"
    ),
    Family(
        f"jeem_caption_{EVAL_SUBSET}",
        tuple(f"jeem_caption_{v.key}_{EVAL_SUBSET}" for v in VARIETIES),
        "JEEM captioning on the 350-image evaluation sample (judge, reference-only judge, DCScore)",
    ),
    Family("jeem_vqa", tuple(f"jeem_vqa_{d.key}" for d in DIALECTS), "JEEM VQA in the four dialects"),
]
