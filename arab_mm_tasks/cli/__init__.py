"""The `arab-mm-tasks` command: list tasks, build and publish datasets, run the bundled demo."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

from arab_mm_tasks.core.benchmark import Benchmark
from arab_mm_tasks.core.registry import BENCHMARK_PACKAGES
from arab_mm_tasks.core.spec import SourceError


def benchmark_names() -> list[str]:
    """The benchmarks' names, read from the registry's package list without importing their specs."""
    return [package.rpartition(".")[2] for package in BENCHMARK_PACKAGES]


def _cmd_list(args: argparse.Namespace) -> int:
    from arab_mm_tasks.core.registry import all_families, all_specs

    for spec in all_specs().values():
        alias = f"  (alias: {', '.join(spec.aliases)})" if spec.aliases else ""
        print(f"{spec.name}{alias}\n    {spec.description}")
        if args.subtasks and spec.subsets:
            print("    " + " ".join(spec.subset_task(s) for s in spec.subsets))
    for family in all_families().values():
        print(f"{family.name}  (group: {', '.join(family.tasks)})\n    {family.description}")
    return 0


def _build_parser(
    benchmark: Benchmark, name: str | None = None, defaults: Mapping[str, Any] | None = None
) -> argparse.ArgumentParser:
    """``arab-mm-tasks build <benchmark>``: the options every builder takes, then the benchmark's own
    (`defaults`: the options one of its `Benchmark.build_names` stands for)."""
    from dataset_builders.core.release import path_argument

    p = _OneLineErrors(
        prog=f"arab-mm-tasks build {name or benchmark.name}",
        description=f"Build the {benchmark.title} Hub-layout dataset folder from the authors' release.",
    )
    p.add_argument(
        "--out",
        required=True,
        type=path_argument("out"),
        help="output folder (Hub layout: data/<config>/*.parquet + README.md)",
    )
    p.add_argument("--on-bad-records", choices=["error", "warn", "skip"], default="error")
    p.add_argument(
        "--report",
        type=path_argument("out-file"),
        metavar="FILE",
        help="write the whole build report as JSON (every skipped and repeated record; the summary lists a few)",
    )
    benchmark.builder_module().add_arguments(p)
    p.set_defaults(**(defaults or {}))
    return p


class _OneLineErrors(argparse.ArgumentParser):
    """A parser whose usage errors are `BuildUsageError`: `main` prints them as every build error, one line, exit 2."""

    def error(self, message: str) -> NoReturn:
        raise BuildUsageError(f"{self.prog.removeprefix('arab-mm-tasks build ')}: {message} (--help for the options)")


class BuildUsageError(SourceError):
    """A wrong option of ``arab-mm-tasks build <benchmark>`` (a missing file, a file given for a folder, ...)."""


def _cmd_build(args: argparse.Namespace) -> int:
    from arab_mm_tasks.core.registry import build_target

    benchmark, defaults = build_target(args.benchmark)
    # Every file and folder option is checked here, before anything is read (`release.PathArgument`).
    options = _build_parser(benchmark, args.benchmark, defaults).parse_args(args.options)
    try:
        report = benchmark.builder_module().build_from_args(options)
    except OSError as err:  # the output folder cannot be written (full disk, a foreign data/ folder, ...)
        where = f" ({err.filename})" if err.filename and str(err.filename) not in str(err) else ""
        raise FileNotFoundError(f"{err.strerror or err}{where}") from None
    if options.report:
        report.write(options.report)
    print(report)
    return 0


def _cmd_publish(args: argparse.Namespace) -> int:
    from arab_mm_tasks.core.registry import all_benchmarks
    from dataset_builders.core.hub import built_benchmark

    folder = Path(args.folder)
    name = built_benchmark(folder)  # the card says which build it is (config names do not: two have `all`)
    owners = [b for b in all_benchmarks().values() if b.title == name]
    if len(owners) != 1:
        titles = ", ".join(b.title for b in all_benchmarks().values())
        raise FileNotFoundError(f"{folder}: its card names {name!r}, none of the benchmarks ({titles})")
    benchmark = owners[0]
    gated = "auto" if args.gated or benchmark.gated else None  # a gated source stays gated in our copy
    options = {"public": True} if args.public else {}  # only builders whose licence needs it take `public`
    benchmark.builder_module().publish(
        folder, args.repo_id, private=args.private, revision=args.revision, gated=gated, **options
    )
    print(f"published {args.folder} to https://huggingface.co/datasets/{args.repo_id}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from arab_mm_tasks.cli.demo import DEFAULT_TASKS, run_demo

    tasks = tuple(args.tasks.split(",")) if args.tasks else DEFAULT_TASKS
    run_demo(
        model=args.model,
        tasks=tasks,
        limit=args.limit,
        work_dir=Path(args.work_dir) if args.work_dir else None,
        device=args.device,
    )
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    """Regenerate (or with --check, verify) everything derived from the specs."""
    from arab_mm_tasks.cli.catalogue import render_catalogue
    from arab_mm_tasks.harness import lmms_eval_tasks  # lmms-eval's tree; imports no lmms-eval
    from arab_mm_tasks.harness.lm_eval_yaml import TASKS_DIR, drift, write_tree

    if args.benchmark:  # one benchmark's YAML (your own, named in ARAB_MM_TASKS_EXTRA_BENCHMARKS) for --include_path
        from arab_mm_tasks.core.registry import get_benchmark

        bench = get_benchmark(args.benchmark)
        out = Path(args.out or "lm_eval_tasks")
        print(f"wrote {len(write_tree(out, bench.tasks, bench.families))} lm-eval YAML files under {out}")
        return 0
    catalogue_path = Path(args.docs_dir) / "tasks.md"
    if args.check:
        stale = [str(TASKS_DIR / rel) for rel in drift()]
        stale += [str(lmms_eval_tasks.TREE_DIR / rel) for rel in lmms_eval_tasks.drift()]
        if not catalogue_path.exists() or catalogue_path.read_text("utf-8") != render_catalogue():
            stale.append(str(catalogue_path))
        for path in stale:
            print(f"out of date: {path}")
        return 1 if stale else 0
    print(f"wrote {len(write_tree())} lm-eval YAML files under {TASKS_DIR}")
    print(f"wrote {len(lmms_eval_tasks.write_tree())} lmms-eval YAML files under {lmms_eval_tasks.TREE_DIR}")
    catalogue_path.parent.mkdir(parents=True, exist_ok=True)
    catalogue_path.write_text(render_catalogue(), encoding="utf-8")
    print(f"wrote {catalogue_path}")
    return 0


def _breakdown_samples(paths: list[str]) -> Iterator[tuple[str, dict]]:
    """(task, sample) from samples files or folders holding them, read by the one reader of harness outputs
    (`arab_mm_tasks.report.harness_outputs`): lm-eval's, lighteval's and lmms-eval's (documents read back)."""
    from arab_mm_tasks.report import harness_outputs as outputs

    files: list[Path] = []
    for path in map(Path, paths):
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file or folder")
        files += outputs.samples_files(path) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(
            f"no lm-eval samples_*.jsonl, lighteval details_*.parquet or lmms-eval <date>_samples_*.jsonl in {paths}"
        )
    for file in files:
        named = outputs.samples_file(file)
        if named is None:
            raise outputs.RunError(f"{file}: not a samples file of lm-eval, lighteval or lmms-eval (by its name)")
        for sample in outputs.read_sample_file(file):
            yield named.task, sample  # the task as the harness named it (lighteval's NAME:<country> too)


