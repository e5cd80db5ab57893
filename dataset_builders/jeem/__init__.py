"""JEEM's builder: the authors' release (``toloka/JEEM``) or the local JSON layout -> the Hub-layout dataset.

The interface every benchmark's builder package offers (`arab_mm_tasks.core.benchmark.Benchmark`):
``add_arguments`` / ``build_from_args`` for ``arab-mm-tasks build jeem``, ``build_release``
for a first use, and ``publish`` (always gated, like the source).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from arab_mm_tasks.jeem import RELEASE_REPO
from dataset_builders.core.reading import BuildReport
from dataset_builders.core.release import at_revision, path_argument
from dataset_builders.jeem.builder import build, publish
from dataset_builders.jeem.schema import parse_overrides
from dataset_builders.jeem.subset import SEED

__all__ = ["add_arguments", "build", "build_from_args", "build_release", "publish"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source",
        default=RELEASE_REPO,
        type=path_argument("source", ".parquet", ".jsonl"),
        help=f"Hub id[@revision] ({RELEASE_REPO}), a .jsonl in the local JSON layout, parquet or save_to_disk",
    )
    parser.add_argument(
        "--columns", type=_columns, help="field=column[,field=column]: the release columns of JEEM's fields"
    )
    parser.add_argument(
        "--eval-ids",
        type=path_argument("file", text=True),
        help="id list replacing the default 350-image evaluation sample",
    )
    parser.add_argument("--eval-seed", default=SEED, help="seed of the default evaluation sample")


def _columns(text: str) -> str:
    """``--columns``, checked up front: one line naming the bad part (the builder parses it again)."""
    try:
        parse_overrides(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--columns: ")) from None
    return text


def build_from_args(args: argparse.Namespace) -> BuildReport:
    return build(
        Path(args.out),
        args.source,
        columns=args.columns,
        eval_ids=args.eval_ids,
        seed=args.eval_seed,
        on_bad_records=args.on_bad_records,
    )


def build_release(part: str, out_dir: Path, revision: str | None = None) -> BuildReport:
    """Build the authors' release into `out_dir` (a first use)."""
    if part != "jeem":
        raise ValueError(f"JEEM's release has one part, 'jeem', not {part!r}")
    return build(out_dir, at_revision(RELEASE_REPO, revision))
