"""The task-spec core: one declarative object per task variant.

A `TaskSpec` says where a task's documents come from, how one document becomes a
request (prompt and images; choices and gold index, or a target to generate), how it is
scored and how scores are broken down.
It imports no harness: `harness.lm_eval` and `harness.lighteval` translate specs, so a
prompt is written once and both harnesses are guaranteed to see the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

IMAGE_PLACEHOLDER = "<image>"  # lm-eval's placeholder; hf-multimodal / vllm-vlm map it to the model's image token


class RecordError(ValueError):
    """A dataset record that cannot be turned into a request; the message names record and field."""


def required_field(doc: Mapping[str, Any], name: str, record: str) -> Any:
    """`doc[name]`, or a `RecordError` naming `record` and the field when it is missing or blank."""
    value = doc.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise RecordError(f"{record}: field {name!r} is missing or empty")
    return value


class SourceError(ValueError):
    """A dataset source that cannot be read at all (wrong form, empty, no usable record); the message says which."""


@dataclass(frozen=True)
class Request:
    """What a harness needs for one document.

    Multiple choice: the model scores ``target_delimiter + choices[i]`` as a continuation of
    ``query``; ``gold`` is the index of the correct choice.
    Generation: the model continues ``query``; ``target`` is the ground truth its answer is
    scored against. ``images`` are the document's images (or video frames), in the order of the
    ``<image>`` placeholders in ``query``: one placeholder per image.
    """

    query: str
    choices: list[str] = field(default_factory=list)
    gold: int | None = None
    target: str | None = None
    images: list[Any] = field(default_factory=list)  # PIL images

    def __post_init__(self) -> None:
        placeholders = self.query.count(IMAGE_PLACEHOLDER)
        if placeholders != len(self.images):
            raise ValueError(f"query has {placeholders} {IMAGE_PLACEHOLDER} placeholders for {len(self.images)} images")


# a run of placeholders, one per line (each may carry a label, "Image 2: <image>"), and the blank line after it
_PLACEHOLDER_BLOCK = re.compile(rf"(?:(?:Image \d+: )?{re.escape(IMAGE_PLACEHOLDER)}\n?)+\n?")


def without_image_placeholders(query: str) -> str:
    r"""The query with its ``<image>`` placeholders and the blank line after them removed.

    For harnesses that place images themselves (lighteval's vision model puts them after the
    text), so the model sees the same words without stray placeholder tokens.

    >>> without_image_placeholders("<image>\n<image>\n\nName it.")
    'Name it.'
    >>> without_image_placeholders("Describe it.\n\n<image>\n<image>\n\nYour answer:")
    'Describe it.\n\nYour answer:'
    >>> without_image_placeholders("Image 1: <image>\nImage 2: <image>\nWhich one?")
    'Which one?'
    """
    return _PLACEHOLDER_BLOCK.sub("", query)


@dataclass(frozen=True)
class Generation:
    """Decoding settings of a generative task: greedy, zero-shot, at most `max_new_tokens` new tokens."""

    max_new_tokens: int = 512
    until: tuple[str, ...] = ()  # extra stop strings; the model's end-of-sequence token always stops


@dataclass(frozen=True)
class GenerativeMetric:
    """A metric of generated answers: one score per sample, averaged overall and per region.

    A metric is scored one of four ways (give exactly one):

    - ``score(prediction, target)``: a sample's score, computed as the sample is processed.
    - ``batch``: ``"module:function"`` of ``f(predictions, references) -> list[float]``, called
      once at aggregation time on every sample of the run (encoder metrics: one batched,
      length-sorted pass instead of one model call per sample). With ``batch_images`` it is
      ``f(predictions, references, images)``, ``images`` holding each sample's images (as PNG
      bytes): metrics that look at the image, such as DCScore's verifier.
    - ``corpus``: ``"module:function"`` of ``f(predictions, references) -> float``, a corpus-level
      score (corpus BLEU): computed over all samples, and over each region's samples for the
      per-region names. The samples keep no score of their own.
    - ``judge_prompt`` + ``judge_fields(prediction, target)``: a judge prompt
      (`metric_plugins.judge.prompts`) whose template the fields fill (with the task's
      `TaskSpec.judge_context` fields of the document); the judge scores every
      sample of a run at aggregation time, concurrently and cached, and the harness also reports
      ``<name>_unscored`` (invalid or failed judgements, left out of the mean).
      ``judge_route(target)`` picks the prompt per sample instead (Pearl sends MCQ and
      True/False items of one task to different prompts; ``judge_prompt`` then names the
      metric's default route, for listings). Metrics with the same prompt and fields share one
      judgement per sample (JEEM's four criteria, ARB's ten attributes: one call);
      ``judge_score`` names the reply's score the metric reports and ``judge_weights`` turns
      several into one (``{"correctness": 0.4, ...}``); default: the prompt's primary score.
      With ``judge_images`` the judge also sees the sample's images (kept as PNG until judged).
      ``invalid_policy`` says what an invalid judgement counts as: ``"exclude"`` (left out of
      the mean), ``"zero"`` or ``"minus_one"`` (averaged in as 0 / -1, `metric_plugins.judge.aggregate`);
      a run's judge setting ``invalid_policy=...`` overrides it. ``authors_invalid`` is what the
      run setting ``invalid_policy=authors`` makes it instead: the benchmark's released scorer's
      substitute (Pearl: -1 for a rubric dimension, 0 for ACC and CAS), scores an invalid reply does
      give kept. Invalid judgements are counted in ``<name>_unscored`` under every policy.

    ``encoder`` names the `metric_plugins.models.MODELS` key whose model a batched scorer loads (``"bertscore"``,
    ``"labse"``, ``"aldi"``: resolved through ``ARAB_MM_<KEY>_MODEL``), so a run checks that model before any model
    work (`arab_mm_tasks.core.preflight`); a scorer that brings its own model declares none.

    `batch` and `corpus` are import paths, not functions, because they travel inside the
    per-sample values the harnesses save and pickle. A batched scorer returns NaN for a sample it
    cannot score (ALDi on a caption with no Arabic left); like a judged metric, the harness then
    also reports ``<name>_unscored``. ``overall`` picks the overall average:
    "micro" (over samples) or "macro" (mean of the region means, see
    `metric_plugins.region_aggregation`). With ``by_region`` the harness also reports
    ``<name>_<region>`` for each region of the task.
    """

    name: str
    score: Callable[[str, str], float] | None = None
    overall: Literal["micro", "macro"] = "micro"
    by_region: bool = True
    description: str = ""
    judge_prompt: str | None = None
    judge_fields: Callable[[str, str], dict[str, str]] | None = None
    judge_score: str | None = None
    batch: str | None = None
    corpus: str | None = None
    batch_images: bool = False
    judge_route: Callable[[str], str] | None = None
    judge_weights: Mapping[str, float] | None = None
    judge_images: bool = False
    invalid_policy: Literal["exclude", "zero", "minus_one"] = "exclude"
    authors_invalid: Literal["exclude", "zero", "minus_one"] | None = None
    encoder: str | None = None

    def names(self, regions: tuple[str, ...]) -> list[str]:
        """The names a harness reports it under: overall, per region, and a judged metric's unscored count."""
        per_region = [f"{self.name}_{region}" for region in regions] if self.by_region else []
        unscored = [f"{self.name}_unscored"] if self.judge_prompt or self.batch else []
        return [self.name, *per_region, *unscored]

    def __post_init__(self) -> None:
        ways = [self.score, self.judge_prompt, self.batch, self.corpus]
        if sum(way is not None for way in ways) != 1 or (self.judge_prompt is None) != (self.judge_fields is None):
            raise ValueError(
                f"metric {self.name}: give exactly one of `score`, `batch`, `corpus` "
                "or `judge_prompt` with `judge_fields`"
            )
        if self.encoder is not None and self.batch is None:
            raise ValueError(f"metric {self.name}: `encoder` is the model of a `batch` scorer")
        if self.batch_images and self.batch is None:
            raise ValueError(f"metric {self.name}: `batch_images` needs a `batch` scorer")
        judge_only = (
            self.judge_route, self.judge_score, self.judge_weights, self.judge_images or None, self.authors_invalid
        )  # fmt: skip
        if self.judge_prompt is None and any(option is not None for option in judge_only):
            raise ValueError(
                f"metric {self.name}: `judge_route`, `judge_score`, `judge_weights`, `judge_images` and "
                "`authors_invalid` need a judge"
            )
        if self.judge_score is not None and self.judge_weights is not None:
            raise ValueError(f"metric {self.name}: give `judge_score` or `judge_weights`, not both")
        for policy in (self.invalid_policy, self.authors_invalid or "exclude"):
            if policy not in ("exclude", "zero", "minus_one"):
                raise ValueError(f"metric {self.name}: unknown invalid policy {policy!r}")
        for path in (self.batch, self.corpus):
            if path is not None and not re.fullmatch(r"[\w.]+:\w+", path):
                raise ValueError(f"metric {self.name}: {path!r} is not a 'module:function' path")


def higher_is_better(metric_name: str) -> bool:
    """Every reported score is better higher, except a count of unscored samples (``<name>_unscored``)."""
    return not metric_name.endswith("_unscored")


@dataclass(frozen=True)
class Subset:
    """One dataset config evaluated as its own subtask (an ArabCulture country, say)."""

    name: str  # task-name suffix, e.g. "egypt"
    config: str  # dataset config, e.g. "Egypt"
    alias: str  # how results tables print it, e.g. "Egypt"
    group: str  # key into TaskSpec.groups, e.g. "nile_valley"


@dataclass(frozen=True)
class TaskSpec:
    """One task variant, e.g. ``arabculture_mcq_ar_region``.

    Data:
        benchmark: key of the dataset source (`arab_mm_tasks.core.sources`).
        split: the split evaluated; every benchmark here is test-only and zero-shot.
        all_config: config holding every record (one task over all of it in lighteval).
        subsets / groups: per-config subtasks and the groups that aggregate them
            (lm-eval prints subset, group and overall rows).
    Prompting:
        render: document -> `Request`; pure (it may decode the document's media), and raises
            `RecordError` on a bad record.
        target_delimiter: put between the query and each choice (multiple choice).
        modality: "text", or "image" when requests carry images (or video frames).
    Scoring:
        output_type: "multiple_choice" (log-likelihood ranking) or "generate_until".
        metrics: multiple choice: lm-eval metric names (lighteval gets the equivalents).
        generative_metrics / generation: scoring and decoding of a generative task.
        target: document -> ground truth of a generative task, without loading its media (the
            harness scores with it after generation; `render` puts the same string in `Request.target`).
        judge_context: document -> extra judge template fields (JEEM VQA's question), added to
            every judged metric's `judge_fields`.
        region_key / regions: the multi-valued document field and its values that
            generative metrics are reported by (a sample counts in each of its regions).
        weight_by_size: True = micro average over documents at group and overall level.
        breakdown_keys: document fields results are broken down by.
    Versioning:
        version: bump when the prompt, the data or the metric changes.
    """

    name: str
    benchmark: str
    description: str
    render: Callable[[Mapping[str, Any]], Request]
    subsets: tuple[Subset, ...]
    groups: Mapping[str, str]
    split: str = "test"
    all_config: str = "all"
    output_type: Literal["multiple_choice", "generate_until"] = "multiple_choice"
    target_delimiter: str = ""
    modality: Literal["text", "image"] = "text"
    metrics: tuple[str, ...] = ("acc", "acc_norm")
    generative_metrics: tuple[GenerativeMetric, ...] = ()
    generation: Generation | None = None
    target: Callable[[Mapping[str, Any]], str] | None = None
    judge_context: Callable[[Mapping[str, Any]], dict[str, str]] | None = None
    region_key: str | None = None
    regions: tuple[str, ...] = ()
    weight_by_size: bool = True
    breakdown_keys: tuple[str, ...] = ()
    aliases: tuple[str, ...] = field(default=())
    version: int = 1

    def __post_init__(self) -> None:
        generative = self.output_type == "generate_until"
        parts = (self.generation is not None, bool(self.generative_metrics), self.target is not None)
        if any(part != generative for part in parts):
            raise ValueError(
                f"{self.name}: a generate_until task needs `generation`, `generative_metrics` and `target`"
            )
        if any(m.by_region for m in self.generative_metrics) and not (self.region_key and self.regions):
            raise ValueError(f"{self.name}: per-region metrics need `region_key` and `regions`")

    def metric_names(self) -> list[str]:
        """Every metric a run reports, per-region ones included (``relaxed_acc_W``)."""
        if self.output_type == "multiple_choice":
            return list(self.metrics)
        return [name for metric in self.generative_metrics for name in metric.names(self.regions)]

    @property
    def has_media(self) -> bool:
        return self.modality != "text"

    def subset_task(self, subset: Subset) -> str:
        return f"{self.name}_{subset.name}"

    def group_task(self, group: str) -> str:
        return f"{self.name}_{group}"

    def subsets_of(self, group: str) -> list[Subset]:
        return [s for s in self.subsets if s.group == group]


def generative_spec(
    name: str,
    benchmark: str,
    config: str,
    description: str,
    render: Callable[[Mapping[str, Any]], Request],
    **fields: Any,
) -> TaskSpec:
    """A generative task over one whole config, with no per-config subsets or groups: every task of GIMMICK,
    Pearl, JEEM and ARB. `fields` are the rest of its `TaskSpec` (modality, generation, metrics, target...)."""
    return TaskSpec(
        name=name,
        benchmark=benchmark,
        description=description,
        render=render,
        subsets=(),
        groups={},
        all_config=config,
        output_type="generate_until",
        **fields,
    )


def recent_renderer(spec: TaskSpec, keep: int = 4) -> Callable[[dict], Request]:
    """`spec.render` keeping the last `keep` requests by document id: a harness asks for a document's text and
    then its images one after the other, so its media are decoded once per document."""
    recent: dict[str, Request] = {}

    def render(doc: dict) -> Request:
        key = str(doc.get("id"))
        if key not in recent:
            if len(recent) >= keep:
                recent.pop(next(iter(recent)))
            recent[key] = spec.render(doc)
        return recent[key]

    return render


@dataclass(frozen=True)
class Family:
    """A named group of task variants (lm-eval prints it as a group).

    With ``average`` the group also reports the unweighted mean of its members' metrics (GIMMICK's
    "Avg." over input settings), or with ``weight_by_size`` too the mean over all their samples
    (Pearl-X's accuracy over its single- and multi-image items); without it, it only runs them
    together (hint settings are compared, never averaged).
    """

    name: str
    tasks: tuple[str, ...]
    description: str
    average: bool = False
    weight_by_size: bool = False
