"""Per-sample metric scores of saved harness runs, keyed by record id: ``arab-mm-tasks sample-scores``.

Reads lm-eval ``--log_samples`` files (``samples_<task>_<time>.jsonl``), lighteval
``--save-details`` files (``details_<task>|<shots>_<time>.parquet``) and lmms-eval ``--log_samples``
files (``<time>_samples_<task>.jsonl``, whose documents are read back from the run's dataset, see
`arab_mm_tasks.report.harness_outputs`), or folders holding them. A
run is ``[MODEL=]PATH``: ``MODEL`` labels its rows (the model whose outputs were scored; default:
the path as written). One row per (model, record id) with columns ``model``, ``id`` (the record
id of the dataset, e.g. JEEM's ``jordan-<image_id>``), then one column per metric that has a
per-sample score (judge criteria, DCScore P/R/F1, ALDi, ROUGE-L, BERTScore, accuracy). Corpus
metrics (BLEU, CIDEr) have no per-sample score and no column. A sample that was not scored (an
invalid judge reply, a judge never run on a ``--predict_only`` run, a NaN) has an empty cell
(`harness_outputs.score_of`, the rule every reader of harness outputs follows).

The tasks of one run are merged by record id (JEEM's ALDi comes from ``jeem_caption_<dialect>``,
its judge from ``jeem_caption_<dialect>_eval350``); the same metric with two different scores
for one record (MSA and dialect tasks share their record ids) is an error: ``--tasks`` keeps some.

    arab-mm-tasks sample-scores aya=runs/aya gpt-4o=runs/gpt4o --tasks jeem_caption_eval350 --out scores.csv

`arab-mm-tasks agreement` reads runs the same way and joins them with human ratings.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arab_mm_tasks.core.registry import all_families, get_spec
from arab_mm_tasks.core.spec import TaskSpec
from arab_mm_tasks.report import harness_outputs
from arab_mm_tasks.report.escape import csv_cell

_RUN_FILE = re.compile(r"^(samples_.+\.jsonl|details_.+\|\d+_.+\.parquet)$")
Key = tuple[str, str]  # (model label, record id)


class ScoresInputError(ValueError):
    """A run that cannot be read, or two tasks that disagree on a record's score: one line."""


def is_run(arg: str) -> bool:
    """Whether a command-line path names harness output: a folder, a samples file or a details file."""
    path = Path(split_run(arg)[1])
    return path.is_dir() or bool(_RUN_FILE.match(path.name)) or harness_outputs.samples_file(path) is not None


def split_run(arg: str) -> tuple[str, str]:
    """``MODEL=PATH`` -> (MODEL, PATH); a bare path (or one that exists with its ``=``) is its own label."""
    label, sep, path = arg.partition("=")
    if not sep or Path(arg).exists() or not label:
        return arg, arg
    return label, path


def task_names(names: Iterable[str]) -> set[str]:
    """Task and family names (and aliases) -> the task names they stand for; unknown names are an error."""
    families = all_families()
    chosen: set[str] = set()
    for name in names:
        if name in families:
            chosen.update(families[name].tasks)
            continue
        try:
            chosen.add(get_spec(name).name)
        except KeyError:
            raise ScoresInputError(f"--tasks: {name!r} is neither a task nor a family") from None
    return chosen


def spec_of(task: str) -> TaskSpec:
    """The spec of a saved task name: a variant, an alias, lighteval's ``NAME:subset`` or lm-eval's subset task."""
    try:
        return harness_outputs.spec_of(task)
    except KeyError:
        raise ScoresInputError(f"saved task {task!r} is not an arab-mm-tasks task") from None


def per_sample_metrics(spec: TaskSpec) -> list[str]:
    """The metric names of `spec` with one score per sample (no corpus metric, no per-region copy)."""
    if not spec.generative_metrics:
        return list(spec.metrics)
    return [metric.name for metric in spec.generative_metrics if not metric.corpus]


@dataclass
class SampleScores:
    """Rows keyed by (model, record id); `origins` says where each row was first read."""

    columns: list[str] = field(default_factory=lambda: ["model", "id"])
    rows: dict[Key, dict[str, Any]] = field(default_factory=dict)
    origins: dict[Key, str] = field(default_factory=dict)
    pending: dict[tuple[Key, str], str] = field(default_factory=dict)  # (row, metric) -> task never scored
    sources: dict[tuple[Key, str], str] = field(default_factory=dict)  # (row, metric) -> task its score came from

    def add(self, key: Key, task: str, where: str, metric: str, value: Any) -> None:
        read = harness_outputs.score_of(value)
        score, pending = read.value, read.pending
        row = self.rows.setdefault(key, {"model": key[0], "id": key[1]})
        self.origins.setdefault(key, where)
        if metric not in self.columns:
            self.columns.append(metric)
        if score is None:
            row.setdefault(metric, None)
            if pending and row[metric] is None:
                self.pending[(key, metric)] = task
            return
        held = row.get(metric)
        if held is not None and held != score:
            raise ScoresInputError(
                f"record {key[1]!r} of {key[0]}: {metric} is {held:g} in {self.sources[(key, metric)]} but "
                f"{score:g} in {task}; pass --tasks to keep the tasks you mean (MSA and dialect tasks share record ids)"
            )
        row[metric] = score
        self.sources[(key, metric)] = task
        self.pending.pop((key, metric), None)

    def table(self) -> list[dict[str, Any]]:
        return [{column: row.get(column) for column in self.columns} for row in self.rows.values()]


