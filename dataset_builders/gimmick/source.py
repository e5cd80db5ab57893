"""Reading GIMMICK's three releases as plain records, with every image and video left as raw bytes.

The authors publish three gated Hub datasets (split ``test``): ``floschne/gimmick-sivqa`` (CIVQA),
``floschne/gimmick-vvqa`` (CVVQA: ``video_fn`` is a local path to a 10 s clip, written by the
repo's loading script) and ``floschne/gimmick-coqa`` (one row per CEF, for COQA and CKQA). Each
can be given in one of these forms, and is read unchanged:

- a Hub id, optionally ``id@revision``: downloaded into the Hugging Face cache
  (`dataset_builders.core.release`) and read as the local folder below. `datasets` 4+ no longer runs
  loading scripts, so the vvqa and coqa repos cannot be read that way; the error says how to make a
  local copy instead (run the authors' loader once with ``datasets<4`` and ``save_to_disk``);
- a folder written by ``save_to_disk`` (a ``Dataset``, or a ``DatasetDict`` with a ``test`` split);
- a ``.parquet`` file, or a folder of them (sorted by path; only the ``test*`` files, or those
  under a ``test/`` folder, when there are any);
- a ``.jsonl`` file, whose media values are file paths (relative to the file's folder) or
  ``{"bytes", "path"}`` objects.

Media helpers return ``{"bytes": raw, "path": <basename>}``: the original bytes, never re-encoded.
"""

from __future__ import annotations

import io
import math
import os
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

from arab_mm_tasks.core.media import MediaError, load_image, video_frames
from arab_mm_tasks.core.paths import files_inside, is_file, resolve_inside
from dataset_builders.core import reading
from dataset_builders.core.reading import BadRecord, read_jsonl
from dataset_builders.core.release import download_release

SPLIT = "test"
SOURCE_REPOS = {"sivqa": "floschne/gimmick-sivqa", "vvqa": "floschne/gimmick-vvqa", "coqa": "floschne/gimmick-coqa"}
RELEASE_COUNTS = {"civqa": 2233, "cvvqa": 1809, "coqa_c": 982, "coqa_r": 759, "ckqa": 728}  # paper Table 1
BATCH = 64  # rows turned into Python dicts at once
INFER_CHUNK = 1000  # .jsonl values typed at once
Record = dict[str, Any]


class GimmickRecordError(BadRecord):
    """A GIMMICK source record the builder cannot use; the message names the record and the field."""


class SourceError(reading.SourceError):
    """A source that cannot be read at all (wrong form, missing split, a loading script, no records)."""


@dataclass
class Source:
    """One release, read lazily: iterate it for its records (dicts), in source order."""

    name: str  # sivqa, vvqa or coqa
    origin: str  # what the report and the card show
    is_hub: bool
    base_dir: Path | None  # where relative media paths are resolved
    features: datasets.Features | None  # the source's column types, when the form records them
    columns: list[str] = field(default_factory=list)
    _open: Callable[[], Iterator[Record]] = field(default=lambda: iter(()), repr=False)
    bad_lines: list[BadRecord] = field(default_factory=list)  # .jsonl lines with no record, named <file>:<line>
    num_rows: int | None = None  # records to read, when the form says (the progress bar's total)
    lines: array[int] | None = None  # .jsonl: the line number of each record, in order (8 bytes a record)
    path: Path | None = None  # .jsonl: the file

    def __iter__(self) -> Iterator[Record]:
        return self._open()

    def where(self, index: int) -> str | None:
        """``<file>:<line>`` of the `index`-th record, when the source has lines."""
        return f"{self.path}:{self.lines[index]}" if self.lines is not None and index < len(self.lines) else None


def read_source(name: str, source: str | os.PathLike[str]) -> Source:
    """The records of one release (`name`: sivqa, vvqa or coqa) from a Hub id or a local path."""
    path = Path(source).expanduser()
    if path.is_file() and path.suffix == ".jsonl":
        return _jsonl(name, path)
    if path.is_file() and path.suffix == ".parquet":
        return _parquet(name, str(path), [path], path.parent)
    if path.is_file():
        raise SourceError(f"{name} source {path}: expected a .parquet or .jsonl file, a folder or a Hub id")
    if path.is_dir():
        if (path / "dataset_dict.json").is_file() or (path / "state.json").is_file():
            return _saved(name, path)
        files = sorted(path.rglob("*.parquet"))
        tests = [p for p in files if p.name.startswith(SPLIT) or SPLIT in p.relative_to(path).parts[:-1]]
        if tests or files:
            kept = files_inside(path, tests or files, what=f"{name} source {path}")  # a link out is refused
            return _parquet(name, str(path), kept, path)
        raise SourceError(f"{name} source {path}: no save_to_disk dataset and no parquet files in this folder")
    text = str(source)
    repo = text.partition("@")[0]
    if text.startswith((".", "/", "~")) or repo.endswith((".jsonl", ".parquet")) or repo.count("/") != 1:
        raise FileNotFoundError(f"{name} source {text!r}: no such file or folder, and not a Hub dataset id")
    return _hub(name, text)


