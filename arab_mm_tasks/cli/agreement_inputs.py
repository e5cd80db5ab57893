"""The inputs of ``arab-mm-tasks agreement``: rating and score tables, and saved runs, joined into one table.

Tables are CSV (header row) or JSONL (one object a line), in wide form: one row per item. Saved
harness runs (`arab_mm_tasks.cli.sample_scores`) become one more table, one row per (model,
record id). Inputs are joined on the id column(s); tables must hold the same items, while saved
runs join the ratings on the items both have (the rest is counted in `Table.left_out`).
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


class AgreementInputError(ValueError):
    """Bad input to the command: one line saying which file, row and column."""


@dataclass
class Rows:
    """The rows of one input: (line number, record) pairs and the columns it has.

    Rows of saved runs (`from_runs`) say where each came from in `origins`, and which cells were
    never scored in `pending` ((line, column) -> task).
    """

    path: Path | str
    records: list[tuple[int, dict[str, Any]]]
    columns: list[str]
    from_runs: bool = False
    origins: dict[int, str] = field(default_factory=dict)
    pending: dict[tuple[int, str], str] = field(default_factory=dict)

    def where(self, line: int) -> str:
        return self.origins.get(line) or f"{self.path} line {line}"


# A cell may be long (a caption, a model's whole answer): the csv module's default limit is 131,072
# characters a field. This one bounds what one field may take, far above any rating table's.
MAX_FIELD_CHARS = 64 * 2**20
SHOWN = 80  # characters of a cell or id quoted in a message


def read_rows(path: Path) -> Rows:
    """A CSV (header row) or JSONL (one object a line) file, by its suffix; bad text is one line naming the file."""
    if not path.is_file():
        raise AgreementInputError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        raise AgreementInputError(f"{path}: unknown file type {suffix!r} (expected .csv or .jsonl)")
    try:
        return _read_csv(path) if suffix == ".csv" else _read_jsonl(path)
    except UnicodeDecodeError:
        raise AgreementInputError(_not_utf8(path)) from None


def _not_utf8(path: Path) -> str:
    """Where a file stops being UTF-8 (its line and byte), for the one-line error."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start]
        return f"{path} line {line}: not UTF-8 text (byte {byte:#04x} at offset {error.start}); save it as UTF-8"
    return f"{path}: not UTF-8 text; save it as UTF-8"


def _read_csv(path: Path) -> Rows:
    previous = csv.field_size_limit()
    csv.field_size_limit(MAX_FIELD_CHARS)  # process-wide: restored below
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            try:
                records = [(reader.line_num, dict(row)) for row in reader]
            except csv.Error as error:
                raise AgreementInputError(f"{path} line {reader.line_num}: not readable CSV ({error})") from None
            columns = list(reader.fieldnames or [])
    finally:
        csv.field_size_limit(previous)
    return Rows(path, records, columns)


def _read_jsonl(path: Path) -> Rows:
    records, columns = [], {}
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise AgreementInputError(f"{path} line {line_number}: not valid JSON ({error.msg})") from None
            except RecursionError:  # `[[[[...` thousands deep: no rating table nests like that
                raise AgreementInputError(f"{path} line {line_number}: JSON nested too deeply to read") from None
            if not isinstance(record, dict):
                raise AgreementInputError(f"{path} line {line_number}: expected a JSON object")
            records.append((line_number, record))
            columns.update(dict.fromkeys(record))
    return Rows(path, records, list(columns))


def _listed(names: list[str]) -> str:
    """Column names for a message, each and the list cut short (a header may hold anything)."""
    text = ", ".join(name[:SHOWN] for name in names)
    return text if len(text) <= 4 * SHOWN else text[: 4 * SHOWN] + ", ..."


