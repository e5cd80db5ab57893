"""`evaluate` wrapper of `metric_plugins.aldi`: its docstring is the card."""

from __future__ import annotations

import datasets
import evaluate

from metric_plugins import aldi
from metric_plugins.evaluate_info import metric_info

_KWARGS = """
Args:
    predictions: the texts to score (no references).
    model: a Hub id or folder (default: AMR-KELEG/Sentence-ALDi, or $ARAB_MM_ALDI_MODEL).
    batch_size, device: encoding batch size (32) and device (CUDA when present).
Returns:
    aldi: the mean dialectness x100 (0 = MSA, 100 = fully dialectal); sentence_aldi: one value per text.
"""

_CITATION = """\
@inproceedings{keleg2023aldi, title={ALDi: Quantifying the Arabic Level of Dialectness of Text},
  author={Keleg, Amr and Goldwater, Sharon and Magdy, Walid}, booktitle={EMNLP}, year={2023}}
"""


class Aldi(evaluate.Metric):
    """Arabic Level of Dialectness with the authors' Sentence-ALDi model."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(aldi, _CITATION, _KWARGS, datasets.Features({"predictions": datasets.Value("string")}))

    def _compute(self, predictions: list[str], **options: object) -> dict[str, object]:
        scores = aldi.sentence_scores(predictions, **options)  # type: ignore[arg-type]
        return {"aldi": sum(scores) / len(scores) if scores else float("nan"), "sentence_aldi": scores}
