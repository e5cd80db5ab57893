"""ArabCulture's builder: the authors' release (``MBZUAI/ArabCulture``) -> the Hub-layout dataset.

The interface every benchmark's builder package offers (`arab_mm_tasks.core.benchmark.Benchmark`):
``add_arguments`` / ``build_from_args`` for ``arab-mm-tasks build arabculture``, ``build_release``
for a first use, and ``publish``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dataset_builders.arabculture.builder import DEFAULT_SOURCE, build, publish
from dataset_builders.core.reading import BuildReport
from dataset_builders.core.release import path_argument

__all__ = ["add_arguments", "build", "build_from_args", "build_release", "publish"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source",
        default=DEFAULT_SOURCE,
        type=path_argument("source", ".jsonl"),
        help="Hub repo id (optionally with --revision), local folder or .jsonl of the authors' release "
        f"(default: {DEFAULT_SOURCE})",
    )
    parser.add_argument("--revision", help="revision of a Hub source")


def build_from_args(args: argparse.Namespace) -> BuildReport:
    return build(args.source, Path(args.out), on_bad_records=args.on_bad_records, revision=args.revision)


def build_release(part: str, out_dir: Path, revision: str | None = None) -> BuildReport:
    """Build the authors' release (its only part, "arabculture") into `out_dir`."""
    if part != "arabculture":
        raise ValueError(f"ArabCulture's release has one part, 'arabculture', not {part!r}")
    return build(DEFAULT_SOURCE, out_dir, revision=revision)
