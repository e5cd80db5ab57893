"""``arab-mm-tasks agreement``: how well metrics and a judge agree with human ratings, as the papers print it.

Input is one table with one row per item (CSV or JSONL), or two tables joined on the item id
(e.g. metric scores in one file, human ratings in another). It is read in *wide* form: one
column per metric and one column per human annotator (`--humans a1,a2,a3`); a long table with
an annotator column must be pivoted first. An empty cell (CSV) or a null/absent field (JSONL)
in a human column is a missing rating; in a metric column it is an error.

Saved harness runs can stand in for the score table: ``[MODEL=]PATH`` to lm-eval samples files,
lighteval details files or folders of them (`arab_mm_tasks.cli.sample_scores`) give one row per
(model, record id) with columns ``model``, ``id`` and every per-sample metric; ``--tasks`` keeps
some tasks. They are joined with the ratings on ``--id`` (``model,id`` for several runs); items
only one side has are left out and counted on stderr.

Output, three tables:

- Kendall tau-c x100 of every metric and judge against the human consensus (the mean of the
  human columns over the ratings an item has): JEEM's Table 3 tau_c row (L176, L188). A metric
  named ``METRIC@TARGET`` is correlated with a ``--target NAME=EXPR`` instead, built from
  rating columns with ``mean``, ``median`` and ``hmean`` (`arab_mm_tasks.cli.agreement_targets`):
  JEEM's DCScore against the harmonic mean of human Consistency and Relevance (L198), ALDi and
  the judge's DAuth against human dialect authenticity (L200). ``--row`` prints it as the paper's
  single row.
- ICC(3,1) and ICC(3,k) among the humans, and ICC(3,1) of each judge against the human
  consensus, with 95% CIs: Pearl's reliability paragraph (L154).
- Krippendorff's alpha x100 among the humans, then with each judge added as one more rater:
  ARB's validation (L179).

Metrics (`--metrics`) only get tau-c, which is rank-based and so fair to scores on any scale
(BLEU, CIDEr). Judges (`--judges`) rate on the humans' scale, so they also get ICC and alpha,
which compare values, not just orders.

    arab-mm-tasks agreement ratings.csv aya=runs/aya gpt-4o=runs/gpt4o --id model,id \\
        --tasks jeem_caption,jeem_caption_eval350 --row \\
        --target "conrel=hmean(mean(con_1,con_2,con_3),mean(rel_1,rel_2,rel_3))" \\
        --target "dauth=mean(dauth_1,dauth_2,dauth_3)" --metrics dcscore_f1@conrel,aldi@dauth,judge_dauth@dauth
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arab_mm_tasks.cli.agreement_inputs import AgreementInputError, Table, load_table
from arab_mm_tasks.cli.agreement_targets import Target, TargetError

if TYPE_CHECKING:
    import numpy as np

PROG = "arab-mm-tasks agreement"


HUMANS = "humans"  # the target of a metric named without @TARGET: the consensus of --humans


def _target_values(table: Table, target: Target, what: str) -> np.ndarray:
    """A target per item; an item with no value (no rating in its columns) is an error."""
    import numpy as np

    values = target.values(table.columns, table.ids)
    unrated = np.flatnonzero(np.isnan(values))
    if unrated.size:
        raise AgreementInputError(f"item {table.ids[unrated[0]]!r} has {what}")
    return values


def compute(
    table: Table,
    *,
    humans: list[str],
    metrics: list[str],
    judges: list[str],
    targets: list[Target] | None = None,
    level: str = "interval",
    icc_missing: str = "error",
    aggregate: str = "mean",
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The three tables as plain data (raw coefficients plus the x100 the papers print).

    A metric given as ``METRIC@TARGET`` is correlated with that one of `targets`; the others, and
    the judges, with the consensus of `humans`.
    """
    import numpy as np

    from metric_plugins.agreement import icc3, kendall_tau_c, krippendorff_alpha, x100

    result: dict[str, Any] = {
        "n_items": len(table.ids),
        "humans": humans,
        "kendall_tau_c": [],
        "icc": [],
        "krippendorff_alpha": {"level": level, "rows": []},
    }
    values: dict[str, np.ndarray] = {}
    if humans:
        consensus = Target.aggregate(HUMANS, aggregate, humans)
        values[HUMANS] = _target_values(table, consensus, f"no human rating in {', '.join(humans)}")
        result["human_target"] = f"{aggregate} of {', '.join(humans)}"
    if targets:
        result["targets"] = {target.name: target.text for target in targets}
        for target in targets:
            values[target.name] = _target_values(table, target, f"no value for target {target.name!r}")
    if table.left_out:
        result["left_out"] = table.left_out
    target = values.get(HUMANS)
    for entry in metrics + judges:
        name, _, against = entry.partition("@")
        against = against or HUMANS
        try:
            tau = kendall_tau_c(table.columns[name], values[against])
        except ValueError as error:
            raise AgreementInputError(f"tau-c of {name!r}: {error}") from None
        row = {"metric": name, "target": against, "x100": x100(tau.value), **asdict(tau)}
        result["kendall_tau_c"].append(row)

    def icc_row(agreement: str, ratings: np.ndarray, which: int) -> dict[str, Any]:
        row = asdict(icc3(ratings, confidence=confidence, missing=icc_missing)[which])
        row["f"] = None if math.isinf(row["f"]) else row["f"]  # perfect consistency; JSON has no Infinity
        return {"agreement": agreement, **row}

    human_ratings = np.column_stack([table.columns[h] for h in humans]) if humans else None
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


