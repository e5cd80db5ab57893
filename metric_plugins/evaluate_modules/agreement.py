"""`evaluate` wrapper of `metric_plugins.agreement.judge_agreement`: its docstring is the card."""

from __future__ import annotations

import evaluate

from metric_plugins import agreement
from metric_plugins.evaluate_info import metric_info, pair_features

_KWARGS = """
Args:
    predictions: one judge or metric score per item.
    references: per item, the human rating, or a list with one rating per annotator (None = not rated).
    level: Krippendorff's level of measurement: "interval" (default), "ordinal", "nominal" or "ratio".
    confidence: the ICC confidence level (default 0.95).
    missing: "error" (default) or "drop": items with a missing rating in the humans-only ICC.
Returns:
    kendall_tau_c (x100), icc3_1 with its CI, krippendorff_alpha (x100), and with several
    annotators the humans-only icc3_1_humans, icc3_k_humans and krippendorff_alpha_humans.
"""

_CITATION = """\
@article{shrout1979intraclass, title={Intraclass correlations: uses in assessing rater reliability},
  author={Shrout, Patrick E. and Fleiss, Joseph L.}, journal={Psychological Bulletin}, volume={86}, number={2},
  pages={420--428}, year={1979}}
"""


class Agreement(evaluate.Metric):
    """Kendall tau-c (JEEM), ICC(3,1)/ICC(3,k) (Pearl) and Krippendorff's alpha (ARB) against human ratings."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(agreement, _CITATION, _KWARGS, pair_features("float64", reference_lists=True))

    def _compute(
        self,
        predictions: list[float],
        references: list[float] | list[list[float | None]],
        level: str = "interval",
        confidence: float = 0.95,
        missing: str = "error",
    ) -> dict[str, float]:
        return agreement.judge_agreement(predictions, references, level=level, confidence=confidence, missing=missing)
