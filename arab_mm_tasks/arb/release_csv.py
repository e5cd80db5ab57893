"""The authors' CSV (``evaluation/gpt-4.1-final-responses.csv``, or its .xz) read row by row, every file-level
fault one line: the one reader of it, for the builder (`dataset_builders.arb.source`) and for scoring the
released generations (`arab_mm_tasks.arb.released`).

RFC-4180 with multi-line quoted fields; the header ``category `` has a trailing space.
"""

from __future__ import annotations

import csv
import lzma
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from arab_mm_tasks.core.spec import SourceError as _SourceError


class SourceError(_SourceError):
    """ARB's release cannot be read (a cut, undecodable or malformed CSV); the message names file and row."""


# csv's default cell limit is 131,072 characters; the longest released cell is a few thousand. A cell
# over this bound is reported (file, row), never read into memory whole by accident of a missing quote.
MAX_CELL_CHARS = 4 * 2**20
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