def _scored(sample: dict, metric: str) -> dict:
    """`sample` with `metric` as ``{"score": ...}`` under the one rule (`harness_outputs.score_of`): a None or NaN
    value is unscored (counted apart by `breakdown`), never a NaN in a group's mean."""
    from arab_mm_tasks.report.harness_outputs import item_score

    return {**sample, metric: {"score": item_score(sample, metric)}} if metric in sample else sample


def _cmd_breakdown(args: argparse.Namespace) -> int:
    from arab_mm_tasks.core.registry import all_specs
    from metric_plugins.breakdowns import absent_keys, breakdown, format_table

    # lm-eval runs a variant as its per-country tasks: pool them. lighteval tasks (NAME on all
    # countries, NAME:<country>) are reported as run, so a document is never counted twice.
    variant_of = {spec.subset_task(s): spec.name for spec in all_specs().values() for s in spec.subsets}
    by_variant: dict[str, list[dict]] = {}
    for task, sample in _breakdown_samples(args.paths):
        by_variant.setdefault(variant_of.get(task, task), []).append(sample)
    keys = args.by.split(",")
    for variant, samples in by_variant.items():
        if not any(args.metric in sample for sample in samples):  # another task of the run (Pearl's closed half)
            print(f"\n{variant}: no metric {args.metric!r}, skipped")
            continue
        absent = absent_keys(samples, keys)
        if absent:  # a task that does not record the field (Pearl-X has no domain)
            print(f"\n{variant}: its samples have no {', '.join(map(repr, absent))}, skipped")
            continue
        print(f"\n{variant} ({len(samples)} samples)\n")
        generative = any(isinstance(sample.get(args.metric), dict) for sample in samples)  # {"score": ...} values
        rows = breakdown([_scored(sample, args.metric) for sample in samples], keys, args.metric)
        print(format_table(rows, keys, args.metric, percent=not generative))
    return 0


