"""Where each benchmark's dataset is read from, in this order:

1. an explicit folder or repo for the run:
   - lm-eval:    ``--metadata '{"arabculture_path": "/data/arabculture", "arabculture_revision": "v1"}'``
   - lighteval:  ``arab-mm-lighteval ... --dataset-path arabculture=/data/arabculture``
   - Python:     ``DatasetSource.resolve("arabculture", path="/data/arabculture")``
2. the project's published Hub repo at its pinned revision, once `PUBLISHED` lists one;
3. otherwise the authors' release, built on first use by the benchmark's own builder into the
   user cache (``~/.cache/arab-mm-tasks/datasets/<benchmark>/<source@revision>/<part>``) and
   reused afterwards.

No source comes from an environment variable. Every failure to get data is a `DataSourceError`
whose message is one line saying what to do; lm-eval and our command lines print just that line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import glob
import hashlib
import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from arab_mm_tasks.core.benchmark import Benchmark
from arab_mm_tasks.core.paths import resolve_inside
from arab_mm_tasks.core.records import BadRecord, ReleaseUnavailable
from arab_mm_tasks.core.registry import get_benchmark
from metric_plugins.local_files import fingerprint as fingerprint  # re-exported: the one rule, below the judge
from metric_plugins.local_files import user_cache_dir as user_cache_dir

HUB_ORG = "arab-mm-tasks"

# The one table of the project's published dataset repos: benchmark -> (repo id, pinned revision).
# A benchmark listed here is read from that repo by default; any other is built from the authors'
# release on first use. Pin a commit sha, never a branch, so a run is reproducible.
PUBLISHED: dict[str, tuple[str, str]] = {}


class DataSourceError(RuntimeError):
    """A benchmark's data cannot be had; the message is one line that says what to do."""


def project_repo(benchmark: str) -> str:
    """The repo id the project publishes `benchmark` to (``arab-mm-tasks/<name>``)."""
    return PUBLISHED[benchmark][0] if benchmark in PUBLISHED else f"{HUB_ORG}/{benchmark}"


@dataclass(frozen=True)
class DatasetSource:
    """A dataset location: a Hub repo id or a local Hub-layout folder, plus an optional revision.

    ``benchmark`` is set when the source is the authors' release built on first use: `path` is
    then the user-cache folder the build goes to (`ensure_built` makes it).
    """

    path: str
    revision: str | None = None
    benchmark: str | None = None

    @property
    def is_local(self) -> bool:
        return self.benchmark is not None or Path(self.path).expanduser().is_dir()

    @property
    def builds_release(self) -> bool:
        return self.benchmark is not None

    @classmethod
    def default(cls, benchmark: str, revision: str | None = None) -> DatasetSource:
        """The published repo at its pinned revision, else the first-use build of the authors' release."""
        bench = get_benchmark(benchmark)
        if bench.name in PUBLISHED:
            repo, pinned = PUBLISHED[bench.name]
            return cls(repo, revision or pinned)
        return cls(str(release_cache_dir(bench, revision)), revision, bench.name)

    @classmethod
    def resolve(cls, benchmark: str, path: str | None = None, revision: str | None = None) -> DatasetSource:
        """`path` (a folder or a repo id) when given, else the benchmark's default source."""
        if not path:
            return cls.default(benchmark, revision)
        get_benchmark(benchmark)  # an unknown benchmark fails here, with the known names
        folder = Path(path).expanduser()
        if path.startswith((".", "/", "~")) and not folder.is_dir():
            what = "is a file, not a dataset folder" if folder.exists() else "does not exist"
            raise DataSourceError(f"{benchmark}: dataset folder {path!r} {what}")
        return cls(str(folder.resolve()) if folder.is_dir() else path, revision)

    @classmethod
    def from_metadata(cls, benchmark: str, metadata: dict) -> DatasetSource:
        """Read ``<benchmark>_path`` / ``<benchmark>_revision`` from lm-eval ``--metadata``."""
        bench = get_benchmark(benchmark)
        return cls.resolve(benchmark, metadata.get(bench.path_key), metadata.get(bench.revision_key))

    @property
    def label(self) -> str:
        """What the source is, for results and messages: a repo id, a folder, or the release it is built from."""
        if self.benchmark is None:
            return self.path
        release = "+".join(get_benchmark(self.benchmark).release.repos)
        return f"{release}@{self.revision}" if self.revision else release


