"""Reading the ArabCulture release, one country config at a time.

Three forms of the same release are accepted, so a build works online, offline and in tests:
a Hub dataset repo (``MBZUAI/ArabCulture``: 13 country configs, split ``test``; downloaded into the
Hugging Face cache by `dataset_builders.core.release`, so a second build works offline), a local
folder in that Hub layout (``<Country>/test-*.parquet``, with or without the authors' card),
and a ``.jsonl`` file of records in the HF feature structure (the bundled sample).
Parquet sources are read one row group at a time (nothing cached, nothing held);
a ``.jsonl`` file is indexed once by byte offset and each country re-read from it.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import datasets

from arab_mm_tasks.arabculture.tasks import REGION_OF_COUNTRY
from arab_mm_tasks.core.paths import is_file, resolve_inside
from dataset_builders.core.hub import DATA_DIR
from dataset_builders.core.reading import BadRecord, SourceError, parquet_records, parse_jsonl_record, read_jsonl
from dataset_builders.core.release import download_release

SOURCE_REPO = "MBZUAI/ArabCulture"
SPLIT = "test"
Record = dict[str, Any]


class _Lazy:
    """A re-iterable view of one config; records are read only while it is iterated."""

    def __init__(self, open_records: Callable[[], Iterator[Record]]) -> None:
        self._open = open_records

    def __iter__(self) -> Iterator[Record]:
        return self._open()


class SourceConfigs(dict[str, Iterable[Record]]):
    """Config name -> its records in source order; ``ignored`` lists configs that are no country.

    A .jsonl source also knows where each record is (`where`) and which lines hold no record
    (``bad_lines``: each a `BadRecord` naming ``<file>:<line>``, for the build to skip or raise).
    """

    def __init__(self, origin: str) -> None:
        super().__init__()
        self.origin = origin
        self.ignored: list[str] = []
        self.bad_lines: list[BadRecord] = []
        self.num_rows: dict[str, int] = {}  # config -> its records, when the form says (progress totals)
        self.path: Path | None = None  # .jsonl: the file
        self.lines: dict[str, array[int]] = {}  # .jsonl: config -> the line number of each record, in order

    def where(self, config: str, index: int) -> str | None:
        """``<file>:<line>`` of a config's `index`-th record, when the source has lines."""
        lines = self.lines.get(config)
        return f"{self.path}:{lines[index]}" if lines is not None and index < len(lines) else None


def read_source(source: str | os.PathLike[str] = SOURCE_REPO, *, revision: str | None = None) -> SourceConfigs:
    """The release's records per country config, read lazily.

    `source`: a ``.jsonl`` file (config = each record's ``country``, so a record with an
    unknown country gets a config of its own and fails validation), a local folder in the
    authors' Hub layout, or a Hub dataset repo id (`revision` applies to the last two).
    Folder and Hub configs that are not one of the 13 countries are listed in ``ignored``.
    """
    path = Path(source).expanduser()
    if path.is_file():
        if path.suffix != ".jsonl":
            raise SourceError(f"{path}: expected a .jsonl file of ArabCulture records, not a {path.suffix or 'file'}")
        return _read_jsonl(path)
    if path.is_dir():
        return _read_folder(path, revision)
    text = str(source)
    if text.startswith((".", "/", "~")) or text.endswith(".jsonl") or text.count("/") != 1:
        raise FileNotFoundError(f"ArabCulture source {text!r}: no such file or folder, and not a repo id")
    configs = _read_folder(download_release(text, revision), None)
    configs.origin = f"{text}@{revision}" if revision else text
    return configs


def _read_jsonl(path: Path) -> SourceConfigs:
    configs = SourceConfigs(str(path))
    configs.path = path
    offsets: dict[str, array[int]] = {}  # config -> byte offset of each record (8 bytes a record, not a dict)
    for line in read_jsonl(path):
        if line.record is None:
            configs.bad_lines.append(line.error)  # type: ignore[arg-type]  # read_jsonl sets one of the two
            continue
        country = line.record.get("country")
        config = country if isinstance(country, str) and country else "<no country>"
        offsets.setdefault(config, array("q")).append(line.offset)
        configs.lines.setdefault(config, array("q")).append(line.line_no)
    if not offsets and not configs.bad_lines:
        raise SourceError(f"{path}: no records (the file is empty or holds only blank lines)")

    def read(config: str) -> Iterator[Record]:
        with path.open("rb") as f:
            for offset, line_no in zip(offsets[config], configs.lines[config], strict=True):
                f.seek(offset)
                yield parse_jsonl_record(path, line_no, f.readline())

    for config in sorted(offsets):
        configs[config] = _Lazy(lambda config=config: read(config))
        configs.num_rows[config] = len(offsets[config])
    return configs


def _read_folder(path: Path, revision: str | None) -> SourceConfigs:
    configs = SourceConfigs(str(path))
    names = datasets.get_dataset_config_names(str(path))
    if any(name in REGION_OF_COUNTRY for name in names):  # a card lists the country configs
        return _with_configs(configs, names, lambda c: _stream(str(path), c, revision=revision))
    for prefix in ("", f"{DATA_DIR}/"):  # no card: <Country>/test-*.parquet (or under data/)
        found = [c for c in sorted(REGION_OF_COUNTRY) if (path / f"{prefix}{c}").is_dir()]
        if found:
            return _with_configs(configs, found, lambda c, p=prefix: _stream(str(path), None, data_dir=p + c))
    raise FileNotFoundError(f"{path}: no country configs (expected e.g. Egypt/test-00000-of-00001.parquet)")


def _with_configs(configs: SourceConfigs, names: Iterable[str], opener: Callable[[str], Any]) -> SourceConfigs:
    for name in sorted(names):
        if name in REGION_OF_COUNTRY:
            configs[name] = _Lazy(lambda name=name: iter(opener(name)))
        else:
            configs.ignored.append(name)
    return configs


def _stream(path: str, config: str | None, **kwargs: Any) -> Iterator[Record]:
    """A config's records: its parquet files read a row group at a time, else `datasets` streaming.

    The card (or the folder) names the files; reading them ourselves, rather than through
    ``load_dataset(streaming=True)``, holds one row group at most and does not import torch, which
    `datasets`' IterableDataset does (~2.5 s and ~150 MB for a text release).
    """
    builder = datasets.load_dataset_builder(path, config, **kwargs)
    files = [_inside_release(path, config, str(file)) for file in (builder.config.data_files or {}).get(SPLIT, [])]
    if files and all(str(file).endswith(".parquet") for file in files):
        for file in files:
            yield from parquet_records(file)
    else:  # another format, or no test split: `datasets` reads it (or says what is wrong)
        yield from datasets.load_dataset(path, config, split=SPLIT, streaming=True, **kwargs)


def _inside_release(folder: str, config: str | None, file: str) -> Path:
    """A data file the card (or `datasets`' patterns) names, kept inside the release's folder (`resolve_inside`)."""
    where = f"{folder} config {config or 'default'!r}"
    try:
        resolved = resolve_inside(folder, os.path.relpath(file, folder), record=where, field="data_files")
    except BadRecord as error:
        raise SourceError(str(error)) from None
    if not is_file(resolved):
        raise SourceError(f"{where}: field 'data_files' names {file!r:.200}, which is not a file of the folder")
    return resolved
