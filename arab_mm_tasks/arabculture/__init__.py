"""ArabCulture: cultural commonsense in 13 Arab countries, as log-likelihood MCQ and completion tasks.

Prompts and variants: `arab_mm_tasks.arabculture.tasks`; builder: `dataset_builders.arabculture`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arab_mm_tasks.arabculture.report import REPORT
from arab_mm_tasks.arabculture.tasks import REGION_OF_COUNTRY, TASKS
from arab_mm_tasks.core.benchmark import Benchmark, Release, ReleasePart
from arab_mm_tasks.core.spec import TaskSpec

CONFIGS = (*sorted(REGION_OF_COUNTRY), "all")  # the builder's country configs and their union


def example(spec: TaskSpec) -> tuple[Mapping[str, Any], str]:
    """The catalogue's example: the first record of the bundled sample."""
    from arab_mm_tasks.data import sample_records

    doc = sample_records()[0]
    return doc, f"Rendered for the first record of the bundled sample (`{doc.get('sample_id')}`, {doc.get('country')}):"


BENCHMARK = Benchmark(
    name="arabculture",
    title="ArabCulture",
    tasks=tuple(TASKS),
    configs=CONFIGS,
    release=Release(parts=(ReleasePart("arabculture", ("MBZUAI/ArabCulture",), CONFIGS),)),
    builder="dataset_builders.arabculture",
    example=example,
    headline=("arabculture_mcq", "arabculture_completion"),
    report=REPORT,
)
