"""Builds the JEEM Hub dataset from the authors' release or the local JSON layout.

Paper: "JEEM: Vision-Language Understanding in Four Arabic Dialects" (arXiv:2503.21910). Release:
``toloka/JEEM`` (gated; its column layout is not public, so columns are mapped by name,
`dataset_builders.jeem.schema`). Configs (split ``test``; JEEM is a benchmark with no other, L268):

- ``captioning_<variety>`` for msa, jordanian, emirati, egyptian, moroccan: one row per image and
  annotating team, ``reference`` = the team's dialect caption, or its MSA caption for ``msa``;
- ``captioning_<variety>_eval350``: the rows of the 350-image evaluation sample (`subset`);
- ``vqa_<dialect>``: one row per question, ``reference`` = its answer.

Documented rules (also on the card):

- **Shared pool** (100 images every team annotated, L80-82): each team's annotation is its own
  record, so a shared image is one row in each team's dialect config and one row per team in
  ``captioning_msa`` and in the VQA configs (ids ``<country>-<image_id>`` keep them apart). A record
  is shared when it says so (``is_shared_pool``), else when its ``image_id`` is annotated by more
  than one team. ``image_origin_country`` is the record's, else the annotating team for an image
  only it annotated, else empty (a shared image whose origin the release does not give).
- **"Cannot tell from the picture"** (L567): such answers stay, as released, as the reference of
  their question (the paper scores them like any other, L210); ``answerable`` is False on those
  rows and the card counts them per dialect, so they can be filtered.

    from dataset_builders import jeem
    print(jeem.build("out/jeem", "toloka/JEEM").summary())
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from datasets import Features, Image, Value

from arab_mm_tasks.jeem import CONFIGS, RELEASE_REPO
from arab_mm_tasks.jeem.tasks import EVAL_SUBSET
from arab_mm_tasks.jeem.vocabulary import DIALECT_OF_COUNTRY, MSA
from dataset_builders.core import hub, reading
from dataset_builders.core.reading import SourceError
from dataset_builders.gimmick.source import Source, image_value, read_source  # the shared release readers
from dataset_builders.jeem import schema, subset
from dataset_builders.jeem.card import REPO_ID, render_jeem_card
from dataset_builders.jeem.schema import ColumnMap

logger = logging.getLogger(__name__)

OnBadRecords = Literal["error", "warn", "skip"]
_STR = Value("string")
_COMMON = {
    "id": _STR,
    "image_id": _STR,
    "image": Image(),
    "country": _STR,  # the annotating team: jordan, emirates, egypt, morocco
    "dialect": _STR,  # its dialect: jordanian, emirati, egyptian, moroccan
}
_ABOUT = {
    "image_origin_country": _STR,
    "is_shared_pool": Value("bool"),
    "in_eval_subset": Value("bool"),
    "image_source": _STR,
    "topic": _STR,
}
CAPTION_FEATURES = Features({**_COMMON, "variety": _STR, "reference": _STR, **_ABOUT})
VQA_FEATURES = Features(
    {
        **_COMMON,
        "question_index": Value("int32"),
        "question": _STR,
        "reference": _STR,
        "answerable": Value("bool"),
        "question_type": _STR,
        **_ABOUT,
    }
)


def features_of(config: str) -> Features:
    return VQA_FEATURES if config.startswith("vqa_") else CAPTION_FEATURES


# ---------------------------------------------------------------------------- one record


def _rid(index: int, source: Source, record: Mapping[str, Any], mapping: ColumnMap) -> str:
    key = record.get(mapping.columns["image_id"])
    rid = f"jeem row {index} (image_id {key!r:.80})"
    where = source.where(index)
    return f"{where}: {rid}" if where else rid


def _team(record: Mapping[str, Any], mapping: ColumnMap, rid: str) -> tuple[str, str]:
    return schema.country(record, mapping, "country", rid), schema.record_id(record, mapping, rid)


def convert(
    record: Mapping[str, Any],
    rid: str,
    mapping: ColumnMap,
    source: Source,
    teams_of_image: Mapping[str, set[str]],
    chosen: set[tuple[str, str]],
) -> dict[str, list[dict[str, Any]]]:
    """The rows one record gives each config; a `BadRecord` names the record and the field."""
    country, image_id = _team(record, mapping, rid)
    dialect = DIALECT_OF_COUNTRY[country]
    shared = schema.flag(record, mapping, rid)
    if shared is None:
        shared = len(teams_of_image.get(image_id, ())) > 1
    alone = None if shared else country
    origin = (
        schema.country(record, mapping, "image_origin_country", rid)
        if schema._get(record, mapping, "image_origin_country") is not None
        else alone
    )
    captions = {dialect.key: schema.text(record, mapping, "caption_dialect", rid)}
    captions[MSA.key] = schema.text(record, mapping, "caption_msa", rid)
    questions, answers = schema.questions_answers(record, mapping, rid)
    types = schema.question_types(record, mapping, rid, len(questions))
    image = image_value(record.get(mapping.columns["image"]), base_dir=source.base_dir, record=rid, field="image")
    in_eval = (country, image_id) in chosen
    base = {
        "id": subset.row_id(country, image_id),
        "image_id": image_id,
        "image": image,
        "country": country,
        "dialect": dialect.key,
    }
    about = {
        "image_origin_country": origin,
        "is_shared_pool": shared,
        "in_eval_subset": in_eval,
        "image_source": schema.optional_text(record, mapping, "image_source", rid),
        "topic": schema.optional_text(record, mapping, "topic", rid),
    }
    rows: dict[str, list[dict[str, Any]]] = {}
    for variety, caption in captions.items():
        row = {**base, "variety": variety, "reference": caption, **about}
        rows[f"captioning_{variety}"] = [row]
        if in_eval:
            rows[f"captioning_{variety}_{EVAL_SUBSET}"] = [row]
    rows[f"vqa_{dialect.key}"] = [
        {
            **base,
            "id": f"{base['id']}-q{k + 1}",
            "question_index": k + 1,
            "question": question,
            "reference": answer,
            "answerable": not schema.is_cannot_tell(answer),
            "question_type": kind,
            **about,
        }
        for k, (question, answer, kind) in enumerate(zip(questions, answers, types, strict=True))
    ]
    return rows


# ---------------------------------------------------------------------------- building


@dataclass
class _Valid:
    """Pass 1: the records that will be written, and the teams annotating each image among them."""

    pairs: list[tuple[str, str]] = field(default_factory=list)  # (country, image_id) of each valid record
    teams: dict[str, set[str]] = field(default_factory=dict)
    skipped: set[tuple[str, str]] = field(default_factory=set)  # readable (country, image_id) of bad records


def _validate(source: Source, mapping: ColumnMap) -> _Valid:
    """Pass 1: every record checked as pass 2 will check it (its image decoded), so that the evaluation
    sample is drawn from the records that are written: a bad record skipped in pass 2 must not leave a
    hole in its team's quota. Bad records are reported (or raised) by pass 2."""
    valid = _Valid()
    seen: set[tuple[str, str]] = set()
    for index, record in enumerate(source):
        rid = _rid(index, source, record, mapping)
        try:
            key = _team(record, mapping, rid)
        except reading.RecordError:  # any bad record, its media included
            continue
        try:
            convert(record, rid, mapping, source, {}, set())
        except reading.RecordError:  # any bad record, its media included
            valid.skipped.add(key)
            continue
        if key in seen:  # pass 2 refuses the repeat and keeps the first
            continue
        seen.add(key)
        valid.pairs.append(key)
        valid.teams.setdefault(key[1], set()).add(key[0])
    valid.skipped -= seen
    return valid


