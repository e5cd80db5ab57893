"""`evaluate` wrapper of `metric_plugins.labse`: its docstring is the card."""

from __future__ import annotations

import evaluate

from metric_plugins import labse
from metric_plugins.evaluate_info import metric_info

_KWARGS = """
Args:
    predictions: generated texts.
    references: one reference text per prediction.
    model: a sentence-transformers Hub id or folder (default: sentence-transformers/LaBSE, or $ARAB_MM_LABSE_MODEL).
    batch_size, device: encoding batch size (32) and device (CUDA when present).
Returns:
    labse: the mean cosine similarity x100; sentence_labse: one value per pair.
"""

_CITATION = """\
@inproceedings{feng2022labse, title={Language-agnostic BERT Sentence Embedding},
  author={Feng, Fangxiaoyu and Yang, Yinfei and Cer, Daniel and Arivazhagan, Naveen and Wang, Wei},
  booktitle={ACL}, year={2022}}
"""


class LabseSimilarity(evaluate.Metric):
    """Cosine similarity of LaBSE sentence embeddings, per pair and on average."""

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(labse, _CITATION, _KWARGS)

    def _compute(self, predictions: list[str], references: list[str], **options: object) -> dict[str, object]:
        scores = labse.sentence_scores(predictions, references, **options)  # type: ignore[arg-type]
        return {"labse": sum(scores) / len(scores) if scores else float("nan"), "sentence_labse": scores}