def _tau_title(result: dict[str, Any]) -> str:
    if not result.get("targets"):
        return f"Kendall tau-c x100 vs human consensus ({result['human_target']})"
    named = dict(result["targets"], **({HUMANS: result["human_target"]} if "human_target" in result else {}))
    used = dict.fromkeys(r["target"] for r in result["kendall_tau_c"])
    return "Kendall tau-c x100 vs human targets (" + "; ".join(f"{t} = {named[t]}" for t in used) + ")"


def format_tables(result: dict[str, Any], markdown: bool = False, row: bool = False) -> str:
    """The tables as the papers print them: tau-c and alpha x100, ICC to 3 decimals with a 2-decimal CI.

    With `row`, tau-c is one row with a column per metric, as JEEM's Table 3 prints it (L176).
    """
    blocks = []
    taus = result["kendall_tau_c"]
    if taus and row:
        header = ["", *(r["metric"] for r in taus)]
        lines = [["target", *(r["target"] for r in taus)], ["tau_c", *(f"{r['x100']:.2f}" for r in taus)]]
        blocks.append(_render(_tau_title(result), header, [*lines, ["n", *(str(r["n"]) for r in taus)]], markdown))
    elif taus:
        targets = bool(result.get("targets"))
        rows = [
            [r["metric"], *([r["target"]] if targets else []), f"{r['x100']:.2f}", _p(r["pvalue"]), str(r["n"])]
            for r in taus
        ]
        header = ["metric", *(["target"] if targets else []), "tau_c", "p", "n"]
        blocks.append(_render(_tau_title(result), header, rows, markdown))
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
    s.add_argument(
        "paths",
        nargs="+",
        metavar="FILE",
        help="one or two .csv/.jsonl tables joined on --id, or a ratings table and saved runs "
        "([MODEL=]PATH: lm-eval samples_*.jsonl, lighteval details_*.parquet, or folders of them)",
    )
    s.add_argument("--id", required=True, dest="id_column", help="the item id column(s), e.g. model,id")
    s.add_argument("--humans", help="comma-separated human rating columns (one per annotator): the consensus")
    s.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="NAME=EXPR",
        help="a human target from rating columns with mean(), median() and hmean(), "
        "e.g. conrel=hmean(consistency,relevance); a metric given as METRIC@NAME is correlated with it",
    )
    s.add_argument("--metrics", help="comma-separated metric columns, METRIC or METRIC@TARGET (any scale: tau-c only)")
    s.add_argument("--judges", help="comma-separated judge columns on the humans' scale (tau-c, ICC and alpha)")
    s.add_argument("--tasks", help="saved runs: only the samples of these tasks or families (comma-separated)")
    s.add_argument("--row", action="store_true", help="print tau-c as one row, a column per metric (JEEM Table 3)")
    s.add_argument(
        "--level",
        default="interval",
        choices=["nominal", "ordinal", "interval", "ratio"],
        help="Krippendorff's level of measurement (default: interval, the krippendorff package's; ARB names none)",
    )
    s.add_argument("--icc-missing", default="error", choices=["error", "drop"], help="items with a missing rating")
    s.add_argument("--human-aggregate", default="mean", choices=["mean", "median"], help="the human consensus")
    s.add_argument("--confidence", type=float, default=0.95, help="ICC confidence level (default 0.95)")
    s.add_argument("--format", default="plain", choices=["plain", "markdown"], help="table format (default: plain)")
    s.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    s.set_defaults(func=run)


