"""The report's tables: paper-shaped results tables, breakdowns with intervals, and the Arab-world scorecard.

Every table is a `Table` (header + rows of plain values) written as Markdown and CSV; the page and
the heatmaps read the same objects, so the three never disagree.
"""

from __future__ import annotations

import csv
import hashlib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arab_mm_tasks.core.benchmark import Benchmark
from arab_mm_tasks.core.countries import ARAB_COUNTRIES, ARABIC_NAME, canonical_country
from arab_mm_tasks.core.registry import all_families
from arab_mm_tasks.core.reporting import Breakdown, Pools, ResultsTable, ScorecardColumn, cell_metric, cell_task
from arab_mm_tasks.report.escape import csv_cell, markdown_text
from arab_mm_tasks.report.groups import GroupScore, group_scores
from arab_mm_tasks.report.runs import ModelRun

MIN_ITEMS = 30  # a group with fewer scored items is shown, flagged, and never ranked


@dataclass(frozen=True)
class Judged:
    """A results-table value with its count of unscored items (invalid or failed judgements, NaN scores):
    ``66.67 (10/28 unscored)``; `total` is the task's item count when the run says it."""

    value: float | None
    unscored: int
    total: int | None = None

    def text(self, digits: int | None) -> str:
        shown = "–" if _blank(self.value) else (repr(self.value) if digits is None else f"{self.value:.{digits}f}")
        return f"{shown} ({self.unscored}{'' if self.total is None else f'/{self.total}'} unscored)"


@dataclass
class Table:
    key: str
    title: str
    source: str
    header: list[str]
    rows: list[list[Any]]  # cells: str, float (NaN: no value) or None
    notes: list[str] = field(default_factory=list)
    digits: int = 2
    # for its heatmap: row -> column -> mean, and per row the columns flagged for too few items
    matrix: dict[str, dict[str, float]] = field(default_factory=dict)
    flagged: dict[str, set[str]] = field(default_factory=dict)

    def text(self, value: Any) -> str:
        """A cell as shown (raw text: `markdown` and the page escape it for their format)."""
        if isinstance(value, Judged):
            return value.text(self.digits)
        if _blank(value):
            return "–"
        return f"{value:.{self.digits}f}" if isinstance(value, float) else str(value)

    def markdown(self) -> str:
        """The table in Markdown; every text (titles, headers, cells, notes) escaped by `markdown_text`."""
        lines = [f"### {markdown_text(self.title)}", "", f"Source: {markdown_text(self.source)}", ""]
        lines.append("| " + " | ".join(map(markdown_text, self.header)) + " |")
        lines.append("|" + "---|" * len(self.header))
        lines += ["| " + " | ".join(markdown_text(self.text(cell)) for cell in row) + " |" for row in self.rows]
        notes = [f"- {markdown_text(note)}" for note in self.notes]
        return "\n".join(lines + (["", *notes] if notes else []))

    def csv_rows(self) -> list[list[Any]]:
        """Header and rows as CSV cells: numbers unrounded, blanks empty, no text a spreadsheet runs (`csv_cell`)."""
        rows = [list(self.header)]
        for row in self.rows:
            rows.append(["" if _blank(c) else c.text(None) if isinstance(c, Judged) else c for c in row])
        return [[csv_cell(cell) for cell in row] for row in rows]

    def write(self, folder: Path) -> list[Path]:
        """``<key>.md`` and ``<key>.csv`` (numbers unrounded in the CSV)."""
        md, csv_path = folder / f"{self.key}.md", folder / f"{self.key}.csv"
        md.write_text(self.markdown() + "\n", encoding="utf-8")
        with csv_path.open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows(self.csv_rows())
        return [md, csv_path]


