"""One reader of what lm-eval, lighteval and lmms-eval write: which file is what, per-sample records, scores.

Every command that reads harness output (`arab-mm-tasks report`, `sample-scores`, `judge`, `submit`)
goes through this module, so the three harnesses' layouts are known in one place:

- lm-eval: ``<out>/<model>/results_<ts>.json``, and ``samples_<task>_<ts>.jsonl`` beside it;
- lighteval: ``<out>/results/<model>/results_<ts>.json``, and
  ``<out>/details/<model>/<ts>/details_<task>|<shots>_<ts>.parquet``;
- lmms-eval: ``<out>/<model>/<ts>_results.json`` (``lmms_eval_version``, the model in ``model_name``, metrics
  keyed ``"<metric>,none"`` as lm-eval's plus ``_stderr_clt`` / ``_stderr_clustered``), and
  ``<ts>_samples_<task>.jsonl`` beside it.

A per-sample record is one dict in lm-eval's shape: ``doc_id``, ``doc`` (the document's fields, with
its record ``id`` and breakdown fields) and one value per metric. lighteval's details rows become
``{"doc_id": row, "doc": doc.specific, **metric}``; lmms-eval drops the document from what it saves, so
its ``doc_id`` (the row of the task's split, read in dataset order) is mapped back to the row with the
package's own loader, from the source the results file's ``configs`` record (`run_documents`).

**Scores, one rule** (`score_of`): a metric's value is a number or a generative value ``{"score": ...}``.
A missing metric, a ``None`` and a NaN are all *unscored*: never a number in a mean, counted apart. An
unscored generative value whose judge (or batch scorer) never ran is also *pending* (``judge`` with no
``judge_status``, ``batch`` with no ``batch_scored``): it can still be judged (`arab-mm-tasks judge`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pyarrow import ArrowException

from arab_mm_tasks.core.registry import all_specs, get_benchmark, get_spec
from arab_mm_tasks.core.spec import TaskSpec
from metric_plugins.breakdowns import read_samples

Harness = Literal["lm-eval", "lighteval", "lmms-eval"]
_LM_EVAL_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
_LIGHTEVAL_DETAILS = re.compile(r"^details_(?P<task>[^|]+)\|\d+_(?P<stamp>.+)\.parquet$")
_LMMS_EVAL_SAMPLES = re.compile(r"^(?P<stamp>\d{8}_\d{6})_samples_(?P<task>.+)\.jsonl$")
_RESULTS = re.compile(r"^results_(?P<stamp>.+)\.json$")  # lm-eval and lighteval (told apart by their content)
_LMMS_EVAL_RESULTS = re.compile(r"^(?P<stamp>\d{8}_\d{6})_results\.json$")


@dataclass(frozen=True)
class SamplesFile:
    """A per-sample file: its harness, its task as the harness named it, and the run's timestamp."""

    path: Path
    harness: Harness
    task: str
    stamp: str


def samples_file(path: Path) -> SamplesFile | None:
    """What a file name says a per-sample file is, or None when it is none of the three harnesses'."""
    for pattern, harness in ((_LM_EVAL_SAMPLES, "lm-eval"), (_LIGHTEVAL_DETAILS, "lighteval"),
                             (_LMMS_EVAL_SAMPLES, "lmms-eval")):  # fmt: skip
        if match := pattern.match(path.name):
            return SamplesFile(path, harness, match["task"], match["stamp"])  # type: ignore[arg-type]
    return None


def is_results_file(path: Path) -> bool:
    return bool(_RESULTS.match(path.name) or _LMMS_EVAL_RESULTS.match(path.name))


def results_files(folder: Path) -> list[Path]:
    """Every results file under `folder`, searched deeply (lm-eval's and lighteval's, then lmms-eval's)."""
    return sorted(folder.rglob("results_*.json")) + sorted(folder.rglob("*_results.json"))


def samples_files(folder: Path) -> list[Path]:
    """Every per-sample file under `folder`, searched deeply, in path order."""
    return sorted(p for p in folder.rglob("*") if samples_file(p) is not None)


def stamp(results_file: Path) -> str:
    """The run's timestamp in a results file's name ("" when it has none)."""
    match = _RESULTS.match(results_file.name) or _LMMS_EVAL_RESULTS.match(results_file.name)
    return match["stamp"] if match else ""


def stamp_order(stamp: str) -> str:
    """A timestamp as a string that sorts by time across the harnesses' formats (lm-eval's and lighteval's
    ``2026-11-26T04-10-11.123456``, lmms-eval's ``20261126_041011``): its digits, padded to microseconds."""
    digits = re.sub(r"\D", "", stamp)
    return digits.ljust(20, "0") if len(digits) >= 14 else stamp