def read_runs(runs: Sequence[str], tasks: Iterable[str] | None = None) -> SampleScores:
    """Every per-sample score of the runs (``[MODEL=]PATH``), restricted to `tasks` (names or families) if given."""
    wanted = task_names(tasks) if tasks else None
    scores = SampleScores()
    for run in runs:
        label, path = split_run(run)
        if not Path(path).exists():
            raise ScoresInputError(f"{path}: no such file or folder")
        samples = _samples(Path(path))
        kept = 0
        for task, sample in samples:
            spec = spec_of(task)
            if wanted is not None and spec.name not in wanted:
                continue
            record = (sample.get("doc") or {}).get("id")
            if record is None:
                raise ScoresInputError(f"{path}: a {task} sample (doc {sample.get('doc_id')}) has no record id")
            key = (label, str(record))
            where = f"{label}: {task} doc {sample.get('doc_id')} (record {record!r})"
            for metric in per_sample_metrics(spec):
                if metric in sample:
                    scores.add(key, task, where, metric, sample[metric])
            kept += 1
        if not kept:
            raise ScoresInputError(f"{path}: no samples of the tasks asked for" if wanted else f"{path}: no samples")
    return scores


def _samples(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(task as saved, sample) of a samples file or a folder: lm-eval and lighteval files as `read_samples` reads
    them, lmms-eval files with their documents read back (`harness_outputs.with_documents`)."""
    from arab_mm_tasks.report.harness_outputs import UnreadableFile, read_sample_file
    from metric_plugins.breakdowns import read_samples

    files = harness_outputs.samples_files(path) if path.is_dir() else [path]
    lmms = [named for named in map(harness_outputs.samples_file, files) if named and named.harness == "lmms-eval"]
    samples: list[tuple[str, dict[str, Any]]] = []
    if path.is_dir() or not lmms:  # a folder may hold any harness's files; an lmms-eval file is only that
        try:
            samples = list(read_samples([path]))
        except FileNotFoundError as error:
            if not lmms:
                raise ScoresInputError(str(error)) from None
    for named in lmms:
        try:
            samples += [(named.task, sample) for sample in read_sample_file(named.path)]
        except UnreadableFile as error:
            raise ScoresInputError(str(error)) from None
    return samples


def write(scores: SampleScores, out: Path | None) -> str:
    """The table as CSV (or JSONL when `out` ends in .jsonl); written to `out`, or returned as text."""
    rows = scores.table()
    if out is not None and out.suffix.lower() in (".jsonl", ".ndjson"):
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=scores.columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows([{k: csv_cell(v) for k, v in row.items()} for row in rows])  # labels, ids: no formulas
        text = buffer.getvalue()
    if out is not None:
        out.write_text(text, encoding="utf-8")
    return text


def add_parser(sub: Any) -> None:
    """Register ``sample-scores`` on the top-level command's subparsers."""
    import argparse

    s = sub.add_parser(
        "sample-scores",
        help="per-sample metric scores of saved runs (lm-eval/lmms-eval samples, lighteval details), a row per record",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("runs", nargs="+", metavar="[MODEL=]PATH", help="samples_*.jsonl, details_*.parquet or folders")
    s.add_argument("--tasks", help="only the samples of these tasks or families (comma-separated)")
    s.add_argument("--out", help="a .csv or .jsonl file (default: CSV on stdout)")
    s.set_defaults(func=run)


def run(args: Any) -> int:
    """Exit 0 with the table written, 2 with one line on stderr for bad input."""
    import sys

    tasks = [name.strip() for name in args.tasks.split(",") if name.strip()] if args.tasks else None
    try:
        scores = read_runs(args.runs, tasks)
    except ScoresInputError as error:
        print(f"arab-mm-tasks sample-scores: error: {error}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else None
    text = write(scores, out)
    if out is None:
        print(text, end="")
    else:
        print(f"wrote {len(scores.rows)} rows to {out}")
    if scores.pending:
        print(f"arab-mm-tasks sample-scores: {len(scores.pending)} cells were never scored (no judge run on them)",
              file=sys.stderr)  # fmt: skip
    return 0