def _blank(value: Any) -> bool:
    """A cell with no value: None or NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))


# ----------------------------------------------------------------------------- paper-shaped results tables


def family_value(run: ModelRun, task: str, metric: str, alone: Sequence[str] = ()) -> float | None:
    """A task's value, or for an averaged family the run lacks as a group (lighteval has no groups) the
    unweighted mean of its members, when the run has them all (GIMMICK's "Avg."); when the run has exactly
    one member and it is in `alone`, that member's value (the paper's "Avg." of a text-only model is its T)."""
    value = run.value(task, metric)
    family = all_families().get(task)
    if value is not None or family is None or not family.average or family.weight_by_size:
        return value
    members = {member: run.value(member, metric) for member in family.tasks}
    present = [member for member, v in members.items() if v is not None]
    if len(present) == len(members):
        return sum(members.values()) / len(members)  # type: ignore[arg-type]
    return members[present[0]] if len(present) == 1 and present[0] in alone else None


def _cells(spec: ResultsTable, run: ModelRun, row_task: str | None) -> list[Any] | None:
    """A row's cells (value x scale, with its unscored count); None when the run has none of them."""
    where = [(cell_task(column, row_task), cell_metric(column, row_task)) for column in spec.columns]
    values = [family_value(run, task, metric, c.alone) for (task, metric), c in zip(where, spec.columns, strict=True)]
    if all(value is None for value in values):
        return None  # a model or subset the runs lack
    return [
        _judged(run, task, metric, math.nan if v is None else v * column.scale)
        for v, (task, metric), column in zip(values, where, spec.columns, strict=True)
    ]


def results_table(spec: ResultsTable, runs: Sequence[ModelRun]) -> Table | None:
    """`spec` over the runs; None when no run has any of its cells."""
    row_specs: list[tuple[str | None, str | None]] = list(spec.rows) or [(None, None)]
    header = ["model", *(["subset"] if spec.rows else []), *(column.label for column in spec.columns)]
    rows: list[list[Any]] = []
    for run in runs:
        for label, row_task in row_specs:
            if (cells := _cells(spec, run, row_task)) is not None:
                rows.append([run.label, *([label] if spec.rows else []), *cells])
    if not rows:
        return None
    return Table(spec.key, spec.title, spec.source, header, rows, digits=spec.digits)


def model_tables(spec: ResultsTable, runs: Sequence[ModelRun]) -> list[Table]:
    """`spec` as one table per model with any of its cells: a row per declared row, a column per column, and
    the values as its heatmap matrix (row -> column -> value; ARB's Figures 15-16)."""
    tables: list[Table] = []
    keys: set[str] = set()
    for run in runs:
        rows = [[label, *cells] for label, row_task in spec.rows if (cells := _cells(spec, run, row_task))]
        if not rows:
            continue
        key = file_key(spec.key, run.label)
        if key in keys:  # two model names that read the same as file names
            key = file_key(spec.key, run.label, hashed=True)
        keys.add(key)
        header = ["subset", *(column.label for column in spec.columns)]
        table = Table(key, f"{spec.title}: {run.label}", spec.source, header, rows, digits=spec.digits)
        for label, *cells in rows:
            table.matrix[label] = {
                column.label: value
                for column, cell in zip(spec.columns, cells, strict=True)
                if not _blank(value := cell.value if isinstance(cell, Judged) else cell)
            }
        tables.append(table)
    return tables


def unscored_count(run: ModelRun, task: str, metric: str) -> int:
    """The task's ``<metric>_unscored`` count (for a per-region metric ``<metric>_<region>``, its task's count)."""
    results = run.results.get(task, {})
    for name in (f"{metric}_unscored", f"{metric.rpartition('_')[0]}_unscored"):
        if name in results and not math.isnan(results[name]):
            return int(results[name])
    return 0


def _judged(run: ModelRun, task: str, metric: str, value: float) -> float | Judged:
    """`value`, or with its unscored count when the run left some of the task's items unscored."""
    if metric.endswith("_unscored") or not (unscored := unscored_count(run, task, metric)):
        return value
    total = run.item_counts.get(task) or len(run.samples(task)) or None
    return Judged(value, unscored, total)


# ----------------------------------------------------------------------------- breakdowns by a document field


def pool_tasks(run: ModelRun, pools: Pools) -> list[str]:
    """The tasks of the run's first pool with samples: which variant a breakdown or scorecard column reads."""
    for pool in pools:
        if present := [task for task in pool if run.samples(task)]:
            return present
    return []


def pool_samples(run: ModelRun, pools: Pools) -> Iterator[tuple[str, dict[str, Any]]]:
    """(task, sample) of the run's first pool with samples (`arab_mm_tasks.core.reporting.Pools`)."""
    for pool in pools:
        present = [(task, samples) for task in pool if (samples := run.samples(task))]
        if present:
            for task, samples in present:
                for sample in samples:
                    yield task, sample
            return


