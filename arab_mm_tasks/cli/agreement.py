"""``arab-mm-tasks agreement``: how well metrics and a judge agree with human ratings, as the papers print it.

Input is one table with one row per item (CSV or JSONL), or two tables joined on the item id
(e.g. metric scores in one file, human ratings in another). It is read in *wide* form: one
column per metric and one column per human annotator (`--humans a1,a2,a3`); a long table with
an annotator column must be pivoted first. An empty cell (CSV) or a null/absent field (JSONL)
in a human column is a missing rating; in a metric column it is an error.

Output, three tables:

- Kendall tau-c x100 of every metric and judge against the human consensus (the mean of the
  human columns over the ratings an item has): JEEM's Table 3 tau_c row (L176, L188).
- ICC(3,1) and ICC(3,k) among the humans, and ICC(3,1) of each judge against the human
  consensus, with 95% CIs: Pearl's reliability paragraph (L154).
- Krippendorff's alpha x100 among the humans, then with each judge added as one more rater:
  ARB's validation (L179).

Metrics (`--metrics`) only get tau-c, which is rank-based and so fair to scores on any scale
(BLEU, CIDEr). Judges (`--judges`) rate on the humans' scale, so they also get ICC and alpha,
which compare values, not just orders.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

PROG = "arab-mm-tasks agreement"


class AgreementInputError(ValueError):
    """Bad input to the command: one line saying which file, row and column."""


@dataclass
class Rows:
    """The rows of one input file: (line number, record) pairs and the columns it has."""

    path: Path
    records: list[tuple[int, dict[str, Any]]]
    columns: list[str]


def read_rows(path: Path) -> Rows:
    """A CSV (header row) or JSONL (one object a line) file, by its suffix."""
    if not path.is_file():
        raise AgreementInputError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            records = [(reader.line_num, dict(row)) for row in reader]
            columns = list(reader.fieldnames or [])
        return Rows(path, records, columns)
    if suffix in (".jsonl", ".ndjson"):
        records, columns = [], {}
        with path.open(encoding="utf-8") as handle:
            for line_number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise AgreementInputError(f"{path} line {line_number}: not valid JSON ({error.msg})") from None
                if not isinstance(record, dict):
                    raise AgreementInputError(f"{path} line {line_number}: expected a JSON object")
                records.append((line_number, record))
                columns.update(dict.fromkeys(record))
        return Rows(path, records, list(columns))
    raise AgreementInputError(f"{path}: unknown file type {suffix!r} (expected .csv or .jsonl)")


def _number(raw: Any, where: str, column: str, *, allow_missing: bool) -> float:
    """A cell as a finite float; empty/null -> NaN when allowed. Errors name the row and column."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        if allow_missing:
            return math.nan
        raise AgreementInputError(f"{where}, column {column!r}: empty (a metric score is needed on every item)")
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise AgreementInputError(f"{where}, column {column!r}: {raw!r} is not a number")
    try:
        value = float(raw)
    except ValueError:
        raise AgreementInputError(f"{where}, column {column!r}: {raw!r} is not a number") from None
    if not math.isfinite(value):
        raise AgreementInputError(f"{where}, column {column!r}: {raw!r} is not a finite number")
    return value


@dataclass
class Table:
    """Items in input order, and each named column as floats (NaN = missing human rating)."""

    ids: list[str]
    columns: dict[str, np.ndarray]


def _index(rows: Rows, id_column: str) -> dict[str, tuple[int, dict[str, Any]]]:
    """id -> (line, record); a missing or repeated id is an error."""
    by_id: dict[str, tuple[int, dict[str, Any]]] = {}
    for line, record in rows.records:
        raw = record.get(id_column)
        if raw is None or str(raw).strip() == "":
            raise AgreementInputError(f"{rows.path} line {line}: no item id in column {id_column!r}")
        key = str(raw)
        if key in by_id:
            raise AgreementInputError(f"{rows.path} line {line}: item id {key!r} repeats line {by_id[key][0]}")
        by_id[key] = (line, record)
    return by_id


