"""The authors' Pearl inference logs, read back so published generations can be judged without regenerating.

`eval/generate_pearl.py` (UBC-NLP/pearl@ae6e95d) writes one JSON object per line: ``id`` (the
running index of the release row), ``model_output``, ``model_path``, ``model_name`` and every
dataset field except the image (``question``, ``question_type``, ``choices``, ``answer``,
``answer_letter``, ``augmented_caption``, ``country``, ...); its ``score.py`` adds ``score``,
``cas``, ``correctness``, ``coherence``, ``detail``, ``fluency`` (specs/pearl.md section 7).

`read_log` splits such a file into the two Pearl tasks that score its rows (closed-form and
open-ended), each row as (document, generation). ``arab-mm-tasks judge LOG.jsonl --dataset-path
pearl=DIR`` then judges them like saved harness samples; ``DIR`` supplies the images the open-ended
judge must see, matched by ``id``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arab_mm_tasks.pearl import prompts

LOG_FIELDS = ("id", "model_output", "question", "question_type")  # what marks a line as one of theirs
# Pearl-Lite rows are scored like Pearl's: the open and closed tasks of Pearl stand for both.
TASK_OF_ROUTE = {prompts.MULTIPLE_CHOICE: "pearl_closed", prompts.TRUE_FALSE: "pearl_closed"}
OPEN_TASK = "pearl_open"


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


def read_log(path: Path) -> dict[str, list[tuple[dict[str, Any], str]]] | None:
    """``{task: [(document, generation), ...]}`` for an authors' inference log, or None when `path` is not one.

    A line that is not a log row (no ``model_output``, unknown question type) is an error naming
    its line: a log is judged whole or not at all.
    """
    if not is_log(path):
        return None
    runs: dict[str, list[tuple[dict[str, Any], str]]] = {}
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = [name for name in LOG_FIELDS if name not in row]
        if missing:
            raise ValueError(f"{path}:{number}: not a Pearl inference-log row (no {missing})")
        try:
            route = prompts.route(str(row["question_type"]))
        except ValueError as error:
            raise ValueError(f"{path}:{number}: field 'question_type' {error}") from None
        document = {key: value for key, value in row.items() if key != "model_output"}
        document["id"] = str(row["id"])
        prediction = row["model_output"] if isinstance(row["model_output"], str) else ""
        runs.setdefault(TASK_OF_ROUTE.get(route, OPEN_TASK), []).append((document, prediction))
    return runs
