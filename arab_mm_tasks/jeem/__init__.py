"""JEEM: image captioning in four Arabic dialects and MSA, and dialect VQA.

Prompts: `arab_mm_tasks.jeem.prompts` (docs/tasks.md renders them on `arab_mm_tasks.jeem.examples`);
varieties: `arab_mm_tasks.jeem.vocabulary`; variants and metrics: `arab_mm_tasks.jeem.tasks`;
builder: `dataset_builders.jeem`.
"""

from __future__ import annotations

from arab_mm_tasks.core.benchmark import Benchmark, Release, ReleasePart
from arab_mm_tasks.jeem.examples import example
from arab_mm_tasks.jeem.tasks import EVAL_SUBSET, FAMILIES, TASKS
from arab_mm_tasks.jeem.vocabulary import DIALECTS, VARIETIES

RELEASE_REPO = "toloka/JEEM"
CONFIGS = (
    *(f"captioning_{v.key}" for v in VARIETIES),
    *(f"captioning_{v.key}_{EVAL_SUBSET}" for v in VARIETIES),
    *(f"vqa_{d.key}" for d in DIALECTS),
)

BENCHMARK = Benchmark(
    name="jeem",
    title="JEEM",
    tasks=tuple(TASKS),
    families=tuple(FAMILIES),
    configs=CONFIGS,
    release=Release(parts=(ReleasePart("jeem", (RELEASE_REPO,), CONFIGS),), gated=True),
    builder="dataset_builders.jeem",
    gated=True,
    example=example,
)
