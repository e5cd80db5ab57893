"""Builds the GIMMICK Hub dataset (configs civqa, cvvqa, coqa_c, coqa_r, ckqa) from the authors' releases.

Paper: "GIMMICK: Globally Inclusive Multimodal Multitask Cultural Knowledge Benchmarking",
Schneider et al. (2025), https://arxiv.org/abs/2502.13766. Based on: the authors' gated datasets
``floschne/gimmick-sivqa`` / ``-vvqa`` / ``-coqa`` and their loaders in github.com/floschne/gimmick
(``tasks/{sivqa,vvqa,coqa}.py`` @ 81c06a5).

Why a builder: CVVQA's clips are local files named by ``video_fn`` (a loading script that
`datasets` 4+ refuses to run), and COQA's options are sampled at evaluation time in the authors'
code. Here the clips are embedded as raw mp4 bytes, the options are sampled once with a fixed seed
(`dataset_builders.gimmick.coqa`), every record is checked, and the region strings get codes.
Nothing else changes: source fields are kept as released, renames and derived columns are listed
on the card (`dataset_builders.gimmick.card`).

    from dataset_builders import gimmick
    report = gimmick.build("out/gimmick", sivqa="floschne/gimmick-sivqa", coqa="/data/gimmick-coqa",
                           vvqa="/data/gimmick-vvqa", videos_dir="/data/gimmick-vvqa-clips")
    print(report.summary())
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from datasets import Features, Image, List, Value, Video

from arab_mm_tasks.gimmick.vocabulary import REGION_CODE_OF, region_codes
from dataset_builders.core import hub, reading
from dataset_builders.gimmick.card import REPO_ID, render_gimmick_card
from dataset_builders.gimmick.coqa import coqa_c_rows, coqa_r_rows
from dataset_builders.gimmick.source import (
    RELEASE_COUNTS,
    SOURCE_REPOS,
    SPLIT,
    GimmickRecordError,
    Source,
    SourceError,
    extra_columns,
    image_value,
    key_field,
    number,
    read_source,
    string_list,
    text_field,
    video_value,
)

__all__ = [
    "CONFIGS", "DEFAULT_SOURCES", "FEATURES", "RELEASE_COUNTS", "REPO_ID", "SEED", "SOURCE_REPOS",
    "GimmickRecordError", "SourceError", "build", "check_counts", "publish",
]  # fmt: skip

logger = logging.getLogger(__name__)

DEFAULT_SOURCES = {"sivqa": SOURCE_REPOS["sivqa"], "coqa": SOURCE_REPOS["coqa"]}  # vvqa needs local clips
CONFIGS = tuple(RELEASE_COUNTS)
SEED = 1312  # the authors' seed (main.py seed_everything)
MIN_CENTER_FRAME_SIMILARITY = 0.5  # paper L140 keeps clips with similarity > 0.5

OnBadRecords = Literal["error", "warn", "skip"]
_STR, _STRS = Value("string"), List(Value("string"))
_COMMON = {"countries": _STRS, "regions": _STRS, "region_codes": _STRS}
_CEF = {"sample_uuid": _STR, "title": _STR, "description": _STR, "images": List(Image())}
_OPTIONS = {"target": _STR, "options": _STRS, "answer": _STR, "answer_index": Value("int32")}
FEATURES: dict[str, Features] = {  # the contract; source columns the builder does not read are appended
    "civqa": Features({"id": _STR, "question": _STR, "answer": _STR, "image": Image(), **_COMMON}),
    "cvvqa": Features(
        {
            "id": _STR,
            "question": _STR,
            "answer": _STR,
            "video": Video(decode=False),  # {"bytes": the mp4 as released, "path": its basename}
            "video_fn": _STR,  # basename of the release's path
            "video_center_frame_sim": Value("float64"),
            **_COMMON,
        }
    ),
    "coqa_c": Features({"id": _STR, **_CEF, **_OPTIONS, **_COMMON}),
    "coqa_r": Features({"id": _STR, **_CEF, **_OPTIONS, **_COMMON}),
    "ckqa": Features({"id": _STR, **_CEF, **_COMMON}),
}
CONFIGS_OF = {"sivqa": ("civqa",), "vvqa": ("cvvqa",), "coqa": ("coqa_c", "coqa_r", "ckqa")}
READ = {  # the columns each release's rows are built from (plus stacked_images, dropped)
    "sivqa": ("question", "answer", "question_id", "ich_image", "countries", "regions"),
    "vvqa": ("question", "answer", "question_id", "video_fn", "video_center_frame_sim", "countries", "regions"),
    "coqa": ("sample_uuid", "title", "description", "countries", "regions", "images", "stacked_images"),
}


# ---------------------------------------------------------------------------- one record


def _rid(name: str, index: int, record: Mapping[str, Any], where: str | None = None) -> str:
    """``sivqa row 2 (question_id 1003)``, after ``<file>:<line>: `` for a .jsonl source."""
    key = "sample_uuid" if name == "coqa" else "question_id"
    rid = f"{name} row {index} ({key} {record.get(key)!r:.200})"
    return f"{where}: {rid}" if where else rid


def common_fields(record: Mapping[str, Any], rid: str) -> dict[str, list[str]]:
    """``countries`` and ``regions`` as released, plus ``region_codes``; unknown region -> error naming it."""
    countries, regions = string_list(record, "countries", rid), string_list(record, "regions", rid)
    if not regions:
        raise GimmickRecordError(rid, "regions", "is empty; every record needs a region")
    for region in regions:
        if region.strip() not in REGION_CODE_OF:
            raise GimmickRecordError(rid, "regions", f"has {region!r}, not a UNESCO ICH region")
    return {"countries": countries, "regions": regions, "region_codes": region_codes(regions, record=rid)}


class _Context:
    """Settings and counters one build shares between its record converters."""

    def __init__(self, *, seed: int, threshold: float, inclusive: bool, videos_dir: Path | None) -> None:
        self.seed, self.threshold, self.inclusive, self.videos_dir = seed, threshold, inclusive, videos_dir
        self.stats: Counter[str] = Counter()
        self.unknown_countries: Counter[str] = Counter()

    def keeps(self, similarity: float) -> bool:
        return similarity >= self.threshold if self.inclusive else similarity > self.threshold


def _civqa(record: Mapping[str, Any], rid: str, source: Source, ctx: _Context) -> dict[str, list[dict]]:
    row = {"id": key_field(record, "question_id", rid), "question": text_field(record, "question", rid)}
    row |= {"answer": text_field(record, "answer", rid), **common_fields(record, rid)}
    image = image_value(record.get("ich_image"), base_dir=source.base_dir, record=rid, field="ich_image")
    return {"civqa": [{**row, "image": image}]}


def _cvvqa(record: Mapping[str, Any], rid: str, source: Source, ctx: _Context) -> dict[str, list[dict]]:
    similarity = number(record.get("video_center_frame_sim"), record=rid, field="video_center_frame_sim")
    if not ctx.keeps(similarity):  # a documented filter, counted apart from bad records
        ctx.stats["cvvqa_removed_by_similarity"] += 1
        return {}
    row = {"id": key_field(record, "question_id", rid), "question": text_field(record, "question", rid)}
    row |= {"answer": text_field(record, "answer", rid), **common_fields(record, rid)}
    video = video_value(record.get("video_fn"), videos_dir=ctx.videos_dir, base_dir=source.base_dir, record=rid)
    return {"cvvqa": [{**row, "video": video, "video_fn": video["path"], "video_center_frame_sim": similarity}]}


def _cef(record: Mapping[str, Any], rid: str, source: Source, ctx: _Context) -> dict[str, list[dict]]:
    cef: dict[str, Any] = {
        "sample_uuid": key_field(record, "sample_uuid", rid),
        "title": text_field(record, "title", rid),
    }
    cef |= {"description": text_field(record, "description", rid), **common_fields(record, rid)}
    images = record.get("images")
    if not isinstance(images, list | tuple) or not images:
        raise GimmickRecordError(rid, "images", "is missing" if images is None else f"is {images!r:.80}, no images")
    cef["images"] = [
        image_value(v, base_dir=source.base_dir, record=rid, field=f"images[{k}]") for k, v in enumerate(images)
    ]
    by_region = coqa_r_rows(cef, seed=ctx.seed)
    ctx.stats["coqa_r_cefs_dropped_over_3_regions"] += not by_region
    by_country = coqa_c_rows(cef, seed=ctx.seed, stats=ctx.stats, unknown=ctx.unknown_countries)
    return {
        "coqa_c": [{**cef, **options} for options in by_country],
        "coqa_r": [{**cef, **options} for options in by_region],
        "ckqa": [{**cef, "id": cef["sample_uuid"]}],
    }


CONVERTERS: dict[str, Callable[[Mapping[str, Any], str, Source, _Context], dict[str, list[dict]]]] = {
    "sivqa": _civqa,
    "vvqa": _cvvqa,
    "coqa": _cef,
}


# ---------------------------------------------------------------------------- writing


class _Sink:
    """One config's way to the writer, which holds at most a row group of it."""

    def __init__(self, writer: hub.HubFolderWriter, config: str, features: Features) -> None:
        self.writer, self.config, self.features = writer, config, features
        self.written = False

    def add(self, rows: Iterable[dict[str, Any]]) -> None:
        self.writer.add_rows(self.config, self.features, rows)  # media stay raw bytes
        self.written = True

    def close(self) -> None:
        if self.written:
            self.writer.close(self.config)


