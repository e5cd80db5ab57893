"""The task-spec core: one declarative object per task variant.

A `TaskSpec` says where a task's documents come from, how one document becomes a
request (prompt, choices, gold index), how it is scored and how scores are broken down.
It imports no harness: `harness.lm_eval` and `harness.lighteval` translate specs, so a
prompt is written once and both harnesses are guaranteed to see the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal


class RecordError(ValueError):
    """A dataset record that cannot be turned into a request; the message names record and field."""


@dataclass(frozen=True)
class Request:
    """What a harness needs for one document of a log-likelihood multiple-choice task.

    The model scores ``target_delimiter + choices[i]`` as a continuation of ``query``;
    ``gold`` is the index of the correct choice.
    """

    query: str
    choices: list[str]
    gold: int


@dataclass(frozen=True)
class Subset:
    """One dataset config evaluated as its own subtask (an ArabCulture country, say)."""

    name: str  # task-name suffix, e.g. "egypt"
    config: str  # dataset config, e.g. "Egypt"
    alias: str  # how results tables print it, e.g. "Egypt"
    group: str  # key into TaskSpec.groups, e.g. "nile_valley"


@dataclass(frozen=True)
class TaskSpec:
    """One task variant, e.g. ``arabculture_mcq_ar_region``.

    Data:
        benchmark: key of the dataset source (`arab_mm_tasks.sources`).
        split: the split evaluated; every benchmark here is test-only and zero-shot.
        all_config: config holding every record (one task over all of it in lighteval).
        subsets / groups: per-config subtasks and the groups that aggregate them
            (lm-eval prints subset, group and overall rows).
    Prompting:
        render: document -> `Request`; pure, and raises `RecordError` on a bad record.
        target_delimiter: put between the query and each choice.
    Scoring:
        output_type: only "multiple_choice" (log-likelihood ranking) for now.
        metrics: lm-eval metric names; lighteval gets the equivalent metrics.
        weight_by_size: True = micro average over documents at group and overall level.
        breakdown_keys: document fields results are broken down by.
    Versioning:
        version: bump when the prompt, the data or the metric changes.
    """

    name: str
    benchmark: str
    description: str
    render: Callable[[Mapping[str, Any]], Request]
    subsets: tuple[Subset, ...]
    groups: Mapping[str, str]
    split: str = "test"
    all_config: str = "all"
    output_type: Literal["multiple_choice"] = "multiple_choice"
    target_delimiter: str = ""
    metrics: tuple[str, ...] = ("acc", "acc_norm")
    weight_by_size: bool = True
    breakdown_keys: tuple[str, ...] = ()
    aliases: tuple[str, ...] = field(default=())
    version: int = 1

    def subset_task(self, subset: Subset) -> str:
        return f"{self.name}_{subset.name}"

    def group_task(self, group: str) -> str:
        return f"{self.name}_{group}"

    def subsets_of(self, group: str) -> list[Subset]:
        return [s for s in self.subsets if s.group == group]
