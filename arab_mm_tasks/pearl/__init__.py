"""Pearl, Pearl-Lite and Pearl-X: Arabic culturally-aware VQA, every score from an LVLM judge.

Prompts and judge inputs: `arab_mm_tasks.pearl.prompts`; task variants: `arab_mm_tasks.pearl.tasks`;
judge prompts: `metric_plugins.judge.prompts.pearl`; builder: `dataset_builders.pearl`.
"""

from __future__ import annotations

from arab_mm_tasks.core.benchmark import Benchmark, Release, ReleasePart
from arab_mm_tasks.pearl.examples import example
from arab_mm_tasks.pearl.inference_logs import read_log
from arab_mm_tasks.pearl.report import REPORT
from arab_mm_tasks.pearl.tasks import FAMILIES, TASKS

# The authors' Hub datasets (gated); the run scripts' ids are accepted by the builder as aliases.
RELEASES = {"pearl": "UBC-NLP/PEARL", "pearl_lite": "UBC-NLP/PEARL-LITE", "pearl_x": "UBC-NLP/PEARL-X"}
CONFIGS_OF = {
    "pearl": ("pearl_closed", "pearl_open"),
    "pearl_lite": ("pearl_lite_closed", "pearl_lite_open"),
    "pearl_x": ("pearl_x_single", "pearl_x_multi"),
}

BENCHMARK = Benchmark(
    name="pearl",
    title="Pearl",
    tasks=tuple(TASKS),
    families=tuple(FAMILIES),
    configs=tuple(config for configs in CONFIGS_OF.values() for config in configs),
    release=Release(
        parts=tuple(ReleasePart(name, (RELEASES[name],), configs) for name, configs in CONFIGS_OF.items()),
        gated=True,
    ),
    builder="dataset_builders.pearl",
    gated=True,
    read_logs=read_log,
    example=example,
    headline=("pearl", "pearl_x"),
    report=REPORT,
)
