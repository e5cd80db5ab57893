"""The functions and the task class lmms-eval's YAML tree names (`!function arab_mm_tasks.harness.lmms_eval_hooks.X`).

- `SpecTask`: every generated task is this lmms-eval ``ConfigurableTask`` (the YAML's ``class``). It
  replaces lmms-eval's `download` (a plain ``datasets.load_dataset(dataset_path, ...)``, which knows
  neither our first-use builds nor a local Hub-layout folder's checks) by the same loader lm-eval's
  hook uses: the source from the task's ``dataset_path`` (the generated default, or a folder / repo
  a user's task file puts there) and the run options from its ``metadata`` (the keys lm-eval takes
  in ``--metadata``: ``gimmick_path``, ``judge``, GIMMICK's frame limits, ...).
- ``doc_to_visual_<task>``, ``doc_to_text_<task>``, ``doc_to_target_<task>``, ``process_results_<task>``:
  images (or GIMMICK's 1 fps video frames, from our media layer), prompt, ground truth and
  per-sample scores, all from the task's `TaskSpec`. Media stay lazy: each document holds where its
  bytes are, each request `LazyImage`s (`arab_mm_tasks.core.lazy_image`).
- ``aggregate_micro`` / ``aggregate_macro`` / ``aggregate_region_<code>`` / ``aggregate_unscored``:
  the same aggregations lm-eval's and lighteval's adapters use (`arab_mm_tasks.core.scoring`), each
  wrapped in `CltAggregator`, which gives lmms-eval's standard error only the scored samples.

Per-task hooks are resolved from the spec registry by name (module `__getattr__`): no prompt text
lives here, so lm-eval and lmms-eval give a model the same bytes (tests/harness/test_lmms_eval_adapter.py).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lmms_eval.api.task import ConfigurableMessagesTask, ConfigurableTask

from arab_mm_tasks.core import judging
from arab_mm_tasks.core.preflight import require_config
from arab_mm_tasks.core.registry import all_specs, get_benchmark
from arab_mm_tasks.core.run_options import validate_run_options
from arab_mm_tasks.core.scoring import Aggregator, aggregator, needs_images, score_sample
from arab_mm_tasks.core.sources import DatasetSource, load_split, without_media_decoding
from arab_mm_tasks.core.spec import IMAGE_PLACEHOLDER, recent_renderer
from arab_mm_tasks.harness.hooks_by_name import generative_hook, module_getattr
from arab_mm_tasks.harness.lm_eval_ranks import data_parallel, rank_values
from arab_mm_tasks.harness.lmms_eval_tasks import CLT_SCORE_KEY
from arab_mm_tasks.report.harness_outputs import score_of

# `metadata` keys the generator writes for lmms-eval itself; every other key is a run option of ours.
TASK_METADATA_KEYS = ("version", "description")


def default_dataset_path(benchmark: str) -> str:
    """What the generated YAML names as a benchmark's source: its default source's label."""
    return DatasetSource.default(benchmark).label


def with_task_source(benchmark: str, dataset_path: str | None, options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` with a ``dataset_path`` a user's task file set (a folder or a repo id) as ``<benchmark>_path``.

    ``<benchmark>_path`` in the task's metadata wins; the generated default path is no override.
    """
    bench = get_benchmark(benchmark)
    if bench.path_key in options or not dataset_path or dataset_path == default_dataset_path(benchmark):
        return dict(options)
    DatasetSource.resolve(benchmark, dataset_path)  # a folder that is not there: one line naming it
    return {**options, bench.path_key: dataset_path}


def load_task_dataset(*, benchmark: str, config: str, split: str, dataset_path: str | None, metadata: Any):
    """One config of a benchmark as ``{split: Dataset}``, media by reference, as lm-eval's `load_dataset`."""
    import datasets

    metadata = dict(metadata) if isinstance(metadata, Mapping) else {}
    run = {key: value for key, value in metadata.items() if key not in TASK_METADATA_KEYS}
    # lmms-eval adds nothing of its own to a task's metadata, so every other key must be one of ours
    options = validate_run_options(run)
    if "judge" in options:  # the run's judge for judged metrics, see arab_mm_tasks.core.judging
        judging.configure(options["judge"])
    bench = get_benchmark(benchmark)
    if bench.configure is not None:  # the benchmark's own run options (GIMMICK's frame limits)
        bench.configure(options)
    options = with_task_source(benchmark, dataset_path, options)
    require_config(benchmark, config, options)  # data, metric models and judge: every problem at once
    source = DatasetSource.from_metadata(benchmark, options)
    return datasets.DatasetDict({split: without_media_decoding(load_split(source, config, split, benchmark))})


class _Sourced:
    """Reads the task's documents from our sources (see the module docstring)."""

    config: Any

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        # lmms-eval hands a python task its whole YAML, `class` included, which TaskConfig does not take
        config = {key: value for key, value in (config or {}).items() if key != "class"}
        super().__init__(config=config, **kwargs)  # type: ignore[call-arg]

    def download(self, dataset_kwargs: dict[str, Any] | None = None) -> None:
        kwargs = dict(dataset_kwargs or self.config.dataset_kwargs or {})
        self.dataset = load_task_dataset(
            benchmark=kwargs["benchmark"],
            config=kwargs["config"],
            split=kwargs["split"],
            dataset_path=self.config.dataset_path,
            metadata=self.config.metadata,
        )
        # lmms-eval logs documents from `dataset_no_image`; ours hold media references, never bytes
        self.dataset_no_image = self.dataset