def build(
    out_dir: str | os.PathLike[str],
    source: str | os.PathLike[str] = RELEASE_REPO,
    *,
    columns: str | Mapping[str, str] | None = None,
    eval_ids: str | os.PathLike[str] | None = None,
    seed: str = subset.SEED,
    on_bad_records: OnBadRecords = "error",
) -> reading.BuildReport:
    """Read, check and write the JEEM Hub folder.

    ``source``: the Hub id (``toloka/JEEM[@revision]``), a ``.jsonl`` in the local JSON layout, a
    parquet file or folder, or a ``save_to_disk`` folder. ``columns``: ``field=column`` overrides
    for the column mapping. ``eval_ids``: an id list replacing the default evaluation sample
    (`dataset_builders.jeem.subset`). ``on_bad_records``: ``"error"`` raises on the first bad record
    (nothing is written); ``"warn"`` / ``"skip"`` leave it out and list it in the report.
    """
    if on_bad_records not in ("error", "warn", "skip"):
        raise ValueError(f"on_bad_records must be 'error', 'warn' or 'skip', not {on_bad_records!r}")
    src = read_source("jeem", source)
    overrides = schema.parse_overrides(columns) if isinstance(columns, str) or columns is None else dict(columns)
    mapping = map_source(src, overrides)
    valid = _validate(src, mapping)
    teams = valid.teams
    report = reading.BuildReport("jeem", str(src.origin), str(out_dir))
    if eval_ids:
        chosen, dropped = subset.from_id_list(eval_ids, valid.pairs, skipped=valid.skipped)
        if dropped:
            names = ", ".join(subset.row_id(*pair) for pair in sorted(dropped)[:10])
            report.warnings.append(f"evaluation id list: {len(dropped)} ids name records skipped as bad: {names}")
    else:
        chosen = subset.sample(valid.pairs, seed)
    stats: Counter[str] = Counter()
    duplicates = reading.Duplicates(
        report, mapping.columns["image_id"], schema.JeemRecordError
    )  # a team's image is one record
    with hub.HubFolderWriter(out_dir, "test") as writer:
        for error in src.bad_lines:
            report.rows_read += 1
            report.skip_or_raise(error, on_bad_records)
        for index, record in enumerate(reading.progress(src, "jeem", total=src.num_rows)):
            report.rows_read += 1
            rid = _rid(index, src, record, mapping)
            try:
                rows = convert(record, rid, mapping, src, teams, chosen)
                duplicates.check(
                    record, rid, (rows["captioning_msa"][0]["country"], rows["captioning_msa"][0]["image_id"])
                )
            except reading.RecordError as error:  # any bad record, its media included
                report.skip_or_raise(error, on_bad_records)
                continue
            report.rows_written += 1
            _count(stats, rows)
            for config, config_rows in rows.items():
                writer.add_rows(config, features_of(config), config_rows)
        report.counts = {c: writer.num_rows[c] for c in CONFIGS if c in writer.num_rows}
        if not report.counts:
            first = f"; the first: {report.skipped[0].record}: {report.skipped[0].reason}" if report.skipped else ""
            raise SourceError(f"{report.source}: no JEEM rows to write ({report.rows_skipped} skipped{first})")
        report.warnings += [f"{c}: no rows, not written" for c in CONFIGS if c not in report.counts]
        report.add_record_warnings()
        report.stats = {**dict(sorted(stats.items())), "eval_subset_seed_default": int(eval_ids is None)}
        report.stats |= {f"eval_subset_{c}": n for c, n in subset.counts(chosen).items()}
        writer.finish(
            render_jeem_card(report, writer.num_bytes, mapping.describe(), seed if eval_ids is None else None)
        )
    return report


