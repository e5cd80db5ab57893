"""What each `evaluate` module of ours (`metric_plugins/evaluate_modules/<name>.py`) declares, written once.

Its card is the wrapped metric module's docstring; its inputs are predictions scored against references
of the same type, one per prediction or (`reference_lists`) also a list per prediction.
"""

from __future__ import annotations

from types import ModuleType

import datasets
import evaluate


def pair_features(
    dtype: str = "string", *, reference_lists: bool = False
) -> datasets.Features | list[datasets.Features]:
    """``predictions`` and ``references`` of `dtype`; with `reference_lists`, a list of references is accepted first."""
    one = datasets.Features({"predictions": datasets.Value(dtype), "references": datasets.Value(dtype)})
    if not reference_lists:
        return one
    several = datasets.Features(
        {"predictions": datasets.Value(dtype), "references": datasets.Sequence(datasets.Value(dtype))}
    )
    return [several, one]


def metric_info(
    metric: ModuleType,
    citation: str,
    inputs: str,
    features: datasets.Features | list[datasets.Features] | None = None,
) -> evaluate.MetricInfo:
    """The `evaluate` card of `metric` (a `metric_plugins` module): its docstring, the paper's BibTeX, the arguments
    (`inputs`) and its input columns (default: one string reference per string prediction)."""
    return evaluate.MetricInfo(
        description=metric.__doc__,
        citation=citation,
        inputs_description=inputs,
        features=pair_features() if features is None else features,
    )
