"""`arab-mm-tasks evaluate --harness lmms-eval`: the same suites as `evaluate`, run through lmms-eval 0.7 in-process.

    arab-mm-tasks evaluate --harness lmms-eval --model qwen2_5_vl \\
        --model_args pretrained=Qwen/Qwen2.5-VL-7B-Instruct --suite headline --output_path runs/

One lmms-eval model object is loaded once, and each suite entry (a task or a family) is one lmms-eval
``simple_evaluate`` call on it, saved as the ``lmms-eval`` command line saves it
(``<output_path>/<model>/<date>_results.json`` and ``<date>_samples_<task>.jsonl``). Each entry's tasks
are handed over as the task files of docs/lmms_eval.md are: our task with the run's options in its
``metadata`` (``<benchmark>_path`` for ``--dataset-path``); a family is handed over as its group with each
member carrying them, since lmms-eval keeps a group's ``metadata`` to itself. The judge is configured in
this process, never put in a task's ``metadata``, which lmms-eval writes into its results files.

ArabCulture (log-likelihood) is not registered in lmms-eval: its entries are skipped with a note, and a
suite of nothing else is refused in one line. Judged entries without a judge run as with lm-eval: the
preflight notes it, their judged scores are NaN, every sample counted in ``<name>_unscored`` and saved for
`arab-mm-tasks judge` (`lmms_eval_tasks.CLT_SCORE_KEY` keeps lmms-eval's standard error off unscored samples).
The model's weights stay loaded across entries (`_model_kept`: lmms-eval's `evaluate` ends by deleting them).

Resume, as `evaluate` for lm-eval: an entry is finished when an lmms-eval results file of the same model,
model arguments, limit and generation settings holds it and every samples file it names is complete; a
finished entry is skipped, and no model is loaded when nothing is left to run. Responses go to
lmms-eval's own response cache (``use_cache``, ``<output_path>/.cache/lmms_<digest>``), which an entry
cut off midway reads back. lmms-eval 0.7.3's cache needs help for that (`_entry_cache`): it stores a
request type's responses only after the model answered all of them, so a killed entry lost every answer;
its model fingerprint is ``str(model)``, for a model object its memory address, so no later process
would hit; a killed run's answers stay in a shard named by a fresh random run id, which no later run
reads; and its model classes change a request's generation settings in place, after the lookup key was
made from them and before the store key is (`_OwnSettings`), so nothing stored was ever found. Here
responses are stored every ``cache_chunk`` requests, the fingerprint is the model type (as the
``lmms-eval`` command line makes it), each entry writes under a fixed run id (its name), so a killed
entry's rerun opens the shard its answers went to, and the model gets copies of the settings.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import hashlib
import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from arab_mm_tasks.cli.evaluate import Entry, SameRun, earliest_finished, run_entries
from arab_mm_tasks.core.registry import all_families, all_specs
from arab_mm_tasks.core.run_options import RunOptionError
from arab_mm_tasks.report.harness_outputs import Harness, samples_beside


def run_from_args(
    args: argparse.Namespace, entries: Sequence[Entry], metadata: dict[str, Any], limit: float | None
) -> dict[str, str]:
    """`evaluate --harness lmms-eval`: run each entry not finished yet through lmms-eval; returns entry name -> what
    happened, as `evaluate`'s `run_suite` does. Raises `PreflightError` before the model loads, `RunOptionError` (one
    line) for lm-eval-only flags, a missing lmms-eval, or a suite lmms-eval cannot run (an unknown model type, only
    ArabCulture)."""
    if args.apply_chat_template:
        raise RunOptionError("--apply_chat_template is lm-eval's: lmms-eval's chat model classes apply the template")
    if args.cache_chunk < 1:
        raise RunOptionError(f"--cache-chunk must be at least 1, got {args.cache_chunk}")
    try:
        import lmms_eval.evaluator  # noqa: F401  (not bare lmms_eval: our wheel's tree makes that importable)
    except ImportError as error:
        raise RunOptionError(
            f'--harness lmms-eval needs lmms-eval: pip install "arab-mm-tasks[lmms]" ({error})'
        ) from None
    from arab_mm_tasks.core import judging

    outcome: dict[str, str] = {}
    entries = supported_entries(entries, outcome)
    model_class = _model_class(args.model)
    if args.judge:
        judging.configure(args.judge)  # in this process only: lmms-eval writes task metadata into its results files
    output_path = Path(args.output_path)
    settings = LmmsRunSettings(args.model, args.model_args, limit, args.gen_kwargs)
    cache = None if args.no_cache else _cache_root(output_path, settings)
    return run_entries(
        args.model, args.model_args, entries, outcome,
        finished=lambda item: finished_results(output_path, item, settings),
        load=lambda device: model_class.create_from_arg_string(
            args.model_args, {"batch_size": args.batch_size, "device": device}
        ),
        run=lambda lm, item, device, skipped: _evaluate_entry(
            lm, item, settings, output_path, metadata, device, args.batch_size, cache, args.cache_chunk, skipped
        ),
        metadata=metadata, device=args.device, skip_unavailable_metrics=args.skip_unavailable_metrics,
        through=" through lmms-eval",
    )  # fmt: skip


def supported_entries(entries: Sequence[Entry], outcome: dict[str, str]) -> list[Entry]:
    """The entries lmms-eval has tasks for; the others (ArabCulture's log-likelihood tasks) noted as skipped.

    Raises `RunOptionError` when none is left: a suite of only those has nothing to run.
    """
    from arab_mm_tasks.harness.lmms_eval_tasks import supported

    kept: list[Entry] = []
    for item in entries:
        if all(supported(all_specs()[task]) for task in item.tasks):
            kept.append(item)
            continue
        outcome[item.name] = "skipped: log-likelihood tasks are not registered in lmms-eval (use --harness lm-eval)"
        print(f"{item.name}: {outcome[item.name]}", flush=True)
    if entries and not kept:
        names = ", ".join(item.name for item in entries)
        raise RunOptionError(
            f"--harness lmms-eval: {names}: log-likelihood tasks are not registered in lmms-eval; "
            "run them with --harness lm-eval"
        )
    return kept


@dataclass(frozen=True)
class LmmsRunSettings(SameRun):
    """lmms-eval's: an lmms-eval results file of the same model, model arguments, limit and generation settings."""

    harness: ClassVar[Harness] = "lmms-eval"

    def matches(self, data: dict[str, Any]) -> bool:
        from lmms_eval.evaluator import _redact_eval_config_secrets
        from lmms_eval.utils import simple_parse_args_string

        config = data.get("config", {})
        gen_kwargs = simple_parse_args_string(self.gen_kwargs) if self.gen_kwargs else None
        # lmms-eval writes model_args with credentials redacted: compare like with like
        model_args = _redact_eval_config_secrets({"model_args": self.model_args})["model_args"]
        return (config.get("model"), config.get("model_args"), config.get("limit")) == (
            self.model,
            model_args,
            self.limit,
        ) and (config.get("gen_kwargs") or None) == (gen_kwargs or None)


def finished_results(output_path: Path, entry: Entry, settings: LmmsRunSettings) -> Path | None:
    """An lmms-eval results file of an earlier run of this entry with the same `settings`, samples complete
    (the earliest such run, by the time in its name)."""
    # a task given by an alias ran under its spec's name (our lmms-eval tree registers no aliases)
    names = [entry.name] if entry.name in all_families() else entry.tasks

    def ran(data: dict[str, Any]) -> bool:
        return all(name in data.get("results", {}) or name in data.get("group_subtasks", {}) for name in names)

    return earliest_finished(output_path, settings, ran)


def task_configs(item: Entry, metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """The entry as lmms-eval task configs (what a ``--tasks DIR`` task file holds), the run options in each
    task's ``metadata`` on top of the generated one (its version and description)."""
    from arab_mm_tasks.harness.lmms_eval_tasks import family_file, task_file

    def member(name: str) -> dict[str, Any]:
        _, generated = task_file(all_specs()[name])
        return {"task": name, "metadata": {**generated["metadata"], **metadata}}

    family = all_families().get(item.name)
    if family is None:
        return [member(task) for task in item.tasks]
    _, group = family_file(family)
    return [{**group, "task": [member(task) for task in group["task"]]}]


def _model_class(model: str) -> type:
    """lmms-eval's class for a model type, before any work; an unknown type is one line."""
    import difflib

    from lmms_eval.models import MODEL_REGISTRY_V2, get_model

    names = MODEL_REGISTRY_V2.list_model_names()
    if model not in names:  # checked here: lmms-eval's own refusal logs an error line and lists all ~100 names
        close = difflib.get_close_matches(model, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise RunOptionError(f"--model {model!r}: not an lmms-eval model type{hint}")
    try:
        return get_model(model)
    except ImportError as error:  # a model class whose own dependencies are not installed
        raise RunOptionError(f"--model {model!r}: lmms-eval cannot import its class ({error})") from None


def _cache_root(output_path: Path, settings: LmmsRunSettings) -> Path:
    # named by a digest: model arguments may hold a token, which no file name should show
    digest = hashlib.sha256(f"{settings.model} {settings.model_args}".encode()).hexdigest()[:16]
    return output_path / ".cache" / f"lmms_{digest}"


def _evaluate_entry(
    lm: Any,
    item: Entry,
    settings: LmmsRunSettings,
    output_path: Path,
    metadata: dict[str, Any],
    device: str | None,
    batch_size: str | int,
    cache: Path | None,
    cache_chunk: int,
    not_computed: dict[str, str],
) -> Path:
    """One lmms-eval run of `item`, saved as the lmms-eval command line saves it; returns the results file."""
    from lmms_eval.evaluator import simple_evaluate
    from lmms_eval.loggers import EvaluationTracker
    from lmms_eval.tasks import TaskManager
    from lmms_eval.utils import make_table

    from arab_mm_tasks.harness.lmms_eval_tasks import tasks_path

    tracker = EvaluationTracker(output_path=str(output_path))
    date_stamp = _free_stamp(output_path)
    # our tree only: lmms-eval's own hundreds of task folders are not indexed for a run of ours
    manager = TaskManager("ERROR", include_path=tasks_path(), include_defaults=False)
    with _entry_cache(settings.model, item.name, cache_chunk), _cache_stats(), _model_kept(lm):
        results = simple_evaluate(
            model=lm,
            model_args=settings.model_args,
            tasks=task_configs(item, metadata),
            task_manager=manager,
            limit=settings.limit,
            device=device,
            batch_size=batch_size,
            use_cache=str(cache) if cache else None,
            log_samples=True,
            evaluation_tracker=tracker,
            gen_kwargs=settings.gen_kwargs,
            datetime_str=date_stamp,  # its default is the time lmms-eval was imported: every entry would share it
            verbosity="ERROR",
        )
    results["config"]["model"] = settings.model  # as the command line records it (not the object's class name)
    # lmms-eval logs the model *object* as the run's model_source and deep-copies it into the results file: an
    # API model's HTTP client (locks) cannot be copied, and the save fails; the command line logs the type name
    tracker.general_config_tracker.model_source = settings.model
    if not_computed:  # a named outcome in the results file, not a silent absence (NaN values, all unscored)
        results["not_computed"] = dict(not_computed)
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples, datetime_str=date_stamp)
    for task_name in results["configs"]:
        tracker.save_results_samples(task_name=task_name, samples=samples[task_name])
    saved = output_path / tracker.general_config_tracker.model_name_sanitized / f"{tracker.date_id}_results.json"
    # lmms-eval logs a failed save as a warning and goes on: a missing file here is an error, not a finished entry
    missing = [p for p in [saved, *(samples_beside(saved, t) for t in results["configs"])] if not p.is_file()]
    if missing:
        raise OSError(f"lmms-eval did not write {', '.join(map(str, missing))} (see its warning above)")
    print(make_table(results))
    if results.get("groups"):
        print(make_table(results, "groups"))
    return saved


def _free_stamp(output_path: Path) -> str:
    """lmms-eval's file stamp (to the second) that no file under `output_path` carries yet: two entries finishing
    within a second would otherwise write one results file over the other."""
    from lmms_eval.utils import get_datetime_str

    while True:
        candidate = get_datetime_str()
        if not any(output_path.glob(f"*/{candidate}_*")):
            return candidate
        time.sleep(0.5)


@contextlib.contextmanager
def _entry_cache(model: str, entry_name: str, chunk: int) -> Iterator[None]:
    """lmms-eval's response cache as a resumed entry needs it (see the module docstring), for one call."""
    import lmms_eval.evaluator
    from lmms_eval.caching.response_cache import ResponseCache

    class EntryCache(ResponseCache):
        @classmethod
        def create(cls, cache_root: str, *, model: Any = "", **kwargs: Any) -> ResponseCache:
            return super().create(cache_root, model=model_type, **kwargs)

        def execute(self, lm: Any, reqtype: str, requests: list) -> list:
            answers: list = []
            for start in range(0, len(requests), chunk):
                answers += super().execute(_OwnSettings(lm), reqtype, requests[start : start + chunk])
            return answers

    model_type = model
    saved_class, saved_run = lmms_eval.evaluator.ResponseCache, os.environ.get("LMMS_CACHE_RUN_ID")
    lmms_eval.evaluator.ResponseCache = EntryCache
    os.environ["LMMS_CACHE_RUN_ID"] = entry_name  # lmms-eval's own knob for the run folder its shard goes in
    try:
        yield
    finally:
        lmms_eval.evaluator.ResponseCache = saved_class
        if saved_run is None:
            os.environ.pop("LMMS_CACHE_RUN_ID", None)
        else:
            os.environ["LMMS_CACHE_RUN_ID"] = saved_run


@contextlib.contextmanager
def _model_kept(lm: Any) -> Iterator[None]:
    """lmms-eval's `evaluate` ends with ``lm.clean()``, which deletes the model's weights (to make room for a judge
    model it launches itself, which we do not use): the next entry needs them, as lm-eval's path keeps them."""
    lm.clean = lambda: None  # the instance's attribute, over the class's method, for this call only
    try:
        yield
    finally:
        del lm.clean


class _OwnSettings:
    """The model, given copies of each request's generation settings.

    lmms-eval 0.7.3's cache looks an answer up by the request's settings before the model call and stores it by
    them after; its model classes (llava_hf, qwen2_5_vl, ...) change them in place (pop ``until``, add
    ``num_beams``, ``image_sizes``), so what was stored was never found again.
    """

    def __init__(self, lm: Any) -> None:
        self._lm = lm

    def __getattr__(self, reqtype: str) -> Any:
        method = getattr(self._lm, reqtype)
        return lambda requests: method([_with_own_settings(request) for request in requests])


def _with_own_settings(request: Any) -> Any:
    clone = copy.copy(request)
    clone.arguments = tuple(copy.deepcopy(arg) if isinstance(arg, dict) else arg for arg in request.args)
    return clone


@contextlib.contextmanager
def _cache_stats() -> Iterator[None]:
    """Show lmms-eval's one line on its response cache ("ResponseCache stats: 3 hits, 5 misses, ..."), which says
    how many answers a resumed entry took from it."""
    from loguru import logger as eval_logger  # lmms-eval logs through loguru's one logger

    def show(message: Any) -> None:
        print(f"  lmms-eval response cache: {message.record['message']}", file=sys.stdout, flush=True)

    sink = eval_logger.add(show, level="INFO", filter=lambda record: record["message"].startswith("ResponseCache stat"))
    try:
        yield
    finally:
        eval_logger.remove(sink)
