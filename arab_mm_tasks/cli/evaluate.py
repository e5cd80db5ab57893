"""`arab-mm-tasks evaluate`: one command that runs a suite of this package's tasks on a model through lm-eval.

    arab-mm-tasks evaluate --model hf-multimodal --model_args pretrained=Qwen/Qwen2.5-VL-7B-Instruct \\
        --suite headline --output_path runs/ --judge "model=gpt-4o-2024-11-20"

Suites: ``headline`` (each benchmark's paper-default variants, `Benchmark.headline`), ``all`` (every
variant), or ``--tasks`` (task and family names). Each entry (a task or a family) is one lm-eval
``simple_evaluate`` call on the same model object, saved as lm-eval's CLI saves it
(``<output_path>/<model>/results_<ts>.json`` and ``samples_<task>_<ts>.jsonl``), so every tool that
reads lm-eval output reads these, `arab-mm-tasks report` included. ``--harness lmms-eval`` runs the same
suites through lmms-eval instead, with the same resume rules (`arab_mm_tasks.cli.evaluate_lmms`).

Resumable: an entry is finished when a results file of the same model, model arguments and limit
holds it and every samples file that results file names is complete (valid JSON lines to the end,
one per document it counts); a finished entry is skipped (no model is loaded when nothing is left
to run); an entry cut off midway, or whose samples file was cut, reuses every response already
generated (lm-eval's response cache, ``<output_path>/.cache``) and every judgement already made
(the judge's own cache). Image and video tasks are skipped, with a note, for a model type that
cannot take images.

Preflight (`arab_mm_tasks.core.preflight`): before the model loads, every entry left to run is
checked: its data can be had (a complete local build, with images for image tasks, or the Hub
reachable or cached), its metrics' encoders can be loaded (``ARAB_MM_<KEY>_MODEL``), and a
configured judge answers. Everything missing is printed at once, one line each, and the command
exits 1 without loading the model. ``--skip-unavailable-metrics`` runs without a metric whose model
is missing instead: its scores are NaN, each sample unscored, and the results file and summary list
it under ``not_computed``. A data source that fails later anyway (a bad record) stops that entry
with its one-line instruction; the others run, and the exit code is 1.

Without ``--device`` the model goes on CUDA when torch sees one, else on the CPU. What is printed
never shows a credential of ``--model_args`` (token=..., user:pass@ in a URL: `printable_args`);
lm-eval itself keeps ``model_args`` in its results files, so pass tokens through ``HF_TOKEN``.
Judge settings are applied in this process and never passed through lm-eval's ``--metadata``, which
lm-eval writes into its results files (docs/security.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from arab_mm_tasks.core.registry import all_benchmarks, all_families, all_specs, get_spec
from arab_mm_tasks.report.harness_outputs import Harness, harness_of, results_files, samples_beside, stamp, stamp_order

SUITES = ("headline", "all")
# lmms-eval 0.7.3 checkpoints its response cache every 256 responses (`_CHECKPOINT_INTERVAL`); a smaller step
# loses fewer answers to a kill, at the price of smaller model calls (which matters to batched backends)
DEFAULT_CACHE_CHUNK = 64


@dataclass(frozen=True)
class Entry:
    """One lm-eval call: a task or family name as lm-eval knows it, and the task specs it runs."""

    name: str
    benchmark: str
    tasks: tuple[str, ...]

    @property
    def needs_images(self) -> bool:
        return any(all_specs()[task].has_media for task in self.tasks)


def entry(name: str) -> Entry:
    """The entry for a task, alias or family name; `KeyError` naming it when it is none of them."""
    family = all_families().get(name)
    if family is not None:
        return Entry(name, all_specs()[family.tasks[0]].benchmark, family.tasks)
    spec = get_spec(name)
    return Entry(name, spec.benchmark, (spec.name,))


def suite_entries(suite: str | None, tasks: str | None) -> list[Entry]:
    if tasks:
        return [entry(name.strip()) for name in tasks.split(",") if name.strip()]
    if suite == "all":
        return [entry(spec.name) for spec in all_specs().values()]
    return [entry(name) for benchmark in all_benchmarks().values() for name in benchmark.headline]


@dataclass(frozen=True)
class SameRun:
    """What makes two runs of an entry the same run, in either harness: a results file with other settings is not
    reused (`RunSettings`, `arab_mm_tasks.cli.evaluate_lmms.LmmsRunSettings`)."""

    model: str
    model_args: str
    limit: float | None = None
    gen_kwargs: str | None = None
    harness: ClassVar[Harness]  # whose results files these settings are compared with

    def matches(self, data: dict[str, Any]) -> bool:
        """Whether a results file's JSON object records a run with these settings."""
        raise NotImplementedError


