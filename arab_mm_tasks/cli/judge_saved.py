"""Generate, then judge: score the saved generations of a harness run with a judge model.

Judging is the slow, paid step, so it can run apart from generation: on lm-eval's
``--log_samples`` files (``samples_<task>_<time>.jsonl``, ``--predict_only`` runs included),
lighteval's ``--save-details`` files (``details_<task>|<shots>_<time>.parquet``) or lmms-eval's
``--log_samples`` files (``<time>_samples_<task>.jsonl``, ``--predict_only`` runs included; lmms-eval
saves no document, so each sample's ``doc_id`` is read back as its row of the dataset the run read,
which the results file beside it records: `arab_mm_tasks.report.harness_outputs`) of a run made
with no judge, a judge that failed, or another judge. Every judged value
(`arab_mm_tasks.core.scoring`) is sent to the judge
(cached: a re-run or a resumed run pays nothing twice), the scores are written back into a copy
of each file in the harness's own format, and the task's metrics are re-aggregated per region:

    arab-mm-tasks judge results/ --judge "model=gpt-4o-2024-11-20" --out judged/

writes ``judged/<same file name>`` for every file read and ``judged/results_judged.json``.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arab_mm_tasks.core.benchmark import Benchmark
from arab_mm_tasks.core.judging import apply_judgement, judge_run, set_saved_images
from arab_mm_tasks.core.registry import all_benchmarks, all_specs
from arab_mm_tasks.core.scoring import (
    aggregation_kind,
    aggregator,
    has_pending_images,
    judge_context,
    sample_regions,
    score_prediction,
)
from arab_mm_tasks.core.spec import TaskSpec
from arab_mm_tasks.report import harness_outputs
from arab_mm_tasks.report.harness_outputs import results_beside, samples_file
from metric_plugins.judge.config import JudgeConfig
from metric_plugins.judge.run import JudgeSummary


@dataclass
class SavedRun:
    """One saved file: its task, its per-sample records, and where each record keeps its metric values."""

    path: Path
    task: str
    harness: str  # "lm-eval", "lighteval", "lmms-eval" or "log" (a benchmark's own generation log)
    records: list[dict[str, Any]]
    values: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # metric name -> value per record
    docs: list[dict[str, Any]] | None = None  # lmms-eval: each record's document, read back by its doc_id


def find_saved(paths: Iterable[str | Path]) -> list[Path]:
    """The lm-eval and lmms-eval samples files and lighteval details files in `paths` (files or folders, searched
    deeply), and any other .jsonl file named itself (a benchmark's own generation log, `read_runs`)."""
    found: list[Path] = []
    for path in map(Path, paths):
        candidates = sorted(path.rglob("*")) if path.is_dir() else [path]
        found += [p for p in candidates if samples_file(p) is not None]
        if path.is_file() and path.suffix == ".jsonl" and samples_file(path) is None:
            found.append(path)
    if not found:
        raise FileNotFoundError(
            "no lm-eval samples_*.jsonl, lighteval details_*.parquet or lmms-eval *_samples_*.jsonl "
            f"under {list(paths)}"
        )
    return found


def read_runs(path: Path, dataset_paths: Mapping[str, str] | None = None) -> list[SavedRun]:
    """One saved harness file, or the runs of a benchmark's own generation log (Pearl's inference logs),
    whose rows are matched to their records in the dataset `dataset_paths` names for the benchmark."""
    if samples_file(path) is not None:
        return [read_saved(path)]
    for benchmark in all_benchmarks().values():
        records = functools.partial(_dataset_rows, benchmark, dict(dataset_paths or {}), path)
        logs = benchmark.read_logs(path, records) if benchmark.read_logs else None
        if logs:
            return [_log_run(path, task, rows) for task, rows in logs.items()]
    raise ValueError(f"{path}: not a harness's samples or details file, or a known generation log")


def _dataset_rows(benchmark: Benchmark, dataset_paths: Mapping[str, str], log: Path, task: str) -> list[dict] | None:
    """A task's rows in the dataset named for `benchmark`, without media; None when it holds no such config."""
    from arab_mm_tasks.core.sources import DatasetSource, load_split, without_media

    if benchmark.name not in dataset_paths:
        raise FileNotFoundError(
            f"{log}: a {benchmark.title} generation log is matched to the records of the dataset it was made on "
            f"(their ids, release and images): pass --dataset-path {benchmark.name}=DIR"
        )
    spec = all_specs()[task]
    source = DatasetSource.resolve(benchmark.name, dataset_paths[benchmark.name])
    if source.is_local and not (Path(source.path) / "data" / spec.all_config).is_dir():
        return None
    return [dict(row) for row in without_media(load_split(source, spec.all_config, spec.split, benchmark.name))]


def _log_run(path: Path, task: str, rows: list[tuple[dict[str, Any], str]]) -> SavedRun:
    """A generation log's rows of one task, scored as the harness would have scored them (judgements pending)."""
    spec = all_specs()[task]
    run = SavedRun(path, task, "log", [])
    for document, prediction in rows:
        values = score_prediction(spec, prediction, spec.target(document), sample_regions(spec, document))
        run.records.append({"doc": document, "prediction": prediction, **values})
    for name in spec.metric_names():
        run.values[name] = [record[name] for record in run.records]
    return run


def read_saved(path: Path) -> SavedRun:
    """Read one file; its task must be one of ours with judged metrics."""
    named = samples_file(path)
    if named is None:
        raise ValueError(f"{path}: not an lm-eval or lmms-eval samples file or a lighteval details file")
    if named.harness == "lighteval":
        import pandas as pd

        records = pd.read_parquet(path).to_dict("records")
        run = SavedRun(path, named.task, "lighteval", records)
        rows = [_plain(record["metric"]) for record in records]
        for record, metric in zip(records, rows, strict=True):
            record["metric"] = metric
    else:
        records = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
        run = SavedRun(path, named.task, named.harness, records)
        rows = records
    spec = all_specs().get(run.task)
    if spec is None or not _is_judged(run.task):
        raise harness_outputs.UnreadableFile(path, f"task {run.task!r} has no judged metric")
    if run.harness == "lmms-eval":  # lmms-eval saves no document: each is its doc_id's row of the run's dataset
        try:
            documents = harness_outputs.with_documents([{"doc_id": row.get("doc_id")} for row in rows], named)
        except Exception as error:  # a source moved, gone or unbuildable: one line (exit 2), as `report` says it
            reason = f"its documents could not be read back ({harness_outputs.short(error)})"
            raise harness_outputs.UnreadableFile(path, reason) from None
        run.docs = [document["doc"] for document in documents]
    if run.harness in ("lm-eval", "lmms-eval"):
        _apply_run_options(spec, path)
    if run.harness in ("lm-eval", "lmms-eval") and all(spec.metric_names()[0] not in row for row in rows):
        # a --predict_only run scored nothing: score its generations here, as the run would have
        for index, row in enumerate(rows):
            doc = run.docs[index] if run.docs is not None else row["doc"]
            # a batched metric (DCScore) needs the images now; a judge's are attached when it is run
            batch_images = any(metric.batch_images for metric in spec.generative_metrics)
            images = saved_doc_images(spec, doc, path) if batch_images else None
            regions, context = sample_regions(spec, doc), judge_context(spec, doc)
            answer = row["filtered_resps"]  # lm-eval: a list of one answer; lmms-eval: the answer
            answer = answer[0] if isinstance(answer, list) else answer
            row.update(score_prediction(spec, answer, row["target"], regions, images, context))
    for name in spec.metric_names():
        missing = [i for i, row in enumerate(rows) if name not in row]
        if missing:
            raise ValueError(f"{path}: sample {missing[0]} has no value for metric {name!r}")
        run.values[name] = [row[name] for row in rows]
    # a metric's value is one object under all its names (as the harness made it); reading a file
    # back gives copies, so tie them together again: judging one then scores them all
    for metric in spec.generative_metrics:
        shared = run.values[metric.name]
        for name in metric.names(spec.regions):
            run.values[name] = shared
            for row, value in zip(rows, shared, strict=True):
                row[name] = value
    return run


def _apply_run_options(spec: TaskSpec, samples_path: Path) -> None:
    """The run's own options (its ``--metadata``, e.g. ``jeem_dcscore_language``), from its results file, if there."""
    results = results_beside(samples_file(samples_path))  # type: ignore[arg-type]
    benchmark = all_benchmarks()[spec.benchmark]
    if benchmark.configure is None or results is None or not results.is_file():
        return
    config = json.loads(results.read_text("utf-8")).get("configs", {}).get(spec.name) or {}
    benchmark.configure(config.get("metadata") or {})


def saved_doc_images(spec: TaskSpec, doc: dict[str, Any], path: Path) -> list[Any]:
    """The images of a saved lm-eval or lmms-eval sample's document, rendered again from the run's data source.

    lm-eval writes a hash in place of an image's bytes (lmms-eval no document at all), so the document
    is looked up by id in the dataset the run read (its ``--metadata`` / ``dataset_path`` and
    ``dataset_kwargs``, from the results file next to the samples file) and rendered as the run rendered it.
    """
    docs = _run_documents(spec.name, path)
    key = str(doc.get("id"))
    if key not in docs:
        raise ValueError(f"{path}: document {key!r} is not in the dataset the run read; judge during the run instead")
    return spec.render(docs[key]).images


@functools.cache
def _run_documents(task: str, samples_path: Path) -> dict[str, dict[str, Any]]:
    """The run's documents by record id, media by reference (`harness_outputs.run_documents`)."""
    results = results_beside(samples_file(samples_path))  # type: ignore[arg-type]
    try:
        rows = harness_outputs.run_documents(results, task, media=True)  # type: ignore[arg-type]
    except ValueError as error:
        raise ValueError(f"{samples_path}: its judge looks at images and {error}") from None
    return {str(row["id"]): row for row in rows}


def _plain(value: Any) -> Any:
    """Parquet structs come back with numpy arrays; make them lists and dicts again."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None or k == "score"}
    if hasattr(value, "tolist"):
        return _plain(value.tolist())
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def judge_saved(
    paths: Iterable[str | Path],
    config: JudgeConfig,
    out_dir: str | Path,
    dataset_paths: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Judge every judged value in the saved files, write the scored copies and a results file.

    The report's ``summary`` adds up the judge runs (calls, cache hits, retries, invalid, failed).
    `JudgeStopped` (unreachable endpoint, bad key, unknown model) propagates: no results file is written.
    `dataset_paths` (benchmark -> folder or repo) is where the images come from for judges that
    look at them (Pearl's open-ended rubric): saved samples do not hold images. A file found in a
    folder whose task has no judged metric (a suite's other tasks) is skipped, and listed in the
    report's ``skipped`` and on stderr; one named itself is an error.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, float | None]] = {}
    summaries: list[JudgeSummary] = []
    images: dict[str, list[Any]] = {}
    set_saved_images(lambda value: images.get(value["judge"].get("images") or ""))
    paths = list(paths)
    named = {Path(path) for path in paths}
    skipped: dict[str, str] = {}
    try:
        for path in find_saved(paths):
            saved = samples_file(path)
            if path not in named and saved is not None and not _is_judged(saved.task):
                skipped[str(path)] = f"task {saved.task!r} has no judged metric"
                continue
            for run in read_runs(path, dataset_paths):
                summaries += _judge_file(run, config, out, results, images, dict(dataset_paths or {}))
    finally:
        set_saved_images(None)
    summary = JudgeSummary.total(summaries).to_dict()
    report = {"results": results, "judge": config.to_dict(), "summary": summary}
    if skipped:
        report["skipped"] = skipped
        print(f"arab-mm-tasks judge: note: skipped {len(skipped)} files of tasks with no judged metric "
              f"({', '.join(sorted({Path(f).name for f in skipped}))})", file=sys.stderr)  # fmt: skip
    (out / "results_judged.json").write_text(_dumps(report, indent=2) + "\n", "utf-8")
    return report


def _is_judged(task: str) -> bool:
    spec = all_specs().get(task)
    return spec is not None and any(metric.judge_prompt for metric in spec.generative_metrics)


def _judge_file(
    run: SavedRun,
    config: JudgeConfig,
    out: Path,
    results: dict[str, dict[str, float | None]],
    images: dict[str, list[Any]],
    dataset_paths: Mapping[str, str],
) -> list[JudgeSummary]:
    spec = all_specs()[run.task]
    summaries: list[JudgeSummary] = []
    if any(m.judge_images for m in spec.generative_metrics):
        _attach_images(run, spec, images, dataset_paths)
    judged = [metric for metric in spec.generative_metrics if metric.judge_prompt]
    for metric in judged:
        for value in run.values[metric.name]:  # judge again whatever is not a valid judgement yet
            if value.get("judge_status") != "valid":
                value.pop("judge_status", None)
                value["judge"].pop("result", None)
                value["score"] = None
    for metric in judged:
        values = run.values[metric.name]
        for value in values:  # a request shared with a metric judged above (predict_only runs scored here)
            if "judge_status" not in value and "result" in value["judge"]:
                apply_judgement(value, config.invalid_policy)
        todo = [i for i, value in enumerate(values) if "judge_status" not in value]
        if todo:
            for prompt in sorted({values[i]["judge"]["prompt"] for i in todo}):  # one run per routed prompt
                chosen = [i for i in todo if values[i]["judge"]["prompt"] == prompt]
                ids = [_sample_id(run, i) for i in chosen]
                summaries.append(judge_run(prompt, [values[i] for i in chosen], config, ids).summary)
    scores = {name: aggregator(aggregation_kind(spec, name))(run.values[name]) for name in spec.metric_names()}
    results[f"{run.task} ({run.harness}: {run.path.name})"] = {
        name: None if math.isnan(score) else score for name, score in scores.items()
    }
    _write(run, out / (run.path.name if run.harness != "log" else f"{run.path.stem}.{run.task}.jsonl"))
    return summaries


def _doc_of(run: SavedRun, index: int) -> dict[str, Any]:
    """A saved record's document fields (lighteval keeps the id and breakdown fields in ``specific``)."""
    record = run.records[index]
    if run.docs is not None:  # lmms-eval
        return run.docs[index]
    if run.harness in ("lm-eval", "log"):
        return record.get("doc") or {}
    return _plain(record.get("doc", {}).get("specific")) or {}


def _attach_images(run: SavedRun, spec: Any, images: dict[str, list[Any]], dataset_paths: Mapping[str, str]) -> None:
    """Give each judged value that must see its sample's images a key to them, read from the dataset."""
    from arab_mm_tasks.core.sources import DatasetSource, load_split, without_media_decoding

    if spec.benchmark in dataset_paths:
        source = DatasetSource.resolve(spec.benchmark, dataset_paths[spec.benchmark])
        where = source.path
        # as the harnesses load it: a rendered image is a lazy one, holding a reference to its bytes until judged
        split = without_media_decoding(load_split(source, spec.all_config, spec.split, spec.benchmark))
        docs = {str(doc["id"]): doc for doc in split}
    elif run.harness in ("lm-eval", "lmms-eval"):  # its results file says where the run's data came from
        where, docs = "the dataset the run read", _run_documents(run.task, run.path)
    else:
        raise FileNotFoundError(
            f"{run.path}: the {run.task} judge looks at each sample's images, which saved samples do not hold; "
            f"pass --dataset-path {spec.benchmark}=DIR (the folder or repo the run evaluated)"
        )
    for index in range(len(run.records)):
        doc_id = str(_doc_of(run, index).get("id"))
        if doc_id not in docs:
            raise KeyError(f"{run.path}: sample {index} is document {doc_id!r}, which {where} does not hold")
        key = f"{run.task}/{doc_id}"
        if key not in images:
            images[key] = list(spec.render(docs[doc_id]).images)
        for metric in spec.generative_metrics:
            request = run.values[metric.name][index]["judge"] if metric.judge_images else {}
            if metric.judge_images and not has_pending_images(request.get("images")):  # kept when scored here
                request["images"] = key


def _sample_id(run: SavedRun, index: int) -> str:
    """How warnings and judgements name a sample: its task and lm-eval doc id (lighteval details: the row)."""
    if run.harness == "log":
        doc = run.records[index]["doc"]
        return f"{run.path.name} line {doc.get('log_line')} (id {doc.get('log_id')})"
    doc_id = run.records[index].get("doc_id") if run.harness in ("lm-eval", "lmms-eval") else None
    return f"{run.task} doc {doc_id}" if doc_id is not None else f"{run.task} row {index}"


def _write(run: SavedRun, target: Path) -> None:
    if run.harness in ("lm-eval", "lmms-eval", "log"):
        lines = [_dumps(record) for record in run.records]
        target.write_text("\n".join(lines) + "\n", "utf-8")
    else:
        import pandas as pd

        pd.DataFrame(run.records).to_parquet(target)


def _dumps(value: Any, indent: int | None = None) -> str:
    """JSON that is valid UTF-8 whatever the text holds: Arabic as itself, a lone surrogate (which a saved
    generation may carry, escaped, and UTF-8 cannot encode) as its ``\\ud800`` escape, losslessly."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, indent=indent)
    return text
