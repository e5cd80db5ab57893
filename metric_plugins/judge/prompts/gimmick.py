"""GIMMICK CKQA judge prompt (CKQA_D and CKQA_N): a 0-100 correctness score in ``<score>``.

Paper: "GIMMICK: Globally Inclusive Multimodal Multitask Cultural Knowledge Benchmarking",
Schneider, Holtermann, Biemann, Lauscher. Judge: GPT-4o ``gpt-4o-2024-11-20`` (footnote 11);
decoding not specified, so the default `Sampling` (temperature 0) applies. The reported metric
is the mean judge score; a reply without a parseable integer score is invalid (the paper does
not say how failures were handled).

Both texts are verbatim from the paper, system prompt L2406-L2447 and user template
L2452-L2470 (specs/gimmick.md section 3.5), kept as data files next to this module:
``gimmick_ckqa_system.txt`` and ``gimmick_ckqa_user.txt``. The markdown headers are part of
the prompt.
The judge sees only the ground truth and the generated answer: no images, no question.
"""

from __future__ import annotations

from typing import Literal

from metric_plugins.judge.parsing import XmlScore
from metric_plugins.judge.prompts.base import JudgePrompt, read_text
from metric_plugins.judge.schema import JudgeItem

CKQA_SYSTEM = read_text("gimmick_ckqa_system.txt")
CKQA_USER = read_text("gimmick_ckqa_user.txt")

GIMMICK_CKQA = JudgePrompt(
    id="gimmick_ckqa",
    version=1,
    system=CKQA_SYSTEM,
    user_template=CKQA_USER,
    reply_format=XmlScore(tag="score", low=0, high=100),
    fields=("GROUND_TRUTH", "GENERATED_ANSWER"),
    source="GIMMICK paper (papers/gimmick.txt) L2406-L2447 and L2452-L2470; ground truth per L164",
)


def ckqa_item(
    task: Literal["ckqa_d", "ckqa_n"], *, title: str, description: str, answer: str, item_id: str | None = None
) -> JudgeItem:
    """The judge item for one CKQA answer.

    The ground truth is the CEF description for CKQA_D and the CEF title for CKQA_N (L164).
    """
    if task not in ("ckqa_d", "ckqa_n"):
        raise ValueError(f"GIMMICK CKQA task must be 'ckqa_d' or 'ckqa_n', got {task!r}")
    ground_truth = description if task == "ckqa_d" else title
    return JudgeItem({"GROUND_TRUTH": ground_truth, "GENERATED_ANSWER": answer}, id=item_id)
