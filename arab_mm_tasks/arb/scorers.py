"""ARB's similarity scorers (Table 4): the model's steps against the reference chain, batched per run.

The harness hands each scorer the full responses and the JSON targets (`arab_mm_tasks.arb.tasks.target`);
the compared texts are the response without its final-answer line (`answers.response_steps`) and the
gold ``steps`` as released. BLEU and ROUGE run in the paper-compatible mode (``mode="arb"``, which
reproduces Table 4's GPT-4.1 row from the released outputs, tests/arb/test_arb_table4.py); BERTScore is
F1 with the pinned Arabic encoder and LaBSE the pinned LaBSE (`metric_plugins.models`, overridable by
``ARAB_MM_BERTSCORE_MODEL`` / ``ARAB_MM_LABSE_MODEL``). The paper names neither BERTScore's model
nor its measure (docs/fidelity.md).

ROUGE-1, -2 and -L come from one rouge-score pass per run: the three scorers share it through a
small cache keyed by the run's texts, so each pair is scored once, not three times.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache

from arab_mm_tasks.arb.answers import response_steps
from metric_plugins import bertscore as bertscore_metric
from metric_plugins import bleu as bleu_metric
from metric_plugins import labse as labse_metric
from metric_plugins import rouge as rouge_metric


def texts(predictions: Sequence[str], targets: Sequence[str]) -> tuple[list[str], list[str]]:
    """(model steps, reference steps) for each sample."""
    return [response_steps(p) for p in predictions], [json.loads(t)["steps"] for t in targets]


def bleu(predictions: Sequence[str], targets: Sequence[str]) -> list[float]:
    """NLTK sentence BLEU, smoothing 4, per sample: its mean is the paper's BLEU."""
    return bleu_metric.sentence_scores(*texts(predictions, targets), mode="arb")


@lru_cache(maxsize=2)
def _rouge_all(predictions: tuple[str, ...], targets: tuple[str, ...]) -> tuple[dict[str, float], ...]:
    """ROUGE-1/2/L of each pair, computed once for the three scorers called on the same run."""
    return tuple(rouge_metric.all_sentence_scores(*texts(predictions, targets), mode="arb"))


def _rouge(rouge_type: str):
    def scorer(predictions: Sequence[str], targets: Sequence[str]) -> list[float]:
        return [scores[rouge_type] for scores in _rouge_all(tuple(predictions), tuple(targets))]

    scorer.__name__ = rouge_type
    return scorer


rouge1, rouge2, rougeL = _rouge("rouge1"), _rouge("rouge2"), _rouge("rougeL")


def bertscore(predictions: Sequence[str], targets: Sequence[str]) -> list[float]:
    return bertscore_metric.sentence_scores(*texts(predictions, targets), score_type="f1")


def labse(predictions: Sequence[str], targets: Sequence[str]) -> list[float]:
    return labse_metric.sentence_scores(*texts(predictions, targets))
