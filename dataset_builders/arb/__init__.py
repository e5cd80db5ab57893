"""ARB's builder: ``MBZUAI/ARB`` and/or the authors' CSV release -> the Hub-layout dataset.

``arab-mm-tasks build arb --hub MBZUAI/ARB --out DIR`` (add ``--csv`` for ids and GPT-4.1's
predictions file, or build from ``--csv`` alone with ``--images-dir``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dataset_builders.arb.builder import HUB_REPO, build, publish
from dataset_builders.core.reading import BuildReport
from dataset_builders.core.release import at_revision, path_argument

__all__ = ["add_arguments", "build", "build_from_args", "build_release", "publish"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--hub",
        type=path_argument("source", ".parquet"),
        help=f"the HF release: Hub id[@revision] or a folder of its parquet ({HUB_REPO})",
    )
    parser.add_argument(
        "--csv",
        type=path_argument("file", ".csv", ".csv.xz"),
        help="the authors' CSV (evaluation/gpt-4.1-final-responses.csv, or .csv.xz)",
    )
    parser.add_argument(
        "--images-dir",
        type=path_argument("folder"),
        help="folder of the CSV's images, by `image_path` (CSV-only builds)",
    )


def build_from_args(args: argparse.Namespace) -> BuildReport:
    hub_source = args.hub if args.hub or args.csv else HUB_REPO
    return build(
        Path(args.out),
        hub_source=hub_source,
        csv=args.csv,
        images_dir=args.images_dir,
        on_bad_records=args.on_bad_records,
    )


def build_release(part: str, out_dir: Path, revision: str | None = None) -> BuildReport:
    if part != "arb":
        raise ValueError(f"ARB's release has one part, 'arb', not {part!r}")
    return build(out_dir, hub_source=at_revision(HUB_REPO, revision))
