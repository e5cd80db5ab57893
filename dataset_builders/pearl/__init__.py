"""Pearl's builder: the authors' releases (``UBC-NLP/PEARL``, ``-LITE``, ``-X``) -> the Hub-layout dataset.

The interface every benchmark's builder package offers (`arab_mm_tasks.core.benchmark.Benchmark`):
``add_arguments`` / ``build_from_args`` for ``arab-mm-tasks build pearl`` (and ``build pearl_lite`` /
``build pearl_x``, which stand for ``--release pearl_lite`` / ``pearl_x``), ``build_release`` for a
first use, and ``publish`` (private unless ``public=True``: the licence forbids derivatives).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from arab_mm_tasks.pearl import RELEASES
from dataset_builders.core.reading import BuildReport
from dataset_builders.core.release import at_revision, path_argument
from dataset_builders.pearl.builder import ALIASES, RELEASE_COUNTS, build, publish

__all__ = ["RELEASE_COUNTS", "add_arguments", "build", "build_from_args", "build_release", "publish"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("sources (each: Hub id[@revision], save_to_disk folder, parquet or jsonl)")
    source = path_argument("source", ".parquet", ".jsonl")
    g.add_argument("--pearl", type=source, help=f"Pearl source ({RELEASES['pearl']}; also {next(iter(ALIASES))})")
    g.add_argument("--pearl-lite", type=source, help=f"Pearl-Lite source ({RELEASES['pearl_lite']})")
    g.add_argument("--pearl-x", type=source, help=f"Pearl-X source ({RELEASES['pearl_x']})")
    parser.add_argument(
        "--release",
        action="append",
        choices=sorted(RELEASES),
        help="build this release (from its Hub id unless its source is given; repeatable; default without sources: "
        "all three; `arab-mm-tasks build pearl_lite` / `build pearl_x` stand for --release pearl_lite / pearl_x)",
    )


def build_from_args(args: argparse.Namespace) -> BuildReport:
    given = {name: getattr(args, name) for name in RELEASES if getattr(args, name)}
    for name in args.release or ([] if given else list(RELEASES)):
        given.setdefault(name, RELEASES[name])
    return build(Path(args.out), **given, on_bad_records=args.on_bad_records)


def build_release(part: str, out_dir: Path, revision: str | None = None) -> BuildReport:
    """Build one release ("pearl", "pearl_lite" or "pearl_x") from the Hub into `out_dir`."""
    if part not in RELEASES:
        raise ValueError(f"Pearl's Hub releases are {sorted(RELEASES)}, not {part!r}")
    return build(out_dir, **{part: at_revision(RELEASES[part], revision)})
