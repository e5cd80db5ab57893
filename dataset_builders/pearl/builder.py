"""Builds the Pearl Hub dataset (configs per release and question kind) from the authors' releases.

Paper: "Pearl: A Multimodal Culturally-Aware Arabic Instruction Dataset", Alwajih et al. (2025).
Releases: ``UBC-NLP/PEARL`` (6,301 items), ``UBC-NLP/PEARL-LITE`` (893) and ``UBC-NLP/PEARL-X``
(367), gated, CC-BY-NC-ND-4.0; the authors' run scripts call the first two
``UBC-NLP/PEARL-benchmark`` / ``UBC-NLP/PEARL-LITE-benchmark`` (accepted as the same releases).

Each release is split by what its items are scored with, one config per task:
``pearl_closed`` / ``pearl_open``, ``pearl_lite_closed`` / ``pearl_lite_open`` (MCQ and True/False
vs the 11 open-ended types) and ``pearl_x_single`` / ``pearl_x_multi`` (one image vs several).
Every record is checked (`dataset_builders.pearl.records`), images are embedded as released, and
sizes are compared with the paper's, for local copies too (a mismatch is a warning in the report, not
an error).

    from dataset_builders import pearl
    report = pearl.build("out/pearl", pearl="UBC-NLP/PEARL", pearl_x="/data/pearl-x.parquet")
    print(report.summary())
"""

from __future__ import annotations

import logging
import os
import warnings
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from datasets import Features

from arab_mm_tasks.pearl import CONFIGS_OF, RELEASES
from dataset_builders.core import hub, reading
from dataset_builders.gimmick.source import Source, extra_columns, read_source
from dataset_builders.pearl.card import REPO_ID, render_pearl_card
from dataset_builders.pearl.records import (
    CARD_FEATURES,
    PEARL_FEATURES,
    PEARL_X_FEATURES,
    PEARL_X_READ,
    pearl_row,
    pearl_x_row,
)

logger = logging.getLogger(__name__)

OnBadRecords = Literal["error", "warn", "skip"]
# Paper L125 (Pearl), L127 (Pearl-Lite), L238-L240 (Pearl-X).
RELEASE_COUNTS = {
    "pearl_closed": 4832, "pearl_open": 1469, "pearl_lite_closed": 591, "pearl_lite_open": 302,
    "pearl_x_single": 177, "pearl_x_multi": 190,
}  # fmt: skip
ALIASES = {"UBC-NLP/PEARL-benchmark": "pearl", "UBC-NLP/PEARL-LITE-benchmark": "pearl_lite"}
CONFIG_OF = {  # (release, the converter's kind) -> config
    (release, kind): config
    for release, configs in CONFIGS_OF.items()
    for kind, config in zip(("single", "multi") if release == "pearl_x" else ("closed", "open"), configs, strict=True)
}


def release_of(source: str) -> str | None:
    """The release a Hub id names (``UBC-NLP/PEARL-LITE-benchmark`` -> ``pearl_lite``), else None."""
    repo = str(source).partition("@")[0]
    by_repo = {repo_id: name for name, repo_id in RELEASES.items()} | ALIASES
    return by_repo.get(repo)