# ---------------------------------------------------------------------------- forms


def _metadata(file: Path) -> pq.FileMetaData:
    """A parquet file's footer, or one `SourceError` line naming the file (0 bytes, cut, not parquet)."""
    try:
        return pq.read_metadata(file)
    except (pa.ArrowException, OSError) as err:
        raise reading.unreadable_parquet(file, err) from None


def _parquet(name: str, origin: str, files: list[Path], base_dir: Path) -> Source:
    footers = [_metadata(file) for file in files]  # every file checked before a row is written
    schema = footers[0].schema.to_arrow_schema()
    for other, footer in zip(files[1:], footers[1:], strict=True):
        if footer.schema.to_arrow_schema().names != schema.names:
            raise SourceError(f"{name} source {origin}: {other.name} has other columns than {files[0].name}")

    def records() -> Iterator[Record]:
        for file in files:
            yield from reading.parquet_records(file, BATCH)

    features = datasets.Features.from_arrow_schema(schema)
    num_rows = sum(footer.num_rows for footer in footers)
    return Source(name, origin, False, base_dir, features, list(schema.names), records, num_rows=num_rows)


def _saved(name: str, path: Path) -> Source:
    loaded = datasets.load_from_disk(str(path))
    if isinstance(loaded, datasets.DatasetDict):
        if SPLIT not in loaded and len(loaded) != 1:
            raise SourceError(f"{name} source {path}: no {SPLIT!r} split (has {sorted(loaded)})")
        loaded = loaded[SPLIT] if SPLIT in loaded else next(iter(loaded.values()))
    files = [_saved_file(name, path, f["filename"]) for f in loaded.cache_files]
    # load_from_disk concatenates its .arrow files in order; without an indices mapping they are the rows.
    streamable = loaded._indices is None and bool(files) and all(_is_arrow_stream(file) for file in files)

    def records() -> Iterator[Record]:
        if streamable:  # read batch by batch: a memory map would keep every page it read resident
            count = 0
            for file in files:
                for record in _arrow_records(file, loaded.column_names):
                    count += 1
                    yield record
            if count != len(loaded):
                raise SourceError(f"{name} source {path}: its .arrow files hold {count} rows, not {len(loaded)}")
        else:
            for table in loaded.with_format("arrow").iter(batch_size=BATCH):  # raw storage: media stay bytes
                yield from table.to_pylist()

    columns = list(loaded.column_names)
    return Source(name, str(path), False, path, loaded.features, columns, records, num_rows=len(loaded))


def _saved_file(name: str, folder: Path, file: str) -> Path:
    """An .arrow file a ``save_to_disk`` folder's state.json names, kept inside the folder (`resolve_inside`)."""
    try:
        return resolve_inside(
            folder, os.path.relpath(file, folder), record=f"{name} source {folder}", field="state.json _data_files"
        )
    except BadRecord as err:
        raise SourceError(str(err)) from None


def _is_arrow_stream(file: Path) -> bool:
    """Whether `file` is an Arrow IPC stream, as `save_to_disk` writes (only its schema is read)."""
    try:
        with pa.OSFile(str(file)) as f, pa.ipc.open_stream(f):
            return True
    except (pa.ArrowInvalid, OSError):
        return False


def _arrow_records(file: Path, columns: list[str]) -> Iterator[Record]:
    with pa.OSFile(str(file)) as f, pa.ipc.open_stream(f) as reader:
        while True:
            try:
                batch = reader.read_next_batch().select(columns)
            except StopIteration:
                return
            for start in range(0, batch.num_rows, BATCH):
                yield from batch.slice(start, BATCH).to_pylist()


