"""Scoring the authors' released generations: their CSV (gold columns + ``<model>-steps/-answers``),
or the predictions file a build writes from it.

``evaluation/gpt-4.1-final-responses.csv`` (or its .xz, or any CSV with its gold columns and one
model's output columns) becomes (document, response) pairs for `arab-mm-tasks score` and
`arab-mm-tasks judge`: the document is the gold record (no image: no metric needs one) and the
response is the model's steps followed by ``الجواب هو: <its answer>``, which the task's extraction
splits back into exactly the released steps (all 1,356 GPT-4.1 rows, tests/arb/test_arb_parsing.py) and
the released answer; an answer that restates a marker itself (``الجواب النهائي: ب``, 15 rows) comes
back as the text after its last marker. ``question`` and ``choices`` may be absent
(the answer judge then sees an empty question).

A built folder's ``predictions/<model>.jsonl`` (`dataset_builders.arb.builder.write_predictions`)
holds the same responses by row id; its documents are that folder's gold rows (config ``all``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from arab_mm_tasks.arb.domains import domain_of
from arab_mm_tasks.arb.parsing import FieldError, parse_choices
from arab_mm_tasks.arb.release_csv import csv_rows
from arab_mm_tasks.core.layout import is_predictions_file
from arab_mm_tasks.core.spec import RecordError, SourceError

CATEGORY = "category "  # sic: the released header's trailing space
REQUIRED = ("image_id", "answer", "steps", CATEGORY)


def compose_response(steps: str, answer: str) -> str:
    """A released (steps, answer) pair as one response whose steps the task's extraction splits back exactly
    (the answer line starts at its first marker, `arab_mm_tasks.arb.answers.split_response`)."""
    return f"{steps.strip()}\n\nالجواب هو: {answer.strip()}"


def _rows(path: Path) -> list[dict[str, str]]:
    """The CSV's rows by header, read as the builder reads it: a cut, undecodable or ragged file is one line."""
    rows = csv_rows(path)
    header = next(rows, [])
    records = []
    for index, fields in enumerate(rows):
        if len(fields) != len(header):
            raise RecordError(f"{path.name} row {index}: has {len(fields)} cells, the header has {len(header)}")
        records.append(dict(zip(header, fields, strict=True)))
    return records


def released_models(header: list[str]) -> list[str]:
    return sorted({c.removesuffix("-steps") for c in header if c.endswith("-steps") and f"{c[:-6]}-answers" in header})


GOLD_COLUMNS = ["id", "question", "choices", "answer", "steps_raw", "domain", "curriculum"]


def read_predictions(path: str | Path, model: str | None = None) -> list[tuple[Mapping[str, Any], str]]:
    """(gold document, response) per row of a released CSV (`model` picks one of its models, default: the only
    one), or per line of a built folder's predictions file."""
    file = Path(path).expanduser()
    if file.suffix == ".jsonl":
        return read_predictions_file(file, model)
    if not file.name.endswith((".csv", ".csv.xz")) or not file.is_file():
        raise SourceError(f"{file}: not a CSV file, nor a built folder's predictions/<model>.jsonl")
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


def _gold_rows(folder: Path) -> dict[str, dict[str, Any]]:
    """A built folder's gold rows by id, without their images."""
    import datasets

    from arab_mm_tasks.core.sources import check_config, local_dataset_cache_dir

    check_config(folder, "all", "arb")
    rows = datasets.load_dataset(
        str(folder), "all", split="test", columns=GOLD_COLUMNS, cache_dir=str(local_dataset_cache_dir(folder))
    )
    return {row["id"]: row for row in rows}


def read_predictions_file(file: Path, model: str | None = None) -> list[tuple[Mapping[str, Any], str]]:
    """``<folder>/predictions/<model>.jsonl`` joined by ``id`` to ``<folder>``'s gold rows; a line whose id
    is not a row of the folder, or that has no response, names its line and field."""
    if not file.is_file() or not is_predictions_file(file):
        raise SourceError(
            f"{file}: not a built ARB folder's predictions file "
            "(<folder>/predictions/<model>.jsonl next to <folder>/data, as `arab-mm-tasks build arb` writes it)"
        )
    # the builder names the file by `safe_file_name(model)`: `org/model` is `org%2Fmodel.jsonl`
    held = unquote(file.stem)
    if model is not None and model not in (held, file.stem):
        raise SourceError(f"{file}: holds the predictions of {held!r}, not {model!r}")
    folder = file.parent.parent
    gold = _gold_rows(folder)
    pairs = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{file.name}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise RecordError(f"{where}: not a JSON object ({error.msg})") from None
        key = record.get("id") if isinstance(record, dict) else None
        if key not in gold:
            raise RecordError(f"{where}: field 'id' is {key!r}, not a row of {folder}")
        response = record.get("response")
        if not isinstance(response, str) or not response.strip():
            raise RecordError(f"{where} ({key}): field 'response' is missing or empty")
        pairs.append((gold[key], response))
    if not pairs:
        raise SourceError(f"{file}: no predictions")
    return pairs
