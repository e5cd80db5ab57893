"""ALDi: the Arabic Level of Dialectness of a text, 0 (MSA) to 100 (fully dialectal).

JEEM measures how dialectal the generated captions are "using the ALDi (Keleg et al., 2023)
model trained on the AOC-dataset" (paper L184; Table 3 "ALDi", x100). The model is the authors'
Sentence-ALDi (`AMR-KELEG/Sentence-ALDi`, `metric_plugins.models`): a BERT regression head whose
output is clipped to [0, 1]. As in the authors' code (AMR-KELEG/ALDi), URLs and every Latin letter
are removed before scoring, and a longer text is truncated to what the model reads: 512 tokens for
theirs, and for any other model its own maximum (the tokenizer's or the position embeddings',
whichever is real and smaller: `models.max_tokens`), so a 128-position model scores a long text.

Differences from the authors' code, none changing a score: texts are scored in length-sorted
batches (their code scores one sentence at a time; padding is masked, so the logits agree to
float precision: tests/metrics/test_encoder_metrics.py), and on GPU when present.

Empty input: a text with nothing left after preprocessing (empty, or all Latin letters and
URLs) has no Arabic to be dialectal in; it scores 0 without being run through the model, and a
warning says how many there were (docs/fidelity.md).

Examples:
    >>> preprocess("شو عم تعمل؟ https://example.com/x?y=1 lol")
    'شو عم تعمل؟'
    >>> preprocess("OK ok")
    ''
    >>> clip(1.37), clip(-0.2), clip(0.5)
    (1.0, 0.0, 0.5)
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Sequence

from metric_plugins import models
from metric_plugins.encoding import map_batched

log = logging.getLogger(__name__)

# the authors' preprocessing (AMR-KELEG/ALDi): URLs, then every Latin letter
_URL = re.compile(r"(https|http)?:\/\/(\w|\.|\/|\?|\=|\&|\%)*\b")
_LATIN = re.compile(r"[a-zA-Z]")
MAX_TOKENS = 512  # the authors' limit, kept when a model states none


def preprocess(text: str) -> str:
    """`text` without URLs and Latin letters, whitespace collapsed."""
    return " ".join(_LATIN.sub("", _URL.sub("", text)).split())


def clip(value: float) -> float:
    """The authors' ``max(min(x, 1), 0)``."""
    return max(min(value, 1.0), 0.0)


def sentence_scores(
    predictions: Sequence[str],
    references: Sequence[str] | None = None,
    *,
    model: str | os.PathLike | None = None,
    batch_size: int = 32,
    device: str | None = None,
) -> list[float]:
    """ALDi x100 of each prediction (`references` are accepted for the harness's scorer shape and ignored)."""
    texts = list(predictions)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"item {index}: prediction is {type(text).__name__}, not a string")
    cleaned = [preprocess(text) for text in texts]
    scores = [0.0] * len(texts)
    todo = [i for i, text in enumerate(cleaned) if text]
    if len(todo) < len(texts):
        log.warning(
            "ALDi: %d of %d texts have no Arabic left after preprocessing; scored 0", len(texts) - len(todo), len(texts)
        )
    if not todo:
        return scores
    if models.skipped("aldi"):  # the run chose to go on without this metric's model: not computed
        return [math.nan] * len(texts)
    name, revision = models.resolve("aldi", model)
    on = models.device(device)
    tokenizer, regressor = models.transformers_model("regression", name, revision, on, key="aldi")
    limit = models.max_tokens(tokenizer, regressor) or MAX_TOKENS

    def encode(batch: list[str]) -> list[float]:
        enc = tokenizer(batch, padding=True, truncation=True, max_length=limit, return_tensors="pt").to(on)
        return regressor(**enc).logits.reshape(-1).tolist()

    logits = map_batched([cleaned[i] for i in todo], encode, batch_size=batch_size, desc="ALDi")
    for index, logit in zip(todo, logits, strict=True):
        scores[index] = 100.0 * clip(logit)
    return scores


def corpus_score(predictions: Sequence[str], references: Sequence[str] | None = None, **options: object) -> float:
    """The mean ALDi x100 over the texts, as JEEM's table prints it (NaN for none)."""
    scores = sentence_scores(predictions, references, **options)  # type: ignore[arg-type]
    return sum(scores) / len(scores) if scores else float("nan")
