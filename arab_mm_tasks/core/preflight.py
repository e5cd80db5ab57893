"""Preflight: before any generation (and, in `arab-mm-tasks evaluate`, before the model loads), check
that everything a run needs can be had, and say everything that cannot at once, one line each.

What is checked, for the tasks of a run, from local files and the Hub's answer alone (nothing is
downloaded, no model is loaded):

- data: each task's source (`arab_mm_tasks.core.sources`) can be had. A local build is present and
  complete (its card, every config the tasks read, and the media its image tasks need: an ARB build
  made from the CSV without ``--images-dir`` is refused here, not as a `RecordError` mid-run); a
  Hub repo, or the authors' release a first use builds from, is in the Hugging Face cache or the Hub
  lets us read it.
- metric models: every encoder a task's metrics use (BERTScore, LaBSE, ALDi: each metric's
  `encoder`, a key of `metric_plugins.models.MODELS`), as ``ARAB_MM_<KEY>_MODEL`` resolves it, is a local model
  folder or is in the Hugging Face cache (or downloadable: the Hub answers).
- judge: when a task has judged metrics and a judge is configured, its endpoint accepts a connection
  (an OpenAI-compatible one) or its model can be had (in-process transformers). With no judge
  configured the run goes on: judged scores are "not judged" and the saved samples can be judged
  later (`arab-mm-tasks judge`), so that is a note, not a problem.

`Preflight.problems` are the lines; `require` raises `PreflightError` (a `DataSourceError`, which
both harnesses already print as one block without a traceback) when there are any. A metric whose
model is missing stops the run unless the caller chose to go on without it (`skip_metrics`): it is
then computed as "not computed" (`metric_plugins.models.skip`: NaN, every sample unscored).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from arab_mm_tasks.core.registry import all_specs, get_benchmark
from arab_mm_tasks.core.sources import DatasetSource, DataSourceError, check_config, local_build_hint
from arab_mm_tasks.core.spec import TaskSpec
from metric_plugins import models

USERS_SHOWN = 3  # tasks named as a metric's users in its problem line
CONNECT_TIMEOUT = 5.0  # seconds for the judge endpoint to accept a connection


class PreflightError(DataSourceError):
    """What a run needs and cannot have: one line per problem (the message's lines)."""


@dataclass
class Preflight:
    """The outcome of a check: `problems` stop the run; `skipped` metrics (key -> reason) are not computed."""

    problems: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def message(self, who: str) -> str:
        """One line for one problem; a head line and one line per problem for several."""
        if len(self.problems) == 1:
            return f"{who}: {self.problems[0]}"
        head = f"{who}: {len(self.problems)} problem(s) found before any model work; nothing was run:"
        return "\n".join([head, *(f"  - {line}" for line in self.problems)])


def task_configs(spec: TaskSpec) -> tuple[str, ...]:
    """The dataset configs a task reads (its subsets', or its whole-benchmark config)."""
    return tuple(subset.config for subset in spec.subsets) or (spec.all_config,)


def metric_models(spec: TaskSpec) -> list[str]:
    """The encoder keys (`metric_plugins.models.MODELS`) a task's metrics load (each metric's `encoder`)."""
    return list(dict.fromkeys(m.encoder for m in spec.generative_metrics if m.encoder is not None))


def needs_judge(spec: TaskSpec) -> bool:
    """Whether a task has judged metrics (a judge prompt, or a scorer that asks the judge: DCScore)."""
    return any(
        metric.judge_prompt or (metric.batch or "").startswith("arab_mm_tasks.core.judging:")
        for metric in spec.generative_metrics
    )


# ------------------------------------------------------------------------------------ data


def _image_columns(schema: Any) -> list[str]:
    """Top-level columns a `datasets` parquet file declares as an Image."""
    meta = (schema.metadata or {}).get(b"huggingface")
    features = json.loads(meta).get("info", {}).get("features", {}) if meta else {}
    return [name for name, feature in features.items() if isinstance(feature, dict) and feature.get("_type") == "Image"]


def _config_files(folder: Path, config: str) -> list[Path]:
    """The parquet files of one config of a built folder (a config read from others' folders: theirs)."""
    files = sorted((folder / "data" / config).rglob("*.parquet"))
    if files or not (folder / "README.md").is_file():
        return files
    import yaml

    text = (folder / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text[4 : text.find("\n---", 4)]) or {} if text.startswith("---\n") else {}
    declared = [c for c in front.get("configs") or [] if isinstance(c, dict) and c.get("config_name") == config]
    patterns = [p for c in declared for f in c.get("data_files") or [] for p in _as_list(f.get("path"))]
    return sorted({file for pattern in patterns for file in folder.glob(pattern)})


def _as_list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _rows_without_image(files: list[Path]) -> tuple[str, int, int] | None:
    """(column, rows without it, rows) for the first Image column with empty rows, from parquet statistics."""
    import pyarrow.parquet as pq

    empty: dict[str, int] = {}
    total = 0
    for file in files:
        meta = pq.ParquetFile(file).metadata
        total += meta.num_rows
        columns = _image_columns(meta.schema.to_arrow_schema())
        for group in range(meta.num_row_groups):
            row_group = meta.row_group(group)
            for index in range(row_group.num_columns):
                chunk = row_group.column(index)
                name, _, leaf = chunk.path_in_schema.partition(".")
                if name in columns and leaf == "bytes" and chunk.statistics is not None:
                    empty[name] = empty.get(name, 0) + (chunk.statistics.null_count or 0)
    for name, count in empty.items():
        if count:
            return name, count, total
    return None


def folder_problems(folder: Path, benchmark: str, configs: Iterable[str], image_tasks: bool) -> list[str]:
    """Why a local built folder cannot serve `configs` (missing card or config, images it lacks)."""
    bench = get_benchmark(benchmark)
    if not (folder / "README.md").is_file():
        return [f"{bench.title}: {folder} has no README.md: not a finished build; rebuild it (`arab-mm-tasks build`)"]
    problems = []
    for config in configs:
        try:
            check_config(folder, config, benchmark)
        except DataSourceError as err:
            problems.append(f"{bench.title}: {err}")
            break  # check_config names every config the folder lacks at once
        if image_tasks:
            missing = _rows_without_image(_config_files(folder, config))
            if missing is not None:
                column, count, total = missing
                problems.append(
                    f"{bench.title}: {folder} was built without images ({count} of {total} rows of config "
                    f"{config!r} have no {column!r}), which its image tasks need: rebuild it with "
                    f"`arab-mm-tasks build {bench.name} ... --images-dir DIR` (the folder of the release's images)"
                )
                break
    return problems


def _release_problems(source: DatasetSource, configs: Iterable[str], image_tasks: bool) -> list[str]:
    """Why a first-use build of the authors' release cannot be had: not built yet, and not fetchable."""
    assert source.benchmark is not None
    bench = get_benchmark(source.benchmark)
    problems: list[str] = []
    for part_name in dict.fromkeys(_part(bench, config) for config in configs):
        if part_name.startswith("!"):
            problems.append(f"{bench.title}: {part_name[1:]}")
            continue
        folder = Path(source.path) / part_name
        if (folder / "README.md").is_file():
            held = [c for c in configs if _part(bench, c) == part_name]
            problems += folder_problems(folder, bench.name, held, image_tasks)
            continue
        part = next(p for p in bench.release.parts if p.name == part_name)
        for repo in part.repos:
            reason = models.hub_problem(repo, repo_type="dataset", revision=source.revision, files=("README.md",))
            if reason is not None:
                # what to do is the data layer's own wording (one for every offline data failure)
                problems.append(
                    f"{bench.title}: the authors' release {repo} cannot be fetched to build it on first use: "
                    f"{reason}. {local_build_hint(bench.name, part.name)}"
                )
    return problems


def _part(bench: Any, config: str) -> str:
    part = bench.release.part_of(config)
    if part is not None:
        return part.name
    return "!" + (bench.release.not_on_hub.get(config) or f"no release part provides config {config!r}")


def data_problems(benchmark: str, configs: Iterable[str], metadata: Mapping[str, Any], image_tasks: bool) -> list[str]:
    """Why `configs` of `benchmark` cannot be had for a run with lm-eval-style `metadata` (``<name>_path``)."""
    configs = list(dict.fromkeys(configs))
    try:
        source = DatasetSource.from_metadata(benchmark, dict(metadata))
    except DataSourceError as err:
        return [str(err)]
    if source.builds_release:
        return _release_problems(source, configs, image_tasks)
    folder = Path(source.path)
    if folder.is_dir():
        return folder_problems(folder, benchmark, configs, image_tasks)
    reason = models.hub_problem(source.path, repo_type="dataset", revision=source.revision, files=("README.md",))
    if reason is None:
        return []
    bench = get_benchmark(benchmark)
    return [f"{bench.title}: dataset {source.path} cannot be had: {reason}"]


# ------------------------------------------------------------------------------------ judge


def judge_problem() -> str | None:
    """Why the configured judge cannot be reached, or None (also None when no judge is configured)."""
    import os

    from arab_mm_tasks.core import judging

    config = judging.current_config()
    if config is None:
        return None
    if config.backend == "transformers":
        return models.problem("judge", config.model)
    if config.base_url is None:
        if not os.environ.get(config.api_key_env):
            return f"judge {config.model}: no base_url, so OpenAI, and its key variable {config.api_key_env} is unset"
        return None
    from metric_plugins.judge.backends.openai_chat import public_url

    parts = urlsplit(config.base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=CONNECT_TIMEOUT):
            return None
    except OSError as err:
        return (
            f"judge {config.model}: endpoint {public_url(config.base_url)} does not accept connections "
            f"({type(err).__name__}: {err}); start it, or fix ARAB_MM_JUDGE_BASE_URL / --judge base_url="
        )


# ------------------------------------------------------------------------------------ the check


def check(tasks: Iterable[str], metadata: Mapping[str, Any] | None = None, *, skip_metrics: bool = False) -> Preflight:
    """Everything the tasks (spec names) of one run need and cannot have, one line per problem."""
    specs = [all_specs()[name] for name in dict.fromkeys(tasks)]
    result = Preflight()
    by_benchmark: dict[str, list[TaskSpec]] = {}
    for spec in specs:
        by_benchmark.setdefault(spec.benchmark, []).append(spec)
    for benchmark, members in by_benchmark.items():
        for image_tasks in (False, True):
            chosen = [s for s in members if s.has_media == image_tasks]
            if chosen:
                configs = [c for s in chosen for c in task_configs(s)]
                result.problems += data_problems(benchmark, configs, metadata or {}, image_tasks)
    for key in dict.fromkeys(key for spec in specs for key in metric_models(spec)):
        reason = None if models.skipped(key) else models.problem(key)  # skipped: this process goes on without it
        if reason is None:
            continue
        users = [spec.name for spec in specs if key in metric_models(spec)]
        more = f" and {len(users) - USERS_SHOWN} more" if len(users) > USERS_SHOWN else ""
        if skip_metrics:
            result.skipped[key] = reason
        else:
            result.problems.append(f"{reason} (used by {', '.join(users[:USERS_SHOWN])}{more})")
    judged = [spec.name for spec in specs if needs_judge(spec)]
    if judged:
        from arab_mm_tasks.core import judging

        reason = judge_problem()
        if reason is not None:
            result.problems.append(reason)
        elif judging.current_config() is None:
            more = f" and {len(judged) - USERS_SHOWN} more" if len(judged) > USERS_SHOWN else ""
            result.notes.append(
                f"no judge configured: the judged metrics of {', '.join(judged[:USERS_SHOWN])}{more} will be "
                "'not judged' (give --judge or ARAB_MM_JUDGE_MODEL, or judge the saved samples later with "
                "`arab-mm-tasks judge`)"
            )
    result.problems = list(dict.fromkeys(result.problems))  # a config read by text and image tasks: once
    return result


def require(tasks: Iterable[str], metadata: Mapping[str, Any] | None = None, *, who: str) -> None:
    """`check`, raising `PreflightError` with every problem when there is any."""
    result = check(tasks, metadata)
    if result.problems:
        raise PreflightError(result.message(who))


@cache
def _config_checked(benchmark: str, config: str, metadata_json: str) -> None:
    tasks = [s.name for s in get_benchmark(benchmark).tasks if config in task_configs(s)]
    require(tasks, json.loads(metadata_json), who="arab-mm-tasks preflight")


def require_config(benchmark: str, config: str, metadata: Mapping[str, Any]) -> None:
    """`require` for the tasks of `benchmark` that read `config` (a harness's dataset loader), once per run."""
    _config_checked(benchmark, config, json.dumps(dict(metadata), sort_keys=True, default=str))


def tasks_of_names(names: Iterable[str]) -> list[str]:
    """Spec names for task, alias, family and subset names as the harnesses take them (``x:egypt``,
    ``x_egypt``, ``x|0``); names that are not ours are left out."""
    from arab_mm_tasks.core.registry import all_families

    specs = all_specs()
    found: list[str] = []
    for raw in names:
        for part in raw.split("|"):  # lighteval's "task|0" (or "suite|task|0"): whichever part is ours
            name = part.split("@")[0].split(":")[0].strip()
            family = all_families().get(name)
            if family is not None:
                found += family.tasks
                continue
            # a subset or region group is its spec's name plus a suffix: the longest spec name that fits
            fits = [s.name for s in specs.values() if name in (s.name, *s.aliases) or name.startswith(s.name + "_")]
            if fits:
                found.append(max(fits, key=len))
    return list(dict.fromkeys(found))


def require_lighteval(argv: Sequence[str], paths: Mapping[str, str], revisions: Mapping[str, str]) -> None:
    """`require` for the tasks named in an ``arab-mm-lighteval`` command line (its task list, or a file of
    tasks), with the ``--dataset-path`` / ``--dataset-revision`` it gives."""
    names: list[str] = []
    for arg in argv:
        if arg.startswith("-"):
            continue
        file = Path(arg)
        lines = file.read_text(encoding="utf-8").splitlines() if arg.endswith(".txt") and file.is_file() else [arg]
        names += [name for line in lines for name in line.split(",")]
    metadata: dict[str, Any] = {}
    for benchmark, path in paths.items():
        metadata[get_benchmark(benchmark).path_key] = path
    for benchmark, revision in revisions.items():
        metadata[get_benchmark(benchmark).revision_key] = revision
    tasks = tasks_of_names(names)
    if tasks:
        require(tasks, metadata, who="arab-mm-lighteval preflight")
