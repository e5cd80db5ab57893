"""Scoring of generative tasks, shared by both harness adapters so they report the same numbers.

Per sample, every metric of a spec (and each of its per-region names) gets the value
``{"score": s, "regions": [...]}``; aggregation then reads only those values, so a harness
needs nothing but a list of them per metric name (lm-eval's `aggregation`, lighteval's
`corpus_level_fn`). They are plain JSON/Arrow structs, so they appear as they are in lm-eval's
samples files and lighteval's details files.

The prediction is stripped of surrounding whitespace before scoring: local models often start a
generation with a space or newline, and the authors strip API replies too (docs/fidelity.md).

A judged metric's value starts as ``{"score": None, "regions": [...], "judge": {"prompt": id,
"fields": {...}}}``. The first aggregation of a run judges every such value at once (concurrently,
through the judge's cache, `arab_mm_tasks.core.judging`) and writes the score and the judgement's
status into it; the value is the same object under every name of the metric, so the per-region
aggregations and the harness's saved samples see the scores too.

Batched and corpus metrics work the same way. A batched metric's value carries
``{"batch": {"scorer": "module:function", "prediction": ..., "reference": ...}}`` and the first
aggregation scores every pending value of the run in one call per scorer (an encoder loads once
and sees the whole run, length-sorted). A corpus metric's value carries ``"corpus"`` instead and
never gets a score of its own: each aggregation computes the corpus score over its samples (all
of them, one region's, or each region's for the macro mean).
"""

from __future__ import annotations

import importlib
import json
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from arab_mm_tasks.core.spec import RecordError, TaskSpec
from metric_plugins.region_aggregation import Item, macro_mean, micro_mean, region_mean, unscored


def sample_regions(spec: TaskSpec, doc: Mapping[str, Any]) -> list[str]:
    """The regions a sample counts in (all of its CEF's regions; a string field is one region)."""
    if spec.region_key is None:
        return []
    regions = doc.get(spec.region_key)
    if isinstance(regions, str) and regions:  # a single-valued field (ARB's domain): one region
        return [regions]
    if not isinstance(regions, Sequence) or isinstance(regions, str) or not regions:
        raise RecordError(f"{spec.name} record {doc.get('id')!r}: field {spec.region_key!r} must be a non-empty list")
    return [str(region) for region in regions]


SampleScore = dict[str, Any]  # {"score": float | None, "regions": list[str]}


def _uses_images(metric: Any) -> bool:
    return metric.batch_images or metric.judge_images


def needs_images(spec: TaskSpec) -> bool:
    """Whether a metric of `spec` looks at the sample's images when it is scored (a batched scorer or a judge)."""
    return any(_uses_images(metric) for metric in spec.generative_metrics)


@dataclass
class _KeptImages:
    images: list[Any]  # PNG bytes, or lazy images (a judge's: they hold a reference to the record's media, no pixels)
    users: int  # batched or judged metrics of the sample not scored yet


# Images that pending batched or judged metrics will look at, by sample token (never written into
# the harness's saved samples); the last of a sample's metrics to be scored releases them.
_PENDING_IMAGES: dict[str, _KeptImages] = {}


def keep_images(images: Sequence[Any], users: int, *, lazy_ok: bool = False) -> str:
    """Keep a sample's images for `users` scorings; the token names them in its values.

    As PNG bytes, or with `lazy_ok` (only judges use them) a `LazyImage` as it is: it refers to the
    record's media as the harness's document does (`arab_mm_tasks.core.media_refs`), so a run of
    thousands of judged samples keeps no copy; a judge encodes it to PNG when it sends it.
    """
    from arab_mm_tasks.core.lazy_image import LazyImage
    from arab_mm_tasks.core.media import png_bytes

    token = uuid.uuid4().hex
    kept = [image if lazy_ok and isinstance(image, LazyImage) else png_bytes(image) for image in images]
    _PENDING_IMAGES[token] = _KeptImages(kept, users)
    return token


def _use(token: str | None) -> str | None:
    """One more scoring will look at the kept images of `token` (None: none kept in this process)."""
    if token is not None:
        _PENDING_IMAGES[token].users += 1
    return token


