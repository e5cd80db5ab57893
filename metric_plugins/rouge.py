"""ROUGE-1, ROUGE-2 and ROUGE-L (Lin, 2004) for Arabic, on Google's rouge-score.

JEEM scores captions with ROUGE (paper L150) and ARB scores reasoning steps with ROUGE-1/2/L
(Table 4, L196); neither says which tokenizer. rouge-score is the implementation both lm-eval and
`evaluate` use; we keep its n-gram and LCS code and give it a tokenizer that sees Arabic.

Modes (``mode=``):

- ``"arabic"`` (default): `metric_plugins.arabic_text` tokenisation and normalisation (options
  through ``normalization=``), no stemming. Scores Arabic words.
- ``"arb"``: ARB's published numbers. rouge-score's default tokenizer with ``use_stemmer=True``:
  the tokenizer deletes every Arabic letter, so this measures the digits and Latin words of the
  steps ("الخطوة 1" counts as "1"). On ARB's released GPT-4.1 outputs it gives ROUGE-1/2/L
  71.13 / 48.83 / 65.33, Table 4's row to two decimals (tests/arb/test_arb_table4.py); the Arabic
  mode gives much lower values on the same rows. Use it only to compare with the paper.

Scores are F-measures (``measure="recall"`` or ``"precision"`` for the others), x100, one per
pair; the corpus score is their mean, which is how rouge-score (and ARB) aggregate.

Examples:
    >>> sentence_scores(["القطة تجلس على السجادة"], ["جلست القطة على السجادة"], rouge_type="rouge1")
    [75.0]
    >>> sentence_scores(["القطة تجلس على السجادة"], ["جلست القطة على السجادة"], rouge_type="rouge1", mode="arb")
    [0.0]
    >>> scores = compute(["الخطوة 1: اجمع 2 و 3"], ["الخطوة 1: اجمع 3 و 2"])
    >>> {name: round(value, 2) for name, value in scores.items()}  # 6 shared words, 2 of 5 bigrams, LCS 4 of 6
    {'rouge1': 100.0, 'rouge2': 40.0, 'rougeL': 66.67}
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

from metric_plugins.arabic_text import DEFAULT, ArabicTokenizer, Normalization, check_pairs

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
Mode = Literal["arabic", "arb"]
Measure = Literal["fmeasure", "recall", "precision"]


@cache
def _scorer(mode: Mode, normalization: Normalization) -> Any:
    from rouge_score import rouge_scorer

    if mode == "arb":
        return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=True)
    if mode == "arabic":
        return rouge_scorer.RougeScorer(list(ROUGE_TYPES), tokenizer=ArabicTokenizer(normalization))
    raise ValueError(f"unknown ROUGE mode {mode!r}; use 'arabic' or 'arb'")


def _all_scores(
    predictions: Sequence[str], references: Sequence[str], mode: Mode, normalization: Normalization, measure: Measure
) -> list[dict[str, float]]:
    predictions, references = check_pairs(predictions, references)
    if measure not in ("fmeasure", "recall", "precision"):
        raise ValueError(f"unknown measure {measure!r}; use 'fmeasure', 'recall' or 'precision'")
    scorer = _scorer(mode, normalization)
    return [
        {name: 100.0 * getattr(score, measure) for name, score in scorer.score(reference, prediction).items()}
        for prediction, reference in zip(predictions, references, strict=True)
    ]


def all_sentence_scores(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    mode: Mode = "arabic",
    normalization: Normalization = DEFAULT,
    measure: Measure = "fmeasure",
) -> list[dict[str, float]]:
    """ROUGE-1, ROUGE-2 and ROUGE-L per pair, x100, from one scoring pass (rouge-score computes the three at once)."""
    return _all_scores(predictions, references, mode, normalization, measure)


def sentence_scores(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    rouge_type: str = "rougeL",
    mode: Mode = "arabic",
    normalization: Normalization = DEFAULT,
    measure: Measure = "fmeasure",
) -> list[float]:
    """One ROUGE score per (prediction, reference) pair, x100."""
    if rouge_type not in ROUGE_TYPES:
        raise ValueError(f"unknown rouge_type {rouge_type!r}; use one of {ROUGE_TYPES}")
    return [s[rouge_type] for s in _all_scores(predictions, references, mode, normalization, measure)]


def compute(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    mode: Mode = "arabic",
    normalization: Normalization = DEFAULT,
    measure: Measure = "fmeasure",
) -> dict[str, float]:
    """Mean ROUGE-1, ROUGE-2 and ROUGE-L over the pairs, x100 (NaN for no pairs)."""
    scores = _all_scores(predictions, references, mode, normalization, measure)
    return {name: sum(s[name] for s in scores) / len(scores) if scores else float("nan") for name in ROUGE_TYPES}