def map_source(source: Source, overrides: Mapping[str, str]) -> ColumnMap:
    return schema.map_columns(source.columns, overrides, source.origin, source.features)


def _count(stats: Counter[str], rows: Mapping[str, list[dict[str, Any]]]) -> None:
    row = rows["captioning_msa"][0]
    stats[f"images_{row['country']}"] += 1
    stats[f"shared_pool_{row['country']}"] += row["is_shared_pool"]
    vqa = rows[f"vqa_{row['dialect']}"]
    stats[f"questions_{row['country']}"] += len(vqa)
    stats[f"cannot_tell_{row['country']}"] += sum(not q["answerable"] for q in vqa)


def publish(folder: str | os.PathLike[str], repo_id: str = REPO_ID, **kwargs: Any) -> Any:
    """Upload a built folder as a **gated** dataset repo (the release is gated; see the card).

    Keyword arguments go to `hub.publish_gated` (``gated="auto"`` by default, ``private``, ``token``, ...).
    """
    return hub.publish_gated(folder, repo_id, title="JEEM", **kwargs)


def rows_of(folder: str | os.PathLike[str], config: str) -> Iterable[dict[str, Any]]:
    """A built config's rows (images undecoded), for tests and reports."""
    import datasets

    files = sorted((Path(folder) / hub.DATA_DIR / config).glob("*.parquet"))
    dataset = datasets.Dataset.from_parquet([str(f) for f in files])
    return dataset.cast_column("image", Image(decode=False))