@dataclass(frozen=True)
class RunSettings(SameRun):
    """lm-eval's: the same model, model arguments, limit and generation settings, the chat template applied or not."""

    apply_chat_template: bool = False
    harness: ClassVar[Harness] = "lm-eval"

    def matches(self, data: dict[str, Any]) -> bool:
        from lm_eval.utils import simple_parse_args_string

        config = data.get("config", {})
        gen_kwargs = simple_parse_args_string(self.gen_kwargs) if self.gen_kwargs else None
        return (
            (config.get("model"), config.get("model_args"), config.get("limit"))
            == (self.model, self.model_args, self.limit)
            and (config.get("gen_kwargs") or None) == (gen_kwargs or None)
            and (data.get("chat_template") is not None) == self.apply_chat_template
        )


def finished_results(output_path: Path, entry: Entry, settings: RunSettings) -> Path | None:
    """A results file of an earlier lm-eval run of this entry with the same `settings`."""

    def ran(data: dict[str, Any]) -> bool:
        return entry.name in data.get("results", {}) or entry.name in data.get("group_subtasks", {})

    return earliest_finished(output_path, settings, ran)


def earliest_finished(output_path: Path, settings: SameRun, ran: Callable[[dict[str, Any]], bool]) -> Path | None:
    """The earliest results file under `output_path` (by the time in its name) that `settings.harness` wrote with
    the same `settings`, whose run holds the entry (`ran`) and whose samples files are complete; None if none is.
    The harnesses' file names are read by `arab_mm_tasks.report.harness_outputs`, as every tool reads them."""
    for file in sorted(results_files(output_path), key=lambda path: (stamp_order(stamp(path)), path)):
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a file being written by a killed run: not finished
        if not isinstance(data, dict) or harness_of(data) != settings.harness or not settings.matches(data):
            continue
        if ran(data) and samples_saved(file, data):
            return file
    return None


def samples_saved(results_file: Path, data: dict[str, Any]) -> bool:
    """Whether every task of a results file has its samples file, complete. Both harnesses write samples after
    the results file (lmms-eval appending line by line): a kill in between leaves none, or one cut mid-line."""
    counts = data.get("n-samples", {})
    return all(
        samples_complete(samples_beside(results_file, task), counts.get(task, {}).get("effective"))
        for task in data.get("configs", {})
    )


