"""A small ARB folder built by the real builder from rows of the authors' CSV, with judge markers.

Three released rows (OCR, CDT, M&L), their images replaced by tiny PNGs named by ``image_path``.
The loopback judge replies what a ``[[reply=...]]`` marker in the judged text says: the gold
answer carries the answer judge's reply (only that prompt shows it) and the reference steps carry
the step judge's JSON (only that prompt shows them).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from PIL import Image
from shared_files import shared

from metric_plugins.judge.prompts.arb import STEP_ATTRIBUTES

SAMPLE = shared("real/arb/gpt-4.1-final-responses.stratified_sample.csv")
ROWS = ("ocr_b1.png", "Chart_25.png", "Dynamath_1")
ANSWER_REPLIES = ("1", "0", "1")
STEP_REPLIES = (
    dict.fromkeys(STEP_ATTRIBUTES, 8),
    dict.fromkeys(STEP_ATTRIBUTES, 5),
    {**dict.fromkeys(STEP_ATTRIBUTES, 9), "Hallucination": 6},
)
DOMAINS = ("ocr", "cdt", "ml")


def marked_rows() -> tuple[list[str], list[dict[str, str]]]:
    text = SAMPLE.read_text(encoding="utf-8")
    rows = {row["image_id"]: row for row in csv.DictReader(io.StringIO(text, newline=""))}
    chosen = []
    for image_id, answer_reply, steps_reply in zip(ROWS, ANSWER_REPLIES, STEP_REPLIES, strict=True):
        row = dict(rows[image_id])
        row["answer"] += f" [[reply={answer_reply}]]"
        row["steps"] += f"\n[[reply={json.dumps(steps_reply)}]]"
        chosen.append(row)
    return list(rows[ROWS[0]]), chosen


def build_arb_hub_dir(root: Path) -> Path:
    from dataset_builders.arb import build

    header, rows = marked_rows()
    images = root / "images"
    images.mkdir(parents=True)
    for i, row in enumerate(rows):
        Image.new("RGB", (32, 24), (40 * i, 120, 200)).save(images / row["image_path"], format="PNG")
    source = root / "arb.csv"
    with source.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    build(root / "hub", csv=source, images_dir=images)
    return root / "hub"


def arb_corpus() -> list[str]:
    """Texts the tiny VLM's tokenizer is trained on, so ARB's long Arabic prompt fits its 1,024 positions."""
    from arab_mm_tasks.arb.prompt import FIGURE_4

    _, rows = marked_rows()
    return [FIGURE_4] * 20 + [row["question"] + "\n" + row["choices"] for row in rows] * 5
