"""GIMMICK: cultural knowledge of (vision-)language models over image, video and text, by region.

Prompts and variants: `arab_mm_tasks.gimmick.tasks`; builder: `dataset_builders.gimmick`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arab_mm_tasks.core.benchmark import Benchmark, Release, ReleasePart, RunOption
from arab_mm_tasks.core.spec import TaskSpec
from arab_mm_tasks.gimmick.report import REPORT
from arab_mm_tasks.gimmick.tasks import FAMILIES, TASKS, configure_frames

CVVQA_HOWTO = (
    "GIMMICK CVVQA's clips are not on the Hub: the authors' loader downloads them. Once, in an environment "
    "with datasets<4: `load_dataset('floschne/gimmick-vvqa', split='test', trust_remote_code=True)"
    ".save_to_disk(VVQA)`; then `arab-mm-tasks build gimmick --vvqa VVQA --out DIR` (add --videos-dir if the "
    'clips moved), then point the run at DIR: lm_eval --metadata \'{"gimmick_path": "DIR"}\', '
    "arab-mm-lighteval --dataset-path gimmick=DIR, or arab-mm-tasks evaluate --dataset-path gimmick=DIR."
)

# The paper's settings: VQA without hints (Tables 10, 14: "N"), and the input-averaged COQA/CKQA_D families.
HEADLINE = (
    "gimmick_civqa_none", "gimmick_cvvqa_none", "gimmick_coqa_c", "gimmick_coqa_r", "gimmick_ckqa_d", "gimmick_ckqa_n",
)  # fmt: skip


def configure(metadata: Mapping[str, Any]) -> None:
    """Apply a run's CVVQA frame limits (lm-eval ``--metadata``); absent keys mean no limit."""
    configure_frames(metadata.get("gimmick_max_frames"), metadata.get("gimmick_max_side"))


def example(spec: TaskSpec) -> tuple[Mapping[str, Any], str]:
    """The catalogue's example: the paper's printed examples (a 10 s synthetic clip, two CEF images)."""
    from arab_mm_tasks.data import gimmick_example_docs

    return gimmick_example_docs()[spec.all_config], (
        "Rendered for the paper's printed examples (`arab_mm_tasks/data/gimmick_examples.json`; "
        "10 s clip, 2 CEF images):"
    )


BENCHMARK = Benchmark(
    name="gimmick",
    title="GIMMICK",
    tasks=tuple(TASKS),
    families=tuple(FAMILIES),
    configs=("civqa", "cvvqa", "coqa_c", "coqa_r", "ckqa"),
    release=Release(
        parts=(
            ReleasePart("sivqa", ("floschne/gimmick-sivqa",), ("civqa",)),
            ReleasePart("coqa", ("floschne/gimmick-coqa",), ("coqa_c", "coqa_r", "ckqa")),
        ),
        gated=True,
        not_on_hub={"cvvqa": CVVQA_HOWTO},
    ),
    builder="dataset_builders.gimmick",
    run_options=(
        RunOption("gimmick_max_frames", "CVVQA: keep at most N frames per clip, spread over it", kind="int", minimum=1),
        RunOption(
            "gimmick_max_side", "CVVQA: shrink frames so their longer side is at most N pixels", kind="int", minimum=1
        ),
    ),
    configure=configure,
    gated=True,
    example=example,
    headline=HEADLINE,
    report=REPORT,
)
