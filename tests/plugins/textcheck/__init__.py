"""A test-only benchmark that runs the text metrics through both harnesses.

JEEM and ARB will be the metrics' real users; until they land, this benchmark proves the wiring:
a generative Arabic task whose metrics are scored per sample (`score`), in one batch at aggregation
time (`batch`: ROUGE-L, encoder similarities) and over the corpus (`corpus`: BLEU), and an image
captioning task scored by DCScore, whose judge sees the image (`batch_images`). It is loaded
through ``ARAB_MM_TASKS_EXTRA_BENCHMARKS=textcheck`` with this folder on ``PYTHONPATH``, the way a
user's own benchmark would be.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arab_mm_tasks.core.benchmark import Benchmark, Release
from arab_mm_tasks.core.media import load_image
from arab_mm_tasks.core.spec import Generation, GenerativeMetric, Request, TaskSpec

REGIONS = ("east", "west")

METRICS = (
    GenerativeMetric("exact", score=lambda prediction, target: 100.0 * (prediction == target), by_region=False),
    GenerativeMetric("rougeL", batch="textcheck.scorers:rouge_l"),
    GenerativeMetric("similarity", batch="textcheck.scorers:similarity", overall="macro"),
    GenerativeMetric("bertscore", batch="textcheck.scorers:bertscore_recall", by_region=False),
    GenerativeMetric("bleu", corpus="textcheck.scorers:bleu"),
)


def render(doc: Mapping[str, Any]) -> Request:
    return Request(query=f"السؤال: {doc['question']}\nالجواب:", target=doc["reference"])


TASK = TaskSpec(
    name="textcheck_qa",
    benchmark="textcheck",
    description="Arabic questions answered in a sentence, scored against one reference (test only).",
    render=render,
    subsets=(),
    groups={},
    output_type="generate_until",
    generation=Generation(max_new_tokens=8),
    generative_metrics=METRICS,
    target=lambda doc: doc["reference"],
    region_key="regions",
    regions=REGIONS,
)


def render_caption(doc: Mapping[str, Any]) -> Request:
    image = load_image(doc["image"], record=doc["id"])
    return Request(query="<image>\nDescribe the image in one sentence.", target=doc["caption"], images=[image])


# DCScore looks at the image: its verifier gets what the model saw, through `batch_images`.
CAPTION_TASK = TaskSpec(
    name="textcheck_caption",
    benchmark="textcheck",
    description="Captions of an image, scored by DCScore against one reference caption (test only).",
    render=render_caption,
    subsets=(),
    groups={},
    output_type="generate_until",
    modality="image",
    generation=Generation(max_new_tokens=8),
    generative_metrics=tuple(
        GenerativeMetric(
            f"dcscore_{m}", batch=f"arab_mm_tasks.core.judging:dcscore_{m}", batch_images=True, by_region=False
        )
        for m in ("precision", "recall", "f1")
    ),
    target=lambda doc: doc["caption"],
)

BENCHMARK = Benchmark(
    name="textcheck",
    title="Text-metric wiring check",
    tasks=(TASK, CAPTION_TASK),
    configs=("all",),
    release=Release(parts=()),
    builder="textcheck.scorers",  # never built: tests pass the folder explicitly
)
