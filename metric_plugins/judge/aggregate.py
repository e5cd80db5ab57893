"""Judge scores to one number, with the invalid and failed counts reported next to it.

Aggregation is a pure function over judgements, separate from judging, so a harness metric
can average judgements it reads back from saved samples as well as ones it just made.

Invalid replies (the judge answered, the answer never parsed) follow a named policy:

- ``"exclude"`` (default): left out of the mean; the mean is over valid judgements only.
- ``"zero"``: averaged in as 0 (a denominator of all judged items, e.g. Pearl's binary metrics,
  whose reported percentages are fractions of the full subset).
- ``"minus_one"``: averaged in as -1 (times the metric's weights), every invalid judgement alike.
- ``"authors"`` (a run setting for harness metrics, not for `mean_score`): each metric's own
  compatibility substitute, as its benchmark's released scorer makes it
  (``GenerativeMetric.authors_invalid``); scores an invalid reply does give (`JsonScores.partial`)
  are kept. Pearl's scorer: -1 for each rubric dimension the reply does not give, 0 for its
  binary ACC and CAS judgements. Use it only to reproduce the authors' numbers.

Failed requests (no reply at all) are never averaged in, under any policy: they are not
judgements. They are counted, and a re-run asks for them again.

Examples:
    >>> from metric_plugins.judge.schema import Judgement
    >>> def j(score, valid=True):
    ...     return Judgement(None, "k", {"score": score} if valid else None, score if valid else None, valid, "", False)
    >>> judged = [j(80.0), j(60.0), j(0.0, valid=False)]
    >>> mean_score(judged).as_dict()
    {'score': 70.0, 'n_valid': 2, 'n_invalid': 1, 'n_failed': 0, 'policy': 'exclude'}
    >>> mean_score(judged, "zero").score
    46.666666666666664
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from metric_plugins.judge.schema import Judgement

InvalidPolicy = Literal["exclude", "zero", "minus_one"]
INVALID_VALUES: dict[str, float | None] = {"exclude": None, "zero": 0.0, "minus_one": -1.0}
# What a run may set: the policies above, or each metric's authors' substitute (``authors``).
RUN_POLICIES = (*INVALID_VALUES, "authors")


@dataclass(frozen=True)
class ScoreSummary:
    """A mean judge score and what went into it. `score` is None when nothing could be averaged."""

    score: float | None
    n_valid: int
    n_invalid: int
    n_failed: int
    policy: InvalidPolicy

    def as_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "n_valid": self.n_valid,
            "n_invalid": self.n_invalid,
            "n_failed": self.n_failed,
            "policy": self.policy,
        }


def mean_score(
    judgements: Iterable[Judgement], policy: InvalidPolicy = "exclude", name: str | None = None
) -> ScoreSummary:
    """Mean of score `name` (default: each judgement's primary score) under the invalid-reply `policy`."""
    if policy not in INVALID_VALUES:
        raise ValueError(f"invalid_policy must be one of {sorted(INVALID_VALUES)}, got {policy!r}")
    values: list[float] = []
    n_valid = n_invalid = n_failed = 0
    for judgement in judgements:
        if judgement.valid:
            n_valid += 1
            if name is None:
                values.append(float(judgement.score))  # type: ignore[arg-type]
            elif judgement.scores is None or name not in judgement.scores:
                raise KeyError(f"judgement {judgement.item_id!r} has no score {name!r}")
            else:
                values.append(float(judgement.scores[name]))
        elif judgement.failed:
            n_failed += 1
        else:
            n_invalid += 1
            substitute = INVALID_VALUES[policy]
            if substitute is not None:
                values.append(substitute)
    score = sum(values) / len(values) if values else None
    return ScoreSummary(score, n_valid, n_invalid, n_failed, policy)
