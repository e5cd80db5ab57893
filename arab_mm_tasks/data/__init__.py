"""Data shipped inside the package: the bundled ArabCulture sample and GIMMICK's paper examples.

Provenance of each file is in README.md here.
"""

from __future__ import annotations

import json
from pathlib import Path

# 38 records in the authors' release format (MBZUAI/ArabCulture rows), all 13 countries.
SAMPLE_PATH = Path(__file__).parent / "arabculture_sample.jsonl"


def sample_records() -> list[dict]:
    """The bundled ArabCulture sample, one dict per record, exactly as released (spaces and nulls kept)."""
    return [json.loads(line) for line in SAMPLE_PATH.read_text("utf-8").splitlines() if line.strip()]


GIMMICK_EXAMPLES_PATH = Path(__file__).parent / "gimmick_examples.json"


def gimmick_example_docs(images_per_cef: int = 2) -> dict[str, dict]:
    """One document per GIMMICK config, as the builder writes it: the paper's printed examples
    with small synthetic media (an image, a 10 s clip, `images_per_cef` CEF images)."""
    from arab_mm_tasks.testing.synthetic import make_image, write_clip

    examples = json.loads(GIMMICK_EXAMPLES_PATH.read_text("utf-8"))
    docs = {config: dict(doc) for config, doc in examples.items() if not config.startswith("_")}
    docs["civqa"]["image"] = make_image(docs["civqa"]["id"])
    docs["cvvqa"]["video"] = {"bytes": write_clip(seconds=10, size=(64, 48), detail=False), "path": "clip.mp4"}
    for config in ("coqa_c", "coqa_r", "ckqa"):
        docs[config]["images"] = [make_image(f"{docs[config]['id']}-{i}") for i in range(images_per_cef)]
    return docs
