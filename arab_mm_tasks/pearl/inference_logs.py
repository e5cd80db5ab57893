"""The authors' Pearl inference logs, matched to their dataset records so published generations are judged again.

`eval/generate_pearl.py` (UBC-NLP/pearl@ae6e95d) writes one JSON object per line: ``id`` (the
running index of the row in the dataset it read), ``model_output``, ``model_path``,
``model_name`` and every dataset field but the image: for Pearl and Pearl-Lite the card's
``image_id``, ``annotation_id``, ``qa_index``, ``question``, ``question_type``, ``choices``,
``answer``, ``augmented_caption``, ``country``, ... `eval/generate_pearl_x.py` writes the same for
Pearl-X less every field whose name starts with ``image`` (so Pearl-X rows carry no image id).
Their ``score.py`` adds ``score``, ``cas``, ``correctness``, ... (specs/pearl.md section 7).

`read_log` matches each row to its own record of the dataset (``arab-mm-tasks judge LOG.jsonl
--dataset-path pearl=DIR``), never by its position:

- a Pearl or Pearl-Lite row by its ``image_id``, ``annotation_id`` and ``qa_index``, its question
  cross-checked (ids that name a record with another question are an error). Pearl-Lite is
  sampled from Pearl, so its items are in both releases: a log is of the release that holds every
  row, and when both do, of the one whose running ids are the log's ``id`` s;
- a Pearl-X row by its question and choices; records identical in both are told apart by the
  running id.

A row that matches no record, or several that its ``id`` does not tell apart, is an error naming
its line. Each row is scored by the task of its record: ``pearl_lite_*`` for a Pearl-Lite log,
``pearl_x_single`` / ``pearl_x_multi`` (by the record's image count, with Pearl-X's prompt layout)
for a Pearl-X log. The document judged is the dataset record (its images are read by its id) plus
``log_line`` and ``log_id``, which name the log row in judgements and in the judged copy.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arab_mm_tasks.core.benchmark import LogRecords as Records
from arab_mm_tasks.core.benchmark import LogRuns as Runs
from arab_mm_tasks.core.spec import RecordError
from arab_mm_tasks.pearl import prompts
from arab_mm_tasks.pearl.releases import CONFIGS_OF

LOG_FIELDS = ("id", "model_output", "question", "question_type")  # what marks a line as one of theirs
ID_FIELDS = ("image_id", "annotation_id", "qa_index")  # Pearl and Pearl-Lite rows: the card's ids
TEXT_FIELDS = ("question", "choices")  # Pearl-X rows: no ids but the running index


def is_log(path: Path) -> bool:
    """Whether `path` is a .jsonl whose first record has the authors' log fields."""
    if path.suffix != ".jsonl" or not path.is_file():
        return False
    with path.open(encoding="utf-8") as lines:
        first = next((line for line in lines if line.strip()), "")
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and all(name in record for name in LOG_FIELDS)


def read_log(path: Path, records: Records) -> Runs | None:
    """``{task: [(document, generation), ...]}`` for an authors' inference log, or None when `path` is not one.

    `records(task)` gives the dataset's rows of a task. A line that is not a log row (no
    ``model_output``, an unknown question type), a row that matches no record or several, and a
    log mixing Pearl-X rows with Pearl rows are errors naming the line: a log is judged whole or not at all.
    """
    if not is_log(path):
        return None
    rows = _read_rows(path)
    pearl_x = [not any(name in row for name in ID_FIELDS) for _, row in rows]
    if len(set(pearl_x)) > 1:
        line = rows[pearl_x.index(not pearl_x[0])][0]
        raise RecordError(f"{path}:{line}: mixes Pearl-X rows (no {', '.join(ID_FIELDS)}) with Pearl rows")
    releases = ("pearl_x",) if pearl_x[0] else ("pearl", "pearl_lite")
    names = TEXT_FIELDS if pearl_x[0] else ID_FIELDS
    found = {release: _Index(release, records) for release in releases}
    found = {release: index for release, index in found.items() if index.records}
    if not found:
        held = " or ".join(c for release in releases for c in CONFIGS_OF[release])
        raise RecordError(f"{path}: the dataset holds none of {held}, which its rows are items of")
    matches = {release: [index.match(path, line, row, names) for line, row in rows] for release, index in found.items()}
    release = _release_of(path, rows, matches, names)
    runs: Runs = {}
    for (line, row), candidates in zip(rows, matches[release], strict=True):
        task, record = _one(path, line, row, candidates)
        document = {**record, "log_line": line, "log_id": row["id"]}
        prediction = row["model_output"] if isinstance(row["model_output"], str) else ""
        runs.setdefault(task, []).append((document, prediction))
    return runs


