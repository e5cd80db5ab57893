"""`evaluate` wrapper of `metric_plugins.cider`: its docstring is the card."""

from __future__ import annotations

import evaluate

from metric_plugins import cider
from metric_plugins.arabic_text import Normalization
from metric_plugins.evaluate_info import metric_info, pair_features

_KWARGS = """
Args:
    predictions: generated captions.
    references: per prediction, one reference caption or a list of them.
    normalization: a dict of `metric_plugins.arabic_text.Normalization` options, e.g. {"ta_marbuta": False}.
Returns:
    cider_d: the corpus CIDEr-D x100 (IDF from these references); sentence_cider_d: one score per caption.
"""

_CITATION = """\
@inproceedings{vedantam2015cider, title={CIDEr: Consensus-based Image Description Evaluation},
  author={Vedantam, Ramakrishna and Zitnick, C. Lawrence and Parikh, Devi}, booktitle={CVPR}, year={2015}}
"""


class CiderD(evaluate.Metric):
    """CIDEr-D over a corpus of captions, document frequencies computed once."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(cider, _CITATION, _KWARGS, pair_features("string", reference_lists=True))

    def _compute(
        self, predictions: list[str], references: list, normalization: dict | None = None
    ) -> dict[str, object]:
        scores = cider.sentence_scores(predictions, references, normalization=Normalization(**(normalization or {})))
        return {"cider_d": sum(scores) / len(scores) if scores else float("nan"), "sentence_cider_d": scores}