KEY_FIELD = {"sivqa": "question_id", "vvqa": "question_id", "coqa": "sample_uuid"}  # each release's record id


# ---------------------------------------------------------------------------- building


def build(
    out_dir: str | os.PathLike[str],
    *,
    sivqa: str | os.PathLike[str] | None = None,
    vvqa: str | os.PathLike[str] | None = None,
    videos_dir: str | os.PathLike[str] | None = None,
    coqa: str | os.PathLike[str] | None = None,
    seed: int = SEED,
    min_center_frame_similarity: float = MIN_CENTER_FRAME_SIMILARITY,
    similarity_inclusive: bool = False,
    on_bad_records: OnBadRecords = "error",
    expect_release_counts: bool | None = None,
) -> reading.BuildReport:
    """Read, check and write the Hub folder (split ``test``); only the given releases' configs are built.

    ``sivqa`` -> civqa; ``vvqa`` -> cvvqa; ``coqa`` -> coqa_c, coqa_r, ckqa. Each is a Hub id
    (e.g. `SOURCE_REPOS`), a ``save_to_disk`` folder, a parquet file or folder, or a ``.jsonl``
    (see `dataset_builders.gimmick.source`). ``videos_dir``: where the clips are, by the basename
    of ``video_fn``; without it ``video_fn`` is used as a path (relative to the source's folder).

    CVVQA keeps clips with ``video_center_frame_sim`` > ``min_center_frame_similarity`` (the
    paper's rule, L140), or >= with ``similarity_inclusive`` (the authors' code). COQA options
    are sampled once with ``seed``. ``on_bad_records``: ``"error"`` raises on the first bad record
    (nothing is written); ``"warn"``/``"skip"`` leave it out and list it in the report.
    ``expect_release_counts``: warn when a config's rows differ from the release (`RELEASE_COUNTS`);
    by default only for releases read from the Hub.
    """
    if on_bad_records not in ("error", "warn", "skip"):
        raise ValueError(f"on_bad_records must be 'error', 'warn' or 'skip', not {on_bad_records!r}")
    given = {name: s for name, s in (("sivqa", sivqa), ("vvqa", vvqa), ("coqa", coqa)) if s is not None}
    if not given:
        raise ValueError(f"no GIMMICK source given; the authors' releases are {SOURCE_REPOS}")
    if videos_dir is not None and not Path(videos_dir).expanduser().is_dir():
        raise FileNotFoundError(f"videos_dir {videos_dir}: no such folder")
    sources = {name: read_source(name, s) for name, s in given.items()}  # fail on a bad source before writing
    report = reading.BuildReport("gimmick", "; ".join(f"{n}={s.origin}" for n, s in sources.items()), str(out_dir))
    ctx = _Context(
        seed=seed,
        threshold=min_center_frame_similarity,
        inclusive=similarity_inclusive,
        videos_dir=Path(videos_dir).expanduser() if videos_dir is not None else None,
    )
    features: dict[str, Features] = {}
    with hub.HubFolderWriter(out_dir, SPLIT) as writer:
        for name, source in sources.items():
            outputs = {field for config in CONFIGS_OF[name] for field in FEATURES[config]}
            extras, extra_types = extra_columns(source, READ[name], outputs, report.warnings)
            sinks = {}
            for config in CONFIGS_OF[name]:
                features[config] = Features({**FEATURES[config], **extra_types})
                sinks[config] = _Sink(writer, config, features[config])
            _read(source, sinks, extras, ctx, report, on_bad_records)
        report.counts = {c: writer.num_rows[c] for c in CONFIGS if c in writer.num_rows}
        if not report.counts:
            first = f"; the first: {report.skipped[0].record}: {report.skipped[0].reason}" if report.skipped else ""
            raise SourceError(f"{report.source}: no GIMMICK rows to write ({report.rows_skipped} skipped{first})")
        report.warnings += [f"{c}: no rows, not written" for c in features if c not in report.counts]
        report.stats = _stats(sources, ctx, seed)
        report.warnings += _warnings(ctx)
        report.add_record_warnings()
        checked = [c for n, s in sources.items() for c in CONFIGS_OF[n] if expect_release_counts or s.is_hub]
        report.warnings += check_counts(report.counts, [] if expect_release_counts is False else checked)
        written = {c: features[c] for c in report.counts}
        kept = {c: [f for f in written[c] if f not in FEATURES[c]] for c in written}
        writer.finish(render_gimmick_card(report, written, writer.num_bytes, kept))
    return report