def _read_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = [name for name in LOG_FIELDS if name not in row]
        if missing:
            raise RecordError(f"{path}:{number}: not a Pearl inference-log row (no {missing})")
        try:
            prompts.route(str(row["question_type"]))
        except ValueError as error:
            raise RecordError(f"{path}:{number}: field 'question_type' {error}") from None
        rows.append((number, row))
    return rows


def _text(value: Any) -> str:
    return " ".join(str(value).split())


def _key(row: Mapping[str, Any], names: Sequence[str]) -> tuple[Any, ...]:
    """The values a row and a record are matched on: ids as text, question and choices with spaces collapsed."""
    return tuple(
        tuple(_text(c) for c in row.get(name) or ()) if name == "choices" else _text(row[name]) for name in names
    )


class _Index:
    """One release's records (those of its configs the dataset holds), looked up by the fields a row has."""

    def __init__(self, release: str, records: Records) -> None:
        self.release = release
        self.records: list[tuple[str, Mapping[str, Any]]] = []
        for task in CONFIGS_OF[release]:
            self.records += [(task, record) for record in records(task) or ()]
        self._tables: dict[tuple[str, ...], dict[tuple[Any, ...], list[tuple[str, Mapping[str, Any]]]]] = {}

    def match(
        self, path: Path, line: int, row: Mapping[str, Any], names: Sequence[str]
    ) -> list[tuple[str, Mapping[str, Any]]]:
        """The (task, record)s a row is: the same ids (or question and choices) and question."""
        present = tuple(name for name in names if name in row)
        if not present:
            raise RecordError(f"{path}:{line}: the row has none of {list(names)} to find its record by")
        if present not in self._tables:
            table: dict[tuple[Any, ...], list[tuple[str, Mapping[str, Any]]]] = defaultdict(list)
            for task, record in self.records:
                table[_key(record, present)].append((task, record))
            self._tables[present] = table
        candidates = self._tables[present].get(_key(row, present), [])
        same = [(task, record) for task, record in candidates if _text(record["question"]) == _text(row["question"])]
        if candidates and not same:
            task, record = candidates[0]
            ids = ", ".join(f"{name} {row[name]!r}" for name in present)
            raise RecordError(
                f"{path}:{line}: log id {row['id']!r} ({ids}) is {task} record {record['id']!r} of the dataset, "
                f"whose question differs ({_text(record['question'])[:60]!r} vs {_text(row['question'])[:60]!r}): "
                "the log and the dataset are not the same release"
            )
        return same


def _same_id(row: Mapping[str, Any], candidates: Sequence[tuple[str, Mapping[str, Any]]]) -> list:
    return [(task, record) for task, record in candidates if str(record["id"]) == str(row["id"])]


def _release_of(
    path: Path, rows: Sequence[tuple[int, dict[str, Any]]], matches: Mapping[str, list], names: Sequence[str]
) -> str:
    """The release holding every row; of two (Pearl-Lite items are Pearl's), the one whose running ids are the log's."""
    complete = [release for release, found in matches.items() if all(found)]
    if not complete:
        release = max(matches, key=lambda r: sum(map(bool, matches[r])))
        line, row = next(row for row, found in zip(rows, matches[release], strict=True) if not found)
        ids = ", ".join(f"{name} {row[name]!r}" for name in names if name in row)
        raise RecordError(f"{path}:{line}: log id {row['id']!r} ({ids[:300]}) matches no record of the dataset")
    if len(complete) == 1:
        return complete[0]
    by_id = [r for r in complete if all(_same_id(row, found) for (_, row), found in zip(rows, matches[r], strict=True))]
    if len(by_id) == 1:
        return by_id[0]
    raise RecordError(
        f"{path}: every row is an item of both {' and '.join(complete)} and the log's ids do not tell which release "
        "it is a log of: give --dataset-path a folder built from that release only "
        "(arab-mm-tasks build pearl_lite / build pearl)"
    )


def _one(
    path: Path, line: int, row: Mapping[str, Any], candidates: Sequence[tuple[str, Mapping[str, Any]]]
) -> tuple[str, dict[str, Any]]:
    """The row's (task, record): its only match, or among identical ones the one at its running id."""
    if len(candidates) > 1:
        candidates = _same_id(row, candidates)
    if len(candidates) != 1:
        raise RecordError(
            f"{path}:{line}: log id {row['id']!r} matches several records of the dataset and none is at its "
            "running id: which item it is cannot be told"
        )
    task, record = candidates[0]
    count = record.get("n_images")
    if task in CONFIGS_OF["pearl_x"] and count:  # one image or several, as the record has them
        task = CONFIGS_OF["pearl_x"][0] if int(count) == 1 else CONFIGS_OF["pearl_x"][1]
    return task, dict(record)
