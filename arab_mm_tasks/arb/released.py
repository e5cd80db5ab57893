"""Scoring the authors' released generations: their CSV (gold columns + ``<model>-steps/-answers``).

``evaluation/gpt-4.1-final-responses.csv`` (or its .xz, or any CSV with its gold columns and one
model's output columns) becomes (document, response) pairs for `arab-mm-tasks score` and
`arab-mm-tasks judge`: the document is the gold record (no image: no metric needs one) and the
response is the model's steps followed by ``الجواب هو: <its answer>``, which the task's extraction
splits back into exactly the released steps and answer. ``question`` and ``choices`` may be absent
(the answer judge then sees an empty question).
"""

from __future__ import annotations

import csv
import lzma
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arab_mm_tasks.arb.domains import domain_of
from arab_mm_tasks.core.spec import RecordError, SourceError

CATEGORY = "category "  # sic: the released header's trailing space
REQUIRED = ("image_id", "answer", "steps", CATEGORY)


def compose_response(steps: str, answer: str) -> str:
    """A released (steps, answer) pair as one response the task's extraction splits back exactly."""
    return f"{steps.strip()}\n\nالجواب هو: {answer.strip()}"


def _rows(path: Path) -> list[dict[str, str]]:
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def released_models(header: list[str]) -> list[str]:
    return sorted({c.removesuffix("-steps") for c in header if c.endswith("-steps") and f"{c[:-6]}-answers" in header})


def read_predictions(path: str | Path, model: str | None = None) -> list[tuple[Mapping[str, Any], str]]:
    """(gold document, response) per row of a released CSV; `model` picks one of its models (default: the only one)."""
    from dataset_builders.arb.parsing import FieldError, parse_choices

    file = Path(path).expanduser()
    if not file.name.endswith((".csv", ".csv.xz")) or not file.is_file():
        raise SourceError(f"{file}: not a CSV file")
    rows = _rows(file)
    header = list(rows[0]) if rows else []
    missing = [c for c in REQUIRED if c not in header]
    models = released_models(header)
    if missing or not models:
        raise SourceError(f"{file}: not ARB's released CSV (columns {missing} missing, models found: {models})")
    if model is None and len(models) > 1:
        raise SourceError(f"{file}: holds several models {models}; pick one")
    chosen = model or models[0]
    if chosen not in models:
        raise SourceError(f"{file}: no model {chosen!r}; it has {models}")
    pairs = []
    for index, row in enumerate(rows):
        rid = f"{file.name} row {index} ({row['image_id']})"
        domain = domain_of(row[CATEGORY], row["image_id"])
        if domain is None:
            raise RecordError(f"{rid}: field {CATEGORY!r} is {row[CATEGORY]!r}, no ARB domain")
        try:
            choices = parse_choices(row.get("choices") or "")
        except FieldError as error:
            raise RecordError(f"{rid}: field 'choices' {error}") from None
        doc = {
            "id": row["image_id"],
            "question": row.get("question") or "",
            "choices": choices,
            "answer": row["answer"],
            "steps_raw": row["steps"],
            "domain": domain,
        }
        pairs.append((doc, compose_response(row[f"{chosen}-steps"], row[f"{chosen}-answers"])))
    return pairs
