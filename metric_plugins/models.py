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

A model that cannot be loaded is a `ModelUnavailable` naming the model and its variable, never
transformers' raw ``OSError``; `problem` tells the same before any load, from the local Hugging
Face cache or folder alone (no weights are downloaded), for a run's preflight. A run that chose to
go on without a metric (`skip`) gets NaN from it: every sample counts as unscored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

# Files one of which holds a model's weights (transformers and sentence-transformers layouts).
WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
UNBOUNDED = 10**6  # a tokenizer without a maximum reports ~1e30 (transformers' VERY_LARGE_INTEGER)


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
    pinned = MODELS.get(key)
    name = str(model) if model is not None else os.environ.get(variable(key)) or (pinned.id if pinned else "")
    if os.path.isdir(name):
        return name, None
    return name, revision or (pinned.revision if pinned and name == pinned.id else None)


def variable(key: str) -> str:
    """The environment variable that points metric `key` at another model."""
    return f"ARAB_MM_{key.upper()}_MODEL"


class ModelUnavailable(OSError):
    """A metric's model cannot be loaded; the message is one line naming the model and `variable`."""


def unavailable(key: str, name: str, reason: str) -> str:
    """The one line for metric `key`'s model `name` that cannot be had, and the two ways out."""
    return (
        f"metric {key}: model {name} cannot be loaded ({reason}); download it (`hf download {name}`) "
        f"while online, or set {variable(key)} to a local copy"
    )


def _is_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~")) or os.path.exists(name)


def hub_problem(repo_id: str, *, repo_type: str, revision: str | None, files: tuple[str, ...]) -> str | None:
    """Why `repo_id` cannot be had, or None: a file of each group in `files` is in the local Hugging Face cache,
    or else the Hub answers and lets us read the repo. Nothing is downloaded."""
    from huggingface_hub import HfApi, constants, try_to_load_from_cache
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    if all(isinstance(try_to_load_from_cache(repo_id, f, revision=revision, repo_type=repo_type), str) for f in files):
        return None
    if constants.HF_HUB_OFFLINE:
        return "not in the Hugging Face cache, and the Hub is off (HF_HUB_OFFLINE=1)"
    try:
        HfApi().auth_check(repo_id, repo_type=repo_type)
    except GatedRepoError:
        return "gated: accept its conditions on the Hub, then log in (`hf auth login` or HF_TOKEN)"
    except RepositoryNotFoundError:
        return "not found on the Hub, or private and you are not logged in"
    except Exception as err:  # DNS, refused, timeout, proxy: the Hub cannot be reached from here
        return f"not in the Hugging Face cache, and the Hub is unreachable ({type(err).__name__})"
    return None


def _weights_cached(repo_id: str, revision: str | None) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return any(isinstance(try_to_load_from_cache(repo_id, f, revision=revision), str) for f in WEIGHT_FILES)


def problem(key: str, model: str | os.PathLike | None = None) -> str | None:
    """The one line saying why metric `key`'s model cannot be loaded here, or None; loads nothing."""
    name, revision = resolve(key, model)
    if os.path.isdir(name):
        folder = Path(name)
        if not (folder / "config.json").is_file():
            return unavailable(key, name, "the folder has no config.json")
        if not any((folder / f).is_file() for f in WEIGHT_FILES):
            return unavailable(key, name, "the folder holds no weights")
        return None
    if _is_path(name):
        return unavailable(key, name, "no such folder")
    reason = hub_problem(name, repo_type="model", revision=revision, files=("config.json",))
    if reason is None and not _weights_cached(name, revision):
        from huggingface_hub import constants

        if constants.HF_HUB_OFFLINE:
            reason = "its weights are not in the Hugging Face cache (HF_HUB_OFFLINE=1)"
    return None if reason is None else unavailable(key, name, reason)


_SKIPPED: dict[str, str] = {}  # metric key -> why it is not computed in this process


def skip(key: str, reason: str) -> None:
    """Compute metric `key` as NaN ("not computed") for the rest of this process, because of `reason`."""
    _SKIPPED[key] = reason


def skipped(key: str) -> str | None:
    """Why metric `key` is not computed in this process, or None when it is."""
    return _SKIPPED.get(key)


def max_tokens(tokenizer: Any, model: Any) -> int | None:
    """The most tokens `model` reads: the tokenizer's maximum or the model's position count, the smaller of
    those that are real (a tokenizer saved without one reports ~1e30), or None when neither says."""
    limits = [getattr(tokenizer, "model_max_length", None), getattr(model.config, "max_position_embeddings", None)]
    real = [int(n) for n in limits if isinstance(n, int) and 0 < n < UNBOUNDED]
    return min(real) if real else None


def device(requested: str | None = None) -> str:
    """`requested`, else CUDA when present, else the CPU."""
    if requested:
        return requested
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0][:200]}" if text else type(err).__name__


@cache
def transformers_model(kind: str, name: str, revision: str | None, on: str, key: str = "") -> tuple[Any, Any]:
    """(tokenizer, model) in eval mode on device `on`; `kind` is "encoder" or "regression".

    `key` (the metric's) names the model's variable when it cannot be loaded (`ModelUnavailable`).
    """
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    loader = AutoModelForSequenceClassification if kind == "regression" else AutoModel
    try:
        tokenizer = AutoTokenizer.from_pretrained(name, revision=revision)
        model = loader.from_pretrained(name, revision=revision)
    except (OSError, ValueError) as err:  # transformers: "can't load", offline, not a repo id: all one case
        raise ModelUnavailable(unavailable(key or kind, name, _first_line(err))) from err
    return tokenizer, model.to(on).eval()


@cache
def sentence_transformer(name: str, revision: str | None, on: str, key: str = "") -> Any:
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(name, revision=revision, device=on)
    except (OSError, ValueError) as err:
        raise ModelUnavailable(unavailable(key or "sentence encoder", name, _first_line(err))) from err