def _jsonl(name: str, path: Path) -> Source:
    """A .jsonl read twice: once here for its columns, bad lines and line numbers, then per iteration."""
    lines, bad, columns = array("q"), [], {}
    for line in read_jsonl(path, GimmickRecordError):  # a malformed line is a bad record, for the build to skip
        if line.record is None:
            bad.append(line.error)
        else:
            lines.append(line.line_no)
            columns.update(dict.fromkeys(line.record))
    if not lines and not bad:
        raise SourceError(f"{name} source {path}: no records (the file is empty or holds only blank lines)")

    def records() -> Iterator[Record]:
        for line in read_jsonl(path, GimmickRecordError):
            if line.record is not None:
                yield line.record

    return Source(
        name, str(path), False, path.parent, None, list(columns), records,
        bad_lines=bad, num_rows=len(lines), lines=lines, path=path,
    )  # fmt: skip


def _hub(name: str, text: str) -> Source:
    repo, _, revision = text.partition("@")
    folder = download_release(repo, revision or None)
    if not any(folder.rglob("*.parquet")) and any(folder.glob("*.py")):
        raise SourceError(
            f"{name} source {text}: the repo is a loading script, which datasets>=4 no longer runs. "
            f"Make a local copy once: in an environment with datasets<4, `load_dataset({repo!r}, split='test', "
            "trust_remote_code=True).save_to_disk(DIR)`, then pass DIR (for vvqa also pass --videos-dir if the "
            "clips moved)."
        )
    source = read_source(name, folder)
    source.origin, source.is_hub = text, True
    return source


# ---------------------------------------------------------------------------- features


def is_media(feature: Any) -> bool:
    """An image, video or audio feature, or a list / dict holding one."""
    if isinstance(feature, datasets.Image | datasets.Video | datasets.Audio):
        return True
    if isinstance(feature, datasets.List | datasets.LargeList):
        return is_media(feature.feature)
    if isinstance(feature, dict):
        return any(is_media(f) for f in feature.values())
    return False


def infer_features(source: Source, columns: list[str]) -> datasets.Features:
    """The types of `columns`: as the source records them, else inferred from every value (jsonl).

    One pass, a chunk of values at a time: the chunks' types are unified as Arrow would type the
    whole column (ints and floats give floats, nulls take the other type, struct fields merge).
    """
    if source.features is not None and all(c in source.features for c in columns):
        return datasets.Features({c: source.features[c] for c in columns})
    types: dict[str, pa.DataType] = {column: pa.null() for column in columns}
    chunk: list[Record] = []
    for record in source:
        chunk.append(record)
        if len(chunk) == INFER_CHUNK:
            _unify_types(source, types, chunk)
            chunk = []
    _unify_types(source, types, chunk)
    return datasets.Features.from_arrow_schema(pa.schema(list(types.items())))


def _unify_types(source: Source, types: dict[str, pa.DataType], records: list[Record]) -> None:
    for column in types:  # one at a time, so an error can name the column
        try:
            found = pa.array([record.get(column) for record in records]).type
            types[column] = (
                pa.unify_schemas(
                    [pa.schema([(column, types[column])]), pa.schema([(column, found)])], promote_options="permissive"
                )
                .field(column)
                .type
            )
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError) as err:
            # A kept column must have one type; a jsonl whose rows disagree cannot be kept as released.
            raise SourceError(
                f"{source.name} source {source.origin}: column {column!r} mixes value types ({err})"
            ) from None


def extra_columns(
    source: Source, read: Sequence[str], outputs: Set[str], warnings: list[str]
) -> tuple[dict[str, str], datasets.Features]:
    """Source columns the builder does not `read`, kept raw: output name -> source name, and their types.

    Media columns among them (and ``stacked_images``) are dropped with a warning; a column named
    like one of the `outputs` is kept as ``source_<name>``.
    """
    candidates = [c for c in source.columns if c not in read]
    types = infer_features(source, candidates) if candidates else datasets.Features({})
    dropped = [c for c in candidates if is_media(types[c])]
    if "stacked_images" in source.columns:
        dropped.insert(0, "stacked_images")
    if dropped:
        warnings.append(
            f"{source.name}: media columns not kept (the tasks use `images` / the embedded media): {', '.join(dropped)}"
        )
    extras: dict[str, str] = {}
    for column in (c for c in candidates if c not in dropped):
        out = column if column not in outputs else f"source_{column}"
        if out in outputs or out in extras:
            raise SourceError(f"{source.name}: source column {column!r} clashes with an output field")
        if out != column:
            warnings.append(f"{source.name}: source column {column!r} clashes with an output field; kept as {out!r}")
        extras[out] = column
    return extras, datasets.Features({out: types[column] for out, column in extras.items()})


# ---------------------------------------------------------------------------- media


