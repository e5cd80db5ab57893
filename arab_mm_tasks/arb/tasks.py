"""
name: ARB
dataset: MBZUAI/ARB (1,355 rows, HF split ``train``, published here as ``test``) or the authors' CSV
  release (1,356 rows), built by `dataset_builders.arb`
abstract: Arabic step-by-step multimodal reasoning over images from 11 domains (charts, OCR,
  medicine, history, remote sensing, ...). The model reasons in Arabic under the paper's Figure 4
  prompt; its final answer is judged 0/1 against the gold answer, and its reasoning chain is
  judged on 10 attributes (1-10) against the human-curated reference steps and compared to them
  with BLEU, ROUGE-1/2/L, BERTScore and LaBSE.
languages: arabic
tags: vqa, reasoning, chain-of-thought, generative, llm-as-judge
paper: "ARB: A Comprehensive Arabic Multimodal Reasoning Benchmark" (arXiv:2505.17021, 2025)

Variants: ``arb`` (all domains) and ``arb_<domain>`` for each of the 11 domains (keys in
`arab_mm_tasks.arb.domains`). Every score is reported overall and per domain
(``final_answer_cdt``); ``<metric>`` is the micro average over samples and ``<metric>_macro`` the
mean of the domain means.

    lm_eval --model hf-multimodal --model_args pretrained=Qwen/Qwen2-VL-2B-Instruct \\
        --tasks arb --apply_chat_template --metadata '{"judge": "model=gpt-4o"}'

Metrics (docs/fidelity.md lists every choice):
- ``final_answer``: the authors' 0/1 semantic-match judge (GPT-4o in the paper), x100.
- ``answer_match``: a judge-free normalised matcher; NOT the paper's number.
- ``reasoning_steps``: the 10-attribute step judge, mean of the 10 x 10 (%), with each attribute's
  1-10 mean as ``steps_<attribute>`` (with ``_macro`` and per domain, as every metric).
- ``bleu``, ``rouge1``, ``rouge2``, ``rougeL``: the paper-compatible mode that reproduces Table 4;
  ``bertscore`` (F1) and ``labse``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from arab_mm_tasks.arb.answers import answer_match, extract_answer, resolve_gold, response_steps
from arab_mm_tasks.arb.domains import BY_KEY, DOMAIN_KEYS, DOMAINS
from arab_mm_tasks.arb.prompt import instructions, question_block
from arab_mm_tasks.core.media import load_image
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
from metric_plugins.judge.prompts.arb import STEP_ATTRIBUTES

GENERATION = Generation(max_new_tokens=2048)  # chains of up to 16 step/action pairs (L137); not in the paper


def _record(doc: Mapping[str, Any]) -> str:
    return f"ARB record {doc.get('id')!r}"


def _field(doc: Mapping[str, Any], name: str) -> Any:
    return required_field(doc, name, _record(doc))


def _domain(doc: Mapping[str, Any]) -> str:
    key = _field(doc, "domain")
    if key not in BY_KEY:
        raise RecordError(f"{_record(doc)}: field 'domain' is {key!r}, not one of {list(DOMAIN_KEYS)}")
    return key


def query(doc: Mapping[str, Any]) -> str:
    """The image placeholder, Figure 4 for the record's domain and curriculum, then question and choices."""
    domain = BY_KEY[_domain(doc)]
    text = instructions(domain.arabic, _field(doc, "curriculum"))
    return f"{IMAGE_PLACEHOLDER}\n{text}\n\n{question_block(_field(doc, 'question'), list(doc.get('choices') or []))}"


def target(doc: Mapping[str, Any]) -> str:
    """The gold record the metrics need, as one JSON string (the harnesses carry one target string)."""
    gold = {
        "question": str(doc.get("question") or ""),  # released CSV slices may lack it
        "choices": list(doc.get("choices") or []),  # also when the question lists them: a letter resolves on them
        "answer": _field(doc, "answer"),
        "steps": _field(doc, "steps_raw"),
    }
    return json.dumps(gold, ensure_ascii=False)


