"""
Scores per region when a sample can belong to several regions, and the two overall averages.

GIMMICK counts a sample in **every** region of its cultural event (paper Table 5; the per-region
denominators of Tables 10 and 14 confirm it, e.g. GPT-4o CIVQA W 31.58 = 90/285). Its "Average"
column is then computed two ways (specs/gimmick.md §3.6, checked against the tables):

- ``micro``: the mean over unique samples, each once (CIVQA and CVVQA relaxed accuracy);
- ``macro``: the mean of the per-region means (COQA, CKQA and every judge score).

Each harness hands these functions one item per sample: ``(score, regions)``, where ``score`` is
a number or ``None`` for a sample that could not be scored (an invalid judge reply, say).
``None`` scores are left out of every mean; the harness reports how many there were.

Examples:
    >>> items = [(100.0, ["A"]), (0.0, ["A", "W"]), (100.0, ["W"]), (100.0, ["SA"])]
    >>> region_mean(items, "A"), region_mean(items, "W"), region_mean(items, "SA")
    (50.0, 50.0, 100.0)
    >>> micro_mean(items)  # 3 of 4 samples
    75.0
    >>> macro_mean(items, ["A", "W", "SA"])  # (50 + 50 + 100) / 3
    66.66666666666667
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

Item = tuple[float | None, Sequence[str]]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def micro_mean(items: Iterable[Item]) -> float:
    """Mean score over samples, each counted once; NaN when no sample has a score."""
    return _mean([score for score, _ in items if score is not None])


def region_mean(items: Iterable[Item], region: str) -> float:
    """Mean score over the samples that belong to `region`; NaN when the region has none."""
    return _mean([score for score, regions in items if score is not None and region in regions])


def macro_mean(items: Iterable[Item], regions: Sequence[str]) -> float:
    """Mean of the per-region means over `regions`, skipping regions with no scored sample.

    On a full GIMMICK split every region has samples and this is the paper's six-region mean;
    on a ``--limit`` run it averages the regions that are present (the per-region rows show NaN
    for the others).
    """
    items = list(items)
    means = [region_mean(items, region) for region in regions]
    return _mean([m for m in means if not math.isnan(m)])


def unscored(items: Iterable[Item]) -> int:
    """How many samples have no score (reported next to the mean, never folded into it)."""
    return sum(score is None for score, _ in items)
