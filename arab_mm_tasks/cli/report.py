"""`arab-mm-tasks report RUN_DIRS... --out DIR`: tables, heatmaps and one HTML page from harness outputs."""

from __future__ import annotations

import argparse
import sys

from arab_mm_tasks.report.tables import MIN_ITEMS


def add_parser(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "report",
        help="paper-shaped tables, heatmaps and the Arab-world scorecard from lm-eval / lighteval / lmms-eval outputs "
        "of one or many models, as Markdown, CSV, PNG and one self-contained HTML page",
    )
    s.add_argument("paths", nargs="+", help="lm-eval/lmms-eval --output_path, lighteval --output-dir, results files")
    s.add_argument("--out", required=True, help="folder to write the report to (index.html is the page)")
    s.add_argument("--min-items", type=int, default=MIN_ITEMS,
                   help=f"groups (countries, types, domains) with fewer scored items are flagged, not ranked "
                        f"(default {MIN_ITEMS})")  # fmt: skip
    s.set_defaults(func=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    from arab_mm_tasks.report import write_report
    from arab_mm_tasks.report.escape import one_line

    written = write_report(args.paths, args.out, args.min_items)
    for run in written.runs:
        print(f"{run.label} ({run.harness}): {len(run.results)} task results, {len(run.sample_files)} sample files")
        for task, earlier in sorted(run.replaced.items()):  # several jobs' folders: the later file's task is kept
            print(f"arab-mm-tasks report: {run.label}: {task} of {earlier} replaced by a later run's", file=sys.stderr)
    for file, reason in sorted(written.not_read.items()):
        print(f"arab-mm-tasks report: not read: {file}: {one_line(reason)}", file=sys.stderr)
    tables = sum(len(section.items) for section in written.sections)
    print(f"wrote {tables} tables and {written.heatmaps} heatmaps to {args.out}; open {written.page}")
    return 1 if written.not_read else 0  # a report without some run files is written, but not a clean run
