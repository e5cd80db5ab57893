"""The Hub layout, dataset cards and publishing: what every builder does after reading (see `reading`).

A builder reads an authors' release record by record and hands its rows to `HubFolderWriter`,
which writes them as they come (one row group per config held at most); this module owns
everything after reading, so every benchmark lands on the Hub the same way:

    <out_dir>/README.md                                   card (YAML front matter + markdown)
    <out_dir>/data/<config>/<split>-00000-of-00001.parquet a config's split: one shard, or several
                                                          (-00000-of-00003 ...) when it is large

The card's ``configs:`` list (with ``data_files``) is what lets
``datasets.load_dataset(str(out_dir), "<config>", split=...)`` and the Hub viewer find each
config, offline or online, with no loading script.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from arab_mm_tasks.core.layout import CARD_FILE as CARD_FILE  # the layout, shared with the tasks that read it
from arab_mm_tasks.core.layout import DATA_DIR as DATA_DIR
from arab_mm_tasks.core.layout import PREDICTIONS_DIR as PREDICTIONS_DIR
from arab_mm_tasks.core.layout import is_predictions_file as is_predictions_file

logger = logging.getLogger(__name__)
T = TypeVar("T")

_STAGING_DIR = ".data.staging"  # written first, swapped in for data/ only when a build succeeds
_CONFIG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
BUILD_TAG = "arab-mm-tasks"  # the tag every card we write carries: how `publish` knows a folder is a build of ours


def shard_name(split: str, index: int, count: int) -> str:
    """A shard's file name, the Hub's own naming: ``test-00001-of-00003.parquet``."""
    return f"{split}-{index:05d}-of-{count:05d}.parquet"


def shard_path(config: str, split: str, index: int = 0, count: int = 1) -> str:
    """Relative path of a config's shard (``data/<config>/<split>-00000-of-00001.parquet`` when it has one)."""
    return f"{DATA_DIR}/{config}/{shard_name(split, index, count)}"


def data_files_pattern(config: str, split: str) -> str:
    """The ``data_files`` glob the card declares for a config's split (it matches every shard)."""
    return f"{DATA_DIR}/{config}/{split}-*.parquet"


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


def _is_media(feature: Any) -> bool:
    """An image, video or audio feature, or a list / dict holding one (stored as raw file bytes)."""
    if isinstance(feature, datasets.Image | datasets.Video | datasets.Audio):
        return True
    if isinstance(feature, datasets.List | datasets.LargeList | datasets.Sequence):
        return _is_media(feature.feature)
    if isinstance(feature, dict):
        return any(_is_media(f) for f in feature.values())
    return False


def _leaves(path: str, pa_type: pa.DataType) -> list[str]:
    """Parquet's leaf column paths under a column (``images.list.element.bytes``): what options name."""
    if pa.types.is_struct(pa_type):
        return [leaf for f in pa_type for leaf in _leaves(f"{path}.{f.name}", f.type)]
    if pa.types.is_list(pa_type) or pa.types.is_large_list(pa_type):
        return _leaves(f"{path}.list.element", pa_type.value_type)
    return [path]


# Content-defined pages, as `datasets` writes Hub parquet: a rebuilt shard re-uploads only what changed.
_CDC: dict[str, Any] = (
    {"use_content_defined_chunking": {"min_chunk_size": 256 * 1024, "max_chunk_size": 1024 * 1024, "norm_level": 0}}
    if "use_content_defined_chunking" in (pq.ParquetWriter.__doc__ or "")
    else {}
)


