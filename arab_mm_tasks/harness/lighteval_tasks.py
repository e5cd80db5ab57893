"""lighteval 0.13 tasks for every `TaskSpec`: a `TASKS_TABLE` for ``--custom-tasks``.

Per spec (e.g. ``arabculture_mcq_en_none``) the table holds:

- ``<spec>``: the whole benchmark (the spec's ``all`` config);
- one task per alias (``arabculture_mcq``), on the same config;
- ``<spec>:<subset>`` per country (``arabculture_mcq_en_none:egypt``), on the country's config.

lighteval 0.13 has no task groups: the names lm-eval runs as groups (families such as
``jeem_caption``, region groups such as ``arabculture_mcq_en_none_gulf``) map to the tasks they
stand for in `task_groups`, which ``arab-mm-lighteval`` expands before lighteval reads the list.

A generative spec (GIMMICK) is one task, ``<spec>``, on its config. Its images (or video frames)
go in ``Doc.images``; lighteval's vision model puts them after the text itself, so the query is
the spec's prompt without its ``<image>`` placeholder lines (`spec.without_image_placeholders`).
Scores and their per-region aggregation are the same functions lm-eval uses (`arab_mm_tasks.core.scoring`).

Prompt, choices and gold come only from ``spec.render``; this module adds no prompt text.
Every task is zero-shot: the benchmarks are test-only, so few-shot examples would be drawn from
the split being evaluated, and the prompt function refuses to build them.

Run it with ``arab-mm-lighteval`` (`arab_mm_tasks.harness.lighteval_cli`), which starts
offline and works around lighteval 0.13's bugs. Stock lighteval also works where it starts
(online, huggingface_hub<1), but then ``<spec>|0`` is expanded to ``<spec>`` plus all its
``<spec>:<country>`` tasks, because lighteval treats the part before ``:`` as a task group.

    arab-mm-lighteval accelerate "model_name=Qwen/Qwen2.5-0.5B" "arabculture_mcq|0"
    lighteval accelerate "model_name=Qwen/Qwen2.5-0.5B" "arabculture_mcq|0" \\
        --custom-tasks arab_mm_tasks.harness.lighteval_tasks
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lighteval.metrics.dynamic_metrics import LogLikelihoodAccMetric
from lighteval.metrics.metrics_sample import SampleLevelComputation
from lighteval.metrics.normalizations import LogProbCharNorm
from lighteval.metrics.utils.metric_utils import Metric, SampleLevelMetricGrouping
from lighteval.models.model_output import ModelResponse
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc, SamplingMethod

from arab_mm_tasks.core.registry import all_families, all_specs
from arab_mm_tasks.core.run_options import RunOptionError
from arab_mm_tasks.core.scoring import (
    Aggregator,
    aggregation_kind,
    aggregator,
    judge_context,
    needs_images,
    sample_regions,
    score_prediction,
)
from arab_mm_tasks.core.sources import DatasetSource
from arab_mm_tasks.core.spec import Subset, TaskSpec, higher_is_better, without_image_placeholders

MODULE = "arab_mm_tasks.harness.lighteval_tasks"  # what ``--custom-tasks`` takes

# lm-eval metric name -> the lighteval metric computing the same thing. Both harnesses' acc_norm divide
# the log-likelihood by the choice's length in characters (lm-eval's byte-length variant is acc_bytes).
METRICS: dict[str, Callable[[], Metric]] = {
    "acc": LogLikelihoodAccMetric,
    "acc_norm": lambda: LogLikelihoodAccMetric(normalization=LogProbCharNorm()),
}


def make_prompt_function(spec: TaskSpec) -> Callable[[dict[str, Any], str | None], Doc]:
    def prompt(line: dict[str, Any], task_name: str | None = None) -> Doc:
        # lighteval marks rows it formats as few-shot examples; here those would come from the test split.
        if line.get("__few_shots"):  # `arab-mm-lighteval` refuses "task|N" up front; a tasks file reaches here
            raise RunOptionError(f"{spec.name} is zero-shot only: run it as '{task_name}|0'")
        request = spec.render(line)
        if spec.output_type == "generate_until":
            return Doc(
                task_name=task_name or spec.name,
                query=without_image_placeholders(request.query),
                choices=[request.target],
                gold_index=0,
                images=request.images or None,
                specific={
                    "id": line.get("id"),
                    "target": request.target,
                    "regions": sample_regions(spec, line),
                    **{key: line[key] for key in spec.breakdown_keys if key in line},  # for `arab-mm-tasks breakdown`
                    "judge_context": judge_context(spec, line),
                },
            )
        # instruction stays None: with "" lighteval strips the query and prepends "\n\n" to it.
        return Doc(
            task_name=task_name or spec.name,
            query=request.query,
            choices=[spec.target_delimiter + choice for choice in request.choices],
            gold_index=request.gold,
            # The record's id and breakdown fields travel in the details files, as the whole doc does in
            # lm-eval's samples (lighteval overwrites Doc.id with the row index, so the id goes here too).
            specific={key: line[key] for key in ("id", *spec.breakdown_keys) if key in line},
        )

    # lighteval's response-cache key holds the function's name, not its code (spec.version covers that).
    prompt.__name__ = f"prompt_{spec.name}"
    return prompt


class GenerativeScores(SampleLevelComputation):
    """A spec's generative metrics for one sample (the first generation, as lm-eval scores it)."""

    def __init__(self, spec: TaskSpec) -> None:
        self.spec = spec

    def compute(self, doc: Doc, model_response: ModelResponse, **kwargs: Any) -> dict[str, Any]:
        specific = doc.specific or {}
        images = doc.images if needs_images(self.spec) else None  # what the model saw (DCScore's verifier)
        return score_prediction(
            self.spec,
            model_response.final_text[0],
            specific["target"],
            specific["regions"],
            images,
            specific.get("judge_context"),
        )

    def __str__(self) -> str:  # lighteval hashes the metric's str into its cache keys
        return f"GenerativeScores({self.spec.name}, v{self.spec.version})"


