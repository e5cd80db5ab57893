"""Builds the ARB Hub folder (one config per domain and ``all``, split ``test``) from the authors' releases.

    from dataset_builders import arb
    report = arb.build("out/arb", hub="MBZUAI/ARB", csv="gpt-4.1-final-responses.csv")

Sources: ``hub`` (the HF dataset, with images) and/or ``csv`` (the GitHub CSV, with GPT-4.1's
outputs; images from ``images_dir`` by ``image_path``, else none). With both, rows come from the
Hub and take the CSV's ``image_id`` as id where one CSV row has the same question, answer and
steps (`CsvIds`). Every row is checked; a bad one names its row and field (``on_bad_records``).
Model output columns never reach the gold rows: they are written to ``predictions/<model>.jsonl``
next to ``data/``, one line per written row that has a CSV row, under the row's id.

Each row is stored once, in its domain's config (``data/<domain>/``); the card declares ``all`` as
the domains' shards, in the order the domains first appear in the source (`hub.render_card`'s
``union_configs``), so ``load_dataset(folder, "all")`` and ``load_dataset(folder, "<domain>")`` both
work and no image is written twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from datasets import Features, Image, List, Value

from arab_mm_tasks.arb.answers import resolve_gold
from arab_mm_tasks.arb.domains import BY_KEY, CURRICULA, DOMAIN_KEYS, curriculum_of, domain_of
from arab_mm_tasks.arb.parsing import FieldError, parse_choices, parse_steps
from arab_mm_tasks.arb.prompt import choices_in_question
from arab_mm_tasks.arb.released import compose_response
from arab_mm_tasks.core.paths import inside, safe_file_name
from dataset_builders.arb.card import render_arb_card
from dataset_builders.arb.source import CSV_CATEGORY, HUB_REPO, ROW_PROBLEM, Source, SourceError, read_csv, read_hub
from dataset_builders.core import hub, reading
from dataset_builders.gimmick.source import image_value  # the shared release readers' media check

logger = logging.getLogger(__name__)

SPLIT = "test"  # the HF release's only split is `train`; ARB is an evaluation set
RELEASE_COUNTS = {"hub": 1355, "csv": 1356}
OnBadRecords = Literal["error", "warn", "skip"]
# Rows arrive in source order, every domain's config open at once, each holding up to a row group: a
# 100 MB budget shared by the 11 domains (~500 KB images) keeps what is held flat in the rows read.
WRITE_POLICY = hub.ShardPolicy(group_bytes=hub.DEFAULT_POLICY.group_bytes // len(DOMAIN_KEYS))
_STR = Value("string")
FEATURES = Features(
    {
        "id": _STR,
        "image": Image(),
        "image_path": _STR,
        "question": _STR,
        "choices": List(_STR),
        "choices_in_question": Value("bool"),
        "is_mcq": Value("bool"),
        "answer": _STR,
        "answer_resolved": _STR,
        "steps": List({"step": _STR, "action": _STR}),
        "steps_raw": _STR,
        "num_steps": Value("int32"),
        "domain": _STR,
        "domain_abbreviation": _STR,
        "domain_raw": _STR,
        "curriculum": _STR,
        "curriculum_source": _STR,
        "probabilities": _STR,
    }
)


class ArbRecordError(reading.BadRecord):
    pass


def _text(record: Mapping[str, Any], field: str, rid: str) -> str:
    value = record.get(field)
    if not isinstance(value, str) or not value.strip():
        raise ArbRecordError(rid, field, "is missing or empty" if not value else f"is {value!r:.60}, not text")
    return value


def _optional_text(record: Mapping[str, Any], field: str, rid: str) -> str:
    """A field that may be blank: its text, '' when missing or null, else a bad record (a number, a list, ...)."""
    value = record.get(field)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ArbRecordError(rid, field, f"is {value!r:.60}, not text")
    return value


def gold_row(record: Mapping[str, Any], rid: str, kind: str, stats: Counter[str], image_id: str = "") -> dict[str, Any]:
    """One release record -> the gold row (model outputs excluded); `image_id` places a blank domain."""
    question, answer, steps_raw = (_text(record, f, rid) for f in ("question", "answer", "steps"))
    try:
        choices = parse_choices(_optional_text(record, "choices", rid))
    except FieldError as error:
        raise ArbRecordError(rid, "choices", str(error)) from None
    domain_field = CSV_CATEGORY if kind == "csv" else "domain"
    domain_raw = _optional_text(record, domain_field, rid)
    domain = domain_of(domain_raw, image_id)
    if domain is None:
        raise ArbRecordError(rid, domain_field, f"is {domain_raw!r}, no ARB domain (nor inferable from image_id)")
    if not domain_raw.strip():
        stats[f"domain_inferred_from_image_id_{domain}"] += 1
    released = _optional_text(record, "Curriculum", rid).strip()
    curriculum = curriculum_of(released) if released else None
    if released and curriculum is None:
        raise ArbRecordError(
            rid, "Curriculum", f"is {released!r}, not one of {list(CURRICULA)} (or their English names)"
        )
    pairs = parse_steps(steps_raw)
    stats["rows_without_step_markers"] += not pairs
    stats["step_pairs"] += len(pairs)
    stats["rows_choices_in_question"] += choices_in_question(question, choices)
    return {
        "question": question,
        "choices": choices,
        "choices_in_question": choices_in_question(question, choices),
        "is_mcq": bool(choices) or choices_in_question(question, choices),
        "answer": answer,
        "answer_resolved": resolve_gold(answer, choices),
        "steps": [{"step": p.step, "action": p.action} for p in pairs],
        "steps_raw": steps_raw,
        "num_steps": len(pairs),
        "domain": domain,
        "domain_abbreviation": BY_KEY[domain].abbreviation,
        "domain_raw": domain_raw,
        "curriculum": curriculum or BY_KEY[domain].curriculum,
        "curriculum_source": "release" if curriculum else "derived",
        "probabilities": _optional_text(record, "probabilities", rid) or None,
    }


def _image(record: Mapping[str, Any], rid: str, kind: str, images_dir: Path | None) -> dict[str, Any] | None:
    """The row's image as released, decoded once as the tasks will (`image_value`, the builders' shared check).

    Hub rows carry bytes (a struct naming only a path has no folder to resolve it in); CSV rows name
    a file by ``image_path``, resolved inside ``images_dir`` (`resolve_inside`).
    """
    if kind == "hub":
        image = record.get("image")
        if isinstance(image, Mapping) and image.get("bytes") is None and not image.get("path"):
            raise ArbRecordError(rid, "image", "has no image bytes")
        return image_value(image, base_dir=None, record=rid, field="image")
    if images_dir is None:
        return None
    name = _text(record, "image_path", rid)
    return {**image_value(name, base_dir=images_dir, record=rid, field="image_path"), "path": name}


def join_key(record: Mapping[str, Any]) -> str:
    """What joins a Hub row to its CSV row: question, answer and steps, whitespace folded (hashed).

    The question alone does not: OCR questions repeat over covers (``من هو مؤلف هذا الكتاب؟``, 6 of
    the first 30 rows).
    """
    text = "\x1f".join(" ".join(str(record.get(name) or "").split()) for name in ("question", "answer", "steps"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hub_id(index: int) -> str:
    """The id of a Hub row no CSV row names: its index in the Hub release."""
    return f"arb_{index:04d}"


class CsvIds:
    """The CSV's ``image_id`` for the Hub's rows (the Hub release has no id column), by `join_key`.

    A key held by one CSV row gives that row's id to the first Hub row with it. A key held by
    several CSV rows (the same question, answer and steps over different images) cannot say which
    image is which, and a Hub row with no CSV row (or a second Hub row with a taken key) has none:
    those keep `hub_id`, counted in the build's stats, never a guessed id.
    """

    def __init__(self, csv_source: Source) -> None:
        self.rows: dict[str, list[tuple[int, str]]] = {}
        for index, record in enumerate(csv_source):
            self.rows.setdefault(join_key(record), []).append((index, str(record.get("image_id") or "").strip()))
        self.num_rows = sum(map(len, self.rows.values()))
        self.taken: set[int] = set()

    def id_of(self, record: Mapping[str, Any], index: int, stats: Counter[str]) -> tuple[str, int | None]:
        """(the row's id, its CSV row index or None)."""
        candidates = self.rows.get(join_key(record), [])
        if len(candidates) == 1 and candidates[0][0] not in self.taken and candidates[0][1]:
            csv_index, image_id = candidates[0]
            self.taken.add(csv_index)
            stats["ids_from_csv"] += 1
            return image_id, csv_index
        if len(candidates) > 1:
            stats["ids_not_joined_ambiguous"] += 1
        elif candidates:
            stats["ids_not_joined_repeated"] += 1
        else:
            stats["ids_not_joined_no_csv_row"] += 1
        return hub_id(index), None


def build(
    out_dir: str | os.PathLike[str],
    *,
    hub_source: str | None = None,
    csv: str | os.PathLike[str] | None = None,
    images_dir: str | os.PathLike[str] | None = None,
    on_bad_records: OnBadRecords = "error",
) -> reading.BuildReport:
    """Read, check and write the folder; ``hub_source`` wins for rows when both sources are given."""
    if on_bad_records not in ("error", "warn", "skip"):
        raise ValueError(f"on_bad_records must be 'error', 'warn' or 'skip', not {on_bad_records!r}")
    if hub_source is None and csv is None:
        raise ValueError(f"no ARB source given: pass hub_source={HUB_REPO!r} and/or csv=<the authors' CSV>")
    images = Path(images_dir).expanduser() if images_dir is not None else None
    if images is not None and not images.is_dir():
        raise FileNotFoundError(f"images_dir {images}: no such folder")
    csv_source = read_csv(csv) if csv is not None else None
    source = read_hub(hub_source) if hub_source is not None else csv_source
    assert source is not None
    origin = source.origin if csv_source is None or source is csv_source else f"hub={hub_source}; csv={csv}"
    report = reading.BuildReport("arb", origin, str(out_dir))
    stats: Counter[str] = Counter()
    csv_ids = CsvIds(csv_source) if source.kind == "hub" and csv_source is not None else None
    seen: set[str] = set()
    written: dict[int, tuple[str, str]] = {}  # CSV row index -> (id, domain) of the row written for it
    with hub.HubFolderWriter(out_dir, SPLIT, WRITE_POLICY) as writer:
        for index, record in enumerate(_progress(source)):
            report.rows_read += 1
            if csv_ids is not None:
                row_id, csv_index = csv_ids.id_of(record, index, stats)
            else:
                row_id = _row_id(record, index, source.kind)
                csv_index = index if source.kind == "csv" else None
            rid = f"{source.kind} row {index} ({row_id})"
            try:
                if ROW_PROBLEM in record:
                    raise ArbRecordError(rid, None, record[ROW_PROBLEM])
                if row_id in seen:
                    raise ArbRecordError(rid, "image_id", f"repeats id {row_id!r} of an earlier row")
                row = {"id": row_id, **gold_row(record, rid, source.kind, stats, image_id=row_id)}
                row["image"] = _image(record, rid, source.kind, images)
                row["image_path"] = _optional_text(record, "image_path", rid) or None
            except reading.BadRecord as error:  # ours, and the shared media check's
                report.skip_or_raise(error, on_bad_records)
                continue
            seen.add(row_id)
            stats["rows_without_image"] += row["image"] is None
            writer.add_rows(row["domain"], FEATURES, [row])  # `all` reads the domains' shards: stored once
            report.rows_written += 1
            if csv_index is not None:
                written[csv_index] = (row_id, row["domain"])
        if not report.rows_written:
            raise SourceError(f"{source.origin}: no ARB rows to write ({report.rows_skipped} skipped)")
        domains = list(writer.num_rows)  # in the order of their first row
        report.counts = {
            "all": sum(writer.num_rows.values()),
            **{d: writer.num_rows[d] for d in DOMAIN_KEYS if d in domains},
        }
        num_bytes = {"all": sum(writer.num_bytes.values()), **writer.num_bytes}
        if csv_ids is not None:
            stats["csv_rows_without_hub_row"] = csv_ids.num_rows - len(csv_ids.taken)
        models = csv_source.models if csv_source is not None else []
        report.stats = {**dict(sorted(stats.items())), "models_in_release": len(models)}
        expected = RELEASE_COUNTS[source.kind]
        if report.rows_read != expected:
            report.warnings.append(f"read {report.rows_read} rows; the authors' {source.kind} release has {expected}")
        if stats["rows_without_image"]:
            report.warnings.append(f"{stats['rows_without_image']} rows have no image (pass images_dir)")
        if csv_ids is not None and report.rows_read != stats["ids_from_csv"]:
            report.warnings.append(
                f"{report.rows_read - stats['ids_from_csv']} hub rows have no single CSV row with their question, "
                "answer and steps: they keep the id arb_<hub row> and have no prediction (counts in the stats)"
            )
        if report.skipped:
            report.warnings.append(f"{report.rows_skipped} bad records skipped (listed in the report)")
        card = render_arb_card(report, FEATURES, num_bytes, domains, hub_source=hub_source, csv=csv)
        writer.finish(card)
    if csv_source is not None:
        write_predictions(Path(out_dir), csv_source, written)
    return report


def _progress(source: Source) -> Iterator[dict[str, Any]]:
    return iter(reading.progress(source, f"arb {source.kind}", total=source.num_rows))


def _row_id(record: Mapping[str, Any], index: int, kind: str) -> str:
    if kind == "csv":
        return str(record.get("image_id") or f"row_{index:04d}").strip()
    return hub_id(index)


def _prediction(record: Mapping[str, Any], model: str, row_id: str, domain: str) -> dict[str, Any]:
    steps, answer = record.get(f"{model}-steps") or "", record.get(f"{model}-answers") or ""
    response = compose_response(steps, answer)
    return {"id": row_id, "domain": domain, "steps": steps, "answer": answer, "response": response}


def write_predictions(out_dir: Path, csv_source: Source, written: Mapping[int, tuple[str, str]]) -> None:
    """``predictions/<model>.jsonl``: the CSV's model outputs, one line per written row (CSV order), by row id.

    The CSV is read again rather than held: only the ids of the rows written are kept.
    """
    if not csv_source.models:
        return
    folder = out_dir / hub.PREDICTIONS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    # A model name comes from a CSV header (`/abs/dir/PWNED-steps`): one safe file name, checked inside --out.
    files = {
        model: inside(out_dir, folder / f"{safe_file_name(model, what='model name')}.jsonl")
        for model in csv_source.models
    }
    streams = {model: file.open("w", encoding="utf-8") for model, file in files.items()}
    try:
        for index, record in enumerate(csv_source):
            if index in written:
                row_id, domain = written[index]
                for model, stream in streams.items():
                    stream.write(json.dumps(_prediction(record, model, row_id, domain), ensure_ascii=False) + "\n")
    finally:
        for stream in streams.values():
            stream.close()


def publish(folder: str | os.PathLike[str], repo_id: str = "arab-mm-tasks/arb", **kwargs: Any) -> Any:
    hub.check_hub_folder(folder)
    return hub.publish(folder, repo_id, **kwargs)