@dataclass(frozen=True)
class ShardPolicy:
    """How a config is cut into row groups and shards, as `datasets` cuts what it pushes to the Hub.

    A row group holds ``rows_per_group`` rows (100 images or 10 clips, `datasets`' record batch
    for media; 1,000 text rows), or fewer when they pass ``group_bytes`` (`datasets`' 100 MB
    ``MAX_ROW_GROUP_SIZE``): the viewer and a random access read one row group. A shard is closed
    once it holds ``shard_bytes`` of Arrow data (`datasets`' 500 MB ``MAX_SHARD_SIZE``). Memory
    is bounded by one row group per open config, whatever the release's size.
    """

    rows_per_group: int | None = None  # None: from the features, as above
    group_bytes: int = 100 * 10**6
    shard_bytes: int = 500 * 10**6

    def group_rows(self, features: datasets.Features) -> int:
        if self.rows_per_group is not None:
            return self.rows_per_group
        media = [f for f in features.values() if _is_media(f)]
        if any(_holds(f, datasets.Video) for f in media):
            return 10
        return 100 if media else 1000


def _holds(feature: Any, kind: type) -> bool:
    if isinstance(feature, kind):
        return True
    if isinstance(feature, datasets.List | datasets.LargeList | datasets.Sequence):
        return _holds(feature.feature, kind)
    return isinstance(feature, dict) and any(_holds(f, kind) for f in feature.values())


DEFAULT_POLICY = ShardPolicy()


