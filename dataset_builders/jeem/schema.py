"""JEEM's normalised record, the local JSON layout, and the mapping from a release's columns to it.

The authors' release (``toloka/JEEM``, gated) does not publish its column layout, so the builder
reads any release through one normalised record per (image, annotating team), the fields the
paper's evaluation needs (specs/jeem.md section 2):

| field | type | required | meaning |
|---|---|---|---|
| `image_id` | string | yes | the image; a shared-pool image has the same id under every team |
| `country` | string | yes | the annotating team: `jordan`, `emirates`, `egypt`, `morocco` (or `UAE`, `EG`, ...) |
| `image` | image | yes | a path relative to the file, `{"bytes", "path"}`, or raw bytes |
| `caption_dialect` | string | yes | the team's dialect caption (the dialect subset's reference, L74) |
| `caption_msa` | string | yes | the team's MSA caption (the MSA subset's reference, L74) |
| `questions` | list of strings | yes | the dialect questions (five in the paper, L76) |
| `answers` | list of strings | yes | their answers, in order; `<Cannot tell from the picture>` allowed (L567) |
| `image_origin_country` | string | no | the country whose set the image comes from (default: `country`) |
| `is_shared_pool` | bool | no | one of the 100 images every team annotated (L80-82); default: see `shared_pool_rule` |
| `image_source` | string | no | `wikimedia`, `flickr` or `personal` (L59) |
| `topic` | string | no | one of the 13 categories (L96) |
| `question_types` | list of strings | no | per question: descriptive, yes/no, categorical, quantitative (Table 2) |

**Local JSON layout**: a ``.jsonl`` file, one such object a line, with exactly these field names
(image paths relative to the file). **Hub release**: its columns are mapped to the fields by the
names in `CANDIDATES` (questions and answers may also be numbered columns, ``question_1`` ...,
or one list of ``{"question", "answer"}`` objects); ``--columns field=column`` names any other
column, and a field no column maps to fails the build with one message naming every such field and
the source columns left unused. A release with one row per question (a ``question`` and an
``answer`` string column) fails with one message saying so, before any record is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arab_mm_tasks.jeem.vocabulary import country_of
from dataset_builders.core.reading import BadRecord, SourceError

REQUIRED = ("image_id", "country", "image", "caption_dialect", "caption_msa", "questions", "answers")
OPTIONAL = ("image_origin_country", "is_shared_pool", "image_source", "topic", "question_types")
CANDIDATES: dict[str, tuple[str, ...]] = {
    "image_id": ("image_id", "img_id", "image_name", "image_file", "file_name", "filename", "id"),
    "country": ("country", "annotation_country", "team", "dialect", "region", "subset"),
    "image": ("image", "img", "picture", "image_path", "image_bytes"),
    "caption_dialect": (
        "caption_dialect", "dialect_caption", "caption_da", "da_caption", "dialectal_caption", "caption_dialectal",
        "description_dialect", "dialect_description", "caption",
    ),
    "caption_msa": (
        "caption_msa", "msa_caption", "caption_fusha", "fusha_caption", "description_msa", "msa_description", "msa",
    ),
    "questions": ("questions", "question_list", "vqa_questions", "dialect_questions"),
    "answers": ("answers", "answer_list", "vqa_answers", "dialect_answers"),
    "image_origin_country": ("image_origin_country", "origin_country", "image_country", "source_country"),
    "is_shared_pool": ("is_shared_pool", "shared_pool", "is_shared", "shared"),
    "image_source": ("image_source", "source"),
    "topic": ("topic", "category", "theme"),
    "question_types": ("question_types", "question_type"),
}  # fmt: skip
QA_CANDIDATES = ("qa", "qa_pairs", "vqa", "questions_answers")  # one list of {"question", "answer"} objects
# One question and one answer a row: a layout the builder does not read (it needs one record per image and team).
ONE_PER_ROW = {"questions": ("question", "question_text", "dialect_question"), "answers": ("answer", "answer_text")}
NUMBERED = {
    "questions": re.compile(r"^(?:question|q)[_ ]?(\d+)$", re.I),
    "answers": re.compile(r"^(?:answer|a)[_ ]?(\d+)$", re.I),
}
CANNOT_TELL = "cannot tell from the picture"  # the answer option of L567, compared after `_plain`


class JeemRecordError(BadRecord):
    """A JEEM release record the builder cannot use; the message names the record and the field."""


@dataclass
class ColumnMap:
    """Where each normalised field comes from: a column, numbered columns, or a QA-pairs column."""

    columns: dict[str, str] = field(default_factory=dict)
    numbered: dict[str, list[str]] = field(default_factory=dict)  # questions / answers, in number order
    qa_pairs: str | None = None

    def describe(self) -> dict[str, str]:
        out = dict(self.columns)
        out |= {name: " + ".join(cols) for name, cols in self.numbered.items()}
        if self.qa_pairs:
            out |= {"questions": f"{self.qa_pairs}[].question", "answers": f"{self.qa_pairs}[].answer"}
        return out


def parse_overrides(text: str | None) -> dict[str, str]:
    """``"caption_msa=msa_text,image_id=img"`` -> a dict; unknown field names are an error."""
    overrides: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        name, sep, column = part.partition("=")
        if not sep or not column.strip():
            raise ValueError(f"--columns: {part!r} is not field=column")
        if name.strip() not in (*REQUIRED, *OPTIONAL):
            raise ValueError(f"--columns: unknown JEEM field {name.strip()!r}; fields: {[*REQUIRED, *OPTIONAL]}")
        overrides[name.strip()] = column.strip()
    return overrides


def map_columns(
    columns: Sequence[str],
    overrides: Mapping[str, str] | None = None,
    origin: str = "source",
    features: Mapping[str, Any] | None = None,
) -> ColumnMap:
    """The `ColumnMap` for a release's columns, or a `SourceError` naming every required field left unmapped.

    `features` (the source's column types, when known) tell a list column from a string one.
    """
    overrides = dict(overrides or {})
    present = list(columns)
    lower = {column.lower(): column for column in present}
    mapping = ColumnMap()
    problems = []
    for name, column in overrides.items():
        if column not in present:
            problems.append(f"--columns {name}={column}: the source has no column {column!r}")
        else:
            mapping.columns[name] = column
    for name in (*REQUIRED, *OPTIONAL):
        if name in mapping.columns or name in overrides:
            continue
        found = next(
            (lower[c] for c in CANDIDATES[name] if c in lower and lower[c] not in mapping.columns.values()), None
        )
        if found is not None:
            mapping.columns[name] = found
    for name in ("questions", "answers"):
        if name in mapping.columns:
            continue
        numbered = sorted(((int(m[1]), c) for c in present if (m := NUMBERED[name].match(c))), key=lambda x: x[0])
        if numbered:
            mapping.numbered[name] = [c for _, c in numbered]
    if not {"questions", "answers"} <= {*mapping.columns, *mapping.numbered}:
        mapping.qa_pairs = next((lower[c] for c in QA_CANDIDATES if c in lower), None)
        if mapping.qa_pairs:
            for name in ("questions", "answers"):
                mapping.columns.pop(name, None)
                mapping.numbered.pop(name, None)
    _refuse_one_question_per_row(mapping, lower, origin, features, present)
    for name in REQUIRED:
        if (
            name in mapping.columns
            or name in mapping.numbered
            or (mapping.qa_pairs and name in ("questions", "answers"))
        ):
            continue
        tried = ", ".join(CANDIDATES[name])
        extra = (
            " or numbered columns (question_1, ...) or a QA-pairs column" if name in ("questions", "answers") else ""
        )
        problems.append(f"field {name!r}: no column named {tried}{extra}")
    if problems:
        raise SourceError(
            f"JEEM source {origin}: cannot map its columns to JEEM's fields (dataset_builders/jeem/schema.py):\n  - "
            + "\n  - ".join(problems)
            + f"\n  the source's columns: {present}\n  columns not used: {_unused(mapping, present)}"
            + "\n  name the right ones with --columns field=column[,field=column]"
        )
    return mapping


def _unused(mapping: ColumnMap, present: Sequence[str]) -> list[str]:
    used = {*mapping.columns.values(), *(c for cols in mapping.numbered.values() for c in cols), mapping.qa_pairs}
    return [column for column in present if column not in used]


def _is_string(feature: Any) -> bool:
    return getattr(feature, "dtype", None) in ("string", "large_string")


def _refuse_one_question_per_row(
    mapping: ColumnMap,
    lower: Mapping[str, str],
    origin: str,
    features: Mapping[str, Any] | None,
    present: Sequence[str],
) -> None:
    """A release with one question and answer a row: one schema-level error, not one per record.

    Either no list of questions maps and the source has ``question`` / ``answer`` columns, or the
    columns mapped to ``questions`` / ``answers`` are strings by the source's own types.
    """
    if mapping.qa_pairs or mapping.numbered.keys() & {"questions", "answers"}:
        return
    mapped = [mapping.columns.get(name) for name in ("questions", "answers")]
    if all(mapped):
        if features is None or not all(column in features and _is_string(features[column]) for column in mapped):
            return
        pair, types = mapped, " (strings, by the source's column types)"
    else:
        found = [next((lower[c] for c in ONE_PER_ROW[name] if c in lower), None) for name in ("questions", "answers")]
        if not all(found):
            return
        pair, types = found, ""
    question, answer = pair
    keys = " and ".join(repr(mapping.columns.get(name, name)) for name in ("image_id", "country"))
    raise SourceError(
        f"JEEM source {origin} has one row per question: columns {question!r} and {answer!r} hold one question "
        f"and one answer a row{types}. The builder reads one record per image and annotating team, with the "
        f"team's questions and answers as lists (dataset_builders/jeem/schema.py): group the rows by {keys} "
        f"first, collecting {question!r} and {answer!r} in order into 'questions' and 'answers' lists. If these "
        f"columns hold lists, name them: --columns questions={question},answers={answer}.\n"
        f"  the source's columns: {present}\n  columns not used: {_unused(mapping, present)}"
    )


# ---------------------------------------------------------------------------- reading one record


def _get(record: Mapping[str, Any], mapping: ColumnMap, name: str) -> Any:
    return record.get(mapping.columns[name]) if name in mapping.columns else None


def text(record: Mapping[str, Any], mapping: ColumnMap, name: str, rid: str) -> str:
    """A required non-empty string, as released (not stripped)."""
    value = _get(record, mapping, name)
    if not isinstance(value, str) or not value.strip():
        raise JeemRecordError(rid, mapping.columns.get(name, name), f"is {value!r:.80}, expected a non-empty string")
    return value


def optional_text(record: Mapping[str, Any], mapping: ColumnMap, name: str, rid: str) -> str | None:
    value = _get(record, mapping, name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise JeemRecordError(rid, mapping.columns[name], f"is {value!r:.80}, expected a string")
    return value


def record_id(record: Mapping[str, Any], mapping: ColumnMap, rid: str) -> str:
    value = _get(record, mapping, "image_id")
    # An id is a string or an integer; a list or an object is not one (its str() would pass for one).
    if value is None or isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip():
        raise JeemRecordError(
            rid, mapping.columns["image_id"], "is missing" if value is None else f"is {value!r:.80}, not an id"
        )
    return str(value).strip()


def country(record: Mapping[str, Any], mapping: ColumnMap, name: str, rid: str, *, default: str | None = None) -> str:
    """A canonical country (`arab_mm_tasks.jeem.vocabulary.country_of`) of a country-valued field."""
    value = _get(record, mapping, name)
    if value is None and default is not None:
        return default
    canonical = country_of(value) if isinstance(value, str) else None
    if canonical is None:
        raise JeemRecordError(
            rid,
            mapping.columns.get(name, name),
            f"is {value!r:.80}, not one of JEEM's countries (Jordan, UAE, Egypt, Morocco)",
        )
    return canonical


def flag(record: Mapping[str, Any], mapping: ColumnMap, rid: str) -> bool | None:
    value = _get(record, mapping, "is_shared_pool")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise JeemRecordError(rid, mapping.columns["is_shared_pool"], f"is {value!r:.80}, expected true or false")


def _strings(value: Any, rid: str, column: str) -> list[str]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v.strip() for v in value):
        raise JeemRecordError(rid, column, f"is {value!r:.120}, expected a list of non-empty strings")
    return list(value)


def questions_answers(record: Mapping[str, Any], mapping: ColumnMap, rid: str) -> tuple[list[str], list[str]]:
    """The record's questions and answers, aligned; unequal counts or none at all are an error."""
    if mapping.qa_pairs:
        pairs = record.get(mapping.qa_pairs)
        if not isinstance(pairs, list | tuple) or not all(isinstance(p, dict) for p in pairs):
            raise JeemRecordError(
                rid, mapping.qa_pairs, f"is {pairs!r:.120}, expected a list of question/answer objects"
            )
        questions = _strings([p.get("question") for p in pairs], rid, f"{mapping.qa_pairs}[].question")
        answers = _strings([p.get("answer") for p in pairs], rid, f"{mapping.qa_pairs}[].answer")
    else:
        lists = []
        for name in ("questions", "answers"):
            if name in mapping.numbered:
                values = [record.get(c) for c in mapping.numbered[name]]
                lists.append(_strings([v for v in values if v is not None], rid, " + ".join(mapping.numbered[name])))
            else:
                lists.append(_strings(_get(record, mapping, name), rid, mapping.columns[name]))
        questions, answers = lists
    if not questions:
        raise JeemRecordError(rid, "questions", "is empty; every image has dialect questions (L76)")
    if len(questions) != len(answers):
        raise JeemRecordError(rid, "answers", f"has {len(answers)} answers for {len(questions)} questions")
    return questions, answers


def question_types(record: Mapping[str, Any], mapping: ColumnMap, rid: str, count: int) -> list[str | None]:
    value = _get(record, mapping, "question_types")
    if value is None:
        return [None] * count
    types = _strings(value, rid, mapping.columns["question_types"])
    if len(types) != count:
        raise JeemRecordError(rid, mapping.columns["question_types"], f"has {len(types)} types for {count} questions")
    return list(types)


def _plain(answer: str) -> str:
    return " ".join(re.sub(r"[<>\"'.!()\[\]]", " ", answer).lower().split())


def is_cannot_tell(answer: str) -> bool:
    """Whether an answer is the annotation tool's "<Cannot tell from the picture>" option (L567)."""
    return _plain(answer) == CANNOT_TELL
