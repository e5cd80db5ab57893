"""JEEM's meta-evaluation (Table 3's tau_c row, L176, L198-200) from saved runs and a human-ratings file.

Two models' saved samples, one in lm-eval's ``samples_*.jsonl`` shape and one in lighteval's
``details_*.parquet`` shape, hold per-sample scores as the scoring code leaves them (judged,
batched and corpus values); a ratings CSV has three annotators' Consistency, Relevance and
Dialect Authenticity per (model, record). The expected tau-c values are computed here with
`statistics` and `scipy.stats.kendalltau(variant="c")`, independently of the command's code.
"""

from __future__ import annotations

import csv
import doctest
import json
import statistics
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats

from arab_mm_tasks.cli import agreement_targets, main

STAMP = "2025-05-01T10-00-00.000000"
RECORDS = {"jordanian": ["jordan-a", "jordan-b", "jordan-c"], "egyptian": ["egypt-a", "egypt-b", "egypt-c"]}
UNRATED = "jordan-z"  # in the full-data task only: scored, never rated


def judged(score: float | None, criterion: str, status: str | None = "valid") -> dict[str, Any]:
    request = {"prompt": "jeem_caption", "fields": {"generated": "..."}}
    value: dict[str, Any] = {"score": score, "regions": [], "judge": request, "judge_score": criterion}
    if status:
        value["judge_status"] = status
    return value


def batched(score: float, scorer: str) -> dict[str, Any]:
    return {"score": score, "regions": [], "batch": {"scorer": scorer}, "batch_scored": True}


def corpus() -> dict[str, Any]:
    return {"score": None, "regions": [], "corpus": {"scorer": "metric_plugins.bleu:corpus_score"}}


# Per model and record: (DCScore F1, judge DAuth, ALDi), chosen with ties, as real scores have.
SCORES = {
    "aya": {
        "jordan-a": (71.0, 3, 20.5),
        "jordan-b": (40.0, 2, 0.0),
        "jordan-c": (55.5, 3, 12.0),
        "egypt-a": (62.0, 4, 54.0),
        "egypt-b": (30.0, 1, 0.0),
        "egypt-c": (48.0, 3, 33.3),
    },
    "gpt-4o": {
        "jordan-a": (80.0, 4, 19.0),
        "jordan-b": (66.0, 3, 25.0),
        "jordan-c": (52.0, 2, 5.0),
        "egypt-a": (70.0, 5, 60.0),
        "egypt-b": (58.0, 4, 41.0),
        "egypt-c": (44.0, 4, 47.5),
    },
}
# Per model and record: annotators' (consistency, relevance, dialect authenticity); None = not rated.
RATINGS = {
    "aya": {
        "jordan-a": [(4, 4, 2), (3, 4, 3), (4, 5, 2)],
        "jordan-b": [(2, 2, 1), (2, 3, 1), (3, 2, 2)],
        "jordan-c": [(3, 3, 2), (4, 3, 3), (3, 3, 3)],
        "egypt-a": [(4, 3, 4), (4, 4, 4), (5, 4, 5)],
        "egypt-b": [(1, 2, 1), (2, 1, 1), (2, 2, 1)],
        "egypt-c": [(3, 4, 3), None, None],  # one annotator only, as JEEM's Emirati items (L186)
    },
    "gpt-4o": {
        "jordan-a": [(5, 5, 3), (4, 5, 4), (5, 4, 3)],
        "jordan-b": [(4, 4, 4), (4, 3, 3), (5, 4, 3)],
        "jordan-c": [(3, 3, 2), (3, 4, 2), (2, 3, 1)],
        "egypt-a": [(5, 4, 5), (4, 5, 5), (5, 5, 4)],
        "egypt-b": [(4, 4, 4), (3, 4, 4), (4, 3, 5)],
        "egypt-c": [(3, 3, 4), (3, 2, 5), (4, 3, 4)],
    },
    "reference": {"jordan-a": [(5, 5, 5), (5, 4, 5), (5, 5, 5)]},  # the human caption: rated, not a run
}


def samples(model: str, dialect: str) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """task -> [(record id, metric values)] of one model and dialect: the full-data task and the eval350 one."""
    full, eval350 = [], []
    for record in RECORDS[dialect] + ([UNRATED] if dialect == "jordanian" else []):
        f1, dauth, aldi = SCORES[model].get(record, (10.0, 1, 1.0))
        judge = judged(dauth, "dialect_authenticity")
        aldi_value = batched(aldi, "metric_plugins.aldi:sentence_scores")
        full.append((record, {"bleu": corpus(), "aldi": aldi_value, "judge_dauth": judge}))
        if record != UNRATED:
            dcscore = batched(f1, "arab_mm_tasks.core.judging:dcscore_f1")
            eval350.append(
                (record, {"judge_con": judged(3.0, "consistency"), "judge_dauth": judge, "dcscore_f1": dcscore})
            )
    return {f"jeem_caption_{dialect}": full, f"jeem_caption_{dialect}_eval350": eval350}