def load_table(paths: list[Path], id_column: str, numeric: list[str], humans: set[str]) -> Table:
    """Read one or two files, join them on `id_column`, and parse the `numeric` columns."""
    import numpy as np  # here, not at import: the top-level command imports this module for every subcommand

    files = [read_rows(path) for path in paths]
    for rows in files:
        if id_column not in rows.columns:
            raise AgreementInputError(
                f"{rows.path}: unknown id column {id_column!r} (columns: {', '.join(rows.columns)})"
            )
    owner: dict[str, Rows] = {}
    for column in numeric:
        holders = [rows for rows in files if column in rows.columns]
        if not holders:
            known = sorted({c for rows in files for c in rows.columns})
            raise AgreementInputError(f"unknown column {column!r} (columns: {', '.join(known)})")
        if len(holders) > 1:
            raise AgreementInputError(f"column {column!r} is in both {holders[0].path} and {holders[1].path}")
        owner[column] = holders[0]
    indexes = [_index(rows, id_column) for rows in files]
    if len(files) == 2 and indexes[0].keys() != indexes[1].keys():
        only = [[key for key in a if key not in b] for a, b in (indexes, indexes[::-1])]
        parts = [
            f"{len(keys)} only in {rows.path} (e.g. {', '.join(map(repr, keys[:3]))})"
            for keys, rows in zip(only, files, strict=True)
            if keys
        ]
        raise AgreementInputError(f"mismatched item ids: {'; '.join(parts)}")
    ids = list(indexes[0])
    columns = {}
    for column in numeric:
        index = indexes[files.index(owner[column])]
        values = []
        for key in ids:
            line, record = index[key]
            where = f"{owner[column].path} line {line} (item {key!r})"
            values.append(_number(record.get(column), where, column, allow_missing=column in humans))
        columns[column] = np.array(values, dtype=float)
    return Table(ids, columns)


def _consensus(table: Table, humans: list[str], how: str) -> np.ndarray:
    """Per item, the mean (or median) of the human ratings it has; an item with none is an error."""
    import numpy as np

    ratings = np.column_stack([table.columns[h] for h in humans])
    unrated = np.flatnonzero(np.isnan(ratings).all(axis=1))
    if unrated.size:
        raise AgreementInputError(f"item {table.ids[unrated[0]]!r} has no human rating in {', '.join(humans)}")
    return np.nanmedian(ratings, axis=1) if how == "median" else np.nanmean(ratings, axis=1)


