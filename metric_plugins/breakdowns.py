"""
Accuracy broken down by document fields: country, region, topic, country-specific (CS) flag.

The paper's analysis tables (ArabCulture Tables 4-7) report accuracy per location and per
topic, split CS vs not-CS. lm-eval already prints per-country and per-region rows; this adds
any other field of the documents, read back from lm-eval's ``--log_samples`` files or
lighteval's ``--save-details`` parquet files:

    arab-mm-tasks breakdown results/ --by topic,country_specific

Each sample counts once in the group of its field values; a missing field is an error naming
the sample, and a null value is its own group (``None``), never dropped. A task none of whose
samples has a field (Pearl-X has no domain) is one `absent_keys` finds, for the caller to skip.

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

from metric_plugins.markdown import markdown_text


@dataclass(frozen=True)
class BreakdownRow:
    group: tuple[Any, ...]  # one value per key, in the order of `keys`
    n: int
    score: float  # mean of the metric over the group's scored samples (lm-eval acc: in [0, 1]); NaN if none
    unscored: int = 0  # samples of the group whose generative value has no score (a judgement not made)


def sample_score(value: Any) -> float | None:
    """A sample's value of a metric: a number, or a generative metric's ``{"score": ...}`` (None: unscored)."""
    if isinstance(value, Mapping):
        score = value.get("score")
        return None if score is None else float(score)
    return float(value)


def breakdown(samples: Iterable[Mapping[str, Any]], keys: Sequence[str], metric: str = "acc") -> list[BreakdownRow]:
    """Mean `metric` per combination of `keys` values in each sample's ``doc``, groups in first-seen order."""
    totals: dict[tuple[Any, ...], list[float | None]] = defaultdict(list)
    for index, sample in enumerate(samples):
        doc = sample.get("doc", {})
        missing = [k for k in keys if k not in doc]
        if missing or metric not in sample:
            what = f"field(s) {missing} in 'doc'" if missing else f"metric {metric!r}"
            raise KeyError(f"sample {sample.get('doc_id', index)} ({doc.get('id', 'no id')}) has no {what}")
        totals[tuple(doc[k] for k in keys)].append(sample_score(sample[metric]))
    rows = []
    for group, values in totals.items():
        scored = [v for v in values if v is not None]
        mean = sum(scored) / len(scored) if scored else float("nan")
        rows.append(BreakdownRow(group, len(values), mean, len(values) - len(scored)))
    return rows


def absent_keys(samples: Iterable[Mapping[str, Any]], keys: Sequence[str]) -> list[str]:
    """The `keys` that no sample's ``doc`` has (a task that does not record them at all)."""
    docs = [sample.get("doc", {}) for sample in samples]
    return [key for key in keys if not any(key in doc for doc in docs)]


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


def format_table(rows: list[BreakdownRow], keys: Sequence[str], metric: str, percent: bool = True) -> str:
    """A markdown table: scores in [0, 1] as percent (as in the papers), or as they are (``percent=False``:
    generative metrics, already x100 or on a rubric scale), with an unscored column when any sample has none.
    Every header and group value (text from the run files) is escaped by `markdown_text`, so a ``|``, a line
    break or HTML in a document field stays literal text in its own cell."""
    unscored = any(r.unscored for r in rows)
    name = f"{metric} (%)" if percent else metric
    columns = [*keys, "n", name, *(["unscored"] if unscored else [])]
    header = f"| {' | '.join(map(markdown_text, columns))} |\n|{'---|' * len(columns)}"
    body = []
    for r in rows:
        cells = [*map(markdown_text, r.group), str(r.n), f"{100 * r.score:.1f}" if percent else f"{r.score:.2f}"]
        body.append(f"| {' | '.join(cells + ([str(r.unscored)] if unscored else []))} |")
    return "\n".join([header, *body])