def _cmd_judge(args: argparse.Namespace) -> int:
    """Exit 0 when every sample has a judgement (valid or invalid), 1 when any failed or the judge stopped."""
    from arab_mm_tasks.cli.judge_saved import judge_saved
    from metric_plugins.judge import JudgeStopped, JudgeSummary
    from metric_plugins.judge.config import JudgeConfig

    config = JudgeConfig.from_env_or_args(args.judge)
    released, args.paths = _released_files(args.paths)
    if released and config.model:
        from arab_mm_tasks.cli.score import judge_released

        for path in released:  # the authors' generations (ARB's CSV): their judged metrics
            name = Path(path).name.removesuffix(".xz").removesuffix(".csv").removesuffix(".jsonl")
            judge_released(path, args.judge, Path(args.out) / name)
        if not args.paths:
            return 0
    if not config.model:
        raise SystemExit("arab-mm-tasks judge: no judge model: pass --judge model=... or set ARAB_MM_JUDGE_MODEL")
    dataset_paths = dict(item.split("=", 1) for item in args.dataset_path or [])
    try:
        report = judge_saved(args.paths, config, args.out, dataset_paths)
    except JudgeStopped as error:
        print(f"arab-mm-tasks judge: error: {error}", file=sys.stderr)
        return 1
    for task, scores in report["results"].items():
        print(task)
        print("\n".join(f"  {name}: {score}" for name, score in scores.items()))
    summary = JudgeSummary(**report["summary"])
    print(f"judge: {summary}")
    print(f"wrote the judged samples and results_judged.json to {args.out}")
    if summary.failed:
        print(
            f"arab-mm-tasks judge: {summary.failed} samples failed; run the command again to retry them",
            file=sys.stderr,
        )
        return 1
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    from arab_mm_tasks.cli.score import print_report, score_released

    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    report = score_released(
        args.benchmark, args.file, task=args.task, model=args.model, metrics=metrics, judge=args.judge, out_dir=args.out
    )
    print_report(report)
    return 0


def _released_files(paths: list[str]) -> tuple[list[str], list[str]]:
    """(released generation files some benchmark reads, the other paths) of `arab-mm-tasks judge`: a CSV, or
    the ``predictions/<model>.jsonl`` a build writes next to its ``data/``."""
    from dataset_builders.core.hub import is_predictions_file

    def released(path: str) -> bool:
        return path.endswith((".csv", ".csv.xz")) or is_predictions_file(path)

    return [p for p in paths if released(p)], [p for p in paths if not released(p)]


