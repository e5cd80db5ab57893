"""Score a benchmark's released generations without a model: ``arab-mm-tasks score``.

Some authors publish their models' outputs (ARB: GPT-4.1's steps and answers in its CSV). A
benchmark that declares ``read_predictions`` turns such a file into (document, response) pairs;
here every metric of the chosen task scores them exactly as a harness run would
(`arab_mm_tasks.core.scoring`: per sample, then micro / macro / per region), judged metrics with the
configured judge (``--judge``, or ``ARAB_MM_JUDGE_*``; without one they are NaN and unscored):

    arab-mm-tasks score arb gpt-4.1-final-responses.csv --judge model=gpt-4o --out scored/

writes ``scored/results.json`` and ``scored/samples.jsonl`` (every sample's values). A built
folder's ``predictions/<model>.jsonl`` (what ``arab-mm-tasks build arb --csv ...`` writes) scores
the same way, against that folder's gold rows.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arab_mm_tasks.core import judging
from arab_mm_tasks.core.registry import get_benchmark, get_spec
from arab_mm_tasks.core.scoring import aggregation_kind, aggregator, score_sample


def score_released(
    benchmark: str,
    path: str | Path,
    *,
    task: str | None = None,
    model: str | None = None,
    metrics: Sequence[str] | None = None,
    judge: str | None = None,
    out_dir: str | Path | None = None,
) -> dict[str, Any]:
    """``{"task", "model", "samples", "results": {metric name: score or None}}`` for a released file."""
    declared = get_benchmark(benchmark)
    if declared.read_predictions is None:
        raise KeyError(f"benchmark {benchmark!r} publishes no generations to score")
    spec = get_spec(task or declared.name)
    if spec.benchmark != declared.name:
        raise KeyError(f"task {spec.name!r} is not a task of {benchmark!r}")
    if metrics:
        unknown = sorted(set(metrics) - {m.name for m in spec.generative_metrics})
        if unknown:
            raise KeyError(f"{spec.name} has no metric {unknown}; it has {[m.name for m in spec.generative_metrics]}")
        chosen = tuple(m for m in spec.generative_metrics if m.name in metrics)
        spec = dataclasses.replace(spec, generative_metrics=chosen)
    if judge is not None:
        judging.configure(judge)
    pairs = declared.read_predictions(path, model)
    values = [score_sample(spec, doc, response) for doc, response in pairs]
    results = {}
    for name in spec.metric_names():
        score = aggregator(aggregation_kind(spec, name))([v[name] for v in values])
        results[name] = None if math.isnan(score) else score
    report = {"task": spec.name, "file": str(path), "model": model, "samples": len(values), "results": results}
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
        with (out / "samples.jsonl").open("w", encoding="utf-8") as stream:
            for (doc, response), value in zip(pairs, values, strict=True):
                record = {
                    "id": doc.get("id"),
                    "response": response,
                    **{m.name: value[m.name] for m in spec.generative_metrics},
                }
                stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    return report


def judge_released(path: str | Path, judge: str | None, out_dir: Path) -> dict[str, Any]:
    """`arab-mm-tasks judge` on a released file: the judged metrics of the one benchmark that reads such files."""
    from arab_mm_tasks.core.registry import all_benchmarks

    readers = [b for b in all_benchmarks().values() if b.read_predictions is not None]
    if len(readers) != 1:
        raise KeyError(f"{path}: several benchmarks read released files; use `arab-mm-tasks score BENCHMARK {path}`")
    spec = get_spec(readers[0].name)
    judged = [m.name for m in spec.generative_metrics if m.judge_prompt]
    report = score_released(readers[0].name, path, metrics=judged, judge=judge, out_dir=out_dir)
    print_report(report)
    return report


def print_report(report: dict[str, Any]) -> None:
    print(f"{report['task']}: {report['samples']} samples from {report['file']}")
    for name, score in report["results"].items():
        print(f"  {name}: {'n/a' if score is None else round(score, 2)}")