def write_lm_eval(folder: Path, tasks: dict[str, list[tuple[str, dict[str, Any]]]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for task, rows in tasks.items():
        lines = [
            json.dumps({"doc_id": i, "doc": {"id": record, "reference": "..."}, "filtered_resps": ["..."], **values})
            for i, (record, values) in enumerate(rows)
        ]
        (folder / f"samples_{task}_{STAMP}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def write_lighteval(folder: Path, tasks: dict[str, list[tuple[str, dict[str, Any]]]]) -> Path:
    folder = folder / "details" / "model" / STAMP
    folder.mkdir(parents=True, exist_ok=True)
    for task, rows in tasks.items():
        table = pa.Table.from_pylist(
            [{"doc": {"specific": {"id": record, "target": "..."}}, "metric": values} for record, values in rows]
        )
        pq.write_table(table, folder / f"details_{task}|0_{STAMP}.parquet")
    return folder.parents[2]


def write_ratings(path: Path) -> Path:
    header = ["model", "id"] + [f"{c}_{a}" for c in ("con", "rel", "dauth") for a in (1, 2, 3)]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for model, records in RATINGS.items():
            for record, annotators in records.items():
                cells = [["" if a is None else a[c] for a in annotators] for c in range(3)]
                writer.writerow([model, record, *cells[0], *cells[1], *cells[2]])
    return path


def expected_row() -> dict[str, tuple[float, int]]:
    """tau-c x100 by hand: DCScore F1 vs HM(mean Con, mean Rel); ALDi and judge DAuth vs mean DAuth."""
    metric: dict[str, list[float]] = {"dcscore_f1": [], "aldi": [], "judge_dauth": []}
    conrel, dauth = [], []
    for model, records in SCORES.items():
        for record, (f1, judge, aldi) in records.items():
            rated = [a for a in RATINGS[model][record] if a is not None]
            means = [statistics.mean(a[c] for a in rated) for c in range(3)]
            conrel.append(statistics.harmonic_mean(means[:2]))
            dauth.append(means[2])
            metric["dcscore_f1"].append(f1)
            metric["aldi"].append(aldi)
            metric["judge_dauth"].append(judge)
    targets = {"dcscore_f1": conrel, "aldi": dauth, "judge_dauth": dauth}
    return {
        name: (round(100 * stats.kendalltau(values, targets[name], variant="c").statistic, 2), len(values))
        for name, values in metric.items()
    }


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    aya = {task: rows for d in RECORDS for task, rows in samples("aya", d).items()}
    # the same records captioned in MSA: their judge scores differ from the dialect tasks'
    aya["jeem_caption_msa_eval350"] = [(r, {"judge_con": judged(1.0, "consistency")}) for r in RECORDS["jordanian"]]
    gpt = {task: rows for d in RECORDS for task, rows in samples("gpt-4o", d).items()}
    return {
        "aya": write_lm_eval(tmp_path / "aya", aya),
        "gpt-4o": write_lighteval(tmp_path / "gpt", gpt),
        "ratings": write_ratings(tmp_path / "ratings.csv"),
    }


DIALECT_TASKS = ",".join(f"jeem_caption_{d}{s}" for s in ("", "_eval350") for d in ("jordanian", "egyptian"))
TARGETS = [
    "--target", "conrel=hmean(mean(con_1,con_2,con_3),mean(rel_1,rel_2,rel_3))",
    "--target", "dauth=mean(dauth_1,dauth_2,dauth_3)",
    "--metrics", "dcscore_f1@conrel,aldi@dauth,judge_dauth@dauth",
]  # fmt: skip


def agreement_args(runs: dict[str, Path], *extra: str) -> list[str]:
    return [
        "agreement", str(runs["ratings"]), f"aya={runs['aya']}", f"gpt-4o={runs['gpt-4o']}",
        "--id", "model,id", "--tasks", DIALECT_TASKS, *TARGETS, *extra,
    ]  # fmt: skip


def test_tau_c_row_from_lm_eval_and_lighteval_runs_and_a_ratings_file(runs, capsys):
    assert main(agreement_args(runs, "--row")) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    expected = expected_row()
    assert lines[0] == (
        "Kendall tau-c x100 vs human targets (conrel = hmean(mean(con_1,con_2,con_3),mean(rel_1,rel_2,rel_3)); "
        "dauth = mean(dauth_1,dauth_2,dauth_3))"
    )
    assert lines[1].split() == ["dcscore_f1", "aldi", "judge_dauth"]
    assert lines[2].split() == ["target", "conrel", "dauth", "dauth"]
    assert lines[3].split() == ["tau_c", *(f"{expected[m][0]:.2f}" for m in ("dcscore_f1", "aldi", "judge_dauth"))]
    assert lines[4].split() == ["n", "12", "12", "12"]
    assert len(lines) == 5  # no --humans, no --judges: no ICC or alpha tables
    # left out, and said so: the unscored human reference caption, and each model's unrated record
    assert "1 items of" in captured.err and "ratings.csv are not in the other input" in captured.err
    assert "2 items of the saved samples of" in captured.err
    # the same numbers as JSON, each against its target
    assert main(agreement_args(runs, "--json")) == 0
    result = json.loads(capsys.readouterr().out)
    assert {r["metric"]: (r["x100"], r["n"]) for r in result["kendall_tau_c"]} == expected
    assert [r["target"] for r in result["kendall_tau_c"]] == ["conrel", "dauth", "dauth"]
    assert result["left_out"] == {str(runs["ratings"]): 1, f"the saved samples of aya={runs['aya']}, "
                                                          f"gpt-4o={runs['gpt-4o']}": 2}  # fmt: skip


def test_sample_scores_exports_one_row_per_model_and_record(runs, capsys, tmp_path):
    out = tmp_path / "scores.csv"
    assert main(["sample-scores", f"aya={runs['aya']}", "--tasks", DIALECT_TASKS, "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    by_id = {row["id"]: row for row in rows}  # files are read in name order: egyptian, then jordanian
    assert list(by_id) == [*RECORDS["egyptian"], *RECORDS["jordanian"], UNRATED]
    assert set(rows[0]) == {"model", "id", "aldi", "judge_dauth", "judge_con", "dcscore_f1"}  # BLEU: corpus only
    row = by_id["jordan-a"]
    assert [row["model"], *(float(row[m]) for m in ("aldi", "dcscore_f1", "judge_dauth"))] == ["aya", 20.5, 71.0, 3.0]
    assert by_id[UNRATED]["dcscore_f1"] == ""  # jordan-z is not in the eval350 task
    assert f"wrote 7 rows to {out}" in capsys.readouterr().out


def test_msa_and_dialect_scores_of_one_record_clash_unless_tasks_are_chosen(runs, capsys):
    args = [arg for arg in agreement_args(runs) if arg != DIALECT_TASKS]
    args.remove("--tasks")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "record 'jordan-a' of aya: judge_con is 3 in jeem_caption_jordanian_eval350 but 1 in " in err
    assert "pass --tasks" in err


def test_a_judge_never_run_is_named_not_correlated(runs, tmp_path, capsys):
    pending = samples("gpt-4o", "jordanian")
    record, values = pending["jeem_caption_jordanian_eval350"][1]
    values["judge_dauth"] = judged(None, "dialect_authenticity", status=None)  # a --predict_only sample
    pending["jeem_caption_jordanian"] = []
    run = write_lm_eval(tmp_path / "pending", pending)
    args = ["agreement", str(runs["ratings"]), f"gpt-4o={run}", "--id", "model,id", *TARGETS]
    args[args.index("dcscore_f1@conrel,aldi@dauth,judge_dauth@dauth")] = "judge_dauth@dauth"
    assert main(args) == 2
    assert capsys.readouterr().err == (
        f"arab-mm-tasks agreement: error: gpt-4o: jeem_caption_jordanian_eval350 doc 1 (record {record!r}): "
        "judge_dauth was never scored (a --predict_only run, or no judge configured): "
        "run `arab-mm-tasks judge` on the run first\n"
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--metrics", "aldi@dialect"], "--metrics aldi@dialect: no --target named 'dialect'"),
        (["--metrics", "aldi"], "--metrics aldi: no --humans to correlate it with; name a target: aldi@NAME"),
        (["--target", "x=hmean(con_1"], "--target x=hmean(con_1: hmean( is not closed"),
        (["--target", "x=max(con_1)"], "--target x=max(con_1): unknown function 'max' (known: mean, median, hmean)"),
        (["--metrics", "aldi@x", "--target", "x=con_9"], "unknown column 'con_9' (columns: "),
        (["--metrics", "aldi@dauth", "--tasks", "jeem_caption_nubian"], "--tasks: 'jeem_caption_nubian' is neither"),
    ],
)
def test_bad_targets_and_metrics_are_one_line(runs, capsys, extra, message):
    base = ["agreement", str(runs["ratings"]), f"aya={runs['aya']}", "--id", "model,id", "--tasks", DIALECT_TASKS]
    assert main([*base, *TARGETS[:4], *extra]) == 2  # the last --tasks or --metrics given wins
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_an_item_with_no_rating_for_a_target_is_named(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("id,con,rel,m\na,4,3,1\nb,,2,2\nc,5,5,3\n", encoding="utf-8")
    args = ["agreement", str(table), "--id", "id", "--target", "cr=hmean(con,rel)", "--metrics", "m@cr"]
    assert main(args) == 2
    assert "item 'b' has no value for target 'cr'" in capsys.readouterr().err
    # mean() of what an item has: b's target is its one rating
    assert main([*args[:5], "cr=mean(con,rel)", *args[6:], "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["kendall_tau_c"]
    expected = stats.kendalltau([1, 2, 3], [3.5, 2, 5], variant="c").statistic
    assert row["x100"] == round(100 * expected, 2)


def test_target_module_doctests_pass():
    assert doctest.testmod(agreement_targets).failed == 0
