"""Harness outputs read back as one `ModelRun` per model: aggregated results and per-item samples.

Which file is what, and how a sample's score is read, is `arab_mm_tasks.report.harness_outputs` (lm-eval,
lighteval and lmms-eval). A model's several results files (one `arab-mm-tasks evaluate` entry each,
several runs, or several cluster jobs' folders given together: ``report runs/job1 runs/job2``) are
merged into one run per (harness, model). **Two files holding the same task:** the later timestamp in
the file names wins (results, item count and samples of that task, as a whole; equal timestamps: the
later path in sort order), and `ModelRun.replaced` keeps which file's task was set aside. Task names are
the package's: lighteval's ``|0`` is dropped and an alias (lm-eval's ``arabculture_mcq``) is read as its task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from arab_mm_tasks.core.registry import all_specs
from arab_mm_tasks.report import harness_outputs
from arab_mm_tasks.report.harness_outputs import (
    Harness,
    RunError,
    UnreadableFile,
    harness_of,
    read_sample_file,
    short,
    stamp,
    stamp_order,
)
from arab_mm_tasks.report.harness_outputs import task_name as canonical_task

__all__ = ["ModelRun", "RunError", "UnreadableFile", "canonical_task", "model_name", "read_runs", "read_sample_file"]


@dataclass
class ModelRun:
    """One model's results over every results file found for it (one harness)."""

    model: str  # as the harness recorded it (a Hub id, or a local model folder)
    harness: Harness
    sources: list[Path] = field(default_factory=list)  # results files, oldest first
    results: dict[str, dict[str, float]] = field(default_factory=dict)  # task -> metric -> value
    item_counts: dict[str, int] = field(default_factory=dict)  # task -> items evaluated (lm-eval's n-samples)
    sample_files: dict[str, Path] = field(default_factory=dict)  # leaf task (lighteval "t:egypt"), our names -> file
    files_of_source: dict[Path, dict[str, Path]] = field(default_factory=dict)  # results file -> leaf as named -> file
    label: str = ""  # how tables name the run: the model, with the harness when two runs share a model
    not_read: dict[Path, str] = field(default_factory=dict)  # sample files that could not be read -> why
    replaced: dict[str, Path] = field(default_factory=dict)  # task -> the earlier results file a later one overrode
    files_read: dict[Path, set[str]] = field(default_factory=dict, repr=False)  # results file -> its tasks
    _samples: dict[Path, list[dict[str, Any]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.label = self.label or self.model

    @property
    def name(self) -> str:
        """The model's public name: a local model folder is named by its last component (`model_name`)."""
        return model_name(self.model)

    def value(self, task: str, metric: str) -> float | None:
        value = self.results.get(task, {}).get(metric)
        return None if value is None else float(value)

    def samples(self, task: str) -> list[dict[str, Any]]:
        """The samples of `task` (spec name): its own file, else its per-subset files pooled; [] when none."""
        if task in self.sample_files:
            return self.file_samples(self.sample_files[task])
        spec = all_specs().get(task)
        leaves = (
            [spec.subset_task(s) for s in spec.subsets] + [f"{task}:{s.name}" for s in spec.subsets] if spec else []
        )
        files = [self.sample_files[leaf] for leaf in leaves if leaf in self.sample_files]
        return [sample for file in files for sample in self.file_samples(file)]

    def file_samples(self, file: Path) -> list[dict[str, Any]]:
        """The samples of one file, read once; a file that cannot be read gives [] and is kept in `not_read`."""
        if file not in self._samples:
            try:
                self._samples[file] = read_sample_file(file)
            except UnreadableFile as error:
                self.not_read[file] = error.reason
                self._samples[file] = []
        return self._samples[file]

    def check_samples(self) -> dict[Path, str]:
        """Read every sample file of the run; the ones that cannot be read, with why."""
        for named in self.files_of_source.values():
            for file in named.values():
                self.file_samples(file)
        return self.not_read


def model_name(model: str) -> str:
    """A model's public name: a Hub id as it is; a local folder (``/home/x/models/foo``) by its last component,
    a Hub cache snapshot (``.../models--org--name/snapshots/<sha>``) as ``org/name``, so no local path is
    published or printed as the model.

    >>> model_name("/home/x/models/foo/"), model_name("org/m"), model_name("/c/hub/models--org--m/snapshots/ab12")
    ('foo', 'org/m', 'org/m')
    """
    text = model.strip()
    if not _is_local_path(text):
        return text
    if cached := re.search(r"models--([^/\\]+?)--([^/\\]+)", text):
        return f"{cached.group(1)}/{cached.group(2)}"
    name = PurePath(text.rstrip("/\\")).name
    if not name or name in (".", ".."):
        return text.replace("/", "_").replace("\\", "_").strip("_.") or "model"
    return name


def _is_local_path(text: str) -> bool:
    """A path rather than a Hub id (``org/name`` has at most one slash and no leading one)."""
    return (
        text.startswith(("/", "~", "./", "../", "\\"))
        or bool(re.match(r"[A-Za-z]:[\\/]", text))
        or text.count("/") > 1
        or "\\" in text
        or (("/" in text or text in (".", "..")) and Path(text).is_dir())
    )


def read_runs(paths: Iterable[str | Path], not_read: dict[Path, str] | None = None) -> list[ModelRun]:
    """Every model run under `paths` (folders searched recursively, or results files), in the order found.

    A results file that cannot be read is an `UnreadableFile` error, or with `not_read` given is kept there
    (file -> why) and the other files are read; a `RunError` when no results file at all could be read."""
    runs: dict[tuple[Harness, str], ModelRun] = {}
    paths = list(paths)
    unique = {file.resolve(): file for file in reversed(list(_results_files(paths)))}  # a file named twice: once
    files = sorted(unique.values(), key=lambda f: (stamp_order(stamp(f)), str(f)))
    if not files:
        raise RunError(
            f"no lm-eval or lighteval results_*.json or lmms-eval *_results.json under {', '.join(map(str, paths))}"
        )
    for file in files:
        try:
            harness, model, data = read_results_file(file)
        except UnreadableFile as error:
            if not_read is None:
                raise
            not_read[file] = error.reason
            continue
        run = runs.setdefault((harness, model), ModelRun(model, harness))
        run.sources.append(file)
        for task, metrics in _lighteval_metrics(data) if harness == "lighteval" else lm_eval_metrics(data):
            _note_replaced(run, canonical_task(task), file)
            run.results[canonical_task(task)] = metrics
        for task, counts in (data.get("n-samples") or {}).items():
            if isinstance(counts, dict) and isinstance(counts.get("effective"), int):
                run.item_counts[canonical_task(task)] = counts["effective"]
        named = dict(_sample_files(file, harness))
        run.files_of_source[file] = named
        run.sample_files.update({canonical_task(leaf): path for leaf, path in named.items()})
    if not runs:
        first = next(iter(not_read or {}))
        raise RunError(f"no results file could be read: {first}: {(not_read or {})[first]}"
                       + (f" (and {len(not_read or {}) - 1} more)" if len(not_read or {}) > 1 else ""))  # fmt: skip
    return _distinct_labels(list(runs.values()))


def read_results_file(file: Path) -> tuple[Harness, str, dict[str, Any]]:
    """(harness, model, data) of a results file; `UnreadableFile` when it is not JSON or not either layout."""
    try:
        data = json.loads(file.read_bytes().decode("utf-8"))
    except OSError as error:
        raise UnreadableFile(file, error.strerror or str(error)) from None
    except UnicodeDecodeError as error:
        raise UnreadableFile(file, f"not UTF-8 (byte {error.start})") from None
    except ValueError as error:
        raise UnreadableFile(file, f"not a readable results file ({short(error)})") from None
    if not isinstance(data, dict):
        raise UnreadableFile(file, "not a results file (the JSON is not an object)")
    harness, model = _identify(file, data)
    results = data.get("results", {})
    if not isinstance(results, dict) or not all(isinstance(m, dict) for m in results.values()):
        raise UnreadableFile(file, "'results' is not an object of task -> metrics objects")
    return harness, model, data


def _note_replaced(run: ModelRun, task: str, file: Path) -> None:
    """Keep which earlier results file held `task` when a later one (another job's) gives it again."""
    earlier = [source for source in run.sources[:-1] if task in run.files_read.get(source, ())]
    if earlier:
        run.replaced[task] = earlier[-1]
    run.files_read.setdefault(file, set()).add(task)


def _results_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    for path in map(Path, paths):
        if not path.exists():
            raise RunError(f"{path}: no such file or folder")
        yield from harness_outputs.results_files(path) if path.is_dir() else [path]


def _identify(file: Path, data: dict[str, Any]) -> tuple[Harness, str]:
    harness = harness_of(data)
    if harness == "lighteval":
        return harness, str(data["config_general"].get("model_name") or file.parent.name)
    if harness is not None:  # lm-eval and lmms-eval: the same layout; lmms-eval names the model `model_name`
        config = data["config"]
        args = config.get("model_args")
        pretrained = args.get("pretrained") if isinstance(args, dict) else _pretrained(args)
        name = data.get("model_name") or pretrained or config.get("model") or file.parent.name
        return harness, str(name)
    raise UnreadableFile(
        file, "neither lm-eval's nor lighteval's results layout, nor lmms-eval's (no 'config' / 'config_general')"
    )


def _pretrained(model_args: Any) -> str | None:
    """``pretrained=`` of lm-eval's ``model_args`` string (the model, without its other arguments)."""
    if not isinstance(model_args, str):
        return None
    for part in model_args.split(","):
        key, sep, value = part.partition("=")
        if sep and key.strip() == "pretrained":
            return value.strip()
    return model_args or None


def lm_eval_metrics(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, float]]]:
    """(task as run, metric -> value) of an lm-eval (or lmms-eval: the same keys) results file."""
    for task, metrics in data.get("results", {}).items():
        yield task, dict(_metrics(metrics, "lm-eval"))


