"""`evaluate` wrapper of `metric_plugins.bertscore`: its docstring is the card."""

from __future__ import annotations

import evaluate

from metric_plugins import bertscore
from metric_plugins.evaluate_info import metric_info

_KWARGS = """
Args:
    predictions: generated texts.
    references: one reference text per prediction.
    model: a Hub id or local folder (default: CAMeL-Lab/bert-base-arabic-camelbert-mix, or $ARAB_MM_BERTSCORE_MODEL).
    layer: the hidden layer (default: 9 for the pinned CAMeLBERT, else the last).
    idf: weight tokens by inverse document frequency over the references (default False).
    batch_size, device: encoding batch size (32) and device (CUDA when present).
Returns:
    precision, recall, f1: one value per pair, x100 (JEEM reports recall).
"""

_CITATION = """\
@inproceedings{zhang2020bertscore, title={BERTScore: Evaluating Text Generation with BERT},
  author={Zhang, Tianyi and Kishore, Varsha and Wu, Felix and Weinberger, Kilian Q. and Artzi, Yoav},
  booktitle={ICLR}, year={2020}}
"""


class ArabicBertScore(evaluate.Metric):
    """BERTScore with an Arabic encoder (CAMeLBERT-mix), precision / recall / F1 per pair."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(bertscore, _CITATION, _KWARGS)

    def _compute(self, predictions: list[str], references: list[str], **options: object) -> dict[str, list[float]]:
        return bertscore.score(predictions, references, **options)  # type: ignore[arg-type]
