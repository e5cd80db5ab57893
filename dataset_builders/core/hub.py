"""The Hub layout, dataset cards and publishing: the part every benchmark builder shares.

A builder turns an authors' release into plain `datasets.Dataset` configs; this module
owns everything after that, so every benchmark lands on the Hub the same way:

    <out_dir>/README.md                                   card (YAML front matter + markdown)
    <out_dir>/data/<config>/<split>-00000-of-00001.parquet one file per config and split

The card's ``configs:`` list (with ``data_files``) is what lets
``datasets.load_dataset(str(out_dir), "<config>", split=...)`` and the Hub viewer find each
config, offline or online, with no loading script.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

import datasets
import pyarrow.parquet as pq
import yaml

from arab_mm_tasks.core.spec import RecordError
from arab_mm_tasks.core.spec import SourceError as SourceError  # re-exported: builders raise hub.SourceError

logger = logging.getLogger(__name__)
T = TypeVar("T")

CARD_FILE = "README.md"
DATA_DIR = "data"
_STAGING_DIR = ".data.staging"  # written first, swapped in for data/ only when a build succeeds
_CONFIG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def shard_path(config: str, split: str) -> str:
    """Relative path of a config's single parquet shard (the Hub's own naming)."""
    return f"{DATA_DIR}/{config}/{split}-00000-of-00001.parquet"


def data_files_pattern(config: str, split: str) -> str:
    """The ``data_files`` glob the card declares for a config's split."""
    return f"{DATA_DIR}/{config}/{split}-*.parquet"


# ---------------------------------------------------------------------------- build report


class BadRecord(RecordError):
    """A release record a builder cannot use; the message names the record and the field.

    ``field`` is None when the whole record is unusable (a .jsonl line that is no JSON object):
    then ``record_id`` is ``<file>:<line>`` and the message is ``<file>:<line>: <problem>``.
    """

    def __init__(self, record_id: str, field: str | None, problem: str) -> None:
        super().__init__(f"{record_id}: {problem}" if field is None else f"{record_id}: field {field!r} {problem}")
        self.record_id, self.field, self.problem = record_id, field, problem

    @property
    def reason(self) -> str:
        """The message without the record id (what a report lists next to the skipped record)."""
        return self.problem if self.field is None else f"field {self.field!r} {self.problem}"


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

    def skip_or_raise(self, error: BadRecord, on_bad_records: str) -> None:
        """``on_bad_records``: "error" raises `error`; "skip" records it as skipped; "warn" also logs it."""
        if on_bad_records == "error":
            raise error
        self.skipped.append(SkippedRecord(error.record_id, error.reason))
        if on_bad_records == "warn":
            logger.warning("skipping bad record: %s", error)

    @property
    def rows_skipped(self) -> int:
        return len(self.skipped)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rows_skipped": self.rows_skipped, "rows_duplicate": len(self.duplicates)}

    def __str__(self) -> str:
        return self.summary()

    def summary(self) -> str:
        """A short human-readable report (what the CLI prints)."""
        lines = [
            f"{self.benchmark}: read {self.rows_read} rows from {self.source}, wrote {self.rows_written}, "
            f"skipped {self.rows_skipped}" + (f" -> {self.out_dir}" if self.out_dir else ""),
        ]
        lines += [f"  {config}: {n}" for config, n in self.counts.items()]
        lines += [f"  {name}: {value}" for name, value in self.stats.items()]
        lines += [f"  skipped {s.record}: {s.reason}" for s in self.skipped]
        lines += [f"  duplicate {d.record}: repeats {d.first}" for d in self.duplicates]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


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