def compute(
    table: Table,
    *,
    humans: list[str],
    metrics: list[str],
    judges: list[str],
    level: str = "interval",
    icc_missing: str = "error",
    aggregate: str = "mean",
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The three tables as plain data (raw coefficients plus the x100 the papers print)."""
    import numpy as np

    from metric_plugins.agreement import icc3, kendall_tau_c, krippendorff_alpha, x100

    target = _consensus(table, humans, aggregate)
    result: dict[str, Any] = {
        "n_items": len(table.ids),
        "humans": humans,
        "human_target": f"{aggregate} of {', '.join(humans)}",
        "kendall_tau_c": [],
        "icc": [],
        "krippendorff_alpha": {"level": level, "rows": []},
    }
    for name in metrics + judges:
        try:
            tau = kendall_tau_c(table.columns[name], target)
        except ValueError as error:
            raise AgreementInputError(f"tau-c of {name!r}: {error}") from None
        result["kendall_tau_c"].append({"metric": name, "x100": x100(tau.value), **asdict(tau)})

    def icc_row(agreement: str, ratings: np.ndarray, which: int) -> dict[str, Any]:
        row = asdict(icc3(ratings, confidence=confidence, missing=icc_missing)[which])
        row["f"] = None if math.isinf(row["f"]) else row["f"]  # perfect consistency; JSON has no Infinity
        return {"agreement": agreement, **row}

    human_ratings = np.column_stack([table.columns[h] for h in humans])
    if len(humans) >= 2:
        holes = np.argwhere(np.isnan(human_ratings))
        if holes.size and icc_missing == "error":
            item, rater = holes[0]
            raise AgreementInputError(
                f"item {table.ids[item]!r} has no rating in {humans[rater]!r}: ICC needs every rater on every "
                f"item ({len(np.unique(holes[:, 0]))} items incomplete); pass --icc-missing drop to leave them out"
            )
        result["icc"].append(icc_row("humans, single rater", human_ratings, 0))
        result["icc"].append(icc_row(f"humans, average of {len(humans)} raters", human_ratings, 1))
        alpha = krippendorff_alpha(human_ratings, level=level)
        pairable = int((np.sum(~np.isnan(human_ratings), axis=1) >= 2).sum())
        result["krippendorff_alpha"]["rows"].append(
            {"raters": "humans", "value": alpha, "x100": x100(alpha), "n_items": pairable}
        )
    for judge in judges:
        pair = np.column_stack([table.columns[judge], target])
        result["icc"].append(icc_row(f"{judge} vs human consensus", pair, 0))
        with_judge = np.column_stack([human_ratings, table.columns[judge]])
        alpha = krippendorff_alpha(with_judge, level=level)
        result["krippendorff_alpha"]["rows"].append(
            {"raters": f"humans + {judge}", "value": alpha, "x100": x100(alpha), "n_items": len(table.ids)}
        )
    return result


def _render(title: str, header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = [f"**{title}**", "", "| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [title] + [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in [header, *rows]
    ]
    return "\n".join(lines)


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def format_tables(result: dict[str, Any], markdown: bool = False) -> str:
    """The tables as the papers print them: tau-c and alpha x100, ICC to 3 decimals with a 2-decimal CI."""
    blocks = []
    if result["kendall_tau_c"]:
        rows = [[r["metric"], f"{r['x100']:.2f}", _p(r["pvalue"]), str(r["n"])] for r in result["kendall_tau_c"]]
        title = f"Kendall tau-c x100 vs human consensus ({result['human_target']})"
        blocks.append(_render(title, ["metric", "tau_c", "p", "n"], rows, markdown))
    if result["icc"]:
        rows = []
        for r in result["icc"]:
            dropped = f" ({r['n_dropped']} dropped)" if r["n_dropped"] else ""
            rows.append(
                [
                    r["agreement"],
                    f"{r['kind']} = {r['value']:.3f}",
                    f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]",
                    "inf" if r["f"] is None else f"{r['f']:.2f}",
                    f"{r['df1']}, {r['df2']}",
                    _p(r["pvalue"]),
                    f"{r['n_items']}{dropped}",
                ]
            )
        confidence = f"{100 * result['icc'][0]['confidence']:g}% CI"
        title = "ICC, two-way mixed, consistency (Shrout & Fleiss 1979 case 3)"
        blocks.append(_render(title, ["agreement", "ICC", confidence, "F", "df", "p", "n"], rows, markdown))
    alpha = result["krippendorff_alpha"]
    if alpha["rows"]:
        rows = [[r["raters"], f"{r['x100']:.2f}", str(r["n_items"])] for r in alpha["rows"]]
        title = f"Krippendorff's alpha x100 ({alpha['level']})"
        blocks.append(_render(title, ["raters", "alpha", "n"], rows, markdown))
    return "\n\n".join(blocks)


def _names(text: str | None) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()] if text else []


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``agreement`` on the top-level command's subparsers."""
    s = sub.add_parser(
        "agreement",
        help="Kendall tau-c, ICC(3,1)/ICC(3,k) and Krippendorff's alpha of metrics and judges against human ratings",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("paths", nargs="+", metavar="FILE", help="one or two .csv/.jsonl files, joined on --id")
    s.add_argument("--id", required=True, dest="id_column", help="the item id column")
    s.add_argument("--humans", required=True, help="comma-separated human rating columns (one per annotator)")
    s.add_argument("--metrics", help="comma-separated metric columns (any scale: tau-c only)")
    s.add_argument("--judges", help="comma-separated judge columns on the humans' scale (tau-c, ICC and alpha)")
    s.add_argument(
        "--level",
        default="interval",
        choices=["nominal", "ordinal", "interval", "ratio"],
        help="Krippendorff's level of measurement (default: interval, the krippendorff package's; ARB names none)",
    )
    s.add_argument("--icc-missing", default="error", choices=["error", "drop"], help="items with a missing rating")
    s.add_argument("--human-aggregate", default="mean", choices=["mean", "median"], help="the human consensus")
    s.add_argument("--confidence", type=float, default=0.95, help="ICC confidence level (default 0.95)")
    s.add_argument("--format", default="plain", choices=["plain", "markdown"])
    s.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 with the tables, 2 with one line on stderr for bad input."""
    humans, metrics, judges = _names(args.humans), _names(args.metrics), _names(args.judges)
    try:
        if len(args.paths) > 2:
            raise AgreementInputError(f"at most two files (scores and ratings), got {len(args.paths)}")
        if not humans:
            raise AgreementInputError("--humans names no column")
        named = humans + metrics + judges
        repeated = sorted({name for name in named if named.count(name) > 1})
        if repeated:
            raise AgreementInputError(f"column {repeated[0]!r} is named twice in --humans/--metrics/--judges")
        table = load_table([Path(p) for p in args.paths], args.id_column, named, set(humans))
        result = compute(
            table,
            humans=humans,
            metrics=metrics,
            judges=judges,
            level=args.level,
            icc_missing=args.icc_missing,
            aggregate=args.human_aggregate,
            confidence=args.confidence,
        )
    except ValueError as error:  # AgreementInputError, or a statistic that is undefined on this data
        print(f"{PROG}: error: " + " ".join(str(error).splitlines()), file=sys.stderr)
        return 2
    print(
        json.dumps(result, indent=2, ensure_ascii=False)
        if args.json
        else format_tables(result, args.format == "markdown")
    )
    return 0
