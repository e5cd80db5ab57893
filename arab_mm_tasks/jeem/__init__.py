"""JEEM: image captioning in four Arabic dialects and MSA, and dialect VQA.

Prompts: `arab_mm_tasks.jeem.prompts` (docs/tasks.md renders them on `arab_mm_tasks.jeem.examples`);
varieties: `arab_mm_tasks.jeem.vocabulary`; variants and metrics: `arab_mm_tasks.jeem.tasks`;
builder: `dataset_builders.jeem`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arab_mm_tasks.core.benchmark import Benchmark, Release, ReleasePart, RunOption
from arab_mm_tasks.jeem.examples import example
from arab_mm_tasks.jeem.report import REPORT
from arab_mm_tasks.jeem.tasks import EVAL_SUBSET, FAMILIES, TASKS
from arab_mm_tasks.jeem.vocabulary import DIALECTS, VARIETIES
from metric_plugins.judge.prompts.dcscore import DCSCORE_PROMPTS

RELEASE_REPO = "toloka/JEEM"
CONFIGS = (
    *(f"captioning_{v.key}" for v in VARIETIES),
    *(f"captioning_{v.key}_{EVAL_SUBSET}" for v in VARIETIES),
    *(f"vqa_{d.key}" for d in DIALECTS),
)

DCSCORE_LANGUAGE = "jeem_dcscore_language"


def configure(metadata: Mapping[str, Any]) -> None:
    """Apply a run's options (lm-eval ``--metadata``, ``arab-mm-lighteval --metadata``); absent: the paper's."""
    from arab_mm_tasks.core import judging

    try:
        judging.set_dcscore_language(metadata.get(DCSCORE_LANGUAGE))
    except ValueError as error:
        raise ValueError(f"{DCSCORE_LANGUAGE}: {error}") from None


BENCHMARK = Benchmark(
    name="jeem",
    title="JEEM",
    tasks=tuple(TASKS),
    families=tuple(FAMILIES),
    configs=CONFIGS,
    release=Release(parts=(ReleasePart("jeem", (RELEASE_REPO,), CONFIGS),), gated=True),
    builder="dataset_builders.jeem",
    gated=True,
    run_options=(
        RunOption(
            DCSCORE_LANGUAGE,
            'DCScore prompts: "en" (default: DeCapBench\'s, as the paper\'s "official implementation", L882) '
            'or "ar" (ours, for Arabic captions; docs/fidelity.md)',
            choices=tuple(DCSCORE_PROMPTS),
        ),
    ),
    configure=configure,
    example=example,
    headline=("jeem_caption", "jeem_caption_eval350", "jeem_vqa"),
    report=REPORT,
)
