"""ARB: Arabic step-by-step multimodal reasoning over 11 domains, final answer and reasoning chain judged.

Prompt and metrics: `arab_mm_tasks.arb.tasks`; builder: `dataset_builders.arb`.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from arab_mm_tasks.arb.domains import DOMAIN_KEYS
from arab_mm_tasks.arb.released import read_predictions
from arab_mm_tasks.arb.report import REPORT
from arab_mm_tasks.arb.tasks import FAMILIES, TASKS
from arab_mm_tasks.core.benchmark import Benchmark, Release, ReleasePart
from arab_mm_tasks.core.spec import TaskSpec

CONFIGS = ("all", *DOMAIN_KEYS)

# The first record of the authors' CSV release (ocr_b1.png), its text as released; the image is a blank stand-in.
EXAMPLE_RECORD = {
    "id": "ocr_b1.png",
    "question": "ما هو عنوان الكتاب على أقصى اليسار؟",
    "choices": ["أ. سيطيب بها قلبك", "ب. أحلام لا تموت", "ج.  أما بعد", "د. لاشيء مما سبق"],
    "answer": "أ",
    "steps_raw": "الخطوة 1: …",
    "domain": "ocr",
    "curriculum": "نصي/جزئي",
}


def example(spec: TaskSpec) -> tuple[Mapping[str, Any], str] | None:
    """The catalogue's example: the release's first record, for the all-domains task only."""
    if spec.name != "arb":
        return None
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(buffer, format="PNG")
    doc = {**EXAMPLE_RECORD, "image": {"bytes": buffer.getvalue(), "path": None}}
    return (
        doc,
        "Rendered for the first record of the authors' CSV release (`ocr_b1.png`, OCR; domain and curriculum ours):",
    )


BENCHMARK = Benchmark(
    name="arb",
    title="ARB",
    tasks=tuple(TASKS),
    families=tuple(FAMILIES),
    configs=CONFIGS,
    release=Release(parts=(ReleasePart("arb", ("MBZUAI/ARB",), CONFIGS),)),
    builder="dataset_builders.arb",
    example=example,
    read_predictions=read_predictions,
    headline=("arb",),
    report=REPORT,
)