def _lighteval_metrics(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, float]]]:
    for task, metrics in data.get("results", {}).items():
        if task != "all":  # lighteval's mean over every task of the run, which no paper reports
            yield task, dict(_metrics(metrics, "lighteval"))


_STDERR = re.compile(r"_stderr(_clt|_clustered)?$")  # lmms-eval adds clustered standard errors


def _metrics(metrics: dict[str, Any], harness: Harness) -> Iterator[tuple[str, float]]:
    """Metric name -> value, without stderr entries and lm-eval's ``,<filter>`` suffix."""
    for key, value in metrics.items():
        name, _, _filter = key.partition(",")
        if _STDERR.search(name) or isinstance(value, (str, dict, list)) or value is None:
            continue  # lm-eval's "alias", "name", "sample_count" entries; "N/A" stderrs
        if harness == "lm-eval" and not _filter:
            continue  # "sample_len" and other bookkeeping
        yield name, float(value)


def _sample_files(results_file: Path, harness: Harness) -> Iterator[tuple[str, Path]]:
    ts = stamp(results_file)
    if harness == "lmms-eval":  # <ts>_samples_<task>.jsonl beside <ts>_results.json
        for file in results_file.parent.glob(f"{ts}_samples_*.jsonl"):
            yield file.name.removeprefix(f"{ts}_samples_").removesuffix(".jsonl"), file
        return
    if harness == "lm-eval":
        for file in results_file.parent.glob(f"samples_*_{ts}.jsonl"):
            yield file.name.removeprefix("samples_").removesuffix(f"_{ts}.jsonl"), file
        return
    # <out>/results/<model...>/results_<ts>.json -> <out>/details/<model...>/<ts>/details_*.parquet
    parts = results_file.parent.parts
    if "results" not in parts:
        return
    index = len(parts) - 1 - parts[::-1].index("results")
    details = Path(*parts[:index], "details", *parts[index + 1 :], ts)
    for file in details.glob(f"details_*_{ts}.parquet"):
        yield file.name.removeprefix("details_").removesuffix(f"_{ts}.parquet").split("|", 1)[0], file


def _distinct_labels(runs: list[ModelRun]) -> list[ModelRun]:
    """Two runs of one model (one per harness) are labelled with their harness to tell them apart."""
    names = [run.model for run in runs]
    for run in runs:
        if names.count(run.model) > 1:
            run.label = f"{run.model} ({run.harness})"
    return runs