def build(
    out_dir: str | os.PathLike[str],
    *,
    pearl: str | os.PathLike[str] | None = None,
    pearl_lite: str | os.PathLike[str] | None = None,
    pearl_x: str | os.PathLike[str] | None = None,
    on_bad_records: OnBadRecords = "error",
    expect_release_counts: bool = True,
) -> reading.BuildReport:
    """Read, check and write the Hub folder (split ``test``) for each release given.

    Each source is a Hub id (``id@revision``), a ``save_to_disk`` folder, a parquet file or folder,
    or a ``.jsonl`` whose images are paths relative to it (or ``{"bytes", "path"}``).
    ``on_bad_records``: ``"error"`` raises on the first bad record (nothing is written);
    ``"warn"``/``"skip"`` leave it out and list it. ``expect_release_counts``: report (as a warning,
    not an error) each config whose size differs from the paper's, for local copies as for Hub
    reads; False for a deliberate subset.
    """
    if on_bad_records not in ("error", "warn", "skip"):
        raise ValueError(f"on_bad_records must be 'error', 'warn' or 'skip', not {on_bad_records!r}")
    given = {name: s for name, s in (("pearl", pearl), ("pearl_lite", pearl_lite), ("pearl_x", pearl_x)) if s}
    if not given:
        raise ValueError(f"no Pearl source given; the authors' releases are {RELEASES}")
    for name, source in given.items():
        named = release_of(str(source))
        if named is not None and named != name:
            given, wanted = ("--" + n.replace("_", "-") for n in (name, named))
            raise reading.SourceError(
                f"{source} is the {named} release, given as {name} ({given}): pass it as {wanted}"
            )
    sources = {name: read_source(name, s) for name, s in given.items()}  # a bad source fails before writing
    report = reading.BuildReport("pearl", "; ".join(f"{n}={s.origin}" for n, s in sources.items()), str(out_dir))
    breakdown: dict[str, dict[str, Counter[str]]] = {}
    features: dict[str, Features] = {}
    duplicates = reading.Duplicates(report)  # Pearl rows have no release id: exact repeats are kept and listed
    with hub.HubFolderWriter(out_dir, "test") as writer:
        for name, source in sources.items():
            base = PEARL_X_FEATURES if name == "pearl_x" else PEARL_FEATURES
            read = PEARL_X_READ if name == "pearl_x" else CARD_FEATURES
            extras, extra_types = extra_columns(source, read, set(base), report.warnings)
            for config in CONFIGS_OF[name]:
                features[config] = Features({**base, **extra_types})
            _read(name, source, writer, features, extras, report, breakdown, duplicates, on_bad_records)
        report.counts = {c: writer.num_rows[c] for c in RELEASE_COUNTS if c in writer.num_rows}
        if not report.counts:
            first = f"; the first: {report.skipped[0].record}: {report.skipped[0].reason}" if report.skipped else ""
            raise reading.SourceError(f"{report.source}: no Pearl rows to write ({report.rows_skipped} skipped{first})")
        expected = [c for name in sources for c in CONFIGS_OF[name]] if expect_release_counts else []
        report.warnings += check_counts(report.counts, expected)
        report.warnings += [f"{c}: no rows, not written" for c in features if c not in report.counts]
        report.add_record_warnings()
        written = {c: features[c] for c in report.counts}
        writer.finish(render_pearl_card(report, written, writer.num_bytes, breakdown))
    return report


def _read(
    name: str,
    source: Source,
    writer: hub.HubFolderWriter,
    features: Mapping[str, Features],
    extras: Mapping[str, str],
    report: reading.BuildReport,
    breakdown: dict[str, dict[str, Counter[str]]],
    duplicates: reading.Duplicates,
    on_bad_records: OnBadRecords,
) -> None:
    convert = pearl_x_row if name == "pearl_x" else pearl_row
    written: set[str] = set()
    for error in source.bad_lines:  # .jsonl lines with no record
        report.rows_read += 1
        report.skip_or_raise(error, on_bad_records)
    for index, record in enumerate(reading.progress(source, f"pearl {name}", total=source.num_rows)):
        report.rows_read += 1
        where = source.where(index)
        rid = f"{where + ': ' if where else ''}{name} row {index}"
        try:
            kind, row = convert(record, index, rid, source.base_dir)
            duplicates.check(record, rid)
        except reading.RecordError as err:  # any bad record, its media included
            report.skip_or_raise(err, on_bad_records)
            continue
        config = CONFIG_OF[(name, kind)]
        row |= {out: record.get(column) for out, column in extras.items()}
        writer.add_rows(config, features[config], [row])  # streamed: a row group is held at most
        written.add(config)
        report.rows_written += 1
        counts = breakdown.setdefault(config, {"country": Counter(), "question_type": Counter()})
        counts["question_type"][row["question_type"]] += 1
        if row.get("country") is not None:
            counts["country"][str(row["country"])] += 1
    for config in sorted(written):
        writer.close(config)


def check_counts(counts: Mapping[str, int], configs: list[str]) -> list[str]:
    """Warnings for configs whose size differs from the paper's (`RELEASE_COUNTS`)."""
    return [
        f"{config}: {counts.get(config, 0)} rows, but the paper reports {RELEASE_COUNTS[config]}"
        for config in configs
        if counts.get(config, 0) != RELEASE_COUNTS[config]
    ]


def publish(
    folder: str | os.PathLike[str],
    repo_id: str = REPO_ID,
    *,
    private: bool = False,
    public: bool = False,
    gated: Literal["auto", "manual"] | None = "auto",
    token: str | None = None,
    **kwargs: Any,
) -> Any:
    """Upload a built folder, **private** unless ``public=True``, and gated.

    Pearl is CC-BY-NC-ND-4.0: "no derivatives" forbids sharing an adapted copy, so the repo is
    private by default; ``public=True`` publishes it anyway, with a warning (your responsibility).
    """
    hub.check_hub_folder(folder)
    if public:
        message = (
            "publishing Pearl publicly: its licence (CC-BY-NC-ND-4.0) forbids sharing derivatives; "
            "make sure you have the authors' permission"
        )
        warnings.warn(message, stacklevel=2)
        logger.warning(message)
    return hub.publish(folder, repo_id, private=not public or private, token=token, gated=gated, **kwargs)


def is_pearl_folder(folder: str | os.PathLike[str]) -> bool:
    data = Path(folder) / hub.DATA_DIR
    return any((data / config).is_dir() for config in RELEASE_COUNTS)
