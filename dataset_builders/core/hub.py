"""The Hub layout, dataset cards and publishing: what every builder does after reading (see `reading`).

A builder turns an authors' release into plain `datasets.Dataset` configs; this module
owns everything after that, so every benchmark lands on the Hub the same way:

    <out_dir>/README.md                                   card (YAML front matter + markdown)
    <out_dir>/data/<config>/<split>-00000-of-00001.parquet one file per config and split

The card's ``configs:`` list (with ``data_files``) is what lets
``datasets.load_dataset(str(out_dir), "<config>", split=...)`` and the Hub viewer find each
config, offline or online, with no loading script.
"""

from __future__ import annotations

import logging
import re
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

import datasets
import pyarrow.parquet as pq
import yaml

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
