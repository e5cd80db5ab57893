"""Reading ARB's two releases as they are published.

- the HF dataset ``MBZUAI/ARB``: parquet, split ``train``, columns ``image, question, answer,
  choices, steps, domain, Curriculum`` (1,355 rows; the card's schema in shared/real/arb);
- the authors' CSV ``evaluation/gpt-4.1-final-responses.csv`` (1,356 rows): RFC-4180 with
  multi-line quoted fields, the header ``category `` with a trailing space, and model outputs in
  ``<model>-steps`` / ``<model>-answers`` columns. No image bytes: ``image_path`` names the files.
"""

from __future__ import annotations

import csv
import lzma
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from dataset_builders.core import reading

HUB_REPO = "MBZUAI/ARB"
CSV_CATEGORY = "category "  # sic: the released header has a trailing space
CSV_REQUIRED = ("image_id", "question", "answer", "choices", "steps", CSV_CATEGORY, "image_path")
MODEL_COLUMN = re.compile(r"^(?P<model>.+)-(?P<kind>steps|answers)$")


class SourceError(reading.SourceError):
    pass


@dataclass
class Source:
    kind: str  # "csv" or "hub"
    origin: str
    records: Any  # a callable returning an iterator of dicts
    models: list[str] = field(default_factory=list)  # model outputs a CSV holds (``gpt-4.1``)
    num_rows: int | None = None  # records in the source, for the progress bar

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self.records()


def _open_text(path: Path):
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8", newline="")
    return path.open(encoding="utf-8", newline="")


def read_csv(path: str | os.PathLike[str]) -> Source:
    """The authors' CSV (or its .xz), header checked before any row is read."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise SourceError(f"{file}: no such CSV file")
    with _open_text(file) as stream:
        header = next(csv.reader(stream), [])
    missing = [c for c in CSV_REQUIRED if c not in header]
    if missing:
        raise SourceError(f"{file}: not ARB's CSV release, columns {missing} missing (it has {header})")
    models = sorted({m["model"] for c in header if (m := MODEL_COLUMN.match(c))})

    def records() -> Iterator[dict[str, Any]]:
        with _open_text(file) as stream:
            yield from csv.DictReader(stream)

    with _open_text(file) as stream:  # a few MB of text: counted once, for the progress bar's total
        num_rows = sum(1 for row in csv.reader(stream) if row) - 1  # DictReader skips blank lines too
    return Source("csv", str(file), records, models, num_rows)


def read_hub(source: str) -> Source:
    """A Hub id (``MBZUAI/ARB[@revision]``), or a local folder or file of its parquet shards."""
    path = Path(source).expanduser()
    if not path.exists():
        from dataset_builders.core.release import download_release

        repo, _, revision = source.partition("@")
        path = download_release(repo, revision or None)
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise SourceError(f"{source}: no parquet files (expected the MBZUAI/ARB layout data/train-*.parquet)")

    def records() -> Iterator[dict[str, Any]]:
        for file in files:
            yield from reading.parquet_records(file)

    num_rows = sum(pq.ParquetFile(file).metadata.num_rows for file in files)
    return Source("hub", source, records, num_rows=num_rows)