class _ConfigStream:
    """One config's rows on their way to its shards: at most one row group is held at a time.

    Rows come in as dicts (`add_rows`) or Arrow tables (`add_table`); dict rows are turned into
    Arrow every tenth of a row group, so the bytes held are known long before a group is full.
    Shards are written as ``<split>-00000.parquet``, ... and renamed ``-of-N`` when the config closes.
    """

    def __init__(self, folder: Path, split: str, features: datasets.Features, policy: ShardPolicy) -> None:
        self.folder, self.split, self.features, self.policy = folder, split, features, policy
        self.schema = features.arrow_schema
        self.group_rows = policy.group_rows(features)
        self._chunk_rows = max(1, self.group_rows // 10)
        self._pending: list[dict[str, Any]] = []  # rows not yet Arrow
        self._tables: list[pa.Table] = []  # Arrow rows of the row group being filled
        self._held_rows = self._held_bytes = 0
        self._writer: pq.ParquetWriter | None = None
        self._shard_bytes = 0
        self.shards: list[Path] = []
        self.num_rows = self.num_bytes = 0
        media = {c for c, f in features.items() if _is_media(f)}
        leaves = {c: _leaves(c, self.schema.field(c).type) for c in self.schema.names}
        self._options: dict[str, Any] = {  # as `datasets` writes Hub parquet: media bytes stored as they are
            "compression": {leaf: "none" if c in media else "snappy" for c, ls in leaves.items() for leaf in ls},
            "use_dictionary": [leaf for c, ls in leaves.items() if c not in media for leaf in ls],
            "column_encoding": {leaf: "PLAIN" for c in media for leaf in leaves[c]},
            "write_page_index": True,
            **_CDC,
        }

    def add_rows(self, rows: Iterable[Mapping[str, Any]]) -> None:
        for row in rows:
            self._pending.append(row)  # type: ignore[arg-type]
            if len(self._pending) >= self._chunk_rows:
                self._convert()

    def add_table(self, table: pa.Table) -> None:
        if not table.schema.remove_metadata().equals(self.schema.remove_metadata()):
            raise ValueError(f"{self.folder.name}: rows added with a different schema")
        self._convert()
        for offset in range(0, table.num_rows, self._chunk_rows):
            self._hold(table.slice(offset, self._chunk_rows))

    def _convert(self) -> None:
        if self._pending:
            table = pa.Table.from_pylist(self._pending, schema=self.schema)  # media stay raw bytes
            self._pending = []
            self._hold(table)

    def _hold(self, table: pa.Table) -> None:
        self._tables.append(table)
        self._held_rows += table.num_rows
        self._held_bytes += table.nbytes
        if self._held_rows >= self.group_rows or self._held_bytes >= self.policy.group_bytes:
            self._write_group()

    def _write_group(self) -> None:
        if not self._tables:
            return
        group = pa.concat_tables(self._tables).replace_schema_metadata(self.schema.metadata)
        self._tables, self._held_rows, self._held_bytes = [], 0, 0
        if self._writer is None:
            path = self.folder / f"{self.split}-{len(self.shards):05d}.parquet"
            self.folder.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(path, self.schema, **self._options)
            self.shards.append(path)
        self._writer.write_table(group, row_group_size=group.num_rows)  # one row group, whatever its chunks
        nbytes = group.nbytes
        self.num_rows += group.num_rows
        self.num_bytes += nbytes
        self._shard_bytes += nbytes
        del group
        if self._shard_bytes >= self.policy.shard_bytes:
            self._close_shard()

    def _close_shard(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer, self._shard_bytes = None, 0

    def close(self) -> None:
        """Write what is held, close the last shard and give every shard its ``-of-N`` name."""
        self._convert()
        self._write_group()
        self._close_shard()
        if not self.shards:  # a config with no rows still gets a (valid, empty) shard
            self._writer = pq.ParquetWriter(self.folder / f"{self.split}-00000.parquet", self.schema, **self._options)
            self.shards.append(self.folder / f"{self.split}-00000.parquet")
            self._close_shard()
        for index, path in enumerate(self.shards):
            path.rename(path.with_name(shard_name(self.split, index, len(self.shards))))
        self.shards = [p.with_name(shard_name(self.split, i, len(self.shards))) for i, p in enumerate(self.shards)]

    def flush(self) -> None:
        """Turn the rows not yet Arrow into Arrow (held, not written), so `bytes_held` counts them."""
        self._convert()

    @property
    def rows_held(self) -> int:
        return self._held_rows + len(self._pending)

    @property
    def bytes_held(self) -> int:
        return self._held_bytes

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class HubFolderWriter:
    """Writes a Hub-layout folder as rows arrive, holding at most one row group per open config.

    Shards go to a staging folder; `finish` swaps it in for ``data/`` and writes the card.
    A build that raises (use it as a context manager) leaves an existing folder untouched,
    and a successful one leaves no stale config from an earlier build behind. A large config
    is cut into several shards (`ShardPolicy`), named as the Hub names them.
    """

    def __init__(self, out_dir: str | Path, split: str = "test", policy: ShardPolicy | None = None) -> None:
        self.out_dir = Path(out_dir)
        self.split = split
        self.policy = policy or DEFAULT_POLICY
        self.num_rows: dict[str, int] = {}
        self._num_bytes: dict[str, int] = {}  # Arrow bytes, as `datasets` records split sizes (`num_bytes`)
        self.shards: dict[str, list[Path]] = {}  # config -> its shards, once closed (final paths under data/)
        self._staging = self.out_dir / _STAGING_DIR
        self._streams: dict[str, _ConfigStream] = {}
        _check_replaceable(self.out_dir / DATA_DIR)
        if self._staging.exists():
            shutil.rmtree(self._staging)  # a crashed earlier build's leftovers; the name is ours
        self._staging.mkdir(parents=True)

    def _stream(self, config: str, features: datasets.Features) -> _ConfigStream:
        stream = self._streams.get(config)
        if stream is None:
            _check_config_name(config)
            if config in self.shards:
                raise ValueError(f"config {config!r} written twice")
            stream = self._streams[config] = _ConfigStream(self._staging / config, self.split, features, self.policy)
            self.num_rows.setdefault(config, 0)
            self._num_bytes.setdefault(config, 0)
        elif features is not stream.features and not stream.schema.equals(features.arrow_schema):
            raise ValueError(f"config {config!r}: rows appended with a different schema")
        return stream

    def add_rows(self, config: str, features: datasets.Features, rows: Iterable[Mapping[str, Any]]) -> None:
        """Add rows (dicts of `features`' storage values: media as ``{"bytes", "path"}``) to a config."""
        stream = self._stream(config, features)
        stream.add_rows(rows)
        self._count(config, stream)

    def append(self, config: str, dataset: datasets.Dataset) -> None:
        """Add a `datasets.Dataset`'s rows to a config; it stays open until `close` or `finish`."""
        stream = self._stream(config, dataset.features)
        for table in dataset.with_format("arrow").iter(batch_size=stream.group_rows):
            stream.add_table(table)
        self._count(config, stream)

    def write(self, config: str, dataset: datasets.Dataset) -> None:
        """Write a whole config at once and close it."""
        if config in self._streams or config in self.shards:
            raise ValueError(f"config {config!r} written twice")
        self.append(config, dataset)
        self.close(config)

    def close(self, config: str) -> None:
        """Write a config's last rows and name its shards; rows added to it later are refused."""
        stream = self._streams.pop(config)
        stream.close()
        self._count(config, stream)
        self.shards[config] = [self.out_dir / DATA_DIR / config / p.name for p in stream.shards]

    def _count(self, config: str, stream: _ConfigStream) -> None:
        # Rows still held count as written: a build's report and card count what `finish` will write.
        self.num_rows[config] = stream.num_rows + stream.rows_held
        self._num_bytes[config] = stream.num_bytes + stream.bytes_held

    @property
    def num_bytes(self) -> dict[str, int]:
        """Arrow bytes per config of every row added so far, as a card's ``dataset_info`` records them.

        Rows still waiting to become Arrow are converted first: a card is rendered before `finish`,
        and a small config (fewer rows than a tenth of a row group) would otherwise count 0 bytes.
        """
        for config, stream in self._streams.items():
            stream.flush()
            self._count(config, stream)
        return dict(self._num_bytes)

    def finish(self, card: str) -> Path:
        """Close every config, replace ``data/`` with the new shards and write the card."""
        for config in list(self._streams):
            self.close(config)
        data_dir = self.out_dir / DATA_DIR
        _check_replaceable(data_dir)
        if data_dir.exists():
            shutil.rmtree(data_dir)
        self._staging.rename(data_dir)
        (self.out_dir / CARD_FILE).write_text(card, encoding="utf-8")
        return self.out_dir

    def abort(self) -> None:
        for stream in self._streams.values():
            stream.abort()
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
    """Write every config's `split` as ``data/<config>/<split>-0000i-of-0000N.parquet`` plus the card."""
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
    union_configs: Mapping[str, Iterable[str]] | None = None,
) -> str:
    """The README card: YAML front matter the Hub and `datasets` read, then the caller's markdown.

    ``configs`` with ``data_files`` is required for loading by config name; ``dataset_info``
    (when ``features`` is given) pins the column types, and with ``num_rows`` and ``num_bytes``
    (`HubFolderWriter` counts both) the split sizes, which `datasets` verifies on load.
    ``union_configs`` names configs written nowhere of their own: each reads the shards of the listed
    configs, in that order (ARB's ``all`` is its domains: no row is stored twice).
    """
    configs = list(configs)
    unions = {name: list(parts) for name, parts in (union_configs or {}).items()}

    def paths(config: str) -> str | list[str]:
        if config in unions:
            return [data_files_pattern(part, split) for part in unions[config]]
        return data_files_pattern(config, split)

    meta: dict[str, Any] = {
        "license": license,
        "language": [language] if isinstance(language, str) else list(language),
        "pretty_name": pretty_name,
        "task_categories": list(task_categories),
        "tags": [BUILD_TAG],
        **dict(extra_metadata or {}),
        "configs": [
            {
                "config_name": config,
                "data_files": [{"split": split, "path": paths(config)}],
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


def configs_dataset_info(
    features: Mapping[str, datasets.Features], num_rows: Mapping[str, int], num_bytes: Mapping[str, int], split: str
) -> list[dict[str, Any]]:
    """``dataset_info`` for a card whose configs have different columns: per config, its features and split size."""
    return [
        {
            "config_name": config,
            **datasets.DatasetInfo(features=features[config])._to_yaml_dict(),
            "splits": [_split_info(split, n, num_bytes[config])],
        }
        for config, n in num_rows.items()
    ]


def shown_name(source: str | os.PathLike[str]) -> str:
    """A source for a public card: a repo id as it is, a local file or folder by its name only (no local paths)."""
    return Path(source).name if Path(source).exists() else str(source)


def shown_source(source: str) -> str:
    """A build's ``name=source; ...`` for a card: each source by `shown_name`, in backticks."""
    parts = []
    for item in source.split("; "):
        name, _, where = item.partition("=")
        parts.append(f"{name}: `{shown_name(where)}`")
    return "; ".join(parts)


def markdown_table(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """A card's Markdown table: the header, its ``|---|`` line, a line per row (cells as given, already formatted;
    an empty cell is ``| |``)."""

    def line(cells: Iterable[object]) -> str:
        return "|" + "".join(f" {cell} |" if str(cell) else " |" for cell in cells)

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(row) for row in rows)])


def source_section(shown: str, builder: str, rows_skipped: int, load_example: str, *, also: str = "") -> str:
    """A gated card's ``## Source``: what it was built from and by which module, what was left out, how to load it."""
    return f"""## Source

Built from {shown} by `{builder}`.{also}
Records left out by the build: {rows_skipped}.

```python
from datasets import load_dataset
{load_example}   # after accepting the gate
```"""


def citation_section(bibtex: str) -> str:
    """The last section of every card: the paper's BibTeX."""
    return f"""## Citation

```bibtex
{bibtex}
```
"""


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


class BuildCardError(FileNotFoundError):
    """A folder whose card does not say it is a build of ours (one line; a FileNotFoundError for the CLI)."""


def card_metadata(folder: str | Path) -> dict[str, Any]:
    """The YAML front matter of a folder's card, or `BuildCardError` in one line that names the card.

    Read with ``yaml.safe_load`` (no ``!!python`` tags), and only the front matter between the
    first two ``---`` lines.
    """
    card = Path(folder).expanduser() / CARD_FILE
    try:
        text = card.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise BuildCardError(f"{card}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except OSError as err:
        raise BuildCardError(f"{card}: cannot be read ({err.strerror or err})") from None
    lines = text.lstrip("\ufeff").splitlines()
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if not lines or lines[0].strip() != "---" or end is None:
        raise BuildCardError(f"{card}: no YAML front matter (a card starts with a --- block)")
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as err:
        reason = " ".join(str(err).split())[:200]
        raise BuildCardError(f"{card}: its front matter is not valid YAML ({reason})") from None
    if not isinstance(meta, dict):
        raise BuildCardError(f"{card}: its front matter is a {type(meta).__name__}, not a mapping")
    return meta


def built_benchmark(folder: str | Path) -> str:
    """The ``pretty_name`` of the benchmark a built folder holds, read from the card we wrote (`BUILD_TAG`).

    Config names do not say it: ArabCulture and ARB both have a config ``all``.
    """
    meta = card_metadata(check_hub_folder(folder))
    tags = meta.get("tags")
    name = meta.get("pretty_name")
    if not isinstance(tags, list) or BUILD_TAG not in tags or not isinstance(name, str):
        raise BuildCardError(
            f"{Path(folder) / CARD_FILE}: not a card written by `arab-mm-tasks build` (no {BUILD_TAG!r} tag "
            "and pretty_name); build the folder with `arab-mm-tasks build` first"
        )
    return name


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


def publish_gated(
    folder: str | Path,
    repo_id: str,
    *,
    title: str,
    gated: Literal["auto", "manual"] | None = "auto",
    private: bool = False,
    **kwargs: Any,
) -> Any:
    """`publish` for a benchmark whose source is gated: a public upload must keep a gate."""
    check_hub_folder(folder)
    if gated is None and not private:
        raise ValueError(f"refusing to publish {title} publicly without a gate: pass gated= or private=True")
    return publish(folder, repo_id, private=private, gated=gated, **kwargs)


def config_infos(
    features: Callable[[str], datasets.Features], num_rows: Mapping[str, int], num_bytes: Mapping[str, int]
) -> list[dict[str, Any]]:
    """``dataset_info`` card entries for configs with different columns: features and split size per config."""
    return [
        {
            "config_name": config,
            **datasets.DatasetInfo(features=features(config))._to_yaml_dict(),
            "splits": [_split_info("test", rows, num_bytes[config])],
        }
        for config, rows in num_rows.items()
    ]