def breakdown_table(spec: Breakdown, runs: Sequence[ModelRun], min_items: int = MIN_ITEMS) -> Table | None:
    """A row per group value, a column per model: ``mean [low, high] n=N``; None when no run has the samples."""
    per_model: dict[str, dict[str, GroupScore]] = {}  # a column (model, or model · split) -> group -> score
    for run in runs:
        if spec.split_of is None:
            scores = group_scores(pool_samples(run, spec.tasks), spec.metric, spec.group_of, spec.scale)
            if scores:
                per_model[run.label] = {group_label(spec, s.group): s for s in scores}
            continue
        scores = group_scores(pool_samples(run, spec.tasks), spec.metric, _with_split(spec), spec.scale)
        for split in sorted({str(s.group[1]) for s in scores}):
            per_model[f"{run.label} · {split}"] = {
                group_label(spec, s.group[0]): s for s in scores if str(s.group[1]) == split
            }
    if not per_model:
        return None
    groups = sorted({group for scores in per_model.values() for group in scores})
    header = [spec.group_label, *per_model]
    rows = [[group, *(_cell(scores.get(group), min_items) for scores in per_model.values())] for group in groups]
    table = Table(spec.key, spec.title, spec.source, header, rows)
    table.matrix = {model: {g: s.mean for g, s in scores.items()} for model, scores in per_model.items()}
    table.flagged = {model: {g for g, s in scores.items() if s.n < min_items} for model, scores in per_model.items()}
    table.notes.append(_interval_note(min_items))
    table.notes += _variant_notes(spec.tasks, {run.label: pool_tasks(run, spec.tasks) for run in runs})
    return table


def _with_split(spec: Breakdown) -> Callable[[str, Mapping[str, Any]], list[tuple[Any, Any]]]:
    """A group-of function giving (group, split) pairs: an item counts in each of its groups once per split."""
    split_of = spec.split_of
    assert split_of is not None

    def group_of(task: str, doc: Mapping[str, Any]) -> list[tuple[Any, Any]]:
        return [(group, split) for group in spec.group_of(task, doc) for split in split_of(task, doc)]

    return group_of


def _variant_notes(pools: Pools, used: dict[str, list[str]]) -> list[str]:
    """Which tasks a model's items came from, when that is not the declared first choice (another variant)."""
    first = list(pools[0]) if pools else []
    return [f"{model}: items of {', '.join(tasks)}" for model, tasks in used.items() if tasks and tasks != first]


def group_label(spec: Breakdown, group: Any) -> str:
    """How a group is printed: the declared label, else an Arab country in English and Arabic, else as is."""
    if str(group) in spec.labels:
        return spec.labels[str(group)]
    country = canonical_country(group)
    return country_label(country) if country else str(group)


def _cell(score: GroupScore | None, min_items: int) -> str:
    if score is None:
        return "–"
    return score.cell() + (" †" if score.n < min_items else "")


def _interval_note(min_items: int) -> str:
    return (f"mean [95% bootstrap interval over items, 1,000 resamples] n=scored items; † fewer than {min_items} "
            "items: shown, not ranked")  # fmt: skip


# ----------------------------------------------------------------------------- the Arab-world scorecard


