"""Builds the ArabCulture Hub dataset from the authors' release (``MBZUAI/ArabCulture``).

Why a builder and not the authors' repo as is: the release has no topic column, no
country-specific flag and no unique row id (``sample_id`` repeats across a country's two
workers), and nothing checks its answer keys. We keep every released field byte for byte
(leading spaces, ``' No'``, nulls, ``'1.0 | Breakfast'``), validate each record, and add
derived columns (see `FEATURES`). Configs: one per country, as released, plus ``all``.

    from dataset_builders import arabculture
    report = arabculture.build("MBZUAI/ArabCulture", "out/arabculture")   # or a folder / .jsonl
    print(report.summary())
    arabculture.publish("out/arabculture")                                # arab-mm-tasks/arabculture
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from datasets import Features, List, Value

from arab_mm_tasks.arabculture.tasks import REGION_OF_COUNTRY, REGIONS, gold_index
from arab_mm_tasks.core.sources import project_repo
from arab_mm_tasks.data import SAMPLE_PATH
from dataset_builders.arabculture.card import render_arabculture_card
from dataset_builders.arabculture.source import SOURCE_REPO, SPLIT, SourceConfigs, read_source
from dataset_builders.arabculture.topics import topic_of
from dataset_builders.core import hub, reading

__all__ = [
    "ALL_CONFIG", "DEFAULT_SOURCE", "FEATURES", "REPO_ID", "SAMPLE_PATH", "SOURCE_REPO",
    "ArabCultureRecordError", "SourceConfigs", "build", "publish", "read_source", "to_row", "validate",
]  # fmt: skip

logger = logging.getLogger(__name__)

REPO_ID = project_repo("arabculture")
DEFAULT_SOURCE = SOURCE_REPO  # what `arab-mm-tasks build` reads when no source is given
ALL_CONFIG = "all"

OnBadRecords = Literal["error", "warn", "skip"]

RAW_STRINGS = ("worker_id", "sample_id", "sub_topic", "first_statement")
RAW_FLAGS = ("relevant_to_this_country", "relevant_to_other_countries", "should_discard")
OPTION_FIELDS = ("arabic_keys", "english_keys", "text")
ANSWER_FIELDS = ("arabic_answer_key", "english_answer_key")
RAW_FIELDS = (*RAW_STRINGS, "options", "answer_key", *RAW_FLAGS, "country", "region")

FEATURES = Features(
    {
        "id": Value("string"),  # "{country}-{row:04d}", row = 0-based position in the source config
        **{name: Value("string") for name in RAW_STRINGS},
        "options": {name: List(Value("string")) for name in OPTION_FIELDS},
        "answer_key": {name: Value("string") for name in ANSWER_FIELDS},
        "answer_index": Value("int32"),  # position of english_answer_key in english_keys
        **{name: Value("string") for name in RAW_FLAGS},
        "country": Value("string"),
        "region": Value("string"),
        "subtopic": Value("string"),  # English subtopic from sample_id
        "topic": Value("string"),  # paper Table 8 topic; null when unmapped
        "country_specific": Value("bool"),  # relevant_to_other_countries: No -> True, Yes -> False
    }
)


class ArabCultureRecordError(reading.BadRecord):
    """An ArabCulture release record that fails validation; the message names the record and the field."""


# ---------------------------------------------------------------------------- validation


def _present(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_string_list(record_id: str, field: str, value: Any, *, distinct: bool) -> list[str]:
    if not isinstance(value, list | tuple) or len(value) != 3:
        count = f"{len(value)} items" if isinstance(value, list | tuple) else f"a {type(value).__name__}"
        raise ArabCultureRecordError(record_id, field, f"has {count}, expected exactly 3")
    if not all(_present(v) for v in value):
        raise ArabCultureRecordError(record_id, field, f"has an empty or non-string item: {list(value)!r}")
    if distinct and len({v.strip() for v in value}) != 3:
        raise ArabCultureRecordError(record_id, field, f"has repeated keys: {list(value)!r}")
    return [v.strip() for v in value]


def validate(record: Mapping[str, Any], config: str, row: int, where: str | None = None) -> str | None:
    """Check one release record; returns its English subtopic (parsed from ``sample_id``), if any.

    Raises `ArabCultureRecordError` naming ``<config> row <row> (sample_id ...)`` and the field,
    after ``<where>: `` (the record's ``<file>:<line>`` in a .jsonl source) when given.
    """
    rid = f"{config} row {row} (sample_id {record.get('sample_id')!r})"
    rid = f"{where}: {rid}" if where else rid
    for name in RAW_FIELDS:
        if name not in record:
            raise ArabCultureRecordError(rid, name, "is missing")
    for name in (*RAW_STRINGS, *RAW_FLAGS, "country", "region"):
        if record[name] is not None and not isinstance(record[name], str):
            raise ArabCultureRecordError(rid, name, f"is {record[name]!r}, not a string")
    for name in ("sample_id", "first_statement", "country", "region"):
        if not _present(record[name]):
            raise ArabCultureRecordError(rid, name, f"is {record[name]!r}, expected a non-empty string")
    for group, names in (("options", OPTION_FIELDS), ("answer_key", ANSWER_FIELDS)):
        if not isinstance(record[group], Mapping):
            raise ArabCultureRecordError(rid, group, f"is {record[group]!r}, not an object")
        for name in names:
            if record[group].get(name) is None:
                raise ArabCultureRecordError(rid, f"{group}.{name}", "is missing")
    keys = {
        lang: _check_string_list(rid, f"options.{lang}_keys", record["options"][f"{lang}_keys"], distinct=True)
        for lang in ("english", "arabic")
    }
    _check_string_list(rid, "options.text", record["options"]["text"], distinct=False)
    position = {}
    for lang in ("english", "arabic"):
        answer = record["answer_key"][f"{lang}_answer_key"]
        if not _present(answer) or answer.strip() not in keys[lang]:
            raise ArabCultureRecordError(
                rid, f"answer_key.{lang}_answer_key", f"is {answer!r}, not one of {keys[lang]}"
            )
        position[lang] = keys[lang].index(answer.strip())
    if position["arabic"] != position["english"]:
        raise ArabCultureRecordError(
            rid,
            "answer_key.arabic_answer_key",
            f"is {record['answer_key']['arabic_answer_key']!r} (option {position['arabic'] + 1}), but "
            f"english_answer_key {record['answer_key']['english_answer_key']!r} is option {position['english'] + 1}",
        )
    country, region = record["country"], record["region"]
    if country not in REGION_OF_COUNTRY:
        raise ArabCultureRecordError(rid, "country", f"is {country!r}, not one of {sorted(REGION_OF_COUNTRY)}")
    if country != config:
        raise ArabCultureRecordError(rid, "country", f"is {country!r}, but the record is in config {config!r}")
    if region not in REGIONS:
        raise ArabCultureRecordError(rid, "region", f"is {region!r}, not one of {list(REGIONS)}")
    if region != REGION_OF_COUNTRY[country]:
        raise ArabCultureRecordError(
            rid, "region", f"is {region!r}, but {country} is in {REGION_OF_COUNTRY[country]!r} (paper Table 2)"
        )
    # sample_id and the Yes/No flags only feed derived columns (subtopic/topic, country_specific): an
    # unexpected value leaves those null and is counted in the report instead of failing the build.
    return record["sample_id"].partition("|")[2].strip() or None


def _flag(value: str | None) -> bool | None:
    """Yes -> True, No -> False; null or anything else -> None (counted as ``*_unreadable`` in the report)."""
    answer = value.strip().casefold() if isinstance(value, str) else None
    return {"yes": True, "no": False}.get(answer) if answer else None


def to_row(record: Mapping[str, Any], config: str, row: int, where: str | None = None) -> dict[str, Any]:
    """A validated output row: the raw fields unchanged plus the derived columns of `FEATURES`."""
    subtopic = validate(record, config, row, where)
    other = _flag(record["relevant_to_other_countries"])
    return {
        "id": f"{config}-{row:04d}",
        **{name: record[name] for name in RAW_STRINGS},
        "options": {name: list(record["options"][name]) for name in OPTION_FIELDS},
        "answer_key": {name: record["answer_key"][name] for name in ANSWER_FIELDS},
        "answer_index": gold_index(record),  # the task's own gold rule, on the checked keys
        **{name: record[name] for name in RAW_FLAGS},
        "country": record["country"],
        "region": record["region"],
        "subtopic": subtopic,
        # The Arabic sub_topic is the fallback whether the English subtopic is misspelt or absent
        # (a sample_id without "| subtopic"): both rows say what they are about in sub_topic.
        "topic": topic_of(subtopic, record["sub_topic"]),
        "country_specific": None if other is None else not other,
    }


# ---------------------------------------------------------------------------- building


def build(
    source: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    on_bad_records: OnBadRecords = "error",
    revision: str | None = None,
) -> reading.BuildReport:
    """Read, validate and write the Hub folder (13 country configs + ``all``, split ``test``).

    ``source``: the authors' Hub repo (`SOURCE_REPO`), a local folder in its layout, or a
    ``.jsonl`` of records (`SAMPLE_PATH` is the bundled one); see `read_source`.

    ``on_bad_records``: ``"error"`` raises on the first bad record (nothing is written);
    ``"warn"`` and ``"skip"`` leave bad records out and list each in the report (``"warn"``
    also logs each one). A .jsonl line that is no JSON object is a bad record too, named
    ``<file>:<line>``. Rows flagged ``should_discard`` are kept, as in the paper's 3,482, and so
    are exact duplicates (listed in ``report.duplicates``; docs/fidelity.md says why).
    """
    if on_bad_records not in ("error", "warn", "skip"):
        raise ValueError(f"on_bad_records must be 'error', 'warn' or 'skip', not {on_bad_records!r}")
    configs = read_source(source, revision=revision)
    report = reading.BuildReport("arabculture", configs.origin, str(out_dir))
    report.warnings += [f"source config {name!r} is not an ArabCulture country; not read" for name in configs.ignored]
    stats: Counter[str] = Counter()
    unmapped: Counter[str] = Counter()
    extra_fields: set[str] = set()
    duplicates = reading.Duplicates(report)  # no release id (sample_id repeats by design): exact repeats kept
    for error in configs.bad_lines:  # .jsonl lines with no record: read, and skipped or fatal like any bad record
        report.rows_read += 1
        report.skip_or_raise(error, on_bad_records)
    with hub.HubFolderWriter(out_dir, SPLIT) as writer:
        for config, records in configs.items():  # rows go to the writer as they are read: none are held
            written = 0
            total = configs.num_rows.get(config)
            for index, record in enumerate(reading.progress(records, f"arabculture {config}", total=total)):
                report.rows_read += 1
                where = configs.where(config, index)
                try:
                    row = to_row(record, config, index, where)
                    duplicates.check(record, f"{where}: {row['id']}" if where else row["id"])
                except reading.RecordError as err:
                    report.skip_or_raise(err, on_bad_records)
                    continue
                extra_fields.update(set(record) - set(RAW_FIELDS))
                _count(row, stats, unmapped)
                writer.add_rows(config, FEATURES, [row])
                writer.add_rows(ALL_CONFIG, FEATURES, [row])
                written += 1
            if not written:
                report.warnings.append(f"config {config!r}: no valid records, not written")
                continue
            writer.close(config)
            report.rows_written += written
        if not writer.num_rows:
            first = f"; the first: {report.skipped[0].record}: {report.skipped[0].reason}" if report.skipped else ""
            raise reading.SourceError(
                f"{configs.origin}: no valid ArabCulture records to write ({report.rows_skipped} skipped{first})"
            )
        writer.close(ALL_CONFIG)  # before the card: its byte counts are final once a config is closed
        absent = sorted(set(REGION_OF_COUNTRY) - set(writer.num_rows))
        report.counts = {c: writer.num_rows[c] for c in [*sorted(set(writer.num_rows) - {ALL_CONFIG}), ALL_CONFIG]}
        report.stats = dict(sorted(stats.items()))
        report.warnings += _warnings(absent, extra_fields, unmapped)
        report.add_record_warnings()
        writer.finish(render_arabculture_card(report, FEATURES, writer.num_bytes, sample=_is_sample(source)))
    return report


def _count(row: Mapping[str, Any], stats: Counter[str], unmapped: Counter[str]) -> None:
    stats["should_discard_yes"] += _flag(row["should_discard"]) is True
    stats["country_specific"] += row["country_specific"] is True
    stats["not_country_specific"] += row["country_specific"] is False
    stats["country_specific_null"] += row["country_specific"] is None
    for name in RAW_FLAGS:
        stats[f"{name}_unreadable"] += row[name] is not None and _flag(row[name]) is None
    if row["topic"] is None:
        stats["topic_unmapped"] += 1
        unmapped[f"{row['subtopic']} / {row['sub_topic']}"] += 1


def _warnings(absent: list[str], extra: set[str], unmapped: Counter[str]) -> list[str]:
    warnings = [f"countries absent from the source: {', '.join(absent)}"] if absent else []
    warnings += [f"source field {name!r} is not in the schema and was not written" for name in sorted(extra)]
    warnings += [f"{n} rows with subtopic {name!r} have no Table 8 topic" for name, n in unmapped.most_common()]
    return warnings


def _is_sample(source: str | os.PathLike[str]) -> bool:
    path = Path(source).expanduser()
    return path.is_file() and path.resolve() == SAMPLE_PATH.resolve()


def publish(folder: str | os.PathLike[str], repo_id: str = REPO_ID, **kwargs: Any) -> Any:
    """Upload a built folder to the project's ArabCulture repo (see `hub.publish` for kwargs)."""
    return hub.publish(folder, repo_id, **kwargs)
