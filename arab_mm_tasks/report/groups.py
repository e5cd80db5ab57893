"""Per-item scores grouped by a field of their documents, each group's mean with a bootstrap interval.

The interval is the percentile bootstrap over the group's items (1,000 resamples, 95%), seeded so
that a report is reproducible, and drawn over the items in a canonical order (sorted by record id,
`item_key`), so the same items give the same interval whether lm-eval or lighteval logged them, in
whatever order. An item whose score is missing (a judgement not made, a NaN from a
scorer) is counted as unscored and left out of the mean, as the harnesses do (the one rule of
`arab_mm_tasks.report.harness_outputs.score_of`).

>>> samples = [("t", {"doc": {"country": "Egypt"}, "acc": v}) for v in (1.0, 0.0, 1.0, 1.0)]
>>> (egypt,) = group_scores(samples, "acc", lambda task, doc: [doc["country"]], scale=100)
>>> egypt.group, egypt.n, egypt.mean
('Egypt', 4, 75.0)
>>> egypt.low <= 75.0 <= egypt.high
True
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arab_mm_tasks.report.harness_outputs import item_score

BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class GroupScore:
    group: Any
    n: int  # scored items
    mean: float  # NaN when no item is scored
    low: float  # bootstrap interval
    high: float
    unscored: int = 0

    def cell(self, digits: int = 1) -> str:
        """``54.2 [48.1, 60.3] n=38`` (or ``– n=0``), then ``(10 unscored)`` when items were left unscored."""
        unscored = f" ({self.unscored} unscored)" if self.unscored else ""
        if self.n == 0:
            return f"– n=0{unscored}"
        return f"{self.mean:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}] n={self.n}{unscored}"


def bootstrap_interval(values: Sequence[float], seed: int = 0) -> tuple[float, float]:
    """The 95% percentile-bootstrap interval of the mean of `values` (NaN, NaN when empty)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = np.empty(BOOTSTRAP_RESAMPLES)
    chunk = max(1, 2_000_000 // data.size)  # bounded memory for large groups
    for start in range(0, BOOTSTRAP_RESAMPLES, chunk):
        stop = min(start + chunk, BOOTSTRAP_RESAMPLES)
        means[start:stop] = data[rng.integers(0, data.size, (stop - start, data.size))].mean(axis=1)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def item_key(task: str, sample: Mapping[str, Any]) -> str:
    """A key that orders items the same whichever harness logged them: the record id (``doc["id"]``), else the
    document itself as canonical JSON (lm-eval's ``doc_id`` and lighteval's row index differ for one item)."""
    doc = sample.get("doc") or {}
    record = doc.get("id") if isinstance(doc, Mapping) else None
    return str(record) if record is not None else json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str)


def group_scores(
    samples: Iterable[tuple[str, Mapping[str, Any]]],
    metric: str,
    group_of: Callable[[str, Mapping[str, Any]], Sequence[Any]],
    scale: float = 1.0,
    keep: Callable[[Any], Any] = lambda group: group,
) -> list[GroupScore]:
    """One `GroupScore` per group value, in first-seen order. `samples` are (task, sample) pairs; a sample
    counts once in each group ``group_of(task, doc)`` names after ``keep`` (a None from ``keep`` drops it)."""
    scores: dict[Any, list[tuple[str, float]]] = defaultdict(list)
    unscored: dict[Any, int] = defaultdict(int)
    for task, sample in samples:
        if metric not in sample:
            continue  # a metric the sample's task does not compute (ALDi on MSA): not an unscored item
        score = item_score(sample, metric)
        for raw in group_of(task, sample.get("doc", {})):
            group = keep(raw)
            if group is None:
                continue
            if score is None:
                unscored[group] += 1
                scores.setdefault(group, [])
            else:
                scores[group].append((item_key(task, sample), score * scale))
    rows = []
    for group, keyed in scores.items():
        values = [value for _, value in sorted(keyed)]  # canonical order: the interval ignores the logging order
        low, high = bootstrap_interval(values)
        mean = sum(values) / len(values) if values else math.nan
        rows.append(GroupScore(group, len(values), mean, low, high, unscored[group]))
    return rows