def results_beside(samples: SamplesFile) -> Path | None:
    """The results file that an lm-eval or lmms-eval samples file was written with (None for lighteval)."""
    if samples.harness == "lm-eval":
        return samples.path.with_name(f"results_{samples.stamp}.json")
    if samples.harness == "lmms-eval":
        return samples.path.with_name(f"{samples.stamp}_results.json")
    return None


def samples_beside(results_file: Path, task: str) -> Path:
    """Where an lm-eval or lmms-eval run saved `task`'s samples, next to its results file.

    >>> samples_beside(Path("o/m/20261126_120110_results.json"), "pearl_open").name
    '20261126_120110_samples_pearl_open.jsonl'
    >>> samples_beside(Path("o/m/results_2026-11-26T12-01-10.5.json"), "pearl_open").name
    'samples_pearl_open_2026-11-26T12-01-10.5.jsonl'
    """
    if match := _LMMS_EVAL_RESULTS.match(results_file.name):
        return results_file.with_name(f"{match['stamp']}_samples_{task}.jsonl")
    return results_file.with_name(f"samples_{task}_{stamp(results_file)}.jsonl")


def harness_of(data: Mapping[str, Any]) -> Harness | None:
    """Which harness wrote a results file's JSON object (None: none of the three)."""
    if isinstance(data.get("config_general"), dict):
        return "lighteval"
    if "results" in data and isinstance(data.get("config"), dict):
        return "lmms-eval" if "lmms_eval_version" in data else "lm-eval"
    return None


# A sample's keys that are not metrics: lm-eval's (lighteval details are read into that shape), and what
# lmms-eval adds (`evaluator.py` / `loggers/evaluation_tracker.py` of 0.7.3: the prompt, token counts, media names).
SAMPLE_FIELDS = frozenset({
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics", "doc_hash",
    "prompt_hash", "target_hash", "input", "token_counts", "input_media",
})  # fmt: skip


# ------------------------------------------------------------------------------------ reading


class RunError(ValueError):
    """A run folder or file that cannot be read as lm-eval, lighteval or lmms-eval output; the message names it."""


class UnreadableFile(RunError):
    """One run file (results JSON, samples JSONL, details parquet) that cannot be read: ``FILE: reason``."""

    def __init__(self, file: Path, reason: str) -> None:
        super().__init__(f"{file}: {reason}")
        self.file, self.reason = file, reason


def read_sample_file(file: Path) -> list[dict[str, Any]]:
    """The samples of an lm-eval or lmms-eval samples file or a lighteval details file, each an object in one
    shape (`harness_outputs`); `UnreadableFile` (one line naming the file and line) for a file cut mid-line,
    not UTF-8, not the layout, or (lmms-eval) whose documents cannot be read back from the run's dataset."""
    if file.suffix == ".parquet":
        try:
            samples = [sample for _, sample in read_samples([file])]
        except (ArrowException, OSError, ValueError, TypeError, KeyError, AttributeError) as error:
            raise UnreadableFile(file, f"not a readable lighteval details file ({short(error)})") from None
    else:
        samples = _jsonl_samples(file)
        named = samples_file(file)
        if named is not None and named.harness == "lmms-eval":
            try:
                samples = with_documents(samples, named)
            except Exception as error:  # a source moved, gone or unbuildable: this file is not read, said why
                raise UnreadableFile(file, f"its documents could not be read back ({short(error)})") from None
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
            raise UnreadableFile(file, f"line {number} is not JSON: {short(error)}{cut}") from None
        if not isinstance(sample, dict):
            raise UnreadableFile(file, f"line {number} is not a JSON object")
        samples.append(sample)
    return samples


def short(error: BaseException) -> str:
    """An exception as at most 200 characters of one line."""
    text = " ".join(str(error).splitlines()) or type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."


# ------------------------------------------------------------------------------------ task names


def task_name(name: str) -> str:
    """Our spec name for a task as a harness reported it (``arabculture_mcq|0`` -> ``arabculture_mcq_en_none``);
    a family, a per-subset task or another package's task is kept as reported (without lighteval's ``|k``)."""
    name = name.split("|", 1)[0]
    base, colon, subset = name.partition(":")
    with contextlib.suppress(KeyError):
        base = get_spec(base).name
    return f"{base}{colon}{subset}"