def _cmd_tasks_path(args: argparse.Namespace) -> int:
    from arab_mm_tasks.harness.lm_eval_yaml import TASKS_DIR

    print(TASKS_DIR)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="arab-mm-tasks", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("list", help="list every task variant")
    s.add_argument("--subtasks", action="store_true", help="also list per-country subtasks")
    s.set_defaults(func=_cmd_list)

    s = sub.add_parser("judge", help="judge saved generations (lm-eval samples / lighteval details) of judged tasks")
    s.add_argument(
        "paths",
        nargs="+",
        help="lm-eval samples_*.jsonl, lighteval details_*.parquet, folders, a released CSV, a build's "
        "predictions/<model>.jsonl, or an authors' generation log (.jsonl)",
    )
    s.add_argument("--judge", help='judge settings, e.g. "model=gpt-4o-2024-11-20,concurrency=32" (docs/judge.md)')
    s.add_argument("--out", required=True, help="folder for the judged copies and results_judged.json")
    s.add_argument(
        "--dataset-path",
        action="append",
        metavar="BENCHMARK=DIR",
        help="the dataset a run evaluated, for judges that look at the images (Pearl's open-ended rubric and CAS); "
        "for an authors' generation log (Pearl's), the dataset whose records its rows are matched to",
    )
    s.set_defaults(func=_cmd_judge)

    from arab_mm_tasks.cli.agreement import add_parser as add_agreement_parser
    from arab_mm_tasks.cli.evaluate import add_parser as add_evaluate_parser
    from arab_mm_tasks.cli.report import add_parser as add_report_parser
    from arab_mm_tasks.cli.submit import add_parser as add_submit_parser

    add_agreement_parser(sub)
    add_evaluate_parser(sub)
    add_report_parser(sub)
    add_submit_parser(sub)

    from arab_mm_tasks.cli.sample_scores import add_parser as add_sample_scores_parser

    add_sample_scores_parser(sub)

    s = sub.add_parser(
        "build",
        help="build a benchmark's Hub-layout dataset folder from the authors' release "
        "(`arab-mm-tasks build BENCHMARK --help` for its options)",
    )
    s.add_argument(
        "benchmark",
        metavar="BENCHMARK",
        help=f"one of {', '.join(benchmark_names())}, or another name its builder takes for one of its releases",
    )
    s.add_argument("options", nargs=argparse.REMAINDER, help="--out DIR and the benchmark's own options")
    s.set_defaults(func=_cmd_build)

    s = sub.add_parser("publish", help="push a built folder to the Hub (token from `hf auth login` or HF_TOKEN)")
    s.add_argument("folder", help="the folder `arab-mm-tasks build` wrote (data/<config>/ and README.md)")
    s.add_argument("--repo-id", required=True, help="the Hub dataset repo to push to, e.g. ORG/NAME")
    s.add_argument("--private", action="store_true", help="create the repo private")
    s.add_argument("--revision", help="the branch to push to, created when missing (default: main)")
    s.add_argument("--gated", action="store_true", help="gate access (automatic for benchmarks with gated sources)")
    s.add_argument(
        "--public",
        action="store_true",
        help="publish a no-derivatives dataset (Pearl) publicly anyway; it is private otherwise (with a warning)",
    )
    s.set_defaults(func=_cmd_publish)

    s = sub.add_parser("demo", help="evaluate a model on the bundled ArabCulture sample through lm-eval")
    s.add_argument(
        "--model",
        help="any causal LM (Hub id or folder); default: a small Hub model, "
        "or a tiny local one when the Hub is unreachable",
    )
    s.add_argument("--tasks", help="comma-separated task names (default: arabculture_mcq)")
    s.add_argument("--limit", type=int, help="evaluate only the first N documents of each task (default: all)")
    s.add_argument("--device", default="cpu", help="the torch device of the model, e.g. cuda:0 (default: cpu)")
    s.add_argument("--work-dir", help="where the sample dataset and tiny model are built")
    s.set_defaults(func=_cmd_demo)

    s = sub.add_parser("generate", help="regenerate lm-eval's YAML task tree and docs/tasks.md from the specs")
    s.add_argument("--check", action="store_true", help="only report files that are out of date (exit 1)")
    s.add_argument("--docs-dir", default="docs", help="where tasks.md goes (default: ./docs)")
    s.add_argument("--benchmark", help="write only this benchmark's YAML (e.g. one of your own) into --out")
    s.add_argument("--out", help="with --benchmark: the folder to write (default: ./lm_eval_tasks)")
    s.set_defaults(func=_cmd_generate)

    s = sub.add_parser(
        "breakdown",
        help="a metric by document fields (country, question type, domain...) from lm-eval or lmms-eval samples or "
        "lighteval details; generative and judged metrics too (Pearl: --by country --metric overall)",
    )
    s.add_argument(
        "paths", nargs="+", help="lm-eval samples_*.jsonl, lighteval details_*.parquet, lmms-eval samples, or folders"
    )
    s.add_argument("--by", default="topic,country_specific", help="comma-separated document fields")
    s.add_argument("--metric", default="acc", help="the metric to break down, e.g. acc, overall, cas (default: acc)")
    s.set_defaults(func=_cmd_breakdown)

    s = sub.add_parser("score", help="score a benchmark's released generations (ARB's CSV) with the task's metrics")
    s.add_argument("benchmark", choices=benchmark_names(), help="the benchmark whose generations FILE holds")
    s.add_argument(
        "file",
        help="the released file (ARB: the authors' CSV, .csv or .csv.xz, or a build's predictions/<model>.jsonl)",
    )
    s.add_argument("--task", help="the task whose metrics score it (default: the benchmark's name)")
    s.add_argument("--model", help="which model's columns, when the file holds several")
    s.add_argument("--metrics", help="comma-separated metric names (default: all; e.g. answer_match,bleu,rougeL)")
    s.add_argument("--judge", help='judge settings for the judged metrics, e.g. "model=gpt-4o" (docs/judge.md)')
    s.add_argument("--out", help="folder for results.json and samples.jsonl")
    s.set_defaults(func=_cmd_score)

    s = sub.add_parser("lm-eval-tasks-path", help="print the YAML task tree folder (for --include_path)")
    s.set_defaults(func=_cmd_tasks_path)
    return p


def main(argv: list[str] | None = None) -> int:
    from arab_mm_tasks.core.run_options import RunOptionError
    from arab_mm_tasks.core.sources import DataSourceError
    from arab_mm_tasks.core.spec import RecordError, SourceError
    from arab_mm_tasks.report.runs import RunError
    from dataset_builders.core.release import ReleaseUnavailable

    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except (
        RecordError,
        SourceError,
        KeyError,
        FileNotFoundError,
        DataSourceError,
        ReleaseUnavailable,
        RunError,
        RunOptionError,
    ) as err:
        # bad input or unreachable data: one line that says what to do, not a traceback
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        # One line: a record's text (a premise, a JSON error) may hold newlines of its own.
        print(f"arab-mm-tasks {args.command}: error: " + " ".join(str(message).splitlines()), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
