"""Where each benchmark's dataset is read from.

Tasks read the project's Hub repositories by default. `HUB_ORG` is the one place that
names the organisation. A run can point a benchmark at a local Hub-layout folder (what
`arab-mm-tasks build` writes) or at another repository without editing code:

- lm-eval:    ``--metadata '{"arabculture_path": "/data/arabculture"}'``
- lighteval:  ``arab-mm-lighteval --dataset-path arabculture=/data/arabculture ...``
- Python:     ``DatasetSource.resolve("arabculture", path="/data/arabculture")``

No dataset source comes from an environment variable: the source is always an explicit argument.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

HUB_ORG = "arab-mm-tasks"

# benchmark name -> repository name under HUB_ORG
HUB_REPOS: dict[str, str] = {
    "arabculture": "arabculture",
    "gimmick": "gimmick",
}


@dataclass(frozen=True)
class DatasetSource:
    """A dataset location: a Hub repo id or a local Hub-layout folder, plus an optional revision."""

    path: str
    revision: str | None = None

    @property
    def is_local(self) -> bool:
        return Path(self.path).expanduser().is_dir()

    @classmethod
    def default(cls, benchmark: str) -> DatasetSource:
        if benchmark not in HUB_REPOS:
            raise KeyError(f"unknown benchmark {benchmark!r}; known: {sorted(HUB_REPOS)}")
        return cls(f"{HUB_ORG}/{HUB_REPOS[benchmark]}")

    @classmethod
    def resolve(cls, benchmark: str, path: str | None = None, revision: str | None = None) -> DatasetSource:
        """The default Hub repo of `benchmark`, unless `path` (folder or repo id) overrides it."""
        if not path:
            return cls(cls.default(benchmark).path, revision)
        if path.startswith((".", "/", "~")) and not Path(path).expanduser().is_dir():
            raise FileNotFoundError(f"{benchmark}: dataset folder {path!r} does not exist")
        expanded = str(Path(path).expanduser().resolve()) if Path(path).expanduser().is_dir() else path
        return cls(expanded, revision)

    @classmethod
    def from_metadata(cls, benchmark: str, metadata: dict) -> DatasetSource:
        """Read ``<benchmark>_path`` / ``<benchmark>_revision`` from lm-eval ``--metadata``."""
        return cls.resolve(benchmark, metadata.get(f"{benchmark}_path"), metadata.get(f"{benchmark}_revision"))


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/arab-mm-tasks`` (``~/.cache/arab-mm-tasks``): demo builds, lighteval responses."""
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "arab-mm-tasks"


def fingerprint(folder: Path, recursive: bool = False) -> str:
    """Names, sizes and modification times of a folder's files (hidden ones skipped): changes with its content."""
    files = folder.rglob("*") if recursive else folder.iterdir()
    digest = hashlib.sha256()
    for file in sorted(files):
        relative = file.relative_to(folder)
        if file.is_file() and not any(part.startswith(".") for part in relative.parts):
            stat = file.stat()
            digest.update(f"{relative.as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def local_dataset_cache_dir(folder: Path) -> Path:
    """A `datasets` cache folder for a local Hub-layout folder, keyed by its absolute path and its content.

    datasets 5.2 caches a local folder that declares its configs in README.md under the folder's
    base name and the config name only: two different folders called `arabculture`, or one folder
    rebuilt with new rows, would be served the first one's cached data.
    """
    from datasets import config

    resolved = folder.resolve()
    key = hashlib.sha256(str(resolved).encode()).hexdigest()[:16] + "-" + fingerprint(resolved, recursive=True)
    return Path(config.HF_DATASETS_CACHE) / "arab-mm-tasks" / key


def load_split(source: DatasetSource, config: str, split: str):
    """`datasets.load_dataset` on a source: the same call for the Hub and for a local folder."""
    import datasets

    cache_dir = str(local_dataset_cache_dir(Path(source.path))) if source.is_local else None
    return datasets.load_dataset(source.path, config, split=split, revision=source.revision, cache_dir=cache_dir)
