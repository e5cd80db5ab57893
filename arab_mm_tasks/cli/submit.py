"""`arab-mm-tasks submit RUN_DIRS --org ORG [--dry-run DIR]`: results and details to the Hub, lighteval's layout."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "submit",
        help="push each model's results and details to a Hub dataset repo in lighteval's leaderboard layout "
        "(<org>/details_<model>); --dry-run writes exactly what would be uploaded",
    )
    s.add_argument("paths", nargs="+", help="lm-eval --output_path / lighteval --output-dir folders, or results files")
    s.add_argument("--org", required=True, help="the Hub organisation or user the details repos go to")
    s.add_argument("--model", help="submit only this model (as `arab-mm-tasks report` names it)")
    s.add_argument("--public", action="store_true", help="public repos (default: private, '_private' appended)")
    s.add_argument("--dry-run", metavar="DIR", help="write each repo's files under DIR/<repo id> and upload nothing")
    s.set_defaults(func=_cmd_submit)


def _cmd_submit(args: argparse.Namespace) -> int:
    """Stage (and push) each model's repo. A run file that cannot be read is one line naming it; a model with
    such a file is not submitted (a partial submission would pass for a whole one), the others are; exit 1."""
    from arab_mm_tasks.report import output_folder
    from arab_mm_tasks.report.escape import one_line
    from arab_mm_tasks.report.leaderboard import push, repo_id_for, stage
    from arab_mm_tasks.report.runs import model_name, read_runs

    dry_run = output_folder(args.dry_run, "--dry-run") if args.dry_run else None
    not_read: dict[Path, str] = {}
    runs = [run for run in read_runs(args.paths, not_read) if args.model in (None, run.model, model_name(run.model))]
    if not runs:
        raise KeyError(f"no run of model {args.model!r} under {', '.join(args.paths)}")
    by_repo: dict[str, list] = {}
    for run in runs:  # a model's lm-eval and lighteval runs go to its one repo, a date each
        by_repo.setdefault(repo_id_for(args.org, run.model, args.public), []).append(run)
    for file, reason in sorted(not_read.items()):
        print(f"arab-mm-tasks submit: not read: {file}: {one_line(reason)}", file=sys.stderr)
    refused = 0
    for repo_id, model_runs in by_repo.items():
        model = model_name(model_runs[0].model)
        bad = _unreadable(model_runs, not_read)
        if bad:
            refused += 1
            file, reason = next(iter(bad.items()))
            print(f"arab-mm-tasks submit: {model}: not submitted, {file}: {one_line(reason)}"
                  + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""), file=sys.stderr)  # fmt: skip
            continue
        if dry_run is not None:
            folder = dry_run / repo_id
            files = stage(model_runs, folder)
            print(f"{model}: {len(files)} files for {repo_id} written to {folder} (dry run, nothing uploaded)")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            files = stage(model_runs, Path(tmp))
            url = push(Path(tmp), repo_id, args.public)
            visibility = "public" if args.public else "private"
            print(f"{model}: {len(files)} files pushed to {repo_id} ({visibility}): {url}")
    return 1 if refused or not_read else 0


def _unreadable(runs: list, not_read: dict[Path, str]) -> dict[Path, str]:
    """The run files of `runs` that cannot be read: their sample files, and any results file left unread in
    one of their results folders (lm-eval and lighteval keep a model's results files in one folder)."""
    folders = {source.parent for run in runs for source in run.sources}
    bad = {file: reason for file, reason in not_read.items() if file.parent in folders}
    for run in runs:
        bad.update(run.check_samples())
    return bad