def score_prediction(
    spec: TaskSpec,
    prediction: str,
    target: str,
    regions: list[str],
    images: Sequence[Any] | None = None,
    context: Mapping[str, str] | None = None,
) -> dict[str, SampleScore]:
    """``{metric name: {"score", "regions"}}`` for one generated answer, per-region names included.

    `images` (the sample's, as the model saw them) are needed only when a metric has ``batch_images``
    or ``judge_images``; `context` holds the task's `TaskSpec.judge_context` fields of the document.
    """
    prediction = prediction.strip()
    values: dict[str, SampleScore] = {}
    token = None
    if needs_images(spec):
        if images is None and any(metric.batch_images for metric in spec.generative_metrics):
            raise ValueError(f"{spec.name}: a metric looks at the images, but none were given")
        # a judge's images may come later instead (`arab-mm-tasks judge --dataset-path` on saved samples)
        if images is not None:
            batched = any(metric.batch_images for metric in spec.generative_metrics)  # its scorers take bytes
            token = keep_images(images, users=0, lazy_ok=not batched)  # each judge request and batched metric is a user
    requests: dict[str, dict[str, Any]] = {}  # one judge request per prompt and fields, shared by its metrics
    for metric in spec.generative_metrics:
        value: SampleScore = {"score": None, "regions": regions}
        if metric.judge_prompt and metric.judge_fields:
            prompt = metric.judge_route(target) if metric.judge_route else metric.judge_prompt
            fields = {**(context or {}), **metric.judge_fields(prediction, target)}
            key = json.dumps([prompt, fields, metric.judge_images], sort_keys=True, ensure_ascii=False)
            if key not in requests:
                requests[key] = {"prompt": prompt, "fields": fields}
                if metric.judge_images:
                    requests[key]["images"] = _use(token)
            value["judge"] = requests[key]
            if metric.judge_score:
                value["judge_score"] = metric.judge_score
            if metric.judge_weights:
                value["judge_weights"] = dict(metric.judge_weights)
            if metric.invalid_policy != "exclude":
                value["invalid_policy"] = metric.invalid_policy
            if metric.authors_invalid:
                value["authors_invalid"] = metric.authors_invalid
        elif metric.batch:
            value["batch"] = {"scorer": metric.batch, "prediction": prediction, "reference": target}
            if metric.batch_images:
                value["batch"]["images"] = _use(token)
        elif metric.corpus:
            value["corpus"] = {"scorer": metric.corpus, "prediction": prediction, "reference": target}
        elif metric.score:
            value["score"] = metric.score(prediction, target)
        values.update(dict.fromkeys(metric.names(spec.regions), value))  # one object under all its names
    return values


def score_sample(
    spec: TaskSpec, doc: Mapping[str, Any], prediction: str, images: Sequence[Any] | None = None
) -> dict[str, SampleScore]:
    """`score_prediction` with the target and regions read from the document."""
    assert spec.target is not None, f"{spec.name} is not a generative task"
    regions, context = sample_regions(spec, doc), judge_context(spec, doc)
    return score_prediction(spec, prediction, spec.target(doc), regions, images, context)


def judge_context(spec: TaskSpec, doc: Mapping[str, Any]) -> dict[str, str] | None:
    """The task's extra judge fields for a document (None when it has none)."""
    return spec.judge_context(doc) if spec.judge_context is not None else None


def aggregation_kind(spec: TaskSpec, name: str) -> str:
    """How metric `name` is aggregated: "micro", "macro" or "region_<code>"."""
    for metric in spec.generative_metrics:
        if name == metric.name:
            return metric.overall
        if (metric.judge_prompt or metric.batch) and name == f"{metric.name}_unscored":
            return "unscored"
        if metric.by_region and name.startswith(f"{metric.name}_"):
            region = name.removeprefix(f"{metric.name}_")
            if region in spec.regions:
                return f"region_{region}"
    raise KeyError(f"{spec.name} has no metric {name!r}; it has {spec.metric_names()}")


def _items(values: Sequence[SampleScore]) -> list[Item]:
    judge_pending(values)
    score_pending_batches(values)
    return [(value["score"], value["regions"]) for value in values]


@cache
def scorer(path: str) -> Callable[..., Any]:
    """The function a ``"module:function"`` path names (a batched or corpus metric's scorer)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _finite(score: float) -> float | None:
    """A scorer's NaN means "no score for this sample": left out of the means, counted like an invalid judgement."""
    return None if score is None or math.isnan(score) else float(score)


def score_pending_batches(values: Sequence[SampleScore]) -> None:
    """Score the batched values not scored yet, in place: one call per scorer over all of them."""
    pending = [v for v in values if "batch" in v and "batch_scored" not in v]
    for path in sorted({v["batch"]["scorer"] for v in pending}):
        group = [v for v in pending if v["batch"]["scorer"] == path]
        texts = [v["batch"]["prediction"] for v in group], [v["batch"]["reference"] for v in group]
        if "images" in group[0]["batch"]:
            scores = scorer(path)(*texts, [_PENDING_IMAGES[v["batch"]["images"]].images for v in group])
        else:
            scores = scorer(path)(*texts)
        if len(scores) != len(group):
            raise RuntimeError(f"scorer {path} returned {len(scores)} scores for {len(group)} samples")
        for value, score in zip(group, scores, strict=True):
            value["score"] = _finite(score)
            value["batch_scored"] = True
    for value in pending:
        release_images(value["batch"].get("images"))