def _number(raw: Any, where: str, column: str, *, allow_missing: bool) -> float:
    """A cell as a finite float; empty/null -> NaN when allowed. Errors name the row and column."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        if allow_missing:
            return math.nan
        raise AgreementInputError(
            f"{where}, column {column!r:.{SHOWN}}: empty (a metric score is needed on every item)"
        )
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise AgreementInputError(f"{where}, column {column!r:.{SHOWN}}: {raw!r:.{SHOWN}} is not a number")
    try:
        value = float(raw)
    except ValueError:
        raise AgreementInputError(f"{where}, column {column!r:.{SHOWN}}: {raw!r:.{SHOWN}} is not a number") from None
    if not math.isfinite(value):
        raise AgreementInputError(f"{where}, column {column!r:.{SHOWN}}: {raw!r:.{SHOWN}} is not a finite number")
    return value


def rows_from_runs(runs: list[str], tasks: list[str] | None) -> Rows:
    """The per-sample scores of saved harness runs as one input (`arab_mm_tasks.cli.sample_scores`)."""
    from arab_mm_tasks.cli.sample_scores import read_runs

    scores = read_runs(runs, tasks)
    lines = {key: line for line, key in enumerate(scores.rows, start=1)}
    return Rows(
        f"the saved samples of {', '.join(runs)}",
        [(lines[key], row) for key, row in scores.rows.items()],
        scores.columns,
        from_runs=True,
        origins={lines[key]: where for key, where in scores.origins.items()},
        pending={(lines[key], metric): task for (key, metric), task in scores.pending.items()},
    )


ItemId = str | tuple[str, ...]  # one id column's value, or the values of several (``--id model,id``)


@dataclass
class Table:
    """Items in input order, and each named column as floats (NaN = missing human rating).

    `left_out` counts, per input, the items it has that another input lacks (saved runs are
    joined with ratings on the items both have).
    """

    ids: list[ItemId]
    columns: dict[str, np.ndarray]
    left_out: dict[str, int] = field(default_factory=dict)


def _index(rows: Rows, id_columns: list[str]) -> dict[ItemId, tuple[int, dict[str, Any]]]:
    """id -> (line, record); a missing or repeated id is an error."""
    by_id: dict[ItemId, tuple[int, dict[str, Any]]] = {}
    for line, record in rows.records:
        parts = []
        for column in id_columns:
            raw = record.get(column)
            if raw is None or str(raw).strip() == "":
                raise AgreementInputError(f"{rows.where(line)}: no item id in column {column!r:.{SHOWN}}")
            parts.append(str(raw))
        key: ItemId = parts[0] if len(parts) == 1 else tuple(parts)
        if key in by_id:
            hint = " (several runs: join on --id model,id)" if rows.from_runs else ""
            raise AgreementInputError(
                f"{rows.where(line)}: item id {key!r:.{SHOWN}} repeats line {by_id[key][0]}{hint}"
            )
        by_id[key] = (line, record)
    return by_id


def _join(files: list[Rows], indexes: list[dict[ItemId, Any]]) -> tuple[list[ItemId], dict[str, int]]:
    """The items of the join: every input must have the same ids, except that saved runs join on the common ones."""
    if len(files) == 1:
        return list(indexes[0]), {}
    only = [[key for key in a if key not in b] for a, b in (indexes, indexes[::-1])]
    if any(rows.from_runs for rows in files):
        ids = [key for key in indexes[0] if key in indexes[1]]
        if not ids:
            examples = [
                f"{rows.path} has e.g. {next(iter(index))!r:.{SHOWN}}"
                for rows, index in zip(files, indexes, strict=True)
            ]
            raise AgreementInputError(f"no item is in both inputs ({'; '.join(examples)})")
        return ids, {str(rows.path): len(keys) for rows, keys in zip(files, only, strict=True) if keys}
    if indexes[0].keys() != indexes[1].keys():
        parts = [
            f"{len(keys)} only in {rows.path} (e.g. {', '.join(repr(key)[:SHOWN] for key in keys[:3])})"
            for keys, rows in zip(only, files, strict=True)
            if keys
        ]
        raise AgreementInputError(f"mismatched item ids: {'; '.join(parts)}")
    return list(indexes[0]), {}


def load_table(
    paths: list[Path],
    id_columns: str | list[str],
    numeric: list[str],
    humans: set[str],
    runs: list[str] | None = None,
    tasks: list[str] | None = None,
) -> Table:
    """Read one or two tables (or a table and saved runs), join them on `id_columns`, parse the `numeric` columns."""
    import numpy as np  # here, not at import: the top-level command imports this module for every subcommand

    id_columns = [id_columns] if isinstance(id_columns, str) else id_columns
    files = [read_rows(path) for path in paths] + ([rows_from_runs(runs, tasks)] if runs else [])
    for rows in files:
        missing = [column for column in id_columns if column not in rows.columns]
        if missing:
            raise AgreementInputError(
                f"{rows.path}: unknown id column {missing[0]!r:.{SHOWN}} (columns: {_listed(rows.columns)})"
            )
    owner: dict[str, Rows] = {}
    for column in numeric:
        holders = [rows for rows in files if column in rows.columns]
        if not holders:
            known = sorted({c for rows in files for c in rows.columns})
            raise AgreementInputError(f"unknown column {column!r:.{SHOWN}} (columns: {_listed(known)})")
        if len(holders) > 1:
            raise AgreementInputError(f"column {column!r} is in both {holders[0].path} and {holders[1].path}")
        owner[column] = holders[0]
    indexes = [_index(rows, id_columns) for rows in files]
    ids, left_out = _join(files, indexes)
    columns = {}
    for column in numeric:
        rows = owner[column]
        index = indexes[files.index(rows)]
        values = []
        for key in ids:
            line, record = index[key]
            if (line, column) in rows.pending:
                raise AgreementInputError(
                    f"{rows.where(line)}: {column} was never scored (a --predict_only run, or no judge "
                    f"configured): run `arab-mm-tasks judge` on the run first"
                )
            where = f"{rows.where(line)}" if rows.from_runs else f"{rows.path} line {line} (item {key!r:.{SHOWN}})"
            values.append(_number(record.get(column), where, column, allow_missing=column in humans))
        columns[column] = np.array(values, dtype=float)
    return Table(ids, columns, left_out)