@dataclass(frozen=True)
class CorpusAggregation:
    """A corpus metric's aggregation, answered as ``{name: score}``.

    lighteval bootstraps the stderr of every aggregation not named *mean* (1,000 resamples), which
    for a corpus score means 1,000 corpus computations; a dict answer is its documented way to
    report a corpus score without one.
    """

    name: str
    aggregate: Aggregator

    @property
    def __name__(self) -> str:
        return f"corpus_{self.aggregate.kind}"

    def __call__(self, values: list[dict[str, Any]]) -> dict[str, float]:
        return {self.name: self.aggregate(values)}


def generative_metric(spec: TaskSpec) -> SampleLevelMetricGrouping:
    names = spec.metric_names()
    corpus_names = {n for m in spec.generative_metrics if m.corpus for n in m.names(spec.regions)}

    def aggregation(name: str) -> Aggregator | CorpusAggregation:
        aggregate = aggregator(aggregation_kind(spec, name))
        return CorpusAggregation(name, aggregate) if name in corpus_names else aggregate

    return SampleLevelMetricGrouping(
        metric_name=names,
        higher_is_better={name: higher_is_better(name) for name in names},
        category=SamplingMethod.GENERATIVE,
        sample_level_fn=GenerativeScores(spec),
        corpus_level_fn={name: aggregation(name) for name in names},
    )


def _task_config(spec: TaskSpec, name: str, config: str, source: DatasetSource) -> LightevalTaskConfig:
    if spec.output_type == "generate_until":
        assert spec.generation is not None
        scoring = {
            "metrics": [generative_metric(spec)],
            "generation_size": spec.generation.max_new_tokens,
            "stop_sequence": list(spec.generation.until),
        }
    else:
        scoring = {
            "metrics": [METRICS[metric]() for metric in spec.metrics],
            "generation_size": -1,  # log-likelihood only: nothing is generated
            "stop_sequence": None,
        }
    return LightevalTaskConfig(
        name=name,
        prompt_function=make_prompt_function(spec),
        hf_repo=source.path,
        hf_revision=source.revision,
        hf_subset=config,
        hf_avail_splits=[spec.split],
        evaluation_splits=[spec.split],
        few_shots_split=None,  # zero-shot only, see make_prompt_function
        version=spec.version,
        **scoring,
    )


def tasks_of(spec: TaskSpec, source: DatasetSource) -> list[LightevalTaskConfig]:
    """The whole-benchmark task, its aliases, then one task per subset."""
    whole = [_task_config(spec, name, spec.all_config, source) for name in (spec.name, *spec.aliases)]
    return whole + [_task_config(spec, subset_task_name(spec, s), s.config, source) for s in spec.subsets]


def subset_task_name(spec: TaskSpec, subset: Subset) -> str:
    return f"{spec.name}:{subset.name}"  # lighteval's ``task:subset`` naming


def task_groups() -> dict[str, list[str]]:
    """Group name -> the lighteval tasks it stands for: every family (its members) and every region
    group of a per-country spec (its countries, ``<spec>:<country>``), as lm-eval runs them."""
    groups = {family.name: list(family.tasks) for family in all_families().values()}
    for spec in all_specs().values():
        for group in spec.groups:
            groups[spec.group_task(group)] = [subset_task_name(spec, s) for s in spec.subsets_of(group)]
    return groups


def build_tasks_table(
    paths: Mapping[str, str] | None = None, revisions: Mapping[str, str] | None = None
) -> list[LightevalTaskConfig]:
    """Every task, reading each benchmark from its Hub repo unless `paths` / `revisions` override it.

    `paths` maps a benchmark to a local Hub-layout folder or a repo id, e.g.
    ``{"arabculture": "/data/arabculture"}``. Touches neither the network nor the disk, except
    to check that a local folder exists.
    """
    paths, revisions = dict(paths or {}), dict(revisions or {})
    specs = list(all_specs().values())
    benchmarks = sorted({spec.benchmark for spec in specs})
    unknown = sorted((set(paths) | set(revisions)) - set(benchmarks))
    if unknown:
        raise KeyError(f"unknown benchmark(s) {unknown}; known: {benchmarks}")
    sources = {b: DatasetSource.resolve(b, paths.get(b), revisions.get(b)) for b in benchmarks}
    return [config for spec in specs for config in tasks_of(spec, sources[spec.benchmark])]


TASKS_TABLE: list[LightevalTaskConfig] = build_tasks_table()