def _read(
    source: Source,
    sinks: dict[str, _Sink],
    extras: Mapping[str, str],
    ctx: _Context,
    report: reading.BuildReport,
    on_bad_records: OnBadRecords,
) -> None:
    for error in source.bad_lines:  # .jsonl lines with no record: read, and skipped or fatal like any bad record
        report.rows_read += 1
        report.skip_or_raise(error, on_bad_records)
    key = KEY_FIELD[source.name]
    duplicates = reading.Duplicates(
        report, key, GimmickRecordError
    )  # GIMMICK records carry the authors' ids: a repeat is a bad record
    for index, record in enumerate(reading.progress(source, f"gimmick {source.name}", total=source.num_rows)):
        report.rows_read += 1
        rid = _rid(source.name, index, record, source.where(index))
        try:
            rows = CONVERTERS[source.name](record, rid, source, ctx)
            if rows:  # a record the similarity filter removed is no row: its id stays free
                duplicates.check(record, rid, key_field(record, key, rid))
        except reading.RecordError as err:  # any bad record, its media included
            report.skip_or_raise(err, on_bad_records)
            continue
        if not rows:
            continue
        report.rows_written += 1
        kept = {out: record.get(column) for out, column in extras.items()}
        for config, config_rows in rows.items():
            if config_rows:  # a config with no rows at all is not written (reported)
                sinks[config].add([{**row, **kept} for row in config_rows])
    for sink in sinks.values():
        sink.close()