def image_value(value: Any, *, base_dir: Path | None, record: str, field: str) -> dict[str, Any]:
    """``{"bytes", "path"}`` of a source image (struct, path or bytes), checked to be a readable image."""
    from PIL import Image

    name: str | None = None
    if isinstance(value, Image.Image):
        buffer = io.BytesIO()
        value.save(buffer, format=value.format or "PNG")
        raw: Any = buffer.getvalue()
    elif isinstance(value, bytes | bytearray):
        raw = bytes(value)
    elif isinstance(value, dict) and not isinstance(value.get("path") or "", str):
        raise GimmickRecordError(record, f"{field}.path", f"is {value['path']!r:.80}, not a file name")
    elif isinstance(value, str) or (isinstance(value, dict) and value.get("bytes") is None and value.get("path")):
        path = value if isinstance(value, str) else value["path"]
        file = resolve_inside(base_dir, path, record=record, field=field, error=GimmickRecordError)
        if not is_file(file):
            raise GimmickRecordError(record, field, f"names the image file {path!r:.200}, which does not exist")
        raw, name = file.read_bytes(), os.path.basename(path)
    elif isinstance(value, dict) and isinstance(value.get("bytes"), bytes | bytearray):
        raw, name = bytes(value["bytes"]), os.path.basename(value["path"]) if value.get("path") else None
    elif isinstance(value, dict) and value.get("bytes") is not None:  # JSON has no bytes: e.g. a string
        raise GimmickRecordError(record, f"{field}.bytes", f"is a {type(value['bytes']).__name__}, not bytes")
    else:
        raise GimmickRecordError(record, field, "is missing" if value is None else f"is not an image: {value!r:.80}")
    _check(lambda: load_image(raw, record=record, field=field))  # decodes the pixels, as the tasks will
    return {"bytes": raw, "path": name}


def video_value(video_fn: Any, *, videos_dir: Path | None, base_dir: Path | None, record: str) -> dict[str, Any]:
    """``{"bytes", "path"}`` of the clip ``video_fn`` names: in `videos_dir` by basename, else the path itself."""
    if not isinstance(video_fn, str) or not video_fn.strip():
        raise GimmickRecordError(record, "video_fn", f"is {video_fn!r}, expected the clip's file path")
    name = os.path.basename(video_fn.replace("\\", "/"))
    if videos_dir is not None:  # the basename only: it cannot leave videos_dir
        file = videos_dir / name
    else:
        file = resolve_inside(  # absolute: the vvqa loader writes paths into its cache
            base_dir, video_fn, record=record, field="video_fn", error=GimmickRecordError, absolute_ok=True
        )
    if not is_file(file):
        raise GimmickRecordError(record, "video_fn", f"names the clip {video_fn!r:.200}, which does not exist ({file})")
    raw = file.read_bytes()
    _check(lambda: video_frames(raw, record=record, field="video_fn", max_frames=1))  # the tasks' own reader
    return {"bytes": raw, "path": name}


def _check(decode: Callable[[], Any]) -> None:
    """Run a `arab_mm_tasks.core.media` decoder; its `MediaError` becomes a `GimmickRecordError`."""
    try:
        decode()
    except MediaError as err:
        raise GimmickRecordError(err.record, err.field, err.problem) from None


def number(value: Any, *, record: str, field: str) -> float:
    """A finite float, else a `GimmickRecordError`."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise GimmickRecordError(record, field, f"is {value!r}, expected a number")
    return float(value)


# ---------------------------------------------------------------------------- fields


def text_field(record: Mapping[str, Any], field: str, rid: str) -> str:
    """A non-empty string, returned as released (not stripped)."""
    value = record.get(field)
    if field not in record:
        raise GimmickRecordError(rid, field, "is missing")
    if not isinstance(value, str) or not value.strip():
        raise GimmickRecordError(rid, field, f"is {value!r}, expected a non-empty string")
    return value


def key_field(record: Mapping[str, Any], field: str, rid: str) -> str:
    value = record.get(field)
    # The authors' ids are integers (question_id) or strings (sample_uuid); a list or an object is no id.
    if value is None or isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip():
        raise GimmickRecordError(rid, field, "is missing" if value is None else f"is {value!r:.80}, not an id")
    return str(value)


def string_list(record: Mapping[str, Any], field: str, rid: str) -> list[str]:
    value = record.get(field)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v.strip() for v in value):
        raise GimmickRecordError(rid, field, "is missing" if value is None else f"is {value!r}, not a list of names")
    return list(value)
