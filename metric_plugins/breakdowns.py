"""
Accuracy broken down by document fields: country, region, topic, country-specific (CS) flag.

The paper's analysis tables (ArabCulture Tables 4-7) report accuracy per location and per
topic, split CS vs not-CS. lm-eval already prints per-country and per-region rows; this adds
any other field of the documents, read back from lm-eval's ``--log_samples`` files or
lighteval's ``--save-details`` parquet files:

    arab-mm-tasks breakdown results/ --by topic,country_specific

Each sample counts once in the group of its field values; a missing field is an error naming
the sample, and a null value is its own group (``None``), never dropped.

Examples:
    >>> samples = [{"doc": {"topic": "Food"}, "acc": 1.0}, {"doc": {"topic": "Food"}, "acc": 0.0},
    ...            {"doc": {"topic": None}, "acc": 1.0}]
    >>> [(row.group, row.n, row.score) for row in breakdown(samples, ["topic"])]
    [(('Food',), 2, 0.5), ((None,), 1, 1.0)]
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class BreakdownRow:
    group: tuple[Any, ...]  # one value per key, in the order of `keys`
    n: int
    score: float  # mean of the metric over the group's samples, in [0, 1]


def breakdown(samples: Iterable[Mapping[str, Any]], keys: Sequence[str], metric: str = "acc") -> list[BreakdownRow]:
    """Mean `metric` per combination of `keys` values in each sample's ``doc``, groups in first-seen order."""
    totals: dict[tuple[Any, ...], list[float]] = defaultdict(list)
    for index, sample in enumerate(samples):
        doc = sample.get("doc", {})
        missing = [k for k in keys if k not in doc]
        if missing or metric not in sample:
            what = f"field(s) {missing} in 'doc'" if missing else f"metric {metric!r}"
            raise KeyError(f"sample {sample.get('doc_id', index)} ({doc.get('id', 'no id')}) has no {what}")
        totals[tuple(doc[k] for k in keys)].append(float(sample[metric]))
    return [BreakdownRow(group, len(values), sum(values) / len(values)) for group, values in totals.items()]


def read_samples(paths: Iterable[str | Path]) -> Iterator[tuple[str, dict]]:
    """(task name, sample) from harness output files, or folders holding them.

    lm-eval ``samples_<task>_<timestamp>.jsonl`` lines are samples as they are. lighteval
    ``details_<task>|<shots>_<timestamp>.parquet`` rows become ``{"doc": doc.specific, **metric}``:
    the same shape, with the record id and breakdown fields our lighteval tasks put in ``specific``.
    """
    paths = list(map(Path, paths))
    files: list[Path] = []
    for path in paths:
        files += sorted([*path.rglob("samples_*.jsonl"), *path.rglob("details_*.parquet")]) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"no lm-eval samples_*.jsonl or lighteval details_*.parquet in {list(map(str, paths))}")
    for file in files:
        if file.suffix == ".parquet":
            yield from _lighteval_details(file)
            continue
        task = file.stem.removeprefix("samples_").rsplit("_", 1)[0]
        with file.open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    yield task, json.loads(line)


def _lighteval_details(file: Path) -> Iterator[tuple[str, dict]]:
    import pyarrow.parquet as pq

    task = file.stem.removeprefix("details_").split("|", 1)[0]
    for index, row in enumerate(pq.read_table(file, columns=["doc", "metric"]).to_pylist()):
        doc = row["doc"] or {}
        yield task, {"doc_id": index, "doc": dict(doc.get("specific") or {}), **row["metric"]}


def format_table(rows: list[BreakdownRow], keys: Sequence[str], metric: str) -> str:
    """A markdown table, scores in percent as in the papers."""
    header = f"| {' | '.join(keys)} | n | {metric} (%) |\n|{'---|' * (len(keys) + 2)}"
    body = [f"| {' | '.join(map(str, r.group))} | {r.n} | {100 * r.score:.1f} |" for r in rows]
    return "\n".join([header, *body])
