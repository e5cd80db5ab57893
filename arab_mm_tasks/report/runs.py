"""Harness outputs read back as one `ModelRun` per model: aggregated results and per-item samples.

lm-eval writes ``<output_path>/<model>/results_<ts>.json`` and, with ``--log_samples``, one
``samples_<task>_<ts>.jsonl`` per leaf task beside it. lighteval writes
``<output_dir>/results/<model>/results_<ts>.json`` and, with ``--save-details``,
``<output_dir>/details/<model>/<ts>/details_<task>|<shots>_<ts>.parquet``. A model's several results
files (one `arab-mm-tasks evaluate` entry each, or several runs) are merged, a later file winning for a
task both hold. Task names are the package's: lighteval's ``|0`` is dropped and an alias (lm-eval's
``arabculture_mcq``) is read as its task.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, Literal

from pyarrow import ArrowException

from arab_mm_tasks.core.registry import all_specs, get_spec
from metric_plugins.breakdowns import read_samples

Harness = Literal["lm-eval", "lighteval"]
_TIMESTAMP = re.compile(r"results_(?P<ts>.+)\.json$")


class RunError(ValueError):
    """A run folder or file that cannot be read as lm-eval or lighteval output; the message names it."""


class UnreadableFile(RunError):
    """One run file (results JSON, samples JSONL, details parquet) that cannot be read: ``FILE: reason``."""

    def __init__(self, file: Path, reason: str) -> None:
        super().__init__(f"{file}: {reason}")
        self.file, self.reason = file, reason


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


def read_sample_file(file: Path) -> list[dict[str, Any]]:
    """The samples of an lm-eval ``samples_*.jsonl`` or lighteval ``details_*.parquet`` file, each an object;
    `UnreadableFile` (one line naming the file and line) for a file cut mid-line, not UTF-8 or not the layout."""
    if file.suffix == ".parquet":
        try:
            samples = [sample for _, sample in read_samples([file])]
        except (ArrowException, OSError, ValueError, TypeError, KeyError, AttributeError) as error:
            raise UnreadableFile(file, f"not a readable lighteval details file ({_short(error)})") from None
    else:
        samples = _jsonl_samples(file)
    for number, sample in enumerate(samples, 1):
        if not isinstance(sample.get("doc", {}), dict):
            raise UnreadableFile(file, f"sample {number}: 'doc' is not an object")
    return samples


def _jsonl_samples(file: Path) -> list[dict[str, Any]]:
    try:
        text = file.read_bytes().decode("utf-8")
    except OSError as error:
        raise UnreadableFile(file, error.strerror or str(error)) from None
    except UnicodeDecodeError as error:
        raise UnreadableFile(file, f"not UTF-8 (byte {error.start})") from None
    lines = text.split("\n")
    samples = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            sample = json.loads(line)
        except ValueError as error:
            cut = " (the file ends mid-line: cut while it was written?)" if number == len(lines) else ""
            raise UnreadableFile(file, f"line {number} is not JSON: {_short(error)}{cut}") from None
        if not isinstance(sample, dict):
            raise UnreadableFile(file, f"line {number} is not a JSON object")
        samples.append(sample)
    return samples


def _short(error: BaseException) -> str:
    """An exception as at most 200 characters of one line."""
    text = " ".join(str(error).splitlines()) or type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def canonical_task(name: str) -> str:
    """Our spec name for a task as a harness reported it (``arabculture_mcq|0`` -> ``arabculture_mcq_en_none``)."""
    name = name.split("|", 1)[0]
    base, colon, subset = name.partition(":")
    with contextlib.suppress(KeyError):  # a family, a per-subset task or another package's task: kept as reported
        base = get_spec(base).name
    return f"{base}{colon}{subset}"


def read_runs(paths: Iterable[str | Path], not_read: dict[Path, str] | None = None) -> list[ModelRun]:
    """Every model run under `paths` (folders searched recursively, or results files), in the order found.

    A results file that cannot be read is an `UnreadableFile` error, or with `not_read` given is kept there
    (file -> why) and the other files are read; a `RunError` when no results file at all could be read."""
    runs: dict[tuple[Harness, str], ModelRun] = {}
    paths = list(paths)
    files = sorted(_results_files(paths), key=lambda f: (_timestamp(f), str(f)))
    if not files:
        raise RunError(f"no lm-eval or lighteval results_*.json under {', '.join(map(str, paths))}")
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
        for task, metrics in lm_eval_metrics(data) if harness == "lm-eval" else _lighteval_metrics(data):
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
        raise UnreadableFile(file, f"not a readable results file ({_short(error)})") from None
    if not isinstance(data, dict):
        raise UnreadableFile(file, "not a results file (the JSON is not an object)")
    harness, model = _identify(file, data)
    results = data.get("results", {})
    if not isinstance(results, dict) or not all(isinstance(m, dict) for m in results.values()):
        raise UnreadableFile(file, "'results' is not an object of task -> metrics objects")
    return harness, model, data


def _results_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    for path in map(Path, paths):
        if not path.exists():
            raise RunError(f"{path}: no such file or folder")
        yield from sorted(path.rglob("results_*.json")) if path.is_dir() else [path]


def _timestamp(file: Path) -> str:
    match = _TIMESTAMP.search(file.name)
    return match.group("ts") if match else ""


def _identify(file: Path, data: dict[str, Any]) -> tuple[Harness, str]:
    if isinstance(general := data.get("config_general"), dict):
        return "lighteval", str(general.get("model_name") or file.parent.name)
    if "results" in data and isinstance(config := data.get("config"), dict):
        args = config.get("model_args")
        pretrained = args.get("pretrained") if isinstance(args, dict) else _pretrained(args)
        name = data.get("model_name") or pretrained or config.get("model") or file.parent.name
        return "lm-eval", str(name)
    raise UnreadableFile(file, "neither lm-eval's nor lighteval's results layout (no 'config' / 'config_general')")


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
    """(task as run, metric -> value) of an lm-eval results file."""
    for task, metrics in data.get("results", {}).items():
        yield task, dict(_metrics(metrics, "lm-eval"))


def _lighteval_metrics(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, float]]]:
    for task, metrics in data.get("results", {}).items():
        if task != "all":  # lighteval's mean over every task of the run, which no paper reports
            yield task, dict(_metrics(metrics, "lighteval"))


def _metrics(metrics: dict[str, Any], harness: Harness) -> Iterator[tuple[str, float]]:
    """Metric name -> value, without stderr entries and lm-eval's ``,<filter>`` suffix."""
    for key, value in metrics.items():
        name, _, _filter = key.partition(",")
        if name.endswith("_stderr") or isinstance(value, (str, dict, list)) or value is None:
            continue  # lm-eval's "alias", "name", "sample_count" entries; "N/A" stderrs
        if harness == "lm-eval" and not _filter:
            continue  # "sample_len" and other bookkeeping
        yield name, float(value)


def _sample_files(results_file: Path, harness: Harness) -> Iterator[tuple[str, Path]]:
    ts = _timestamp(results_file)
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
