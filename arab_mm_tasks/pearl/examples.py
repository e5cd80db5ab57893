"""Documents the task catalogue (docs/tasks.md) shows each Pearl prompt on, as the builder writes them.

Hand-made from the authors' own Arabic: the question is one of their seed questions
(`data_generation/prompts/few_shots_examples.json`, UBC-NLP/pearl@ae6e95d); captions, answers
and choices are short and ours; the images are small synthetic pictures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arab_mm_tasks.core.spec import TaskSpec

PROVENANCE = (
    "Rendered for hand-made documents (`arab_mm_tasks/pearl/examples.py`: one of the authors' seed "
    "questions, short made-up answers, synthetic images):"
)
QUESTION = "ما اسم الطبق التقليدي الظاهر في الصورة؟"


def example_docs() -> dict[str, dict[str, Any]]:
    """One document per Pearl config (Pearl-Lite's are Pearl's)."""
    from arab_mm_tasks.testing.synthetic import make_image

    common = {"id": "0", "question": QUESTION, "country": "Jordan", "category": "Food", "image": make_image("pearl"),
              "augmented_caption": "تظهر الصورة طبق المنسف الأردني.", "answer_letter": "", "choices": []}  # fmt: skip
    closed = {**common, "question_type": "multiple_choice", "choices": ["A. الكبسة", "B. المنسف", "C. الكسكس"],
              "answer_letter": "B", "answer": "المنسف"}  # fmt: skip
    opened = {**common, "question_type": "Origin Identification", "answer": "المنسف هو الطبق الوطني في الأردن."}
    images = [make_image(f"pearl-x-{i}", size=(32, 32)) for i in range(3)]
    pearl_x = {"id": "0", "question": "أي من الصور التالية تُمثِّل الثوب القطري؟", "question_type": "multiple_choice",
               "choices": ["A. الثوب القطري", "B. الدشداشة العمانية", "C. الجلابية المصرية"], "answer_letter": "A",
               "answer": "الثوب القطري"}  # fmt: skip
    return {
        "pearl_closed": closed,
        "pearl_open": opened,
        "pearl_x_single": {**pearl_x, "images": images[:1]},
        "pearl_x_multi": {**pearl_x, "images": images},
    }


def example(spec: TaskSpec) -> tuple[Mapping[str, Any], str]:
    return example_docs()[spec.name.replace("pearl_lite_", "pearl_")], PROVENANCE