def gold(target_json: str) -> dict[str, Any]:
    return json.loads(target_json)


def render(doc: Mapping[str, Any]) -> Request:
    image = load_image(_field(doc, "image"), record=_record(doc), field="image", lazy=True)
    return Request(query(doc), target=target(doc), images=[image])


# ---------------------------------------------------------------------------- metrics


def final_answer_fields(prediction: str, target_json: str) -> dict[str, str]:
    """The authors' judge fields (question, ground truth, prediction) plus the choices (our deviation)."""
    record = gold(target_json)
    choices = "; ".join(record["choices"]) if record["choices"] else "-"
    return {
        "QUESTION": record["question"],
        "CHOICES": choices,
        "GROUND_TRUTH": resolve_gold(record["answer"], record["choices"]),
        "PREDICTION": extract_answer(prediction),
    }


def steps_fields(prediction: str, target_json: str) -> dict[str, str]:
    """The step judge sees the question, the reference chain and the model's steps (its answer line removed)."""
    record = gold(target_json)
    return {
        "QUESTION": record["question"],
        "REFERENCE_STEPS": record["steps"],
        "MODEL_STEPS": response_steps(prediction),
    }


def match_score(prediction: str, target_json: str) -> float:
    record = gold(target_json)
    return 100.0 * answer_match(extract_answer(prediction), record["answer"], record["choices"])


def attribute_key(attribute: str) -> str:
    """``Semantic Coverage-Step`` -> ``semantic_coverage_step``."""
    return attribute.lower().replace("-", "_").replace(" ", "_")


def _both(name: str, description: str, **way: Any) -> tuple[GenerativeMetric, GenerativeMetric]:
    """The micro average (overall and per domain) and the macro mean of the domains, as two names."""
    return (
        GenerativeMetric(name, overall="micro", by_region=True, description=description, **way),
        GenerativeMetric(f"{name}_macro", overall="macro", by_region=False, description=f"{description}, macro", **way),
    )


SCORERS = "arab_mm_tasks.arb.scorers"

METRICS: tuple[GenerativeMetric, ...] = (
    *_both(
        "final_answer",
        "0/1 answer judge (the authors' prompt + choices) x100",
        judge_prompt="arb_final_answer",
        judge_fields=final_answer_fields,
    ),
    *_both("answer_match", "judge-free normalised answer match x100 (not the paper's)", score=match_score),
    *_both(
        "reasoning_steps",
        "10-attribute step judge, mean x10 (%)",
        judge_prompt="arb_steps",
        judge_fields=steps_fields,
    ),
    *(
        metric
        for a in STEP_ATTRIBUTES
        for metric in _both(
            f"steps_{attribute_key(a)}",
            f"step judge: {a} (1-10)",
            judge_prompt="arb_steps",
            judge_fields=steps_fields,
            judge_score=a,
        )
    ),
    *(
        metric
        for name in ("bleu", "rouge1", "rouge2", "rougeL", "bertscore", "labse")
        for metric in _both(
            name,
            f"{name} of the steps vs the reference x100",
            batch=f"{SCORERS}:{name}",
            encoder=name if name in ("bertscore", "labse") else None,
        )
    ),
)


def _spec(name: str, config: str, description: str) -> TaskSpec:
    return generative_spec(
        name,
        "arb",
        config,
        description,
        render,
        modality="image",
        generation=GENERATION,
        generative_metrics=METRICS,
        target=target,
        region_key="domain",
        regions=DOMAIN_KEYS if config == "all" else (config,),
        weight_by_size=True,
        breakdown_keys=("domain", "curriculum"),
        version=2,  # v2: choices shown unless the question holds their labels; steps_<attribute>_macro
    )


TASKS: list[TaskSpec] = [
    _spec("arb", "all", "ARB, all 11 domains: Figure 4 prompt; answer judge, 10-attribute step judge, similarity"),
    *(_spec(f"arb_{d.key}", d.key, f"ARB {d.abbreviation} ({d.name}) only") for d in DOMAINS),
]

FAMILIES: list[Family] = []