def corpus_score(values: Sequence[SampleScore], region: str | None = None) -> float:
    """A corpus metric over its values (only those of `region` when given); NaN when there are none."""
    chosen = [v["corpus"] for v in values if region is None or region in v["regions"]]
    if not chosen:
        return math.nan
    (path,) = {c["scorer"] for c in chosen}  # one metric's values share one scorer
    return float(scorer(path)([c["prediction"] for c in chosen], [c["reference"] for c in chosen]))


def pending_images(token: str | None) -> list[Any] | None:
    """The images kept for a sample's judge (None when the token is unknown: a sample read back from a file)."""
    kept = _PENDING_IMAGES.get(token or "")
    return None if kept is None else kept.images


def has_pending_images(token: str | None) -> bool:
    return token is not None and token in _PENDING_IMAGES


def pending_users(token: str) -> int:
    """How many scorings will still look at the kept images of `token`."""
    return _PENDING_IMAGES[token].users


def adopt_images(token: str, images: list[Any], users: int) -> None:
    """Keep images another process kept under `token` (its sample's values came over: lm-eval data-parallel)."""
    _PENDING_IMAGES[token] = _KeptImages(list(images), users)


def release_images(token: str | None) -> None:
    """One scoring of the sample (a judge request, a batched metric) is done with its images; the last frees them."""
    kept = _PENDING_IMAGES.get(token or "")
    if kept is not None:
        kept.users -= 1
        if kept.users == 0:
            del _PENDING_IMAGES[token]  # type: ignore[arg-type]


def judge_pending(values: Sequence[SampleScore]) -> None:
    """Score the judged values not judged yet, in place (one concurrent, cached judge run per prompt)."""
    from arab_mm_tasks.core.judging import apply_judgement, current_config, judge_values

    pending = [v for v in values if "judge" in v and "judge_status" not in v]
    shared = [v for v in pending if "result" in v["judge"]]  # judged already for another metric of the request
    if shared:
        config = current_config()
        for value in shared:
            apply_judgement(value, config.invalid_policy if config else None)
    pending = [v for v in pending if "judge_status" not in v]
    for prompt in sorted({v["judge"]["prompt"] for v in pending}):
        judge_values(prompt, [v for v in pending if v["judge"]["prompt"] == prompt])


@dataclass(frozen=True)
class Aggregator:
    """Turns a metric's per-sample values into its score (a class, not a closure: lighteval pickles it)."""

    kind: str  # an `aggregation_kind`: "micro", "macro", "region_<code>" or "unscored"

    @property
    def __name__(self) -> str:  # lighteval names its stderr after it (and bootstraps anything not called *mean*)
        return f"aggregate_{self.kind}"

    def __call__(self, values: Sequence[SampleScore]) -> float:
        if values and all("corpus" in value for value in values):
            return self._corpus(values)
        items = _items(values)
        if self.kind == "micro":
            return micro_mean(items)
        if self.kind == "macro":
            # the regions present: on a full split that is all six, the paper's region mean
            return macro_mean(items, sorted({region for _, regions in items for region in regions}))
        if self.kind == "unscored":  # no score, or a judgement averaged in by an invalid-reply policy
            return float(unscored(items) + sum(v.get("judge_status") == "invalid" and v["score"] is not None
                                               for v in values))  # fmt: skip
        return region_mean(items, self.kind.removeprefix("region_"))

    def _corpus(self, values: Sequence[SampleScore]) -> float:
        if self.kind == "micro":
            return corpus_score(values)
        if self.kind == "macro":
            regions = sorted({region for value in values for region in value["regions"]})
            means = [corpus_score(values, region) for region in regions]
            means = [m for m in means if not math.isnan(m)]
            return sum(means) / len(means) if means else math.nan
        if self.kind == "unscored":
            return 0.0  # a corpus score has no per-sample failures
        return corpus_score(values, self.kind.removeprefix("region_"))


def aggregator(kind: str) -> Aggregator:
    """The aggregation for an `aggregation_kind`; unknown kinds are a KeyError."""
    if kind not in ("micro", "macro", "unscored") and not kind.startswith("region_"):
        raise KeyError(f"unknown aggregation {kind!r}")
    return Aggregator(kind)