@dataclass
class Scorecard:
    """Per model: for every Arab country and scorecard column, the country's items' score."""

    columns: list[tuple[str, ScorecardColumn]]  # (benchmark title, column)
    scores: dict[str, dict[str, dict[str, GroupScore]]]  # model -> column label -> country -> score
    outside: dict[str, dict[str, int]]  # model -> column label -> items naming no Arab country
    min_items: int
    tasks: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # model -> column label -> tasks read

    def summary(self, model: str, country: str) -> float | None:
        """The mean of the country's columns that have at least `min_items` items; None when none has."""
        values = [s.mean for s in self._cells(model, country) if s.n >= self.min_items]
        return sum(values) / len(values) if values else None

    def _cells(self, model: str, country: str) -> list[GroupScore]:
        return [by_country[country] for by_country in self.scores[model].values() if country in by_country]

    def ranks(self, model: str) -> dict[str, int]:
        """1 = best summary, over the countries that have one."""
        summaries = {c: s for c in ARAB_COUNTRIES if (s := self.summary(model, c)) is not None}
        ordered = sorted(summaries, key=lambda c: -summaries[c])
        return {country: rank for rank, country in enumerate(ordered, 1)}

    def labels(self, model: str) -> list[str]:
        """The columns `model`'s runs have samples for, in benchmark order."""
        return [column.label for _, column in self.columns if column.label in self.scores[model]]

    def table(self, model: str) -> Table:
        labels = self.labels(model)
        header = ["country", "الدولة", *labels, "summary", "rank"]
        ranks = self.ranks(model)
        rows = []
        for country in ARAB_COUNTRIES:
            cells = [_cell(self.scores[model].get(label, {}).get(country), self.min_items) for label in labels]
            summary = self.summary(model, country)
            rank: Any = ranks.get(country, "not ranked" if any(c != "–" for c in cells) else "–")
            rows.append([country, ARABIC_NAME[country], *cells, math.nan if summary is None else summary, rank])
        missing = [column.label for _, column in self.columns if column.label not in labels]
        notes = [
            f"{column.label}: {column.note}" + _read_from(column.tasks, self.tasks.get(model, {}).get(column.label))
            for _, column in self.columns
            if column.label in labels
        ]
        if missing:
            notes.append(f"no per-item samples of {', '.join(missing)} in this run")
        notes += [
            f"summary: mean of the columns with at least {self.min_items} items; rank 1 = highest summary; "
            "countries without such a column are not ranked",
            _interval_note(self.min_items),
        ]
        for label, count in self.outside.get(model, {}).items():
            if count:
                notes.append(f"{label}: {count} items name no Arab country and are not in this table")
        key = file_key("scorecard", model)
        table = Table(key, f"Arab-world scorecard: {model}", "all benchmarks' per-item scores by country", header,
                      rows, notes=notes, digits=1)  # fmt: skip
        # the heatmap's rows are the countries with items, its columns the benchmarks
        for label in labels:
            for country, score in self.scores[model][label].items():
                table.matrix.setdefault(country_label(country), {})[label] = score.mean
                if score.n < self.min_items:
                    table.flagged.setdefault(country_label(country), set()).add(label)
        table.matrix = {c: table.matrix[c] for c in map(country_label, ARAB_COUNTRIES) if c in table.matrix}
        return table


def scorecard(benchmarks: Sequence[Benchmark], runs: Sequence[ModelRun], min_items: int = MIN_ITEMS) -> Scorecard:
    columns = [(b.title, b.report.scorecard) for b in benchmarks if b.report and b.report.scorecard]
    scores: dict[str, dict[str, dict[str, GroupScore]]] = {}
    outside: dict[str, dict[str, int]] = {}
    tasks: dict[str, dict[str, list[str]]] = {}
    for run in runs:
        scores[run.label], outside[run.label] = {}, {}
        for _, column in columns:
            samples = list(pool_samples(run, column.tasks))
            if not samples:
                continue
            tasks.setdefault(run.label, {})[column.label] = pool_tasks(run, column.tasks)
            by_country = group_scores(samples, column.metric, column.countries_of, column.scale, canonical_country)
            scores[run.label][column.label] = {s.group: s for s in by_country}
            outside[run.label][column.label] = sum(
                1 for task, s in samples if not any(canonical_country(c) for c in column.countries_of(task, s["doc"]))
            )
    return Scorecard(columns, scores, outside, min_items, tasks)


def _read_from(pools: Pools, tasks: list[str] | None) -> str:
    """`` (this run: items of arabculture_mcq_ar_region_country)`` when a column read another variant."""
    if not tasks or (pools and tasks == list(pools[0])):
        return ""
    return f" (this run: items of {', '.join(tasks)}, the variant it has)"


def file_key(prefix: str, name: str, hashed: bool = False) -> str:
    """A file name stem for a table about `name` (a model, from a run file): ASCII letters, digits and ``_``
    only, at most ~100 characters; a long name (or with `hashed`, to part two names that read the same) ends
    with a hash of the full name."""
    safe = "".join(ch if ch.isascii() and ch.isalnum() else "_" for ch in name).strip("_")
    if hashed or len(safe) > 80 or not safe:
        safe = f"{safe[:80]}_{hashlib.sha1(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}".strip("_")
    return f"{prefix}_{safe}"


def country_label(country: str) -> str:
    """``Egypt · مصر``: the English and Arabic names, for tables and heatmaps."""
    return f"{country} · {ARABIC_NAME.get(country, '')}".rstrip(" ·")
