"""What every builder does with an authors' release before writing it: reading its lines, naming bad
records, spotting duplicates, and reporting what was read, written and left out.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from arab_mm_tasks.core.records import BadRecord as BadRecord  # re-exported: builders raise reading.BadRecord
from arab_mm_tasks.core.spec import RecordError as RecordError  # what builders catch: BadRecord, MediaError
from arab_mm_tasks.core.spec import SourceError as SourceError  # re-exported: builders raise reading.SourceError

logger = logging.getLogger(__name__)
T = TypeVar("T")
SHOWN_RECORDS = 5  # skipped / repeated records a summary lists before counting the rest


# ---------------------------------------------------------------------------- build report


@dataclass(frozen=True)
class SkippedRecord:
    """A record a tolerant build left out: which one, and why (never dropped silently)."""

    record: str
    reason: str


@dataclass(frozen=True)
class DuplicateRecord:
    """A record equal, field for field, to an earlier one of the same build (reported, see `DuplicateTracker`)."""

    record: str
    first: str  # the earlier record it repeats


@dataclass
class BuildReport:
    """What a build read, wrote and left out; builders return it and the CLI prints it.

    ``counts`` is rows per written config (the ``all`` config included); ``rows_written``
    counts each source record once. ``stats`` holds benchmark-specific counters.
    Every record read is written or skipped: ``rows_read == rows_written + rows_skipped``
    (unreadable .jsonl lines count as read records). ``duplicates`` lists written records that
    repeat an earlier one exactly; they are written too, so they are not a term of that sum.
    """

    benchmark: str
    source: str
    out_dir: str | None = None
    rows_read: int = 0
    rows_written: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    skipped: list[SkippedRecord] = field(default_factory=list)
    duplicates: list[DuplicateRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    stats: dict[str, int | float] = field(default_factory=dict)

    report_file: str | None = None  # where the full report was written (`write`), named by `summary`

    def skip_or_raise(self, error: RecordError, on_bad_records: str) -> None:
        """``on_bad_records``: "error" raises `error`; "skip" records it as skipped; "warn" also logs it.

        Any `RecordError` is taken (a media decoder's `MediaError` too) and handled as the `BadRecord`
        it is (`as_bad_record`), so what a builder skips does not depend on which helper raised.
        """
        error = as_bad_record(error)
        if on_bad_records == "error":
            raise error
        self.skipped.append(SkippedRecord(error.record_id, error.reason))
        if on_bad_records == "warn":
            logger.warning("skipping bad record: %s", error)

    def add_record_warnings(self) -> None:
        """The report's warning lines about left-out and repeated records, worded the same by every builder."""
        if self.duplicates:
            self.warnings.append(
                f"{len(self.duplicates)} records repeat an earlier record exactly; kept (listed in the report)"
            )
        if self.skipped:
            self.warnings.append(f"{len(self.skipped)} bad records skipped (listed in the report)")

    @property
    def rows_skipped(self) -> int:
        return len(self.skipped)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rows_skipped": self.rows_skipped, "rows_duplicate": len(self.duplicates)}

    def write(self, path: str | Path) -> Path:
        """The whole report as JSON (every skipped and repeated record), for `summary` to point to."""
        file = Path(path).expanduser()
        self.report_file = str(file)
        file.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return file

    def __str__(self) -> str:
        return self.summary()

    def summary(self, shown: int = SHOWN_RECORDS) -> str:
        """A short human-readable report (what the CLI prints).

        Skipped and repeated records are listed up to `shown` each, then counted in one line
        (a release with 100,000 repeats prints a few lines, not 100,000); `write` keeps them all.
        """
        lines = [
            f"{self.benchmark}: read {self.rows_read} rows from {self.source}, wrote {self.rows_written}, "
            f"skipped {self.rows_skipped}" + (f" -> {self.out_dir}" if self.out_dir else ""),
        ]
        lines += [f"  {config}: {n}" for config, n in self.counts.items()]
        lines += [f"  {name}: {value}" for name, value in self.stats.items()]
        lines += [f"  skipped {s.record}: {s.reason}" for s in self.skipped[:shown]]
        lines += self._more(len(self.skipped) - shown, "skipped records")
        lines += [f"  duplicate {d.record}: repeats {d.first}" for d in self.duplicates[:shown]]
        lines += self._more(len(self.duplicates) - shown, "duplicates")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def _more(self, hidden: int, what: str) -> list[str]:
        if hidden <= 0:
            return []
        where = f"all listed in {self.report_file}" if self.report_file else "`--report FILE` lists them all"
        return [f"  ... and {hidden} more {what} ({where})"]


def as_bad_record(error: RecordError) -> BadRecord:
    """`error` as a `BadRecord`: itself, or one with the same record, field and problem (a `MediaError`)."""
    if isinstance(error, BadRecord):
        return error
    record, field, problem = (getattr(error, name, None) for name in ("record", "field", "problem"))
    if isinstance(record, str) and isinstance(problem, str):
        converted = BadRecord(record, field if isinstance(field, str) else None, problem)
    else:  # a RecordError's message starts with the record it names
        record, _, problem = str(error).partition(": ")
        converted = BadRecord(record, None, problem or str(error))
    converted.__cause__ = error
    return converted


# ---------------------------------------------------------------------------- reading


def parse_jsonl_record(
    path: str | Path, line_no: int, line: str | bytes, error: type[BadRecord] = BadRecord
) -> dict[str, Any]:
    """One line of a release's .jsonl file as a dict, else `error` with record id ``<file>:<line>``.

    Every builder reads .jsonl through here, so a malformed line is a bad record like any other:
    a build in "skip" mode lists it and goes on. Bytes are decoded as UTF-8 (a BOM is allowed,
    as Windows editors write one); Latin-1 or other bytes, truncated JSON, a JSON value that is
    not an object, and escaped lone surrogates (which no parquet file can hold) are all `error`.
    """
    where = f"{path}:{line_no}"
    try:
        # Decoded here rather than by json.loads, which would also take UTF-16/32 lines: a .jsonl is UTF-8.
        text = bytes(line).decode("utf-8") if isinstance(line, bytes | bytearray) else line
    except UnicodeDecodeError as err:
        raise error(where, None, f"is not UTF-8 text ({err.reason} at byte {err.start})") from None
    try:
        record = json.loads(text.removeprefix("\ufeff"))
        bad = _lone_surrogate(record) if isinstance(record, dict) else None
    except ValueError as err:
        raise error(where, None, f"is not valid JSON ({err})") from None
    except RecursionError:  # json.loads (and our walk) recurse per nesting level
        raise error(where, None, "is nested too deeply to read") from None
    if not isinstance(record, dict):
        raise error(where, None, f"is not a JSON object (a JSON {type(record).__name__})")
    if bad is not None:
        raise error(where, bad or None, "holds an unpaired surrogate escape (\\ud800-\\udfff), not text")
    return record


def _lone_surrogate(value: Any, path: str = "") -> str | None:
    """Dotted path of the first string (key or value) that cannot be written as UTF-8; '' for the top level."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        name = f"{path}.{key}" if path and isinstance(key, str) else f"{path}[{key}]" if path else str(key)
        if isinstance(key, str) and _lone_surrogate(key) is not None:
            return name
        if (found := _lone_surrogate(item, name)) is not None:
            return found
    return None


@dataclass(frozen=True)
class JsonlLine:
    """One non-blank line of a .jsonl source: where it is, and its record or the reason it has none."""

    where: str  # "<file>:<line>", the name every message about this record starts with
    line_no: int
    offset: int  # byte offset of the line, to re-read it later without holding the record
    record: dict[str, Any] | None
    error: BadRecord | None


def read_jsonl(path: Path, error: type[BadRecord] = BadRecord) -> Iterator[JsonlLine]:
    """Each non-blank line of `path` (blank: whitespace only, CRLF included), parsed by `parse_jsonl_record`.

    The file is read as bytes, so an undecodable line is one bad record rather than an exception
    that stops the whole read.
    """
    with path.open("rb") as f:
        offset = 0
        for line_no, line in enumerate(iter(f.readline, b""), start=1):
            if line.strip():
                try:
                    record = parse_jsonl_record(path, line_no, line, error)
                except BadRecord as err:
                    yield JsonlLine(f"{path}:{line_no}", line_no, offset, None, err)
                else:
                    yield JsonlLine(f"{path}:{line_no}", line_no, offset, record, None)
            offset += len(line)


def parquet_records(file: str | Path, batch_size: int = 64) -> Iterator[dict[str, Any]]:
    """A parquet file's rows, reading one row group at a time and `batch_size` rows of it at once.

    One `iter_batches` over the whole file kept what it had read allocated (222 MiB after 4,800
    of 5,000 image rows, pyarrow 26); a reader per row group frees it when the group is done.
    A buffered stream without pre-buffering reads a column chunk page by page instead of whole, so
    what is held is one page per column (a page is read whole): bounded by how the file was
    written (pages of ~1 MB, or one write batch of 1,024 rows when a binary column is written
    without content-defined chunking), never by the number of rows in the file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(file, buffer_size=1 << 20, pre_buffer=False)
    except (pa.ArrowException, OSError) as err:
        raise unreadable_parquet(file, err) from None
    try:
        for group in range(parquet.num_row_groups):
            batches = parquet.iter_batches(batch_size=batch_size, row_groups=[group], use_threads=False)
            while True:  # batch by batch (the group is never held whole); a cut or corrupted file is one line
                try:
                    batch = next(batches)
                except StopIteration:
                    break
                except (pa.ArrowException, OSError) as err:
                    raise unreadable_parquet(file, err) from None
                yield from batch.to_pylist()
    finally:
        parquet.close()


def unreadable_parquet(file: str | Path, error: BaseException) -> SourceError:
    """The one-line `SourceError` for a parquet file that cannot be read (0 bytes, truncated, not parquet)."""
    reason = " ".join(str(error).split())[:200] or type(error).__name__
    return SourceError(f"{file}: not a readable parquet file ({reason})")


class DuplicateTracker:
    """Finds records that repeat an earlier record exactly (every field equal), by a digest of each.

    Only digests are held, so a build still keeps one config in memory at a time. Media bytes are
    digested as bytes (not as their repr), so a record holding images costs one hash pass over them.
    """

    def __init__(self) -> None:
        self._first: dict[bytes, str] = {}

    def first_of(self, record: Mapping[str, Any], where: str) -> str | None:
        """Where the identical earlier record was, or None (and remember this one as `where`)."""
        digest = _digest(record)
        first = self._first.get(digest)
        if first is None:
            self._first[digest] = where
        return first


def _digest(record: Mapping[str, Any]) -> bytes:
    def default(value: Any) -> str:
        if isinstance(value, bytes | bytearray | memoryview):
            return "bytes:" + hashlib.blake2b(bytes(value), digest_size=16).hexdigest()
        return repr(value)

    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, default=default)
    return hashlib.blake2b(canonical.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class Duplicates:
    """The one duplicate rule of every builder (docs/fidelity.md, "Builder: duplicates").

    - A release whose records carry an id (`check`'s ``key``): a record repeating an earlier
      record's id is a bad record (`error`, naming the id field and the first record: two rows of a
      build never share an id), so it fails an ``error`` build and is skipped and counted under ``skip``/``warn``.
    - Otherwise, a record equal field for field to an earlier one is **kept** (the papers count every
      released row) and listed in ``report.duplicates``, with one warning line for all of them.

    Call `check` after a record has been validated, so a skipped record is never anyone's "first".
    """

    def __init__(self, report: BuildReport, key_field: str | None = None, error: type[BadRecord] = BadRecord) -> None:
        self.report, self.key_field, self.error = report, key_field, error
        self._keys: dict[Any, str] = {}
        self._exact = DuplicateTracker()

    def check(self, record: Mapping[str, Any], where: str, key: Any = None) -> None:
        """Raise `error` for a repeated ``key``; list an exact repeat; remember the record."""
        if key is not None:
            first = self._keys.get(key)
            if first is not None:
                shown = key if isinstance(key, str) else "/".join(map(str, key))
                raise self.error(where, self.key_field or "id", f"repeats id {shown!r:.200} of {first}")
            self._keys[key] = where
            return
        if (first := self._exact.first_of(record, where)) is not None:
            self.report.duplicates.append(DuplicateRecord(where, first))


def progress(records: Iterable[T], desc: str, total: int | None = None) -> Iterable[T]:
    """`records` with a progress bar on stderr when stderr is a terminal (a full release takes minutes).

    The bar counts rows read, out of `total` when the source knows it (parquet metadata, a
    ``save_to_disk`` dataset, a .jsonl indexed first), with the rate and the time left.
    """
    from tqdm.auto import tqdm

    return tqdm(records, desc=desc, total=total, unit=" rows", unit_scale=True, disable=None, leave=False)
