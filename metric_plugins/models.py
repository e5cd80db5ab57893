"""The encoder models the metrics use: pinned ids in one table, loaded lazily, once per process.

Each metric takes ``model=`` as a Hub id or a local folder; without it the metric's entry here is
used, unless the environment names another (``ARAB_MM_BERTSCORE_MODEL=/models/camelbert-mix``):
that is how a harness run (whose metrics take no arguments) is pointed at a local copy on a
machine without the Hub. Nothing is imported or loaded until a metric is first computed, and a
loaded model is kept for the rest of the process (one load per model, revision and device).

The ids are pinned, the revisions are not: the Hub is unreachable from the machine these were
chosen on, so the commits could not be read, and ``revision=None`` means the repo's current
``main``. A user pins one with ``ARAB_MM_<KEY>_REVISION`` (a commit sha, branch or tag:
``ARAB_MM_BERTSCORE_REVISION=<sha of huggingface_hub.model_info(id).sha>``), which applies to the
Hub id in use (pinned, from ``ARAB_MM_<KEY>_MODEL`` or from ``model=``); a local folder has none.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class PinnedModel:
    id: str
    revision: str | None
    why: str


MODELS: dict[str, PinnedModel] = {
    # JEEM L150: BERTScore "with CamelBERT ... trained on both MSA and dialectal Arabic": the -mix model.
    "bertscore": PinnedModel("CAMeL-Lab/bert-base-arabic-camelbert-mix", None, "JEEM L150"),
    # ARB L171-173 (Table 4 "LaBSE"); sentence-transformers packaging (CLS pooling, dense, normalise).
    "labse": PinnedModel("sentence-transformers/LaBSE", None, "ARB L173"),
    # JEEM L184: "the ALDi (Keleg et al., 2023) model trained on the AOC-dataset"; seed-42 release.
    "aldi": PinnedModel("AMR-KELEG/Sentence-ALDi", None, "JEEM L184"),
}


def resolve(key: str, model: str | os.PathLike | None = None) -> tuple[str, str | None]:
    """(id or folder, revision) for a metric: `model` if given, else ``ARAB_MM_<KEY>_MODEL``, else the pin.

    The revision is ``ARAB_MM_<KEY>_REVISION`` when set, else the pin's for the pinned id (None
    today), else None; a local folder gets None (its files are what they are).
    """
    revision = os.environ.get(f"ARAB_MM_{key.upper()}_REVISION") or None
    name = str(model) if model is not None else os.environ.get(f"ARAB_MM_{key.upper()}_MODEL") or MODELS[key].id
    if os.path.isdir(name):
        return name, None
    return name, revision or (MODELS[key].revision if name == MODELS[key].id else None)


def device(requested: str | None = None) -> str:
    """`requested`, else CUDA when present, else the CPU."""
    if requested:
        return requested
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@cache
def transformers_model(kind: str, name: str, revision: str | None, on: str) -> tuple[Any, Any]:
    """(tokenizer, model) in eval mode on device `on`; `kind` is "encoder" or "regression"."""
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    loader = AutoModelForSequenceClassification if kind == "regression" else AutoModel
    tokenizer = AutoTokenizer.from_pretrained(name, revision=revision)
    model = loader.from_pretrained(name, revision=revision).to(on).eval()
    return tokenizer, model


@cache
def sentence_transformer(name: str, revision: str | None, on: str) -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(name, revision=revision, device=on)
