"""`evaluate` wrapper of `metric_plugins.bleu`: its docstring is the card."""

from __future__ import annotations

import evaluate

from metric_plugins import bleu
from metric_plugins.arabic_text import Normalization
from metric_plugins.evaluate_info import metric_info

_KWARGS = """
Args:
    predictions: generated texts.
    references: one reference text per prediction.
    mode: "arabic" (default: Arabic tokenisation and normalisation, sacrebleu) or "arb" (ARB's published numbers).
    normalization: a dict of `metric_plugins.arabic_text.Normalization` options, e.g. {"ta_marbuta": False}.
Returns:
    bleu: corpus BLEU x100 ("arb": the mean sentence BLEU); sentence_bleu: one score per pair.
"""

_CITATION = """\
@inproceedings{papineni2002bleu, title={BLEU: a Method for Automatic Evaluation of Machine Translation},
  author={Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing}, booktitle={ACL}, year={2002}}
"""


class ArabicBleu(evaluate.Metric):
    """BLEU on Arabic-aware tokens, corpus and sentence level."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(bleu, _CITATION, _KWARGS)

    def _compute(
        self, predictions: list[str], references: list[str], mode: str = "arabic", normalization: dict | None = None
    ) -> dict[str, object]:
        options = Normalization(**(normalization or {}))
        return {
            "bleu": bleu.corpus_score(predictions, references, mode=mode, normalization=options),
            "sentence_bleu": bleu.sentence_scores(predictions, references, mode=mode, normalization=options),
        }
