"""Documents that point at their media instead of holding them: byte ranges of the dataset's Arrow files.

lm-eval keeps every document of a run until it ends (each request holds its document), and
lighteval every `Doc` (whose lazy images hold what they decode from). With the compressed bytes in
the documents, a CVVQA run held every clip twice: a Python copy of its bytes, and the pages of the
memory-mapped Arrow file the row was read from, which count in the process's RSS once touched
(docs/benchmarks.md: ~2x the clip size per clip). So the datasets a harness reads get, for each
image or video value, a reference instead: the original ``path`` and ``stored_at``, where its bytes
are (``"<arrow file>#bytes=<start>-<stop>"``, `StoredBytes`), with ``bytes`` left empty. Making
them reads none of the media: the positions come from the Arrow arrays' offsets and the file from
the process's own memory map (``/proc/self/maps``), whose file is checked once per mapping by its
device and inode (or, where those differ from the file's, as on overlayfs, by comparing a few of its
bytes): making references maps no page of the media, so memory does not grow with the number of
clips. The bytes are read with one `os.pread` when a lazy image is decoded (from the page cache;
the process's mapping is never touched) and dropped after, so a pending request holds a few hundred bytes per image.

Where that is not possible, a column is left as it was (its bytes in every row): a dataset held in
memory, or a system without ``/proc/self/maps`` (not Linux).

A reference is data in a record, and a record is untrusted (a tampered build can write any
``stored_at`` string). So a reference is read only if it points into bytes this module itself made
references to: the media columns' byte spans of the Arrow files of the datasets loaded in this
process (`by_reference` registers them). Any other file, or a range outside those spans, is refused
(`ForeignBytes`) and never opened.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

REF_FIELD = "stored_at"  # the field of a referenced media value that says where its bytes are
_RANGE = re.compile(r"^(?P<path>/.+)#bytes=(?P<start>\d+)-(?P<stop>\d+)$")
_MAPS = "/proc/self/maps"
_PROBE = 64  # bytes compared between a mapping and its file, at each end of one value, where device and inode differ


@dataclass(frozen=True)
class StoredBytes:
    """Bytes ``start:stop`` of the file at `path` (absolute): one image or clip inside an Arrow file."""

    path: str
    start: int
    stop: int

    def __str__(self) -> str:
        return f"{self.path}#bytes={self.start}-{self.stop}"

    @classmethod
    def parse(cls, text: str) -> StoredBytes | None:
        """The range ``str(StoredBytes(...))`` wrote, or None for any other string."""
        match = _RANGE.match(text)
        return match and cls(match["path"], int(match["start"]), int(match["stop"]))

    def read(self) -> bytes:
        """The bytes, read with one `os.pread` from the file opened when the reference was made.

        Raises `ForeignBytes` (an `OSError`) for a range `by_reference` did not make: a file no dataset
        of this process stores media in, or bytes outside its media. Nothing else is ever opened.
        """
        fd = _checked(self)
        data = os.pread(fd, self.stop - self.start, self.start)
        if len(data) != self.stop - self.start:
            raise OSError(f"{self} holds {len(data)} bytes, not {self.stop - self.start}: the file is shorter")
        return data


class ForeignBytes(OSError):
    """A reference to bytes that no dataset loaded in this process stores as media: refused, never read."""


# Arrow files that references point into, open for reading: a file the `datasets` cache replaces or
# deletes later is still read as it was mapped.
_OPEN: dict[str, int] = {}
# Mappings found to be the file at their path (`_trusted`): each is checked once, however many values it holds.
_TRUSTED: set[_Mapping] = set()
# For each of those files, the spans (start, stop) of media bytes that references were made to: what a
# reference may read. One span per column chunk, so this stays small however many rows a dataset has.
_SPANS: dict[str, list[tuple[int, int]]] = {}
_LOCK = threading.Lock()


def _register(refs: list[StoredBytes]) -> None:
    """Allow reading the bytes `refs` cover (one chunk's values): one span per file, from its first to last byte."""
    by_file: dict[str, tuple[int, int]] = {}
    for ref in refs:
        low, high = by_file.get(ref.path, (ref.start, ref.stop))
        by_file[ref.path] = (min(low, ref.start), max(high, ref.stop))
    with _LOCK:
        for path, span in by_file.items():
            spans = _SPANS.setdefault(path, [])
            if span not in spans:
                spans.append(span)


def _checked(ref: StoredBytes) -> int:
    """The open file descriptor `ref` reads from, if `ref` lies inside media bytes `by_reference` registered."""
    with _LOCK:
        fd, spans = _OPEN.get(ref.path), _SPANS.get(ref.path, [])
    if fd is None or not spans:
        raise ForeignBytes(
            f"{ref.path!r:.300} is not an Arrow file of a dataset loaded in this process: "
            "a record may only use its own dataset's bytes"
        )
    if not any(low <= ref.start <= ref.stop <= high for low, high in spans):
        raise ForeignBytes(f"bytes {ref.start}-{ref.stop} of {ref.path} lie outside the media stored in that file")
    return fd


@dataclass(frozen=True)
class _Mapping:
    start: int
    stop: int
    offset: int  # of the mapping's first byte in the file
    path: str
    device: tuple[int, int]  # (major, minor) of the mapped file's device, as /proc/self/maps says
    inode: int


def _file_mappings() -> list[_Mapping]:
    """The process's memory-mapped files, by address (empty where ``/proc/self/maps`` does not exist)."""
    try:
        with open(_MAPS, encoding="utf-8", errors="surrogateescape") as maps:
            lines = maps.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/") and not parts[5].endswith(" (deleted)"):
            start, stop = (int(x, 16) for x in parts[0].split("-"))
            major, minor = (int(x, 16) for x in parts[3].split(":"))
            found.append(_Mapping(start, stop, int(parts[2], 16), parts[5], (major, minor), int(parts[4])))
    return sorted(found, key=lambda m: m.start)


def _binary_ranges(array: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Address, length and validity of each value of a binary array, reading only its offsets and validity."""
    width = np.int64 if pa.types.is_large_binary(array.type) else np.int32
    _, offsets_buffer, data = array.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=width)[array.offset : array.offset + len(array) + 1].astype(np.int64)
    base = data.address if data is not None else 0
    valid = np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    return base + offsets[:-1], np.diff(offsets), valid


def _references(values: pa.StructArray, maps: list[_Mapping]) -> pa.StructArray | None:
    """`values` (``struct<bytes, path>``) as ``struct<bytes (null), path, stored_at>``; None if a value is not
    in a mapped file (or the file does not read back as mapped), so the column keeps its bytes."""
    data, paths = values.flatten()
    if not (pa.types.is_binary(data.type) or pa.types.is_large_binary(data.type)):
        return None
    addresses, lengths, valid = _binary_ranges(data)
    starts = [m.start for m in maps]
    stored: list[str | None] = []
    refs: list[StoredBytes] = []
    for address, length, ok in zip(addresses.tolist(), lengths.tolist(), valid.tolist(), strict=True):
        if not ok:  # no bytes (a value given by path only, or none): nothing to point at
            stored.append(None)
            continue
        at = bisect.bisect_right(starts, address) - 1
        if at < 0 or not address + length <= maps[at].stop:
            return None
        mapping = maps[at]
        start = address - mapping.start + mapping.offset
        ref = StoredBytes(mapping.path, start, start + length)
        if not _trusted(mapping, ref, address):
            return None
        stored.append(str(ref))
        refs.append(ref)
    _register(refs)
    return pa.StructArray.from_arrays(
        [pa.nulls(len(values), data.type), paths, pa.array(stored, pa.string())],
        names=["bytes", "path", REF_FIELD],
        mask=values.is_null(),
    )


def _trusted(mapping: _Mapping, ref: StoredBytes, address: int) -> bool:
    """Whether `mapping` maps the file now at its path (opened for reading), `ref` being one value in it, at `address`.

    Checked once per mapping: by device and inode, which touches no mapped page; where they differ from the
    opened file's (overlayfs reports the underlying file's in /proc/self/maps), by comparing `ref`'s ends with
    the file's bytes. That touches the mapping, so it is done once per mapping, not once per value or chunk:
    each touch makes the kernel map the pages around it (megabytes where the page cache holds large folios).
    """
    with _LOCK:
        if mapping in _TRUSTED:
            return True
        if ref.path not in _OPEN:
            try:
                _OPEN[ref.path] = os.open(ref.path, os.O_RDONLY)
            except OSError:
                return False
        fd = _OPEN[ref.path]
    stat = os.fstat(fd)
    same_file = ((os.major(stat.st_dev), os.minor(stat.st_dev)), stat.st_ino) == (mapping.device, mapping.inode)
    if not (same_file or _reads_back(fd, ref, address)):
        return False
    with _LOCK:
        _TRUSTED.add(mapping)
    return True


def _reads_back(fd: int, ref: StoredBytes, address: int) -> bool:
    """Whether the file open at `fd` holds at `ref`'s ends the bytes mapped at `address` (a few bytes of one
    page each)."""
    import ctypes

    size = ref.stop - ref.start
    for skip in {0, max(0, size - _PROBE)}:
        count = min(_PROBE, size - skip)
        mapped = ctypes.string_at(address + skip, count)
        if os.pread(fd, count, ref.start + skip) != mapped:
            return False
    return True


def _media_column(column: pa.ChunkedArray, maps: list[_Mapping]) -> pa.ChunkedArray | None:
    """A column of media values (``struct<bytes, path>``, or a list of them) with references; None: keep it."""
    chunks = []
    for chunk in column.chunks:
        if isinstance(chunk, pa.ListArray | pa.LargeListArray):
            values = _references(chunk.flatten(), maps)
            if values is None:
                return None
            offsets = chunk.offsets
            offsets = pa.compute.subtract(offsets, offsets[0]) if len(offsets) else offsets
            kind = pa.LargeListArray if isinstance(chunk, pa.LargeListArray) else pa.ListArray
            chunks.append(kind.from_arrays(offsets, values, mask=chunk.is_null()))
        else:
            values = _references(chunk, maps)
            if values is None:
                return None
            chunks.append(values)
    return pa.chunked_array(chunks) if chunks else None


def referenced_feature(feature: Any) -> Any:
    """The `datasets` feature of a media column once it holds references (`by_reference`)."""
    import datasets

    struct = {"bytes": datasets.Value("binary"), "path": datasets.Value("string"), REF_FIELD: datasets.Value("string")}
    if isinstance(feature, datasets.List | datasets.LargeList):
        return type(feature)(struct)
    return struct


def is_media(feature: Any) -> bool:
    """An image or video column, or a list of them: what `by_reference` turns into references."""
    import datasets

    if isinstance(feature, datasets.List | datasets.LargeList):
        feature = feature.feature
    return isinstance(feature, datasets.Image | datasets.Video)


def by_reference(dataset: Any) -> tuple[Any, list[str]]:
    """`dataset` with each image or video column (or list of them) holding `StoredBytes` references.

    Returns the dataset and the columns changed. A column stays as it was where its bytes are not
    all in memory-mapped files (a dataset in memory, or no ``/proc/self/maps``), and so does a
    dataset with an indices mapping (``select``, ``shuffle``), which `datasets` would rewrite.
    """
    media = [name for name, feature in dataset.features.items() if is_media(feature)]
    maps = _file_mappings() if media and dataset._indices is None else []
    if not maps:
        return dataset, []
    order = list(dataset.column_names)
    changed = []
    for name in media:
        column = _media_column(dataset.data.table.column(name), maps)
        if column is None:
            continue
        feature = referenced_feature(dataset.features[name])
        fingerprint = hashlib.sha256(f"{dataset._fingerprint}/{name}/{REF_FIELD}".encode()).hexdigest()[:32]
        # added beside the old column, then put in its place: a dataset of this one column would have no rows left
        held = f"{name}.{REF_FIELD}"
        dataset = dataset.add_column(held, column, feature=feature, new_fingerprint=fingerprint)
        dataset = dataset.remove_columns(name).rename_column(held, name)
        changed.append(name)
    return (dataset.select_columns(order) if changed else dataset), changed