class SpecSimpleTask(_Sourced, ConfigurableTask):
    """For lmms-eval's "simple" model classes: a prompt string plus `doc_to_visual`."""


class SpecChatTask(_Sourced, ConfigurableMessagesTask):
    """For its chat model classes (the default where a model has one): `doc_to_messages`."""


def _requested_task_type() -> str:
    """ "chat" or "simple": the kind of task lmms-eval's evaluator asked for (it picks it from the model).

    lmms-eval 0.7 builds YAML tasks as `ConfigurableTask` or `ConfigurableMessagesTask` by the model's kind,
    but calls a python task's ``class`` without saying which, and loads a task given as a config (``--tasks
    DIR``) as "simple" whatever the model. The kind is therefore read from the frame of `get_task_dict`,
    which the evaluator calls with it, else of `TaskManager._load_individual_task_or_group`; "simple" when
    neither is on the stack (a task built by hand).
    """
    found: dict[str, str] = {}
    frame = sys._getframe(1)
    while frame is not None and "get_task_dict" not in found:
        name, kind = frame.f_code.co_name, frame.f_locals.get("task_type")
        if name in ("get_task_dict", "_load_individual_task_or_group") and kind in ("chat", "simple"):
            found.setdefault(name, kind)
        frame = frame.f_back
    return found.get("get_task_dict") or found.get("_load_individual_task_or_group") or "simple"


class SpecTask:
    """The ``class`` of every generated task: a `SpecChatTask` or a `SpecSimpleTask`, as the model needs."""

    def __new__(cls, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:  # type: ignore[misc]
        kind = SpecChatTask if _requested_task_type() == "chat" else SpecSimpleTask
        return kind(config=config, **kwargs)

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:  # lmms-eval reads the signature
        raise AssertionError("unreachable: __new__ returns another class")


@functools.cache  # one renderer per task, shared by its text and visual hooks
def generative_hooks(task: str) -> dict[str, Callable]:
    spec = all_specs()[task]
    render = recent_renderer(spec)

    def process_results(doc: dict, results: list[str], **_: Any) -> dict:
        images = render(doc).images if needs_images(spec) else None  # what the model saw (DCScore's verifier)
        values = score_sample(spec, doc, results[0], images)
        return rank_values(values) if data_parallel() else values  # gathered to rank 0 intact (lm_eval_ranks)

    def doc_to_messages(doc: dict, **_: Any) -> list[dict]:
        # one user turn, each image where its placeholder is: the text parts joined with "<image>" between
        # them are the prompt lm-eval gives, byte for byte (its chat path also puts images there)
        request = render(doc)
        content: list[dict] = []
        for i, text in enumerate(request.query.split(IMAGE_PLACEHOLDER)):
            if i:
                content.append({"type": "image", "url": request.images[i - 1]})
            if text:
                content.append({"type": "text", "text": text})
        return [{"role": "user", "content": content}]

    assert spec.target is not None
    return {
        "doc_to_messages": doc_to_messages,
        "doc_to_text": lambda doc: render(doc).query,
        # a list, as lmms-eval's models take it: [] for a text-only task (they then add no image token)
        "doc_to_visual": lambda doc: list(render(doc).images),
        "doc_to_target": spec.target,
        "process_results": process_results,
    }


@dataclass(frozen=True)
class CltAggregator:
    """Our aggregation, then each value's score copied to `CLT_SCORE_KEY` where it has one (`score_of`'s rule).

    lmms-eval computes a CLT standard error after every aggregation, from the task's ``score_key`` field
    (ours: `CLT_SCORE_KEY`) of each dict value that has the field. A judged or batched value gets its
    score only in our aggregation, and an unscored one keeps ``None`` there, on which lmms-eval's `np.std`
    raises; so the field is written here, after scoring, and left out for an unscored value.
    """

    inner: Aggregator

    @property
    def __name__(self) -> str:
        return self.inner.__name__

    def __call__(self, values: Sequence[Any]) -> float:
        result = self.inner(values)
        for value in values:
            if isinstance(value, dict):
                score = score_of(value).value
                if score is None:
                    value.pop(CLT_SCORE_KEY, None)
                else:
                    value[CLT_SCORE_KEY] = score
        return result


_GENERATIVE_HOOKS = ("doc_to_messages_", "doc_to_text_", "doc_to_visual_", "doc_to_target_", "process_results_")


def _resolve(name: str) -> Callable | None:
    if hook := generative_hook(name, _GENERATIVE_HOOKS, generative_hooks):
        return hook
    if name.startswith("aggregate_"):
        try:
            return CltAggregator(aggregator(name.removeprefix("aggregate_")))
        except KeyError:
            return None
    return None


__getattr__ = module_getattr(__name__, _resolve)
