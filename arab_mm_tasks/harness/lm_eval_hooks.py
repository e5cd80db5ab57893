"""The functions lm-eval's YAML task tree calls (`!function arab_mm_tasks.harness.lm_eval_hooks.X`).

- `load_dataset`: lm-eval's `custom_dataset`. It receives the task's `dataset_kwargs`
  (benchmark, config, split) and the run's ``--metadata``, so ``--metadata
  '{"arabculture_path": "/data/arabculture"}'`` points a run at a local folder or another repo.
- ``process_docs_<task name>``: adds the request columns (`request_query`, `request_choices`,
  `request_gold`) that the YAML's `doc_to_text` / `doc_to_choice` / `doc_to_target` read. They
  are resolved from the spec registry by name (module `__getattr__`), so no prompt code lives here.
- `ZeroShotOnly`: the few-shot sampler of every task; these benchmarks are test-only, and
  few-shot examples would be drawn from the split being evaluated.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from lm_eval.api.samplers import ContextSampler

from arab_mm_tasks.registry import all_specs
from arab_mm_tasks.sources import DatasetSource, load_split
from arab_mm_tasks.spec import TaskSpec

PROCESS_DOCS_PREFIX = "process_docs_"
RENDERED_SPLITS_KEPT = 32  # per variant: every country of a benchmark, several times over


def load_dataset(*, benchmark: str, config: str, split: str, **metadata: Any):
    """Load one config of a benchmark as ``{split: Dataset}`` from its (possibly overridden) source."""
    import datasets

    source = DatasetSource.from_metadata(benchmark, metadata)
    return datasets.DatasetDict({split: load_split(source, config, split)})


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


_PROCESS_DOCS: dict[str, Callable] = {}


def __getattr__(name: str) -> Callable:
    if name.startswith(PROCESS_DOCS_PREFIX):
        task = name.removeprefix(PROCESS_DOCS_PREFIX)
        if task in all_specs():
            if task not in _PROCESS_DOCS:
                _PROCESS_DOCS[task] = make_process_docs(all_specs()[task])
            return _PROCESS_DOCS[task]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ZeroShotOnly(ContextSampler):
    """Refuses ``--num_fewshot > 0``: the paper is zero-shot and the only split is the test split."""

    def sample(self, n: int, *args: Any, **kwargs: Any):
        if n > 0:
            raise ValueError(
                "arab-mm-tasks tasks are zero-shot only: the benchmarks have a test split alone, so "
                f"few-shot examples would leak test items (asked for --num_fewshot {n})"
            )
        return []
