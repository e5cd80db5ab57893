"""BLEU (Papineni et al., 2002) for Arabic: corpus and sentence level, on sacrebleu.

JEEM scores captions with BLEU (paper L150) and ARB scores reasoning steps with it (Table 4,
L196); neither gives the variant. sacrebleu is the reference implementation for reporting BLEU;
we hand it text already tokenised by `metric_plugins.arabic_text` (``tokenize="none"``), because
its own tokenisers split Latin punctuation but do not normalise Arabic spelling.

Modes (``mode=``):

- ``"arabic"`` (default): BLEU-4 on `arabic_text.tokenize` tokens (normalisation options through
  ``normalization=``). `corpus_score` is sacrebleu's corpus BLEU (n-gram counts summed over the
  corpus, one brevity penalty); `sentence_scores` is its sentence BLEU (exponential smoothing,
  effective order), one per pair.
- ``"arb"``: ARB's published numbers. NLTK's ``sentence_bleu`` on whitespace tokens with
  smoothing method 4 (Chen & Cherry, 2014), averaged over the pairs: on ARB's released GPT-4.1
  outputs it gives 6.35, Table 4's value (tests/arb/test_arb_table4.py); sacrebleu's corpus BLEU on
  the same rows is 14.06. In this mode `corpus_score` is that mean, as the paper reports it.

Scores are x100.

Examples:
    >>> round(corpus_score(["ذهب الولد إلى المدرسة صباحا"], ["ذهب الولد إلى المدرسة صباحا"]), 2)
    100.0
    >>> round(corpus_score(["ذهب الولد الى المدرسه صباحاً"], ["ذهب الولد إلى المدرسة صباحا"]), 2)  # spelling folded
    100.0
    >>> # 3/5 words, 2/4 bigrams, 1/3 trigrams, 0/2 4-grams smoothed to 1/4: (3/5 * 2/4 * 1/3 * 1/4) ** (1/4)
    >>> [round(s, 2) for s in sentence_scores(["ذهب الولد إلى البيت مساء"], ["ذهب الولد إلى المدرسة صباحا"])]
    [39.76]
    >>> sentence_scores(["ذهب الولد إلى المدرسة"], ["ذهب الولد إلى المدرسة"], mode="arb")
    [100.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from metric_plugins.arabic_text import DEFAULT, Normalization, check_pairs, tokenize

Mode = Literal["arabic", "arb"]


def _tokenized(texts: list[str], normalization: Normalization) -> list[str]:
    return [" ".join(tokenize(text, normalization)) for text in texts]


def _arb_sentence_scores(predictions: list[str], references: list[str]) -> list[float]:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    smoothing = SmoothingFunction().method4
    return [
        100.0 * sentence_bleu([reference.split()], prediction.split(), smoothing_function=smoothing)
        for prediction, reference in zip(predictions, references, strict=True)
    ]


def _check_mode(mode: str) -> None:
    if mode not in ("arabic", "arb"):
        raise ValueError(f"unknown BLEU mode {mode!r}; use 'arabic' or 'arb'")


def sentence_scores(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    mode: Mode = "arabic",
    normalization: Normalization = DEFAULT,
) -> list[float]:
    """One BLEU per (prediction, reference) pair, x100."""
    predictions, references = check_pairs(predictions, references)
    _check_mode(mode)
    if mode == "arb":
        return _arb_sentence_scores(predictions, references)
    from sacrebleu.metrics import BLEU

    bleu = BLEU(tokenize="none", effective_order=True)
    hypotheses, refs = _tokenized(predictions, normalization), _tokenized(references, normalization)
    return [bleu.sentence_score(h, [r]).score for h, r in zip(hypotheses, refs, strict=True)]


def corpus_score(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    mode: Mode = "arabic",
    normalization: Normalization = DEFAULT,
) -> float:
    """Corpus BLEU over the pairs, x100 (``mode="arb"``: the mean sentence BLEU ARB reports); NaN for none."""
    predictions, references = check_pairs(predictions, references)
    _check_mode(mode)
    if not predictions:
        return float("nan")
    if mode == "arb":
        scores = _arb_sentence_scores(predictions, references)
        return sum(scores) / len(scores)
    from sacrebleu.metrics import BLEU

    hypotheses, refs = _tokenized(predictions, normalization), _tokenized(references, normalization)
    return BLEU(tokenize="none").corpus_score(hypotheses, [refs]).score
