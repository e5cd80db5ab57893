"""Lexical metrics over ARB's 1,356 released rows: our implementations vs the reference ones, one run.

For each metric, the wall time of the package's function against the implementation the papers'
numbers come from, on the same rows in the same process, and their ratio (ours / reference):

- BLEU: `bleu.corpus_score` (Arabic tokens, sacrebleu corpus BLEU) and `mode="arb"` vs NLTK's
  `sentence_bleu` in a loop (what ARB ran) and sacrebleu's own `corpus_bleu` (13a tokens).
- ROUGE: `mode="arb"` vs rouge-score's default scorer with the stemmer in a loop (ARB), and `rouge.compute` (Arabic
  tokens) vs rouge-score on whitespace tokens (as many tokens: the difference is our tokenizer).
- CIDEr-D: `cider.corpus_score`, which computes document frequencies once per corpus, vs the same
  scoring with the document frequencies recomputed for every sentence (the design it avoids).

Each pair runs round by round, the order swapped every round (``--repeat`` rounds, medians reported).

Usage: python benchmarks/lexical_metrics.py [--rows N] [--repeat 3] [--cider-rows 300]
"""

from __future__ import annotations

import argparse
import csv
import io
import lzma
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from metric_plugins import bleu, cider, rouge
from metric_plugins.arabic_text import tokenize

RELEASE = Path(__file__).parents[2] / "shared" / "real" / "arb" / "gpt-4.1-final-responses.eval-columns.csv.xz"


def load_rows(limit: int | None) -> tuple[list[str], list[str]]:
    rows = list(csv.DictReader(io.StringIO(lzma.decompress(RELEASE.read_bytes()).decode("utf-8"), newline="")))
    rows = rows[:limit] if limit else rows
    return [r["gpt-4.1-steps"] for r in rows], [r["steps"] for r in rows]


def seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(ours: Callable[[], object], reference: Callable[[], object], rounds: int) -> tuple[float, float]:
    """Median seconds of each, the two run round by round (order swapped every round), so that a change of load
    on a shared machine falls on both alike instead of on whichever ran second."""
    times: tuple[list[float], list[float]] = ([], [])
    for k in range(rounds):
        if k % 2 == 0:
            times[0].append(seconds(ours))
            times[1].append(seconds(reference))
        else:
            times[1].append(seconds(reference))
            times[0].append(seconds(ours))
    return statistics.median(times[0]), statistics.median(times[1])


def nltk_sentence_bleu_loop(predictions: list[str], references: list[str]) -> float:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    smoothing = SmoothingFunction().method4
    scores = [
        sentence_bleu([r.split()], p.split(), smoothing_function=smoothing)
        for p, r in zip(predictions, references, strict=True)
    ]
    return 100 * sum(scores) / len(scores)


def sacrebleu_default(predictions: list[str], references: list[str]) -> float:
    import sacrebleu

    return sacrebleu.corpus_bleu(predictions, [references]).score


def rouge_score_default_loop(predictions: list[str], references: list[str]) -> float:
    """rouge-score as ARB's Table 4 ran it (docs/fidelity.md): default tokenizer, Porter stemmer."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    scores = [scorer.score(r, p)["rougeL"].fmeasure for p, r in zip(predictions, references, strict=True)]
    return 100 * sum(scores) / len(scores)


def rouge_score_whitespace_loop(predictions: list[str], references: list[str]) -> float:
    """rouge-score on whitespace tokens: as many tokens as ours, so the gap is our tokenizer's cost."""
    from rouge_score import rouge_scorer

    class Whitespace:
        def tokenize(self, text: str) -> list[str]:
            return text.split()

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=Whitespace())
    scores = [scorer.score(r, p)["rougeL"].fmeasure for p, r in zip(predictions, references, strict=True)]
    return 100 * sum(scores) / len(scores)


def cider_df_per_sentence(predictions: list[str], references: list[str]) -> float:
    """CIDEr-D with the corpus statistics rebuilt for every sentence: same numbers, the cost df-once avoids."""
    ref_counts = [[cider.ngram_counts(tokenize(r))] for r in references]
    scores = []
    for prediction, refs in zip(predictions, ref_counts, strict=True):
        corpus = cider.CorpusStatistics.of(ref_counts)  # per sentence
        hyp = corpus.vector(cider.ngram_counts(tokenize(prediction)))
        scores.append(1000.0 * cider._similarity(hyp, corpus.vector(refs[0])))
    return sum(scores) / len(scores)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="first N rows only (default: all 1,356)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds; medians (default 3)")
    parser.add_argument("--cider-rows", type=int, default=300, help="rows for the CIDEr df comparison (default 300)")
    args = parser.parse_args()
    predictions, references = load_rows(args.rows)
    print(f"{len(predictions)} ARB rows, median of {args.repeat} interleaved rounds; load {os.getloadavg()[0]:.2f}")

    def row(label: str, ours: Callable[[], object], reference_label: str, reference: Callable[[], object]) -> None:
        ours(), reference()  # warm-up: imports and caches are not what is compared
        t_ours, t_ref = interleaved(ours, reference, args.repeat)
        print(f"| {label} | {t_ours:.2f} s | {reference_label} | {t_ref:.2f} s | {t_ours / t_ref:.2f}x "
              f"| {os.getloadavg()[0]:.2f} |", flush=True)  # fmt: skip

    print("| ours | time | reference | time | ratio | load after |")
    print("|---|---|---|---|---|---|")
    row(
        'BLEU `mode="arb"`',
        lambda: bleu.corpus_score(predictions, references, mode="arb"),
        "NLTK `sentence_bleu` loop (ARB)",
        lambda: nltk_sentence_bleu_loop(predictions, references),
    )
    row(
        "BLEU (Arabic tokens, corpus)",
        lambda: bleu.corpus_score(predictions, references),
        "sacrebleu `corpus_bleu` (13a)",
        lambda: sacrebleu_default(predictions, references),
    )
    row(
        'ROUGE-1/2/L `mode="arb"`',
        lambda: rouge.compute(predictions, references, mode="arb"),
        "rouge-score default scorer loop, stemmer (ARB)",
        lambda: rouge_score_default_loop(predictions, references),
    )
    row(
        "ROUGE-1/2/L (Arabic tokens)",
        lambda: rouge.compute(predictions, references),
        "rouge-score loop, whitespace tokens",
        lambda: rouge_score_whitespace_loop(predictions, references),
    )
    # the per-sentence baseline is quadratic in the corpus (about 5 min on all rows): a prefix shows the gap
    few_predictions, few_references = predictions[: args.cider_rows], references[: args.cider_rows]
    ours = cider.corpus_score(few_predictions, few_references)
    assert abs(ours - cider_df_per_sentence(few_predictions, few_references)) < 1e-6  # same numbers
    row(
        f"CIDEr-D, df once per corpus ({len(few_predictions)} rows)",
        lambda: cider.corpus_score(few_predictions, few_references),
        "CIDEr-D, df per sentence",
        lambda: cider_df_per_sentence(few_predictions, few_references),
    )
    t_all = statistics.median(seconds(lambda: cider.corpus_score(predictions, references)) for _ in range(args.repeat))
    print(f"CIDEr-D over all {len(predictions)} rows, df once: {t_all:.2f} s")


if __name__ == "__main__":
    main()
