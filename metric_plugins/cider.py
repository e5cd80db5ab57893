"""CIDEr-D (Vedantam et al., 2015) for Arabic captions.

JEEM reports CIDEr for its captions (paper L150, Table 3 "C"); it does not name the variant. We
compute CIDEr-D, the variant of the COCO caption evaluation server (coco-caption's
``CiderD``), because it is what "CIDEr" means in captioning tables: TF-IDF weighted n-gram
vectors (n = 1..4), their cosine similarity with the hypothesis counts clipped at the
reference's, a Gaussian penalty on the length difference (sigma = 6), the mean over n, the mean
over references, times 10.

No maintained package implements it without Java (pycocoevalcap ships the Java PTB tokenizer);
the computation itself is 60 lines, written here against the paper's definition, with the COCO
code's conventions kept so numbers compare:
- document frequency counts each n-gram once per item over the item's references, and the IDF is
  ``log(N) - log(max(1, df))`` with N the number of items: it is computed once per corpus
  (`CorpusStatistics`), never per sentence;
- the length used by the penalty is, as in the COCO code, the number of bigrams of a sentence.

Tokens come from `metric_plugins.arabic_text` (normalisation options through ``normalization=``).
Scores are reported x100, the scale JEEM's table appears to print (e.g. 8.41 for a raw 0.0841;
docs/fidelity.md). A score needs a corpus: one item alone has every IDF at 0 and scores 0.

Examples:
    >>> hypotheses = ["قطة سوداء على الكرسي", "رجل يقود دراجة حمراء"]
    >>> references = ["قطة سوداء على الكرسي", "امرأة تمشي في السوق"]
    >>> [round(s, 2) for s in sentence_scores(hypotheses, references)]  # identical: raw 10, x100
    [1000.0, 0.0]
    >>> round(corpus_score(hypotheses, references), 2)
    500.0
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from metric_plugins.arabic_text import DEFAULT, Normalization, check_pairs, tokenize

MAX_N = 4
SIGMA = 6.0
SCALE = 100.0

NGrams = Counter[tuple[str, ...]]


def ngram_counts(tokens: Sequence[str], max_n: int = MAX_N) -> NGrams:
    return Counter(tuple(tokens[i : i + n]) for n in range(1, max_n + 1) for i in range(len(tokens) - n + 1))


@dataclass(frozen=True)
class CorpusStatistics:
    """What CIDEr-D needs from the whole corpus: the document frequency of every n-gram, and N."""

    document_frequency: Counter[tuple[str, ...]]
    log_items: float  # log(N), the IDF of an n-gram no reference has

    @classmethod
    def of(cls, references: Sequence[Sequence[NGrams]]) -> CorpusStatistics:
        df: Counter[tuple[str, ...]] = Counter()
        for item_refs in references:
            df.update(set().union(*item_refs))  # an n-gram counts once per item
        return cls(df, math.log(len(references)) if references else 0.0)

    def vector(self, counts: NGrams) -> tuple[list[dict[tuple[str, ...], float]], list[float], int]:
        """TF-IDF vectors per n, their norms, and the sentence length as COCO counts it (its bigrams)."""
        vectors: list[dict[tuple[str, ...], float]] = [{} for _ in range(MAX_N)]
        for ngram, tf in counts.items():
            vectors[len(ngram) - 1][ngram] = tf * (self.log_items - math.log(max(1.0, self.document_frequency[ngram])))
        norms = [math.sqrt(sum(v * v for v in vec.values())) for vec in vectors]
        length = sum(tf for ngram, tf in counts.items() if len(ngram) == 2)
        return vectors, norms, length


def _similarity(hyp: tuple, ref: tuple) -> float:
    """Mean over n of the clipped cosine, each damped by the Gaussian length penalty."""
    (hyp_vecs, hyp_norms, hyp_len), (ref_vecs, ref_norms, ref_len) = hyp, ref
    penalty = math.exp(-((hyp_len - ref_len) ** 2) / (2 * SIGMA**2))
    total = 0.0
    for hv, rv, hn, rn in zip(hyp_vecs, ref_vecs, hyp_norms, ref_norms, strict=True):
        dot = sum(min(weight, rv.get(ngram, 0.0)) * rv.get(ngram, 0.0) for ngram, weight in hv.items())
        total += (dot / (hn * rn) if hn and rn else 0.0) * penalty
    return total / MAX_N


def sentence_scores(
    predictions: Iterable[str],
    references: Iterable[str | Sequence[str]],
    *,
    normalization: Normalization = DEFAULT,
) -> list[float]:
    """CIDEr-D of each prediction against its reference(s), with IDF from the whole corpus, x100.

    A reference is a string or a list of strings (several references for one item). Predictions and
    references may be any iterables (a generator too): each is read once.
    """
    refs = [[r] if isinstance(r, str) else list(r) for r in references]
    predictions, _ = check_pairs(predictions, ["" for _ in refs])  # a list now: it is read twice below
    for index, item_refs in enumerate(refs):
        if not item_refs or not all(isinstance(r, str) for r in item_refs):
            raise ValueError(f"item {index}: reference must be a string or a non-empty list of strings")
    ref_counts = [[ngram_counts(tokenize(r, normalization)) for r in item_refs] for item_refs in refs]
    corpus = CorpusStatistics.of(ref_counts)  # once per corpus
    scores = []
    for prediction, item_refs in zip(predictions, ref_counts, strict=True):
        hyp = corpus.vector(ngram_counts(tokenize(prediction, normalization)))
        similarity = sum(_similarity(hyp, corpus.vector(r)) for r in item_refs) / len(item_refs)
        scores.append(10.0 * similarity * SCALE)
    return scores


def corpus_score(
    predictions: Iterable[str],
    references: Iterable[str | Sequence[str]],
    *,
    normalization: Normalization = DEFAULT,
) -> float:
    """The corpus CIDEr-D: the mean of `sentence_scores`, x100 (NaN for no items)."""
    scores = sentence_scores(predictions, references, normalization=normalization)
    return sum(scores) / len(scores) if scores else float("nan")