def samples_complete(file: Path, expected: int | None) -> bool:
    """Whether a samples file is whole: every line a JSON object, the last one ended, and `expected` documents
    (the results file's effective count; None: not checked)."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if text and not text.endswith("\n"):
        return False  # cut mid-line
    documents = set()
    for line in text.splitlines():
        try:
            sample = json.loads(line)
        except ValueError:
            return False
        if not isinstance(sample, dict):
            return False
        documents.add(sample.get("doc_id"))
    return expected is None or len(documents) == expected


# a model argument that is a credential by its name (token, hf_token, api_key, password, ...), not max_new_tokens
_CREDENTIAL_KEY = re.compile(r"(?:^|_)(?:token|api_?key|key|secret|password|passwd|auth|credentials?)$", re.I)
_URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
_TOKEN_SHAPE = re.compile(r"\b(?:hf_|sk-|ghp_)[A-Za-z0-9_-]{8,}")  # Hugging Face, OpenAI, GitHub tokens


def printable_args(model_args: str) -> str:
    """`model_args` as it may be printed: credentials by name, in a URL or by their shape replaced."""
    parts = []
    for part in model_args.split(","):
        key, sep, _ = part.partition("=")
        parts.append(f"{key}=<redacted>" if sep and _CREDENTIAL_KEY.search(key.strip()) else part)
    return _TOKEN_SHAPE.sub("<redacted>", _URL_USERINFO.sub("<redacted>@", ",".join(parts)))


def text_only(entries: Sequence[Entry], model: str, outcome: dict[str, str]) -> list[Entry]:
    """The entries a text-only model type can run: text tasks as they are, a family's text members in its
    place (GIMMICK's LLM rows use the text-only inputs); the rest are noted in `outcome` as skipped."""
    kept: list[Entry] = []
    for item in entries:
        if not item.needs_images:
            kept.append(item)
            continue
        text = [task for task in item.tasks if not all_specs()[task].has_media]
        note = (
            f"needs images, and model type {model!r} is text-only (use hf-multimodal, vllm-vlm, or "
            "local-chat-completions for a served model: docs/scale-out.md)"
        )
        outcome[item.name] = f"skipped: {note}" + (f"; ran its text-only members {', '.join(text)}" if text else "")
        print(f"{item.name}: {outcome[item.name]}", flush=True)
        kept += [entry(task) for task in text]
    return kept


def is_multimodal(model: str) -> bool:
    """Whether a model type takes images. lm-eval marks every API model multimodal; of those only chat
    endpoints take images (docs/scale-out.md), a completions endpoint takes text."""
    from lm_eval.api.registry import get_model
    from lm_eval.models.api_models import TemplateAPI

    cls = get_model(model)
    if issubclass(cls, TemplateAPI):
        return is_chat_api(model)
    return bool(getattr(cls, "MULTIMODAL", False))


def is_chat_api(model: str) -> bool:
    """A model type that talks to a chat-completions server (local-chat-completions, openai-chat-completions)."""
    from lm_eval.api.registry import get_model
    from lm_eval.models.openai_completions import LocalChatCompletion

    return issubclass(get_model(model), LocalChatCompletion)


def generative_only(entries: Sequence[Entry], model: str, outcome: dict[str, str]) -> list[Entry]:
    """The entries a chat-completions model can run: chat endpoints give no log-likelihoods (ArabCulture is
    scored by them), so those entries are noted in `outcome` as skipped."""
    kept = []
    for item in entries:
        if all(all_specs()[task].output_type == "generate_until" for task in item.tasks):
            kept.append(item)
            continue
        outcome[item.name] = (
            f"skipped: a log-likelihood task, and model type {model!r} (a chat endpoint) gives no log-likelihoods "
            "(use local-completions on a server with logprobs, or an in-process model; docs/scale-out.md)"
        )
        print(f"{item.name}: {outcome[item.name]}", flush=True)
    return kept


def run_suite(
    model: str,
    model_args: str,
    entries: Sequence[Entry],
    output_path: Path,
    *,
    judge: str | None = None,
    metadata: dict[str, Any] | None = None,
    limit: float | None = None,
    device: str | None = None,
    batch_size: str | int = 1,
    apply_chat_template: bool = False,
    gen_kwargs: str | None = None,
    use_cache: bool = True,
    skip_unavailable_metrics: bool = False,
) -> dict[str, str]:
    """Run each entry not finished yet; returns entry name -> what happened ("ran", "finished earlier",
    "skipped: ...", "failed: ...").

    Raises `PreflightError` (every problem, one line each) before the model loads when an entry left to
    run cannot have its data, a metric's model or its judge (`arab_mm_tasks.core.preflight`).
    """
    from arab_mm_tasks.core import judging

    if judge:
        judging.configure(judge)  # in this process only: lm-eval writes --metadata into its results files
    outcome: dict[str, str] = {}
    if is_chat_api(model):  # lm-eval's chat API models take messages only: without the flag every request fails
        entries = generative_only(entries, model, outcome)
        if not apply_chat_template:
            print(f"note: model type {model!r} sends chat messages: --apply_chat_template set", flush=True)
        apply_chat_template = True
    settings = RunSettings(model, model_args, limit, gen_kwargs, apply_chat_template)
    if not is_multimodal(model):
        entries = text_only(entries, model, outcome)
    return run_entries(
        model, model_args, entries, outcome,
        finished=lambda item: finished_results(output_path, item, settings),
        load=lambda device: _load_model(model, model_args, device, batch_size),
        run=lambda lm, item, device, skipped: _evaluate_entry(
            lm, item, settings, output_path, metadata or {}, device, batch_size, use_cache, skipped
        ),
        metadata=metadata or {}, device=device, skip_unavailable_metrics=skip_unavailable_metrics,
    )  # fmt: skip


def run_entries(
    model: str,
    model_args: str,
    entries: Sequence[Entry],
    outcome: dict[str, str],
    *,
    finished: Callable[[Entry], Path | None],
    load: Callable[[str], Any],
    run: Callable[[Any, Entry, str, dict[str, str]], Path],
    metadata: dict[str, Any],
    device: str | None,
    skip_unavailable_metrics: bool,
    through: str = "",
) -> dict[str, str]:
    """The suite loop of both harnesses (`run_suite` here, `arab_mm_tasks.cli.evaluate_lmms.run_from_args`), given the
    harness's pieces: an entry that `finished` names a results file of is kept; the others are preflighted at once,
    the model is loaded (``load(device)``) before the first of them runs (``run(model, entry, device,
    not_computed)``, which returns its results file), and a fault in one entry is its outcome, not the suite's end.
    `through` follows each "running" line (the harness). Returns `outcome`, every entry's line added to it."""
    todo = []
    for number, item in enumerate(entries, 1):
        done = finished(item)
        if done is not None:
            outcome[item.name] = f"finished earlier ({done})"
            print(f"[{number}/{len(entries)}] {item.name}: finished earlier, kept ({done})", flush=True)
        else:
            todo.append((number, item))
    not_computed = _preflight([item for _, item in todo], metadata, skip_unavailable_metrics)
    lm = None
    for number, item in todo:
        stage = f"[{number}/{len(entries)}] {item.name}"
        if lm is None:
            device = device or default_device()
            print(f"loading model {model} ({printable_args(model_args)}) on {device}", flush=True)
            lm = load(device)
        print(f"{stage}: running ({', '.join(item.tasks)}){through}", flush=True)
        started = time.monotonic()
        skipped = {key: why for key, why in not_computed.items() if _uses(item, key)}
        try:
            saved = run(lm, item, device, skipped)
        except _data_errors() as error:
            outcome[item.name] = "failed: " + " ".join(str(error).splitlines())
            print(f"{stage}: {outcome[item.name]}", flush=True)
            continue
        except Exception as error:  # one entry's model or harness fault must not stop the suite
            # not bad input but a fault inside the model or harness: its traceback is what the user debugs with
            traceback.print_exc()
            outcome[item.name] = f"failed: {type(error).__name__}: " + " ".join(str(error).splitlines())
            print(f"{stage}: {outcome[item.name]} (traceback above; the other entries go on)", flush=True)
            continue
        outcome[item.name] = "ran" + (f" (not computed: {', '.join(skipped)}, model unavailable)" if skipped else "")
        print(f"{stage}: done in {time.monotonic() - started:.1f} s -> {saved}", flush=True)
    return outcome


def default_device() -> str:
    """What lm-eval users expect without ``--device``: CUDA when torch sees one, else the CPU (lm-eval's HFLM
    would otherwise be given None and fall back to "cuda", which fails on a CPU-only torch)."""
    from metric_plugins.models import device

    return device(None)


def _uses(item: Entry, key: str) -> bool:
    from arab_mm_tasks.core.preflight import metric_models

    return any(key in metric_models(all_specs()[task]) for task in item.tasks)


def _preflight(entries: Sequence[Entry], metadata: dict[str, Any], skip_metrics: bool) -> dict[str, str]:
    """Check every entry left to run before the model loads; returns the metrics run as not computed (key ->
    why). Raises `PreflightError` listing every problem."""
    from arab_mm_tasks.core.preflight import PreflightError, check
    from metric_plugins import models

    if not entries:
        return {}
    result = check([task for item in entries for task in item.tasks], metadata, skip_metrics=skip_metrics)
    if result.problems:
        metric = any(line.startswith("metric ") for line in result.problems)
        hint = "; --skip-unavailable-metrics runs without a metric whose model is missing" if metric else ""
        raise PreflightError(result.message("arab-mm-tasks evaluate") + f"\nno model was loaded{hint}")
    for note in result.notes:
        print(f"note: {note}", flush=True)
    for key, reason in result.skipped.items():
        models.skip(key, reason)
        print(f"not computed (--skip-unavailable-metrics): {reason}", flush=True)
    return result.skipped


def _data_errors() -> tuple[type[BaseException], ...]:
    """The errors that stop one entry and not the suite: data that cannot be had or read."""
    from arab_mm_tasks.core.sources import DataSourceError
    from arab_mm_tasks.core.spec import RecordError, SourceError
    from dataset_builders.core.release import ReleaseUnavailable

    return DataSourceError, RecordError, SourceError, ReleaseUnavailable


def _load_model(model: str, model_args: str, device: str | None, batch_size: str | int):
    from lm_eval.api.registry import get_model

    return get_model(model).create_from_arg_string(model_args, {"batch_size": batch_size, "device": device})


def _evaluate_entry(
    lm: Any,
    item: Entry,
    settings: RunSettings,
    output_path: Path,
    metadata: dict[str, Any],
    device: str | None,
    batch_size: str | int,
    use_cache: bool,
    not_computed: dict[str, str] | None = None,
) -> Path:
    """One lm-eval run of `item`, saved as the lm_eval command line saves it; returns the results file."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.utils import make_table

    from arab_mm_tasks.cli.demo import lm_eval_task_manager

    _report_cache_hits()
    tracker = EvaluationTracker(output_path=str(output_path))
    # named by a digest: model arguments may hold a token, which no file name should show
    name = "responses_" + hashlib.sha256(f"{settings.model} {settings.model_args}".encode()).hexdigest()[:16]
    results = simple_evaluate(
        model=lm,
        model_args=settings.model_args,
        tasks=[item.name],
        task_manager=lm_eval_task_manager(metadata),
        metadata=metadata,
        limit=settings.limit,
        device=device,
        batch_size=batch_size,
        use_cache=str(output_path / ".cache" / name) if use_cache else None,
        log_samples=True,
        evaluation_tracker=tracker,
        apply_chat_template=settings.apply_chat_template,
        gen_kwargs=settings.gen_kwargs,
    )
    # as the lm_eval command line records it (a model object passed in reads as its class name)
    results["config"]["model"] = settings.model
    if not_computed:  # a named outcome in the results file, not a silent absence (NaN values, all unscored)
        results["not_computed"] = dict(not_computed)
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    for task_name in results["configs"]:
        tracker.save_results_samples(task_name=task_name, samples=samples[task_name])
    print(make_table(results))
    if results.get("groups"):
        print(make_table(results, "groups"))
    return output_path / tracker.general_config_tracker.model_name_sanitized / f"results_{tracker.date_id}.json"


class _CacheHits(logging.Filter):
    """Lets through lm-eval's one line per request type on its response cache ("Cached requests: 3, ...")."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage().startswith("Cached requests:")


def _report_cache_hits() -> None:
    """Show how many responses a resumed entry took from lm-eval's cache (its INFO logging is off by default)."""
    logger = logging.getLogger("lm_eval.api.model")
    if not any(isinstance(f, _CacheHits) for h in logger.handlers for f in h.filters):
        handler = logging.StreamHandler(sys.stdout)
        handler.addFilter(_CacheHits())
        handler.setFormatter(logging.Formatter("  lm-eval response cache: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(min(logger.getEffectiveLevel(), logging.INFO))


def add_parser(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "evaluate",
        help="run a suite of tasks (the papers' headline variants, all, or a list) on one model through lm-eval "
        "(or lmms-eval), resumably, written in the harness's own format",
    )
    s.add_argument(
        "--harness",
        choices=("lm-eval", "lmms-eval"),
        default="lm-eval",
        help="which harness runs the suite (default lm-eval; lmms-eval: its model types, no ArabCulture, "
        "docs/lmms_eval.md)",
    )
    s.add_argument("--model", required=True, help="lm-eval model type: hf, hf-multimodal, vllm, vllm-vlm, ...")
    s.add_argument("--model_args", required=True, help="lm-eval model arguments, e.g. pretrained=Qwen/Qwen2.5-7B")
    which = s.add_mutually_exclusive_group()
    which.add_argument(
        "--suite", choices=SUITES, default="headline", help="headline: the papers' default variants; all: every variant"
    )
    which.add_argument("--tasks", help="comma-separated task or family names instead of a suite")
    s.add_argument("--output_path", required=True, help="lm-eval's output folder (re-running resumes in it)")
    s.add_argument("--judge", help='judge settings, e.g. "model=gpt-4o-2024-11-20,base_url=..." (docs/judge.md)')
    s.add_argument(
        "--dataset-path",
        action="append",
        default=[],
        metavar="BENCHMARK=DIR",
        help="a benchmark's local built folder (or Hub repo), as lm-eval's --metadata <name>_path",
    )
    s.add_argument("--metadata", help="lm-eval --metadata JSON for the tasks (run options such as gimmick_max_side)")
    s.add_argument("--limit", type=float, help="at most this many documents per task (testing only)")
    s.add_argument("--device", help="e.g. cuda:0 or cpu (default: cuda when torch sees one, else cpu)")
    s.add_argument("--batch_size", default="1", help="lm-eval's batch size, a number or auto (default: 1)")
    s.add_argument("--apply_chat_template", action="store_true", help="wrap prompts in the model's chat template")
    s.add_argument("--gen_kwargs", help="lm-eval generation overrides, e.g. max_gen_toks=256")
    s.add_argument("--no-cache", action="store_true", help="do not keep model responses for a resumed run")
    s.add_argument(
        "--cache-chunk",
        type=int,
        default=DEFAULT_CACHE_CHUNK,
        metavar="N",
        help="lmms-eval only: store responses in its cache every N requests (a killed entry redoes at most N)",
    )
    s.add_argument(
        "--skip-unavailable-metrics",
        action="store_true",
        help="run without a metric whose model (ARAB_MM_<KEY>_MODEL) cannot be loaded, reported as not computed, "
        "instead of stopping before the model loads",
    )
    s.set_defaults(func=_cmd_evaluate)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from arab_mm_tasks.core.run_options import RunOptionError, validate_run_options

    try:
        metadata: dict[str, Any] = json.loads(args.metadata) if args.metadata else {}
    except json.JSONDecodeError as error:
        raise RunOptionError(f"--metadata is not JSON ({error})") from None
    if not isinstance(metadata, dict):
        raise RunOptionError(f"--metadata must be a JSON object of run options, got {type(metadata).__name__}")
    for item in args.dataset_path:
        name, sep, path = item.partition("=")
        if not sep or name not in all_benchmarks():
            raise KeyError(f"--dataset-path {item!r}: expected BENCHMARK=DIR with one of {', '.join(all_benchmarks())}")
        metadata[all_benchmarks()[name].path_key] = path
    # the same one check as lm-eval's --metadata and arab-mm-lighteval's, before anything is loaded
    metadata = validate_run_options(metadata, missing_folders=True)  # a missing folder: listed by the preflight
    limit = int(args.limit) if args.limit and args.limit >= 1 else args.limit
    from arab_mm_tasks.core.preflight import PreflightError

    try:
        if args.harness == "lmms-eval":
            from arab_mm_tasks.cli.evaluate_lmms import run_from_args

            outcome = run_from_args(args, suite_entries(args.suite, args.tasks), metadata, limit)
        else:
            outcome = run_suite(
                args.model, args.model_args, suite_entries(args.suite, args.tasks), Path(args.output_path),
                judge=args.judge, metadata=metadata, limit=limit, device=args.device, batch_size=args.batch_size,
                apply_chat_template=args.apply_chat_template, gen_kwargs=args.gen_kwargs,
                use_cache=not args.no_cache, skip_unavailable_metrics=args.skip_unavailable_metrics,
            )  # fmt: skip
    except PreflightError as error:
        print(str(error), file=sys.stderr, flush=True)
        return 1
    print("\nsummary:")
    for name, what in outcome.items():
        print(f"  {name}: {what}")
    print(f"\nnext: arab-mm-tasks report {args.output_path} --out <folder>  (tables, heatmaps, one HTML page)")
    return 1 if any(what.startswith("failed") for what in outcome.values()) else 0
