"""Reading ARB's two releases as they are published.

- the HF dataset ``MBZUAI/ARB``: parquet, split ``train``, columns ``image, question, answer,
  choices, steps, domain, Curriculum`` (1,355 rows; the card's schema in shared/real/arb);
- the authors' CSV ``evaluation/gpt-4.1-final-responses.csv`` (1,356 rows): RFC-4180 with
  multi-line quoted fields, the header ``category `` with a trailing space, and model outputs in
  ``<model>-steps`` / ``<model>-answers`` columns. No image bytes: ``image_path`` names the files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from arab_mm_tasks.arb.release_csv import MAX_CELL_CHARS as MAX_CELL_CHARS  # re-exported: the cell bound
from arab_mm_tasks.arb.release_csv import SourceError as SourceError  # re-exported: what this module raises
from arab_mm_tasks.arb.release_csv import csv_rows
from arab_mm_tasks.core.paths import files_inside, safe_file_name
from dataset_builders.core import reading

HUB_REPO = "MBZUAI/ARB"
CSV_CATEGORY = "category "  # sic: the released header has a trailing space
CSV_REQUIRED = ("image_id", "question", "answer", "choices", "steps", CSV_CATEGORY, "image_path")
MODEL_COLUMN = re.compile(r"^(?P<model>.+)-(?P<kind>steps|answers)$")


@dataclass
class Source:
    kind: str  # "csv" or "hub"
    origin: str
    records: Any  # a callable returning an iterator of dicts
    models: list[str] = field(default_factory=list)  # model outputs a CSV holds (``gpt-4.1``)
    num_rows: int | None = None  # records in the source, for the progress bar

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self.records()


ROW_PROBLEM = "\x00row problem"  # key of a record whose row is malformed (no CSV line may hold a NUL: checked)


def _records(path: Path, header: list[str]) -> Iterator[dict[str, Any]]:
    """The data rows as dicts by header; a row of another width carries `ROW_PROBLEM` (a bad record)."""
    rows = csv_rows(path)
    next(rows, None)
    for fields in rows:
        record: dict[str, Any] = dict(zip(header, fields, strict=False))
        if len(fields) != len(header):
            record[ROW_PROBLEM] = f"has {len(fields)} cells, the header has {len(header)}"
        yield record


def read_csv(path: str | os.PathLike[str]) -> Source:
    """The authors' CSV (or its .xz), read through once here (header, file-level faults, row count)."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise SourceError(f"{file}: no such CSV file")
    num_rows = -1
    header: list[str] = []
    for fields in csv_rows(file):
        header = header or fields
        num_rows += 1
    missing = [c for c in CSV_REQUIRED if c not in header]
    if missing:
        raise SourceError(f"{file}: not ARB's CSV release, columns {missing} missing (it has {header})")
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise SourceError(f"{file}: the header repeats columns {repeated}")
    models = sorted({m["model"] for c in header if (m := MODEL_COLUMN.match(c))})
    for model in models:
        safe_file_name(model, what=f"{file}: the model name of columns {model + '-steps'!r}/{model + '-answers'!r}")
    return Source("csv", str(file), lambda: _records(file, header), models, num_rows)


def read_hub(source: str) -> Source:
    """A Hub id (``MBZUAI/ARB[@revision]``), or a local folder or file of its parquet shards."""
    path = Path(source).expanduser()
    if not path.exists():
        from dataset_builders.core.release import download_release

        repo, _, revision = source.partition("@")
        path = download_release(repo, revision or None)
    files = files_inside(path, sorted(path.rglob("*.parquet")), what=source) if path.is_dir() else [path]
    if not files:
        raise SourceError(f"{source}: no parquet files (expected the MBZUAI/ARB layout data/train-*.parquet)")

    def records() -> Iterator[dict[str, Any]]:
        for file in files:
            yield from reading.parquet_records(file)

    num_rows = sum(pq.ParquetFile(file).metadata.num_rows for file in files)
    return Source("hub", source, records, num_rows=num_rows)
