"""What `arab-mm-tasks report` shows of a benchmark, declared with the benchmark.

A benchmark's `Report` lists, as data:

- `ResultsTable`: a table shaped like one of the paper's, read from the harness's aggregated
  results (so corpus metrics such as BLEU are the harness's own numbers): a row per model, or per
  model and subset (JEEM's dialects), and a column per (task, metric).
- `Breakdown`: per-item scores of a task grouped by a document field (country, question type,
  domain, dialect), each group with a bootstrap confidence interval; drawn as a model x group heatmap.
- `ScorecardColumn`: the benchmark's column of the Arab-world scorecard: per-item scores grouped by
  the Arab country each item is about.

Task names are the package's; a run's alias of one (lm-eval's ``arabculture_mcq``) is read as it.
Metric names are as the harnesses report them (lm-eval without the ``,none`` filter suffix).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Column:
    """One column: `metric` of `task` times `scale` (x100 for lm-eval's accuracies in [0, 1]; our generative
    metrics are reported x100 already). `task` None is the row's task; ``"{row}_eval350"`` is formatted with it."""

    label: str
    metric: str  # ``"steps_faithfulness_step_{row}"`` is formatted with the row's key, as `task` is
    task: str | None = None
    scale: float = 1.0
    # members of the averaged family `task` names whose own value is the cell when a run has that member and
    # no other (GIMMICK's "Avg." of a text-only model is its T average, Tables 15-17)
    alone: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResultsTable:
    """A paper-shaped table of aggregated results. ``rows``: (label, task) pairs, one row per model and
    pair; empty: one row per model, every column naming its task."""

    key: str  # file name: <key>.md / <key>.csv
    title: str
    source: str  # the paper's table it mirrors, with its lines
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, str], ...] = ()
    digits: int = 2
    # one table and heatmap per model, rows x columns (ARB's Figures 15-16: a domain x attribute map per model)
    per_model: bool = False


def document_field(name: str) -> Callable[[str, Mapping[str, Any]], Sequence[Any]]:
    """A group-of function reading ``doc[name]``: a list value counts the item in each of its entries."""

    def group_of(task: str, doc: Mapping[str, Any]) -> Sequence[Any]:
        value = doc.get(name)  # a document without the field is its own group, None
        return list(value) if isinstance(value, (list, tuple)) else [value]

    group_of.__name__ = f"field_{name}"
    return group_of


Pools = tuple[tuple[str, ...], ...]
"""Task pools in order of preference: a run's items come from the first pool it has any task of, pooled
over that pool's tasks it has (Pearl, else Pearl-Lite, whose items are Pearl's; JEEM's four dialects)."""


@dataclass(frozen=True)
class Breakdown:
    """Per-item `metric` of a run's first task pool (`Pools`), grouped by ``group_of(task, doc)``; each
    group's mean with a bootstrap CI, as a table and a model x group heatmap."""

    key: str
    title: str
    source: str
    tasks: Pools
    metric: str
    group_of: Callable[[str, Mapping[str, Any]], Sequence[Any]]
    group_label: str  # the header of the group column: "country", "question type", ...
    scale: float = 1.0
    labels: Mapping[str, str] = field(default_factory=dict)  # group value -> printed label
    # a second grouping shown as columns within each model (ArabCulture's CS / ¬CS, Tables 4-7): a column per
    # model and split value, ``org/model · CS``
    split_of: Callable[[str, Mapping[str, Any]], Sequence[Any]] | None = None


def columns(task: str | None, pairs: Iterable[tuple[str, str]]) -> tuple[Column, ...]:
    """A column per (label, metric), all of `task`: a paper table's block of metrics of one task."""
    return tuple(Column(label, metric, task) for label, metric in pairs)


def breakdowns(
    tasks: Pools,
    group_of: Callable[[str, Mapping[str, Any]], Sequence[Any]],
    group_label: str,
    figures: Iterable[tuple[str, str, str, str]],
) -> tuple[Breakdown, ...]:
    """A `Breakdown` per (key, title, source, metric), all of the same task pools and grouping: a paper's figures
    of several metrics by one field (ARB's answer and steps by domain, Pearl's Overall and CAS by country)."""
    return tuple(
        Breakdown(key, title, source, tasks, metric, group_of, group_label) for key, title, source, metric in figures
    )


@dataclass(frozen=True)
class ScorecardColumn:
    """A benchmark's column of the Arab-world scorecard: per-item `metric` of a run's first task pool
    (`Pools`), grouped by the Arab countries ``countries_of(task, doc)`` names (`arab_mm_tasks.core.countries`)."""

    label: str
    tasks: Pools
    metric: str
    countries_of: Callable[[str, Mapping[str, Any]], Sequence[Any]]
    scale: float = 1.0
    note: str = ""  # what the column measures, for the page


@dataclass(frozen=True)
class Report:
    tables: tuple[ResultsTable, ...] = ()
    breakdowns: tuple[Breakdown, ...] = ()
    scorecard: ScorecardColumn | None = None


def cell_task(column: Column, row_task: str | None) -> str:
    """The task a cell reads: the column's (formatted with the row's task), else the row's."""
    if column.task is None:
        if row_task is None:
            raise ValueError(f"column {column.label!r} names no task and its table has no rows")
        return row_task
    return column.task.format(row=row_task) if row_task is not None else column.task


def cell_metric(column: Column, row_task: str | None) -> str:
    """The metric a cell reads: the column's, formatted with the row's key when it has ``{row}``."""
    return column.metric.format(row=row_task) if row_task is not None else column.metric