def _check_names(humans: list[str], metrics: list[str], judges: list[str], targets: list[Target]) -> None:
    """Every metric has a target, no name is given twice, the judges have annotators to be compared with."""
    if not humans and not targets:
        raise AgreementInputError("--humans names no column (and no --target is given)")
    defined = {t.name for t in targets}
    if HUMANS in defined or len(defined) < len(targets):
        raise AgreementInputError(f"--target names must be unique and not {HUMANS!r}")
    for entry in metrics:
        name, at, target = entry.partition("@")
        if at and target not in defined:
            raise AgreementInputError(f"--metrics {entry}: no --target named {target!r}")
        if not at and not humans:
            raise AgreementInputError(
                f"--metrics {entry}: no --humans to correlate it with; name a target: {name}@NAME"
            )
    if judges and not humans:
        raise AgreementInputError("--judges are compared with the annotators of --humans, and none are given")
    named = humans + [m.partition("@")[0] for m in metrics if "@" not in m] + judges
    pairs = metrics + judges
    repeated = sorted({name for name in named if named.count(name) > 1} | {p for p in pairs if pairs.count(p) > 1})
    if repeated:
        raise AgreementInputError(f"column {repeated[0]!r} is named twice in --humans/--metrics/--judges")


def run(args: argparse.Namespace) -> int:
    """Exit 0 with the tables, 2 with one line on stderr for bad input."""
    from arab_mm_tasks.cli.sample_scores import ScoresInputError, is_run

    humans, metrics, judges = _names(args.humans), _names(args.metrics), _names(args.judges)
    try:
        targets = [Target.parse(spec) for spec in args.target]
        _check_names(humans, metrics, judges, targets)
        runs = [p for p in args.paths if is_run(p)]
        tables = [Path(p) for p in args.paths if p not in runs]
        if len(tables) + bool(runs) > 2:
            raise AgreementInputError(f"at most two tables (scores and ratings), got {len(tables)} and saved runs")
        if runs and not tables:
            raise AgreementInputError("saved runs need a table of human ratings to be joined with")
        rated = [*humans, *(column for t in targets for column in t.columns())]
        scored = [m.partition("@")[0] for m in metrics] + judges
        numeric = list(dict.fromkeys(rated + scored))
        tasks = _names(args.tasks) or None
        table = load_table(tables, _names(args.id_column), numeric, set(rated), runs, tasks)
        result = compute(
            table,
            humans=humans,
            metrics=metrics,
            judges=judges,
            targets=targets,
            level=args.level,
            icc_missing=args.icc_missing,
            aggregate=args.human_aggregate,
            confidence=args.confidence,
        )
    except (ValueError, TargetError, ScoresInputError) as error:  # bad input, or a statistic undefined on this data
        print(f"{PROG}: error: " + " ".join(str(error).splitlines()), file=sys.stderr)
        return 2
    for source, count in table.left_out.items():
        print(f"{PROG}: {count} items of {source} are not in the other input and are left out", file=sys.stderr)
    print(
        json.dumps(result, indent=2, ensure_ascii=False)
        if args.json
        else format_tables(result, args.format == "markdown", args.row)
    )
    return 0
