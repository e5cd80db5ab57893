"""`arab-mm-tasks submit RUN_DIRS --org ORG [--dry-run DIR]`: results and details to the Hub, lighteval's layout."""

from __future__ import annotations

import argparse
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
    from arab_mm_tasks.report.leaderboard import push, repo_id_for, stage
    from arab_mm_tasks.report.runs import read_runs

    runs = [run for run in read_runs(args.paths) if args.model in (None, run.model)]
    if not runs:
        raise KeyError(f"no run of model {args.model!r} under {', '.join(args.paths)}")
    by_repo: dict[str, list] = {}
    for run in runs:  # a model's lm-eval and lighteval runs go to its one repo, a date each
        by_repo.setdefault(repo_id_for(args.org, run.model, args.public), []).append(run)
    for repo_id, model_runs in by_repo.items():
        model = model_runs[0].model
        if args.dry_run:
            folder = Path(args.dry_run) / repo_id
            files = stage(model_runs, folder)
            print(f"{model}: {len(files)} files for {repo_id} written to {folder} (dry run, nothing uploaded)")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            files = stage(model_runs, Path(tmp))
            url = push(Path(tmp), repo_id, args.public)
            visibility = "public" if args.public else "private"
            print(f"{model}: {len(files)} files pushed to {repo_id} ({visibility}): {url}")
    return 0
