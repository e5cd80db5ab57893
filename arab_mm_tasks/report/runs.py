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
from pathlib import Path
from typing import Any, Literal

from arab_mm_tasks.core.registry import all_specs, get_spec
from metric_plugins.breakdowns import read_samples

Harness = Literal["lm-eval", "lighteval"]
_TIMESTAMP = re.compile(r"results_(?P<ts>.+)\.json$")


class RunError(ValueError):
    """A run folder or file that cannot be read as lm-eval or lighteval output; the message names it."""


@dataclass
class ModelRun:
    """One model's results over every results file found for it (one harness)."""

    model: str  # as the harness recorded it
    harness: Harness
    sources: list[Path] = field(default_factory=list)  # results files, oldest first
    results: dict[str, dict[str, float]] = field(default_factory=dict)  # task -> metric -> value
    sample_files: dict[str, Path] = field(default_factory=dict)  # leaf task (lighteval "t:egypt"), our names -> file
    files_of_source: dict[Path, dict[str, Path]] = field(default_factory=dict)  # results file -> leaf as named -> file
    label: str = ""  # how tables name the run: the model, with the harness when two runs share a model
    _samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.label = self.label or self.model

    def value(self, task: str, metric: str) -> float | None:
        value = self.results.get(task, {}).get(metric)
        return None if value is None else float(value)

    def samples(self, task: str) -> list[dict[str, Any]]:
        """The samples of `task` (spec name): its own file, else its per-subset files pooled; [] when none."""
        if task in self.sample_files:
            return self._read(task)
        spec = all_specs().get(task)
        leaves = (
            [spec.subset_task(s) for s in spec.subsets] + [f"{task}:{s.name}" for s in spec.subsets] if spec else []
        )
        return [sample for leaf in leaves if leaf in self.sample_files for sample in self._read(leaf)]

    def _read(self, leaf: str) -> list[dict[str, Any]]:
        if leaf not in self._samples:
            self._samples[leaf] = [sample for _, sample in read_samples([self.sample_files[leaf]])]
        return self._samples[leaf]


def canonical_task(name: str) -> str:
    """Our spec name for a task as a harness reported it (``arabculture_mcq|0`` -> ``arabculture_mcq_en_none``)."""
    name = name.split("|", 1)[0]
    base, colon, subset = name.partition(":")
    with contextlib.suppress(KeyError):  # a family, a per-subset task or another package's task: kept as reported
        base = get_spec(base).name
    return f"{base}{colon}{subset}"


def read_runs(paths: Iterable[str | Path]) -> list[ModelRun]:
    """Every model run under `paths` (folders searched recursively, or results files), in the order found."""
    runs: dict[tuple[Harness, str], ModelRun] = {}
    files = sorted(_results_files(paths), key=lambda f: (_timestamp(f), str(f)))
    if not files:
        raise RunError(f"no lm-eval or lighteval results_*.json under {', '.join(map(str, paths))}")
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise RunError(f"{file}: not a readable results file ({error})") from error
        harness, model = _identify(file, data)
        run = runs.setdefault((harness, model), ModelRun(model, harness))
        run.sources.append(file)
        for task, metrics in lm_eval_metrics(data) if harness == "lm-eval" else _lighteval_metrics(data):
            run.results[canonical_task(task)] = metrics
        named = dict(_sample_files(file, harness))
        run.files_of_source[file] = named
        run.sample_files.update({canonical_task(leaf): path for leaf, path in named.items()})
    return _distinct_labels(list(runs.values()))


def _results_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    for path in map(Path, paths):
        if not path.exists():
            raise RunError(f"{path}: no such file or folder")
        yield from sorted(path.rglob("results_*.json")) if path.is_dir() else [path]


def _timestamp(file: Path) -> str:
    match = _TIMESTAMP.search(file.name)
    return match.group("ts") if match else ""


def _identify(file: Path, data: dict[str, Any]) -> tuple[Harness, str]:
    if "config_general" in data:
        return "lighteval", str(data["config_general"].get("model_name") or file.parent.name)
    if "results" in data and "config" in data:
        config = data["config"]
        args = config.get("model_args")
        name = data.get("model_name") or (args.get("pretrained") if isinstance(args, dict) else args) or config["model"]
        return "lm-eval", str(name)
    raise RunError(f"{file}: neither lm-eval's nor lighteval's results layout (no 'config' / 'config_general')")


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