@functools.cache
def _subset_tasks() -> dict[str, TaskSpec]:
    return {spec.subset_task(s): spec for spec in all_specs().values() for s in spec.subsets}


def spec_of(task: str) -> TaskSpec:
    """The spec of a saved task name: a variant, an alias, lighteval's ``NAME:subset`` or lm-eval's subset task;
    `KeyError` when it is not one of ours."""
    return _subset_tasks().get(task) or get_spec(task.partition(":")[0])


# ------------------------------------------------------------------------------------ scores


@dataclass(frozen=True)
class Score:
    """A metric's value for one sample: `value` None means unscored; `pending` means never judged (yet)."""

    value: float | None
    pending: bool = False


def score_of(value: Any) -> Score:
    """The one rule for a per-sample value (module docstring): None and NaN are unscored.

    >>> score_of(1.0), score_of(float("nan")), score_of({"score": None, "judge": {}})
    (Score(value=1.0, pending=False), Score(value=None, pending=False), Score(value=None, pending=True))
    """
    pending = False
    if isinstance(value, Mapping):
        pending = ("judge" in value and "judge_status" not in value) or (
            "batch" in value and "batch_scored" not in value
        )
        value = value.get("score")
    number = None if value is None else float(value)
    if number is None or math.isnan(number):
        return Score(None, pending)
    return Score(number)  # a score, whatever else the value holds


def item_score(sample: Mapping[str, Any], metric: str) -> float | None:
    """A sample's score of `metric`: None when the sample has no such metric or it is unscored (`score_of`)."""
    return score_of(sample[metric]).value if metric in sample else None


# ------------------------------------------------------------------------------------ lmms-eval documents


def run_source(config: Mapping[str, Any]) -> tuple[Any, str, str, str]:
    """(source, benchmark, config, split) a task of a run read, from its entry in the results file's ``configs``.

    The source is the task's ``<benchmark>_path`` run option, else a ``dataset_path`` a task file set
    (lmms-eval), else the benchmark's default; the same rule the harness hooks follow."""
    from arab_mm_tasks.core.sources import DatasetSource

    kwargs = config["dataset_kwargs"]
    benchmark = kwargs["benchmark"]
    options = dict(config.get("metadata") or {})
    path_key, dataset_path = get_benchmark(benchmark).path_key, config.get("dataset_path")
    if path_key not in options and dataset_path and dataset_path != DatasetSource.default(benchmark).label:
        options[path_key] = dataset_path
    return DatasetSource.from_metadata(benchmark, options), benchmark, kwargs["config"], kwargs["split"]


def task_config(results_file: Path, task: str) -> dict[str, Any]:
    """A task's entry in a results file's ``configs``; `ValueError` naming the file when it is not there."""
    if not results_file.is_file():
        raise ValueError(f"{results_file.name} (which says where the run's data came from) is not next to it")
    config = (json.loads(results_file.read_text("utf-8")).get("configs") or {}).get(task)
    if not isinstance(config, dict) or not isinstance(config.get("dataset_kwargs"), dict):
        raise ValueError(f"{results_file.name} does not say where task {task!r} read its data")
    return config


@functools.cache
def run_documents(results_file: Path, task: str, media: bool = False) -> list[dict[str, Any]]:
    """The rows of the split `task` read in the run of `results_file`, in dataset order (``doc_id`` order).

    Without `media` the image and video columns are dropped (ids and breakdown fields only); with it they
    are references to their bytes, decoded only when rendered (as the harnesses read them)."""
    from arab_mm_tasks.core.sources import load_split, without_media, without_media_decoding

    source, benchmark, config, split = run_source(task_config(results_file, task))
    rows = load_split(source, config, split, benchmark)
    return [dict(row) for row in (without_media_decoding(rows) if media else without_media(rows))]


def with_documents(samples: list[dict[str, Any]], file: SamplesFile) -> list[dict[str, Any]]:
    """lmms-eval samples with their ``doc`` put back (by ``doc_id``), so every harness's samples have one shape;
    `ValueError` naming the sample when the run's dataset has no such row."""
    results = results_beside(file)
    if file.harness != "lmms-eval" or results is None or all("doc" in sample for sample in samples):
        return samples
    docs = run_documents(results, file.task)
    for number, sample in enumerate(samples, 1):
        doc_id = sample.get("doc_id")
        if not isinstance(doc_id, int) or not 0 <= doc_id < len(docs):
            raise ValueError(f"sample {number}: doc_id {doc_id!r} is not a row of the run's dataset ({len(docs)} rows)")
        sample["doc"] = docs[doc_id]
    return samples
