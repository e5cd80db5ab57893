"""Scorers that record their calls, for tests of when and how often the harness scores."""

from __future__ import annotations

import math
from collections.abc import Sequence

CALLS: list[tuple[str, int]] = []


def length_ratio(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    """100 x len(prediction) / len(reference); NaN for an empty prediction (a sample it cannot score)."""
    CALLS.append(("length_ratio", len(predictions)))
    return [100.0 * len(p) / len(r) if p else math.nan for p, r in zip(predictions, references, strict=True)]


def total_length_ratio(predictions: Sequence[str], references: Sequence[str]) -> float:
    """100 x total prediction length / total reference length: not the mean of the sample ratios."""
    CALLS.append(("total_length_ratio", len(predictions)))
    return 100.0 * sum(map(len, predictions)) / sum(map(len, references))
