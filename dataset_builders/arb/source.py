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
from typing import IO, Any

import pyarrow.parquet as pq

from dataset_builders.core import reading
from dataset_builders.core.paths import files_inside, safe_file_name

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


# csv's default cell limit is 131,072 characters; the longest released cell is a few thousand. A cell
# over this bound is reported (file, row), never read into memory whole by accident of a missing quote.
MAX_CELL_CHARS = 4 * 2**20
ROW_PROBLEM = "\x00row problem"  # key of a record whose row is malformed (no CSV line may hold a NUL: checked)
_BOMS = {b"\xff\xfe": "UTF-16 (little-endian)", b"\xfe\xff": "UTF-16 (big-endian)"}


class _Lines:
    """A CSV file's lines as text, one line decoded at a time so a decoding fault names its own line.

    Remembers the last line (a file cut between cells ends without a newline); ``row`` is the index of
    the row being read, kept by `csv_rows` (-1: the header).
    """

    def __init__(self, raw: IO[bytes], path: Path) -> None:
        self.raw, self.path, self.number, self.last, self.row = raw, path, 0, "\n", -1

    def __iter__(self) -> Iterator[str]:
        for line in self.raw:
            self.number += 1
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as err:
                cut = (
                    ": the file ends inside a character, it is cut"
                    if err.end == len(line) and b"\n" not in line
                    else ""
                )
                raise SourceError(
                    f"{self.path}: line {self.number} ({_where(self.row)}) is not UTF-8 text ({err.reason} at byte "
                    f"{err.start} of the line){cut}"
                ) from None
            if "\x00" in text:  # never in text; in UTF-16 without a BOM, every other byte of Latin text
                raise SourceError(
                    f"{self.path}: line {self.number} ({_where(self.row)}) holds a NUL byte: not UTF-8 text "
                    "(UTF-16 without a BOM?)"
                )
            self.last = text.removeprefix("\ufeff") if self.number == 1 else text  # a BOM, as Excel writes one
            yield self.last


def _binary(path: Path) -> IO[bytes]:
    return lzma.open(path, "rb") if path.suffix == ".xz" else path.open("rb")


def csv_rows(path: Path) -> Iterator[list[str]]:
    """The rows of an ARB CSV (header first, blank lines left out), each file-level fault one `SourceError`.

    Named by file and row (``csv row N``, the data row's index, as the builder names records):
    text that is not UTF-8 (UTF-16, Latin-1, a character split by a cut), EOF inside a quoted field
    (csv reads that silently as a shorter last cell), a last row with no final newline (a cut in
    or between its unquoted cells), a cell over `MAX_CELL_CHARS`, and a cut or corrupt ``.xz``.
    """
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CELL_CHARS))
    with _binary(path) as raw:
        lines = _Lines(raw, path)
        try:
            bom = _BOMS.get(raw.read(2))
            if bom is not None:
                raise SourceError(f"{path}: is {bom} text, not UTF-8: save it as UTF-8")
            raw.seek(0)
            width, held = 0, None  # the header's width; the row read last, yielded once the next one is read
            for fields in csv.reader(lines, strict=True):
                if fields:
                    if held is not None:
                        yield held
                    width, held = width or len(fields), fields
                    lines.row += 1
            if held is not None and lines.row > 0 and not lines.last.endswith(("\n", "\r")):
                # Its last cell may be cut short (a whole CSV, as the authors', ends its last row with a newline).
                cells = f"has {len(held)} of the header's {width} cells and " if len(held) < width else ""
                raise SourceError(
                    f"{path}: {_where(lines.row - 1)} {cells}the file ends there without a newline: it is cut "
                    "(if that row is whole, end the file with a newline)"
                )
            if held is not None:
                yield held
        except csv.Error as err:
            raise SourceError(f"{path}: line {lines.number} ({_where(lines.row)}): {_csv_problem(str(err))}") from None
        except (lzma.LZMAError, EOFError) as err:
            raise SourceError(f"{path}: the .xz stream is cut or corrupt after line {lines.number} ({err})") from None


def _where(row: int) -> str:
    return "the header" if row < 0 else f"csv row {row}"


def _csv_problem(message: str) -> str:
    if "field larger than field limit" in message:
        return f"a cell is over {MAX_CELL_CHARS:,} characters, more than any ARB field"
    if "unexpected end of data" in message:
        return "the file ends inside a quoted cell: it is cut"
    return f"not valid CSV ({message})"


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
