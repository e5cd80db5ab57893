"""The functions lm-eval's YAML task tree calls (`!function arab_mm_tasks.harness.lm_eval_hooks.X`).

- `load_dataset`: lm-eval's `custom_dataset`. It receives the task's `dataset_kwargs`
  (benchmark, config, split) and the run's ``--metadata``, so ``--metadata
  '{"arabculture_path": "/data/arabculture"}'`` points a run at a local folder or another repo.
  Images and videos are left undecoded, each document holding where their bytes are stored.
- ``process_docs_<task name>`` (multiple choice): adds the request columns (`request_query`,
  `request_choices`, `request_gold`) that the YAML's `doc_to_text` / `doc_to_choice` /
  `doc_to_target` read.
- ``doc_to_text_<task>``, ``doc_to_image_<task>``, ``doc_to_target_<task>``,
  ``process_results_<task>`` (generative): prompt, images (or video frames), ground truth and
  per-sample scores. A document's media are decoded once: lm-eval asks for its text and then its
  images in a row, so the last few rendered requests are kept.
- ``aggregate_micro`` / ``aggregate_macro`` / ``aggregate_region_<code>``: generative metrics'
  aggregations (`arab_mm_tasks.core.scoring`).

All per-task hooks are resolved from the spec registry by name (module `__getattr__`), so no
prompt code lives here.
- `ZeroShotOnly`: the few-shot sampler of every task; these benchmarks are test-only, and
  few-shot examples would be drawn from the split being evaluated.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import sys
from collections.abc import Callable
from typing import Any

from lm_eval.api.samplers import ContextSampler

from arab_mm_tasks.core import judging
from arab_mm_tasks.core.preflight import require_config
from arab_mm_tasks.core.registry import all_benchmarks, all_specs, get_benchmark
from arab_mm_tasks.core.run_options import RunOptionError, validate_run_options
from arab_mm_tasks.core.scoring import aggregator, needs_images, score_sample
from arab_mm_tasks.core.sources import DatasetSource, DataSourceError, load_split, without_media_decoding
from arab_mm_tasks.core.spec import TaskSpec, recent_renderer
from arab_mm_tasks.harness.hooks_by_name import generative_hook, module_getattr
from arab_mm_tasks.harness.lm_eval_multimodal import patch_loaded_multimodal_models
from arab_mm_tasks.harness.lm_eval_ranks import data_parallel, rank_values

PROCESS_DOCS_PREFIX = "process_docs_"
RENDERED_SPLITS_KEPT = 32  # per variant: every country of a benchmark, several times over


def load_dataset(*, benchmark: str, config: str, split: str, **metadata: Any):
    """Load one config of a benchmark as ``{split: Dataset}`` from its source (`arab_mm_tasks.core.sources`)."""
    import datasets

    patch_loaded_multimodal_models()  # lm-eval loaded the model before its tasks: see lm_eval_multimodal
    # lm-eval merges our --metadata with its own keys and the model's args: ours are checked, in one line
    options = validate_run_options(metadata, from_lm_eval_task=True)
    if "judge" in options:  # the run's judge for judged metrics, see arab_mm_tasks.core.judging
        judging.configure(options["judge"])
    bench = get_benchmark(benchmark)
    if bench.configure is not None:  # the benchmark's own run options (GIMMICK's frame limits)
        bench.configure(options)
    # before any generation: data, metric models and judge, every problem at once (lm-eval 0.4.13 has loaded
    # the model by now; `arab-mm-tasks evaluate` checks before that)
    require_config(benchmark, config, options)
    source = DatasetSource.from_metadata(benchmark, options)
    # Media by reference: lm-eval keeps every document until the run ends, so each holds where its media's
    # bytes are (`arab_mm_tasks.core.media_refs`), and its requests lazy images, not bytes or pixels.
    return datasets.DatasetDict({split: without_media_decoding(load_split(source, config, split, benchmark))})


def make_process_docs(spec: TaskSpec) -> Callable:
    # lm-eval calls process_docs each time it reads the task's documents (three times a run), so the
    # rendered split is kept per input dataset fingerprint: rendering happens once per run.
    rendered: dict[str, Any] = {}

    def process_docs(dataset):
        def add_request(doc: dict) -> dict:
            request = spec.render(doc)
            return {"request_query": request.query, "request_choices": request.choices, "request_gold": request.gold}

        key = getattr(dataset, "_fingerprint", None)
        if key is None or key not in rendered:
            # keep_in_memory: nothing is written to the datasets cache, so a changed prompt is never served stale;
            # new_fingerprint: skips hashing this closure, which costs more than rendering a country.
            fingerprint = hashlib.sha256(f"{key}/{spec.name}/v{spec.version}".encode()).hexdigest()[:32]
            mapped = dataset.map(add_request, keep_in_memory=True, desc=spec.name, new_fingerprint=fingerprint)
            if key is None:
                return mapped
            if len(rendered) >= RENDERED_SPLITS_KEPT:  # bounded: drop the oldest
                rendered.pop(next(iter(rendered)))
            rendered[key] = mapped
        return rendered[key]

    process_docs.__name__ = PROCESS_DOCS_PREFIX + spec.name
    return process_docs


@functools.cache  # one renderer per task, shared by its text and image hooks
def generative_hooks(task: str) -> dict[str, Callable]:
    spec = all_specs()[task]
    render = recent_renderer(spec)

    def process_results(doc: dict, results: list[str]) -> dict:
        images = render(doc).images if needs_images(spec) else None  # what the model saw (DCScore's verifier)
        values = score_sample(spec, doc, results[0], images)
        return rank_values(values) if data_parallel() else values  # gathered to rank 0 intact (lm_eval_ranks)

    assert spec.target is not None
    return {
        "doc_to_text": lambda doc: render(doc).query,
        "doc_to_image": lambda doc: render(doc).images,
        "doc_to_target": spec.target,
        "process_results": process_results,
    }


_GENERATIVE_HOOKS = ("doc_to_text_", "doc_to_image_", "doc_to_target_", "process_results_")


def _resolve(name: str) -> Callable | None:
    if name.startswith(PROCESS_DOCS_PREFIX):
        task = name.removeprefix(PROCESS_DOCS_PREFIX)
        if task in all_specs():
            return make_process_docs(all_specs()[task])
    if hook := generative_hook(name, _GENERATIVE_HOOKS, generative_hooks):
        return hook
    if name.startswith("aggregate_"):
        try:
            return aggregator(name.removeprefix("aggregate_"))
        except KeyError:
            return None
    return None


__getattr__ = module_getattr(__name__, _resolve)


class ZeroShotOnly(ContextSampler):
    """Refuses ``--num_fewshot > 0``: the paper is zero-shot and the only split is the test split."""

    def sample(self, n: int, *args: Any, **kwargs: Any):
        if n > 0:  # one line at the command line (`_print_data_errors_as_one_line`), not lm-eval's traceback
            raise RunOptionError(
                f"--num_fewshot {n}: arab-mm-tasks tasks are zero-shot only: the benchmarks have a test split alone, "
                "so few-shot examples would leak test items; run with --num_fewshot 0 or without it"
            )
        return []


def _print_data_errors_as_one_line() -> None:
    """lm-eval lets exceptions from dataset loading end the run with a traceback; ours is one line with the fix.

    Only `DataSourceError` and `RunOptionError` (a bad ``--metadata`` key, ``--num_fewshot 1``) are
    shortened, and only at the top level of a command line: Python callers still get the exception.
    """
    previous = sys.excepthook
    if getattr(previous, "_arab_mm", False):
        return

    def excepthook(kind: type[BaseException], value: BaseException, traceback: Any) -> None:
        if isinstance(value, DataSourceError | RunOptionError):
            print(f"error: {value}", file=sys.stderr)
        else:
            previous(kind, value, traceback)

    excepthook._arab_mm = True  # type: ignore[attr-defined]
    sys.excepthook = excepthook


_print_data_errors_as_one_line()


class _OurCustomDatasetNotice(logging.Filter):
    """lm-eval warns, for every task with a `custom_dataset` function, that "Custom kwargs can be passed to
    `--metadata`" (two lines, 26 times per ArabCulture run): our run options are documented (README, "Run
    options") and checked, so the notice is dropped for our tasks and kept for everyone else's."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        task, sep, rest = message.partition(": ")
        ours = task.split("_", 1)[0] in all_benchmarks()  # lm-eval names the per-country leaf, not the spec
        return not (sep and ours and rest.startswith("Custom kwargs can be passed"))


logging.getLogger("lm_eval.api.task").addFilter(_OurCustomDatasetNotice())
