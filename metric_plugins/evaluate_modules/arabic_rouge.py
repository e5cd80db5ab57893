"""`evaluate` wrapper of `metric_plugins.rouge`: its docstring is the card."""

from __future__ import annotations

import evaluate

from metric_plugins import rouge
from metric_plugins.arabic_text import Normalization
from metric_plugins.evaluate_info import metric_info

_KWARGS = """
Args:
    predictions: generated texts.
    references: one reference text per prediction.
    mode: "arabic" (default: Arabic tokenisation and normalisation) or "arb" (ARB's published numbers).
    measure: "fmeasure" (default), "recall" or "precision".
    normalization: a dict of `metric_plugins.arabic_text.Normalization` options, e.g. {"ta_marbuta": False}.
Returns:
    rouge1, rouge2, rougeL: means over the pairs, x100.
"""

_CITATION = """\
@inproceedings{lin2004rouge, title={ROUGE: A Package for Automatic Evaluation of Summaries},
  author={Lin, Chin-Yew}, booktitle={Text Summarization Branches Out}, year={2004}}
"""


class ArabicRouge(evaluate.Metric):
    """ROUGE-1/2/L with a tokenizer that keeps Arabic letters."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(rouge, _CITATION, _KWARGS)

    def _compute(
        self,
        predictions: list[str],
        references: list[str],
        mode: str = "arabic",
        measure: str = "fmeasure",
        normalization: dict | None = None,
    ) -> dict[str, float]:
        options = Normalization(**(normalization or {}))
        return rouge.compute(predictions, references, mode=mode, measure=measure, normalization=options)
