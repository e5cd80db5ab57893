"""GIMMICK's builder: the authors' releases (``floschne/gimmick-{sivqa,vvqa,coqa}``) -> the Hub-layout dataset.

The interface every benchmark's builder package offers (`arab_mm_tasks.core.benchmark.Benchmark`):
``add_arguments`` / ``build_from_args`` for ``arab-mm-tasks build gimmick``, ``build_release``
for a first use, and ``publish`` (always gated, like the sources).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dataset_builders.core.reading import BuildReport
from dataset_builders.core.release import at_revision, path_argument
from dataset_builders.gimmick.builder import DEFAULT_SOURCES, SEED, SOURCE_REPOS, build, publish

__all__ = ["add_arguments", "build", "build_from_args", "build_release", "publish"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("sources (each: Hub id[@revision], save_to_disk folder, parquet or jsonl)")
    source = path_argument("source", ".parquet", ".jsonl")
    g.add_argument("--sivqa", type=source, help=f"CIVQA source ({SOURCE_REPOS['sivqa']})")
    g.add_argument("--vvqa", type=source, help="CVVQA source; its clips are local files (see --videos-dir)")
    g.add_argument(
        "--videos-dir", type=path_argument("folder"), help="folder holding the CVVQA clips named by `video_fn`"
    )
    g.add_argument("--coqa", type=source, help=f"COQA/CKQA source ({SOURCE_REPOS['coqa']})")
    parser.add_argument("--seed", type=int, default=SEED, help="COQA option sampling seed (the authors' 1312)")
    parser.add_argument("--min-center-frame-similarity", type=float, default=0.5)
    parser.add_argument(
        "--similarity-inclusive", action="store_true", help="keep similarity == threshold (the authors' code)"
    )


def build_from_args(args: argparse.Namespace) -> BuildReport:
    given = {name: getattr(args, name) for name in ("sivqa", "vvqa", "coqa") if getattr(args, name)}
    return build(
        Path(args.out),
        **(given or DEFAULT_SOURCES),
        videos_dir=args.videos_dir,
        seed=args.seed,
        min_center_frame_similarity=args.min_center_frame_similarity,
        similarity_inclusive=args.similarity_inclusive,
        on_bad_records=args.on_bad_records,
    )


def build_release(part: str, out_dir: Path, revision: str | None = None) -> BuildReport:
    """Build one Hub part of the authors' release ("sivqa" or "coqa") into `out_dir`."""
    if part not in DEFAULT_SOURCES:
        raise ValueError(f"GIMMICK's Hub release parts are {sorted(DEFAULT_SOURCES)}, not {part!r}")
    return build(out_dir, **{part: at_revision(DEFAULT_SOURCES[part], revision)})