# ------------------------------------------------------------------------------------ user cache


def _package_version() -> str:
    try:
        return version("arab-mm-tasks")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "source"


def release_cache_dir(benchmark: Benchmark, revision: str | None = None) -> Path:
    """Where the first-use build of a benchmark's release goes, keyed by source, revision and package version.

    The package version is in the key because a new version may write another schema.
    """
    source = "+".join(benchmark.release.repos) + "@" + (revision or "main")
    slug = re.sub(r"[^A-Za-z0-9_.@+-]+", "--", source)
    return user_cache_dir() / "datasets" / benchmark.name / f"{slug}-v{_package_version()}"


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """One process at a time builds a release (a second one waits, then finds it built)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_built(source: DatasetSource, config: str) -> Path:
    """The local folder holding `config` of a first-use source, building that part of the release if needed.

    The build goes to a temporary folder that is renamed into place only once complete, so an
    interrupted build is never mistaken for a finished one.
    """
    assert source.benchmark is not None
    bench = get_benchmark(source.benchmark)
    part = bench.release.part_of(config)
    if part is None:
        howto = bench.release.not_on_hub.get(config)
        raise DataSourceError(howto or f"{bench.title}: no release part provides config {config!r}")
    folder = Path(source.path) / part.name
    if (folder / "README.md").is_file():
        return folder
    with _exclusive(folder.parent / f".{part.name}.lock"):
        if (folder / "README.md").is_file():  # another process built it while we waited
            return folder
        partial = folder.parent / f".{part.name}.partial-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        repos = ", ".join(part.repos) + (f" at revision {source.revision}" if source.revision else "")
        print(
            f"arab-mm-tasks: building {bench.title} ({part.name}) from the authors' release {repos} "
            f"on first use, into {folder}",
            file=sys.stderr,
            flush=True,
        )
        try:
            report = bench.builder_module().build_release(part.name, partial, source.revision)
        except ReleaseUnavailable as err:
            raise DataSourceError(f"{bench.title}: {err}. {local_build_hint(bench.name, part.name)}") from None
        except Exception as err:  # a bad record or an unreadable release: the build's own one-line reason
            first_line = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise DataSourceError(
                f"{bench.title}: building {repos} failed: {first_line}. "
                f"{local_build_hint(bench.name, part.name, bad_records=True)}"
            ) from err
        finally:
            if not (partial / "README.md").is_file():
                shutil.rmtree(partial, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)  # what an older, interrupted layout may have left
        os.replace(partial, folder)
        print(
            f"arab-mm-tasks: built {bench.title} ({part.name}): {report.rows_written} rows written, "
            f"{report.rows_skipped} skipped",
            file=sys.stderr,
            flush=True,
        )
    return folder


def release_source_at(path: str, revision: str | None = None) -> DatasetSource | None:
    """The first-use source whose build folder is `path` (what a lighteval task config holds), if any."""
    from arab_mm_tasks.core.registry import all_benchmarks

    for bench in all_benchmarks().values():
        if Path(path) == release_cache_dir(bench, revision):
            return DatasetSource(path, revision, bench.name)
    return None


def local_build_hint(benchmark: str, part: str | None = None, *, bad_records: bool = False) -> str:
    """What works when the Hub cannot serve a benchmark's release: one sentence (or two), for messages.

    Building from the Hub (`arab-mm-tasks build <b> --out DIR`) needs the Hub too, so the route named
    is a build from a local copy of the release, with the builder's own option for the `part` (all
    parts when None), then a run pointed at the build in each harness's form. `bad_records`: the
    release was had but a record stopped the build, so the fix is a build that skips bad records.
    """
    bench = get_benchmark(benchmark)
    run_on = _run_on(bench)
    if bad_records:
        return (
            f"To build it skipping bad records (each one counted in the build's report): "
            f"`arab-mm-tasks build {bench.name} --on-bad-records skip --out DIR`, {run_on}"
        )
    return f"Without the Hub, {_build_from_copy(bench, part)}, {run_on}"


def _build_from_copy(bench: Benchmark, part: str | None) -> str:
    """ "build from a local copy of the release (...): `arab-mm-tasks build <b> <option> COPY --out DIR`"."""
    parts = [p for p in bench.release.parts if part is None or p.name == part]
    flags = _source_options(bench)
    numbered = len(parts) > 1
    sources = " ".join(f"{flags.get(p.name, '--source')} COPY{i + 1 if numbered else ''}" for i, p in enumerate(parts))
    repos = [repo for p in parts for repo in p.repos]
    download = " and ".join(
        f"`hf download {repo} --repo-type dataset --local-dir COPY{i + 1 if numbered else ''}`"
        for i, repo in enumerate(repos)
    )
    return (
        f"build from a local copy of the release ({', '.join(repos)}, fetched where the Hub is reachable, "
        f"e.g. with {download}): `arab-mm-tasks build {bench.name} {sources} --out DIR`"
    )


def _run_on(bench: Benchmark) -> str:
    """How each entry point is pointed at a local build in DIR (ends the hints, so nothing follows a quote)."""
    return (
        f'then point the run at DIR: lm_eval --metadata \'{{"{bench.path_key}": "DIR"}}\', '
        f"arab-mm-lighteval --dataset-path {bench.name}=DIR, or arab-mm-tasks evaluate --dataset-path {bench.name}=DIR."
    )


def _local_hint(bench: Benchmark) -> str:
    """`local_build_hint` for every part of `bench` (kept for callers that have the benchmark only)."""
    return local_build_hint(bench.name)


def _source_options(bench: Benchmark) -> dict[str, str]:
    """Release part -> the builder's command-line option that takes a local copy of it.

    Read from the builder's own parser: the option whose help names the part's Hub repo (ArabCulture
    and JEEM ``--source``, GIMMICK ``--sivqa`` / ``--coqa``, Pearl ``--pearl`` / ``--pearl-lite`` /
    ``--pearl-x``, ARB ``--hub``), so a builder's options are written once, in the builder.
    """
    import argparse

    parser = argparse.ArgumentParser(add_help=False)
    bench.builder_module().add_arguments(parser)
    found: dict[str, str] = {}
    for part in bench.release.parts:
        for action in parser._actions:
            named = any(re.search(rf"(?<![\w/-]){re.escape(repo)}(?![\w-])", action.help or "") for repo in part.repos)
            if action.option_strings and named:
                found[part.name] = max(action.option_strings, key=len)
                break
    return found


# ------------------------------------------------------------------------------------ loading


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


_CARD_HEADER = re.compile(r"\A\s*---[\r\n]+([\S\s]*?)[\r\n]+---(?:\r\n|\n|$)")  # as huggingface_hub reads it
_REMOTE = re.compile(r"://|::")  # fsspec URLs (hf://, https://, zip://...::) name data outside the folder


def card_header(folder: Path) -> dict[str, Any]:
    """The YAML header of a local folder's README.md card ({} without one), parsed with `yaml.safe_load` only.

    A card that is not UTF-8, whose header does not parse or holds a Python tag (``!!python/object``,
    never constructed, let alone run), or is not a mapping is a `DataSourceError` naming the card.
    """
    import yaml

    card = folder / "README.md"
    if not card.is_file():
        return {}
    raw = card.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataSourceError(
            f"{card}: not UTF-8 text (byte {raw[err.start]:#04x} at offset {err.start}): a dataset card is UTF-8"
        ) from None
    if not text.lstrip().startswith("---"):
        return {}  # a card without a YAML header: `datasets` reads the folder's layout
    match = _CARD_HEADER.match(text)
    if match is None:
        raise DataSourceError(f"{card}: its YAML header has no closing '---' line")
    try:
        front = yaml.safe_load(match[1])
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 2}: " if mark is not None else ""
        problem = " ".join(str(getattr(err, "problem", None) or err).split())[:200]
        raise DataSourceError(
            f"{card}: its YAML header does not parse ({where}{problem}); plain YAML only, "
            "tags such as !!python/object are refused"
        ) from None
    if front is None:
        return {}
    if not isinstance(front, dict):
        raise DataSourceError(f"{card}: its YAML header is a {type(front).__name__}, not a mapping of card fields")
    return front


def _declared_files(front: dict[str, Any], folder: Path, config: str) -> list[str] | None:
    """The data file patterns (and data_dir) the card declares for `config`; None where it declares none."""
    configs = front.get("configs")
    if configs is None:
        return None
    card = folder / "README.md"
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise DataSourceError(f"{card}: 'configs' is not a list of mappings (config_name, data_files)")
    declared = [c for c in configs if c.get("config_name", "default") == config]
    if not declared:
        return None
    patterns: list[Any] = []
    data_files = declared[0].get("data_files")
    entries = list(data_files.values()) if isinstance(data_files, dict) else _as_list(data_files)
    for entry in entries:
        patterns += _as_list(entry.get("path")) if isinstance(entry, dict) else _as_list(entry)
    if declared[0].get("data_dir") is not None:
        patterns.append(declared[0]["data_dir"])
    bad = next((p for p in patterns if not isinstance(p, str) or not p.strip()), "")
    if bad != "":
        raise DataSourceError(f"{card}: config {config!r} has the data file {bad!r:.80}, not a path pattern")
    return patterns


def _inside_folder(folder: Path, name: str, config: str) -> Path:
    """`name` (a card's data file pattern, or a file found by one) resolved inside `folder`, else one line.

    The rule every release path follows (`arab_mm_tasks.core.paths.resolve_inside`: no absolute
    path, no ``..`` out, no link out), plus no URL: a local build's data stays inside its folder.
    """
    card = folder / "README.md"
    if _REMOTE.search(name):
        raise DataSourceError(
            f"{card}: config {config!r} names the data files {name!r:.200}, a URL: a local build's data stays "
            f"inside its folder {folder}"
        )
    try:
        return resolve_inside(folder, name, record=str(card), field="data_files")
    except BadRecord as err:
        raise DataSourceError(
            f"{card}: config {config!r} data file {err.problem}: a local build's data stays inside its folder {folder}"
        ) from None


def config_files(folder: Path, config: str) -> list[Path]:
    """The files `datasets` reads for `config` of a local folder, each checked to lie inside it.

    Those the card's ``data_files`` (and ``data_dir``) for the config match, else those under
    ``data/<config>/`` (our builders' layout). Raises `DataSourceError` for a pattern or a file
    (a link) that leads out of the folder, or a card that cannot be read (`card_header`).
    """
    patterns = _declared_files(card_header(folder), folder, config)
    if patterns is None:
        patterns = [f"data/{config}"] if (folder / "data" / config).is_dir() else []
    files: set[Path] = set()
    for pattern in patterns:
        _inside_folder(folder, pattern, config)
        # `glob` (not `Path.glob`) takes a pattern with `..` in it, as `datasets` does
        for match in glob.glob(pattern, root_dir=folder, recursive=True):
            found = (folder / match).rglob("*") if (folder / match).is_dir() else [folder / match]
            for file in found:
                if file.is_file() or file.is_symlink():
                    resolved = _inside_folder(folder, os.path.relpath(file, folder), config)
                    if not any(part.startswith(".") for part in resolved.relative_to(folder.resolve()).parts):
                        files.add(resolved)
    return sorted(files)


def _check_parquet(file: Path) -> None:
    """A `DataSourceError` naming `file` if it is empty or not a whole parquet file (its footer is read, no rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if file.stat().st_size == 0:
        raise DataSourceError(f"{file}: an empty file (0 bytes), not parquet data: the build was cut; rebuild it")
    try:
        pq.read_metadata(file)
    except (pa.ArrowException, OSError) as err:
        reason = " ".join(str(err).split())[:200] or type(err).__name__
        raise DataSourceError(
            f"{file}: not a readable parquet file ({reason}): truncated or corrupt; rebuild it"
        ) from None


def _read_from_others(folder: Path, config: str) -> bool:
    """Whether the folder's card declares `config` as read from other configs' folders, all present
    (a config written nowhere of its own: ARB's ``all`` is its domains' shards)."""
    paths = _declared_files(card_header(folder), folder, config) or []
    return bool(paths) and all((folder / path).parent.is_dir() for path in paths)


def _as_list(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else list(value) if isinstance(value, list | tuple) else []


def check_config(folder: Path, config: str, benchmark: str | None = None) -> None:
    """Refuse, in one line, a local folder `datasets` could not load `config` from, or should not.

    Cheap (the card and the parquet footers are read, no rows), so the harnesses and the preflight
    call it before `datasets` loads anything. Refused: a card that is not UTF-8, does not parse or
    holds a Python tag (`card_header`); data files named outside the folder (`config_files`); a
    config it lacks (naming what it holds and what it lacks; `datasets` would fail deep inside a
    group run with ``BuilderConfig 'UAE' not found``); a config with no data files; a parquet file
    that is empty or truncated.
    """
    _check_present(folder, config, benchmark)
    files = config_files(folder, config)
    declared = _declared_files(card_header(folder), folder, config)
    if not files and (declared is not None or (folder / "data" / config).is_dir()):
        where = "none matches its card's data_files" if declared else f"{folder / 'data' / config} holds none"
        raise DataSourceError(
            f"{folder}: config {config!r} has no data files ({where}): an empty config folder; rebuild it"
        )
    for file in files:
        if file.suffix == ".parquet":
            _check_parquet(file)


def _check_present(folder: Path, config: str, benchmark: str | None) -> None:
    """Refuse a built folder that lacks `config`, naming what it holds and what it lacks."""
    data = folder / "data"
    if not data.is_dir() or (data / config).is_dir() or _read_from_others(folder, config):
        return  # not our builders' layout (datasets decides), or the config is there (or read from others')
    held = sorted(p.name for p in data.iterdir() if p.is_dir())
    lacks = f"config {config!r}"
    if benchmark is not None:
        absent = [c for c in get_benchmark(benchmark).configs if c not in held]
        lacks = f"configs {', '.join(absent)}" if len(absent) > 1 else lacks
    raise DataSourceError(
        f"{folder} lacks {lacks} (it holds {', '.join(held) or 'none'}): rebuild it from the whole release, "
        "or run only the tasks of the configs it holds"
    )


def load_split(source: DatasetSource, config: str, split: str, benchmark: str | None = None):
    """`datasets.load_dataset` on a source: the same call for the Hub, a local folder and a first-use build."""
    import datasets

    path = str(ensure_built(source, config)) if source.builds_release else source.path
    revision = None if source.builds_release else source.revision
    folder = Path(path)
    cache_dir = None
    if folder.is_dir():
        check_config(folder, config, benchmark or source.benchmark)
        cache_dir = str(local_dataset_cache_dir(folder))
    try:
        return datasets.load_dataset(path, config, split=split, revision=revision, cache_dir=cache_dir)
    except Exception as err:
        if cache_dir is not None:  # a local folder `check_config` passed that `datasets` still cannot read
            raise DataSourceError(f"{folder}: `datasets` cannot load config {config!r}: {_first_line(err)}") from err
        if isinstance(err, ConnectionError | OSError):  # datasets' and huggingface_hub's Hub errors are both
            raise _hub_error(source, err, benchmark or source.benchmark, config) from err
        raise


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else type(err).__name__


def _hub_error(
    source: DatasetSource, err: Exception, benchmark: str | None, config: str | None = None
) -> DataSourceError:
    """One line for a published or named repo that cannot be read, saying what works instead."""
    from huggingface_hub.errors import GatedRepoError

    text = str(err)
    if isinstance(err, GatedRepoError) or "gated" in text.lower():
        return DataSourceError(
            f"{source.path} is gated: accept its conditions at https://huggingface.co/datasets/{source.path}, "
            "then log in (`hf auth login` or HF_TOKEN)"
        )
    if "Couldn't reach" in text or "offline" in text.lower() or isinstance(err, ConnectionError):
        message = f"cannot reach {source.path} on the Hub (offline, or HF_HUB_OFFLINE=1)."
        if benchmark:
            bench = get_benchmark(benchmark)
            part = bench.release.part_of(config) if config else None
            message += (
                f" Without the Hub, fetch it as DIR where the Hub is reachable (`hf download {source.path} "
                f"--repo-type dataset --local-dir DIR`) or {_build_from_copy(bench, part.name if part else None)}, "
                f"{_run_on(bench)}"
            )
        return DataSourceError(message)
    return DataSourceError(f"cannot load {source.path}: {text.splitlines()[0] if text else type(err).__name__}")


def _undecoded(feature: Any) -> Any:
    """`feature` with every image and video in it set to ``decode=False``."""
    import datasets

    if isinstance(feature, datasets.Image | datasets.Video):
        return dataclasses.replace(feature, decode=False)
    if isinstance(feature, datasets.List | datasets.LargeList):
        return dataclasses.replace(feature, feature=_undecoded(feature.feature))
    if isinstance(feature, dict):
        return {key: _undecoded(value) for key, value in feature.items()}
    if isinstance(feature, list | tuple):
        return type(feature)(_undecoded(value) for value in feature)
    return feature


def without_media(dataset: Any) -> Any:
    """The dataset without its image and video columns (its ids and text, for lookups that need no pixels)."""
    media = [name for name, feature in dataset.features.items() if _undecoded(feature) != feature]
    return dataset.remove_columns(media)


def without_media_decoding(dataset: Any) -> Any:
    """The dataset as a harness reads it: images and videos as references to their bytes, never decoded.

    lm-eval keeps every document of a run (in its requests) until the run ends, and lighteval the
    lazy images of every `Doc`. So each image or video value becomes a reference to where its bytes
    are in the memory-mapped Arrow file (`arab_mm_tasks.core.media_refs`: ``{"bytes": None, "path":
    <as stored>, "stored_at": "<file>#bytes=<start>-<stop>"}``), read only when a lazy image decodes.
    A column that cannot be referenced (a dataset in memory, a system without ``/proc/self/maps``) is
    left as undecoded ``{"bytes", "path"}`` dicts, which the media layer reads as well: a top-level
    column is recast in place (no data is copied); a list of images needs one arrow pass
    (`Dataset.cast`, cached next to the dataset, no image decoded).
    """
    import datasets

    from arab_mm_tasks.core.media_refs import by_reference

    dataset, referenced = by_reference(dataset)
    features = datasets.Features(
        {name: feature if name in referenced else _undecoded(feature) for name, feature in dataset.features.items()}
    )
    changed = [name for name in features if features[name] != dataset.features[name]]
    nested = [name for name in changed if not hasattr(features[name], "decode_example")]
    if nested:
        return dataset.cast(features)
    for name in changed:
        dataset = dataset.cast_column(name, features[name])
    return dataset