def _stats(sources: Mapping[str, Source], ctx: _Context, seed: int) -> dict[str, Any]:
    stats: dict[str, Any] = {}
    if "vvqa" in sources:
        stats["cvvqa_min_center_frame_similarity"] = ctx.threshold
        stats["cvvqa_similarity_inclusive"] = int(ctx.inclusive)
        stats["cvvqa_removed_by_similarity"] = ctx.stats["cvvqa_removed_by_similarity"]
    if "coqa" in sources:
        stats["coqa_seed"] = seed
        for key in ("coqa_r_cefs_dropped_over_3_regions", "coqa_c_duplicate_countries", "coqa_c_rows_topped_up"):
            stats[key] = ctx.stats[key]
        stats["coqa_c_rows_unknown_country"] = sum(ctx.unknown_countries.values())
    return stats


def _warnings(ctx: _Context) -> list[str]:
    warnings = []
    if ctx.unknown_countries:
        names = ", ".join(f"{name!r} ({n})" for name, n in sorted(ctx.unknown_countries.items()))
        warnings.append(f"coqa_c: targets that are no Table 4 country (kept as they are, never a negative): {names}")
    return warnings


def check_counts(counts: Mapping[str, int], configs: Iterable[str] | None = None) -> list[str]:
    """Warnings for configs whose row count differs from the authors' release (`RELEASE_COUNTS`)."""
    return [
        f"{config}: {counts[config]} rows, but the authors' release has {RELEASE_COUNTS[config]}"
        for config in (CONFIGS if configs is None else configs)
        if config in counts and counts[config] != RELEASE_COUNTS[config]
    ]


def publish(
    folder: str | os.PathLike[str],
    repo_id: str = REPO_ID,
    *,
    gated: Literal["auto", "manual"] | None = "auto",
    private: bool = False,
    token: str | None = None,
    **kwargs: Any,
) -> Any:
    """Upload a built folder as a **gated** dataset repo (the source datasets are gated; see the card).

    The repo is created and its gate set before any file is uploaded (`hub.publish`); ``gated=None``
    skips the gate (only for a private repo of your own). Other kwargs go to `hub.publish`.
    """
    hub.check_hub_folder(folder)
    if gated is None and not private:
        raise ValueError("refusing to publish GIMMICK media publicly without a gate: pass gated= or private=True")
    return hub.publish(folder, repo_id, private=private, token=token, gated=gated, **kwargs)


def is_gimmick_folder(folder: str | os.PathLike[str]) -> bool:
    """Whether a built folder holds GIMMICK configs (so `publish` must gate it)."""
    data = Path(folder) / hub.DATA_DIR
    return any((data / config).is_dir() for config in CONFIGS)