class DuplicateTracker:
    """Finds records that repeat an earlier record exactly (every field equal), by a digest of each.

    Only digests are held, so a build still keeps one config in memory at a time.
    """

    def __init__(self) -> None:
        self._first: dict[bytes, str] = {}

    def first_of(self, record: Mapping[str, Any], where: str) -> str | None:
        """Where the identical earlier record was, or None (and remember this one as `where`)."""
        canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, default=repr)
        digest = hashlib.blake2b(canonical.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        first = self._first.get(digest)
        if first is None:
            self._first[digest] = where
        return first


def progress(records: Iterable[T], desc: str) -> Iterable[T]:
    """`records` with a progress bar on stderr when stderr is a terminal (a full release takes minutes)."""
    from tqdm.auto import tqdm

    return tqdm(records, desc=desc, unit=" rows", disable=None, leave=False)


# ---------------------------------------------------------------------------- writing


def _check_config_name(config: str) -> None:
    if not _CONFIG_NAME.match(config):
        raise ValueError(f"config name {config!r} cannot be a folder name under data/")


def _check_replaceable(data_dir: Path) -> None:
    """Refuse to delete a data/ folder that holds anything a builder would not have written."""
    if not data_dir.exists():
        return
    if not data_dir.is_dir():
        raise FileExistsError(f"{data_dir} exists and is not a folder")
    foreign = [p for p in data_dir.rglob("*") if p.is_file() and p.suffix != ".parquet"]
    if foreign:
        raise FileExistsError(
            f"{data_dir} holds files that are not parquet shards (e.g. {foreign[0]}); "
            "refusing to overwrite it: choose an empty output folder"
        )


class HubFolderWriter:
    """Writes a Hub-layout folder one config at a time, so a builder holds one config at most.

    Shards go to a staging folder; `finish` swaps it in for ``data/`` and writes the card.
    A build that raises (use it as a context manager) leaves an existing folder untouched,
    and a successful one leaves no stale config from an earlier build behind.
    """

    def __init__(self, out_dir: str | Path, split: str = "test") -> None:
        self.out_dir = Path(out_dir)
        self.split = split
        self.num_rows: dict[str, int] = {}
        self.num_bytes: dict[str, int] = {}  # Arrow bytes, as `datasets` records split sizes
        self._staging = self.out_dir / _STAGING_DIR
        self._streams: dict[str, pq.ParquetWriter] = {}
        _check_replaceable(self.out_dir / DATA_DIR)
        if self._staging.exists():
            shutil.rmtree(self._staging)  # a crashed earlier build's leftovers; the name is ours
        self._staging.mkdir(parents=True)

    def append(self, config: str, dataset: datasets.Dataset) -> None:
        """Add rows to a config's shard; it stays open until `finish` (for ``all``-style configs)."""
        _check_config_name(config)
        schema = dataset.features.arrow_schema
        stream = self._streams.get(config)
        if stream is None:
            path = self._staging / shard_path(config, self.split).removeprefix(DATA_DIR + "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            stream = self._streams[config] = pq.ParquetWriter(path, schema)
        elif not stream.schema.equals(schema):
            raise ValueError(f"config {config!r}: rows appended with a different schema")
        for table in dataset.with_format("arrow").iter(batch_size=10_000):
            stream.write_table(table.replace_schema_metadata(schema.metadata))
            self.num_bytes[config] = self.num_bytes.get(config, 0) + table.nbytes
        self.num_rows[config] = self.num_rows.get(config, 0) + len(dataset)

    def write(self, config: str, dataset: datasets.Dataset) -> None:
        """Write a whole config at once and close its shard."""
        if config in self.num_rows:
            raise ValueError(f"config {config!r} written twice")
        self.append(config, dataset)
        self._streams.pop(config).close()

    def finish(self, card: str) -> Path:
        """Close every shard, replace ``data/`` with the new shards and write the card."""
        for stream in self._streams.values():
            stream.close()
        self._streams.clear()
        data_dir = self.out_dir / DATA_DIR
        _check_replaceable(data_dir)
        if data_dir.exists():
            shutil.rmtree(data_dir)
        self._staging.rename(data_dir)
        (self.out_dir / CARD_FILE).write_text(card, encoding="utf-8")
        return self.out_dir

    def abort(self) -> None:
        for stream in self._streams.values():
            stream.close()
        self._streams.clear()
        shutil.rmtree(self._staging, ignore_errors=True)

    def __enter__(self) -> HubFolderWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is not None or self._staging.exists():
            self.abort()  # an exception, or a writer never finished: nothing half-written stays


def write_hub_folder(
    out_dir: str | Path, configs: Mapping[str, datasets.Dataset], card: str, split: str = "test"
) -> Path:
    """Write every config's `split` as ``data/<config>/<split>-00000-of-00001.parquet`` plus the card."""
    with HubFolderWriter(out_dir, split) as writer:
        for config, dataset in configs.items():
            writer.write(config, dataset)
        return writer.finish(card)


# ---------------------------------------------------------------------------- card


def render_card(
    *,
    configs: Iterable[str],
    body: str,
    license: str,
    pretty_name: str,
    language: str | list[str],
    task_categories: list[str],
    split: str = "test",
    features: datasets.Features | None = None,
    num_rows: Mapping[str, int] | None = None,
    num_bytes: Mapping[str, int] | None = None,
    default_config: str | None = None,
    extra_metadata: Mapping[str, Any] | None = None,
) -> str:
    """The README card: YAML front matter the Hub and `datasets` read, then the caller's markdown.

    ``configs`` with ``data_files`` is required for loading by config name; ``dataset_info``
    (when ``features`` is given) pins the column types, and with ``num_rows`` and ``num_bytes``
    (`HubFolderWriter` counts both) the split sizes, which `datasets` verifies on load.
    """
    configs = list(configs)
    meta: dict[str, Any] = {
        "license": license,
        "language": [language] if isinstance(language, str) else list(language),
        "pretty_name": pretty_name,
        "task_categories": list(task_categories),
        **dict(extra_metadata or {}),
        "configs": [
            {
                "config_name": config,
                "data_files": [{"split": split, "path": data_files_pattern(config, split)}],
                **({"default": True} if config == default_config else {}),
            }
            for config in configs
        ],
    }
    if features is not None:
        meta["dataset_info"] = [
            {
                "config_name": config,
                **datasets.DatasetInfo(features=features)._to_yaml_dict(),
                **(
                    {"splits": [_split_info(split, num_rows[config], num_bytes[config])]}
                    if num_rows and num_bytes and config in num_rows and config in num_bytes
                    else {}
                ),
            }
            for config in configs
        ]
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{front}---\n\n{body.strip()}\n"


def _split_info(split: str, num_rows: int, num_bytes: int) -> dict[str, Any]:
    return {"name": split, "num_bytes": int(num_bytes), "num_examples": int(num_rows)}


# ---------------------------------------------------------------------------- publishing


def check_hub_folder(folder: str | Path) -> Path:
    """A folder `publish` may upload: a card and at least one parquet shard under data/."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is not a folder; build the dataset first")
    if not (path / CARD_FILE).is_file():
        raise FileNotFoundError(f"{path} has no {CARD_FILE} card; not a built Hub folder, refusing to upload")
    if not (path / DATA_DIR).is_dir() or not any((path / DATA_DIR).rglob("*.parquet")):
        raise FileNotFoundError(f"{path} has no parquet files under {DATA_DIR}/; refusing to upload")
    return path


def publish(
    folder: str | Path,
    repo_id: str,
    *,
    private: bool = False,
    token: str | None = None,
    revision: str | None = None,
    commit_message: str = "Upload dataset built by arab-mm-tasks",
    gated: Literal["auto", "manual"] | None = None,
) -> Any:
    """Create the dataset repo if needed and upload a built folder as one commit.

    With `gated`, access requests are switched on after the repo is created and before any file
    is uploaded (gated sources such as GIMMICK's stay gated in our copy).

    Remote files under data/ that the new build does not contain are deleted in the same
    commit, so a config dropped from a build does not linger on the Hub. The folder is
    checked before any network call; the token is passed through and never logged.
    Returns huggingface_hub's ``CommitInfo`` (``.commit_url``).
    """
    from huggingface_hub import HfApi

    path = check_hub_folder(folder)
    api = HfApi(token=token)
    logger.info("publishing %s to dataset repo %s (private=%s)", path, repo_id, private)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    if gated is not None:
        api.update_repo_settings(repo_id, gated=gated, repo_type="dataset")
    if revision and revision != "main":
        api.create_branch(repo_id, branch=revision, repo_type="dataset", exist_ok=True)
    return api.upload_folder(
        folder_path=str(path),
        repo_id=repo_id,
        repo_type="dataset",
        revision=revision,
        commit_message=commit_message,
        allow_patterns=[CARD_FILE, f"{DATA_DIR}/**"],
        delete_patterns=[f"{DATA_DIR}/**"],
    )
