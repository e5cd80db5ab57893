"""Agreement statistics (tau-c, ICC(3,1)/ICC(3,k), Krippendorff's alpha) and `arab-mm-tasks agreement`.

Reference values come from published sources or hand counts written next to them:
- Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges, ICC(3,1) = .71, ICC(3,k) = .91, and its ANOVA
  table (BMS = 11.24, EMS = 1.02, so F = 11.0 on 5 and 15 df). The 95% intervals and p-value are the ones
  R's psych::ICC prints for the same matrix (an independent implementation of the same formulas):
  ICC3 [0.342, 0.95], ICC3k [0.676, 0.99], p = 0.00013.
- Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 observers x 12 units example
  with missing values: nominal .743, ordinal .815, interval .849, ratio .797.
"""

from __future__ import annotations

import doctest
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from arab_mm_tasks.cli import main
from metric_plugins import agreement
from metric_plugins.agreement import human_consensus, icc3, judge_agreement, kendall_tau_c, krippendorff_alpha, x100

SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
NAN = float("nan")
# Krippendorff (2011): rows are observers A-D, columns the 12 units; NaN = the observer skipped the unit.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def test_module_doctests_pass():
    results = doctest.testmod(agreement)
    assert results.attempted > 0 and results.failed == 0  # a card that lost its examples fails too


# --- ICC ---------------------------------------------------------------------------------------------


def test_icc3_reproduces_shrout_and_fleiss_table_2():
    single, average = icc3(SHROUT_FLEISS)
    assert (round(single.value, 2), round(average.value, 2)) == (0.71, 0.91)  # the published values
    assert single.f == average.f == pytest.approx(11.03, abs=0.005)  # BMS / EMS = 11.24 / 1.02 published
    assert (single.df1, single.df2, single.n_items, single.n_raters) == (5, 15, 6, 4)
    assert single.pvalue == pytest.approx(0.00013, abs=5e-6)
    assert (round(single.ci_low, 3), round(single.ci_high, 2)) == (0.342, 0.95)
    assert (round(average.ci_low, 3), round(average.ci_high, 2)) == (0.676, 0.99)
    assert (single.kind, average.kind, single.n_dropped) == ("ICC(3,1)", "ICC(3,k)", 0)


def test_icc3_k_is_cronbachs_alpha_and_icc3_1_its_spearman_brown_step_down():
    # An independent formula: consistency ICC of the mean of k raters = Cronbach's alpha.
    ratings = np.random.default_rng(0).integers(1, 6, size=(40, 3)).astype(float) + np.arange(40)[:, None] / 10
    k = ratings.shape[1]
    cronbach = k / (k - 1) * (1 - ratings.var(axis=0, ddof=1).sum() / ratings.sum(axis=1).var(ddof=1))
    single, average = icc3(ratings)
    assert average.value == pytest.approx(cronbach, rel=1e-12)
    assert single.value == pytest.approx(cronbach / (k - (k - 1) * cronbach), rel=1e-12)


def test_icc3_narrower_confidence_gives_a_narrower_interval():
    wide, _ = icc3(SHROUT_FLEISS, confidence=0.95)
    narrow, _ = icc3(SHROUT_FLEISS, confidence=0.80)
    assert wide.ci_low < narrow.ci_low < narrow.value < narrow.ci_high < wide.ci_high


def test_icc3_refuses_a_missing_rating_unless_told_to_drop_the_item():
    with_hole = [row[:] for row in SHROUT_FLEISS] + [[5, NAN, 3, 4]]
    with pytest.raises(ValueError, match=r"ratings\[6\]\[1\] is missing \(1 incomplete items\).*missing='drop'"):
        icc3(with_hole)
    single, average = icc3(with_hole, missing="drop")
    assert single.n_dropped == average.n_dropped == 1 and single.n_items == 6
    assert single.value == icc3(SHROUT_FLEISS)[0].value


def test_icc3_perfect_consistency_is_one_and_no_variance_is_an_error():
    single, average = icc3([[1, 3], [2, 4], [5, 7]])  # rater 2 = rater 1 + 2
    assert (single.value, average.value, single.ci_low, single.pvalue) == (1.0, 1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="no variance"):
        icc3([[2, 2], [2, 2], [2, 2]])
    with pytest.raises(ValueError, match="at least 2 items and 2 raters"):
        icc3([[1], [2], [3]])
    with pytest.raises(ValueError, match="items x raters"):
        icc3([1, 2, 3])


# --- Kendall tau-c -----------------------------------------------------------------------------------


def test_tau_c_hand_counted_cases():
    # x = 1 2 3 4 5, y = 1 3 2 5 4: of the 10 pairs only (2,3) and (4,5) swap, C = 8, D = 2;
    # m = 5 distinct values, tau_c = 2 (8 - 2) / (25 * 4/5) = 12 / 20 = 0.6.
    assert kendall_tau_c([1, 2, 3, 4, 5], [1, 3, 2, 5, 4]).value == pytest.approx(0.6)
    # x = 1 2 2 3, y = 1 1 2 2: concordant pairs (1,3) (1,4) (2,4); the other three are ties, D = 0;
    # m = min(3, 2) = 2, tau_c = 2 * 3 / (16 * 1/2) = 0.75 (tau-b would be 3 / sqrt(5 * 4) = 0.67).
    result = kendall_tau_c([1, 2, 2, 3], [1, 1, 2, 2])
    assert (result.value, result.n) == (pytest.approx(0.75), 4)


def _tau_c_by_counting(x: list[float], y: list[float]) -> float:
    """Stuart's tau-c from its definition, pair by pair (an implementation independent of scipy)."""
    concordant = discordant = 0
    for (xi, yi), (xj, yj) in itertools.combinations(zip(x, y, strict=True), 2):
        sign = np.sign(xi - xj) * np.sign(yi - yj)
        concordant += sign > 0
        discordant += sign < 0
    n, m = len(x), min(len(set(x)), len(set(y)))
    return 2 * (concordant - discordant) / (n**2 * (m - 1) / m)


def test_tau_c_matches_the_definition_on_tied_likert_data():
    rng = np.random.default_rng(1)
    metric = rng.normal(size=60).round(1).tolist()  # continuous-ish metric
    human = np.clip(np.round(np.array(metric) + rng.normal(size=60)), -2, 2).tolist()  # 5-point scale, many ties
    result = kendall_tau_c(metric, human)
    assert result.value == pytest.approx(_tau_c_by_counting(metric, human), rel=1e-12)
    assert 0 < result.pvalue < 0.05


def test_tau_c_rejects_holes_constants_and_length_mismatch():
    with pytest.raises(ValueError, match=r"y\[2\]: nan is not a finite number"):
        kendall_tau_c([1, 2, 3], [1, 2, NAN])
    with pytest.raises(ValueError, match="x is constant"):
        kendall_tau_c([3, 3, 3], [1, 2, 3])
    with pytest.raises(ValueError, match="x has 3 items but y has 2"):
        kendall_tau_c([1, 2, 3], [1, 2])


# --- Krippendorff's alpha ----------------------------------------------------------------------------


def test_alpha_hand_computed_binary_nominal_case():
    # Two coders, 10 units: A = 0100000010, B = 1110010000. Agreeing units give o00 = 2 * 5 and o11 = 2 * 1;
    # units 1, 3, 6, 9 disagree, o01 = o10 = 4. n0 = 14, n1 = 6, n = 20:
    # alpha = 1 - (n - 1) o01 / (n0 n1) = 1 - 19 * 4 / 84 = 8 / 84.
    coder_a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    coder_b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    items_by_raters = list(zip(coder_a, coder_b, strict=True))
    assert krippendorff_alpha(items_by_raters, level="nominal") == pytest.approx(8 / 84, rel=1e-12)
    assert x100(krippendorff_alpha(items_by_raters, level="nominal")) == 9.52


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_alpha_reproduces_krippendorffs_published_example_with_missing_values(level, published):
    items_by_raters = np.array(KRIPPENDORFF_2011).T  # our tables are items x raters
    assert round(krippendorff_alpha(items_by_raters, level=level), 3) == published


def test_alpha_bad_inputs():
    with pytest.raises(ValueError, match="level must be one of"):
        krippendorff_alpha([[1, 2], [2, 3]], level="likert")
    with pytest.raises(ValueError, match="at least 2 raters"):
        krippendorff_alpha([[1], [2]])
    with pytest.raises(ValueError, match="every rating is 4"):
        krippendorff_alpha([[4, 4], [4, 4]])


# --- one judge against humans ------------------------------------------------------------------------


def test_judge_agreement_combines_the_three_on_the_papers_scales():
    humans = [row[:2] for row in SHROUT_FLEISS]
    judge = [8, 3, 7, 4, 9, 5]
    result = judge_agreement(judge, humans, level="ordinal")
    consensus = human_consensus(humans)
    assert result["kendall_tau_c"] == x100(kendall_tau_c(judge, consensus).value)
    assert result["icc3_1"] == icc3(np.column_stack([judge, consensus]))[0].value
    assert result["krippendorff_alpha"] == x100(krippendorff_alpha(np.column_stack([humans, judge]), level="ordinal"))
    assert result["icc3_k_humans"] == icc3(humans)[1].value
    assert result["krippendorff_alpha_humans"] == x100(krippendorff_alpha(humans, level="ordinal"))
    single = judge_agreement(judge, consensus.tolist())  # one rating per item: no humans-only rows
    assert "icc3_1_humans" not in single and single["icc3_1"] == result["icc3_1"]
    with pytest.raises(ValueError, match=r"human_ratings\[1\]: no rating"):
        judge_agreement([1, 2, 3], [[1, 2], [None, None], [3, 3]])


# --- the command -------------------------------------------------------------------------------------


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    path.write_text("\n".join(",".join(map(str, row)) for row in [header, *rows]) + "\n", encoding="utf-8")
    return path


JUDGE = [8, 3, 7, 4, 9, 5]
BLEU = [10.5, 3.2, 22.0, 1.0, 30.1, 5.5]
IDS = ["a", "b", "c", "d", "e", "f"]


@pytest.fixture
def ratings_csv(tmp_path: Path) -> Path:
    rows = [[i, *r, b, j] for i, r, b, j in zip(IDS, SHROUT_FLEISS, BLEU, JUDGE, strict=True)]
    return _write_csv(tmp_path / "ratings.csv", ["id", "h1", "h2", "h3", "h4", "bleu", "judge"], rows)


ARGS = ["--id", "id", "--humans", "h1,h2,h3,h4", "--metrics", "bleu", "--judges", "judge"]


def test_cli_prints_the_three_tables(ratings_csv, capsys):
    assert main(["agreement", str(ratings_csv), *ARGS]) == 0
    out = capsys.readouterr().out
    consensus = np.mean(SHROUT_FLEISS, axis=1)
    tau_bleu = x100(kendall_tau_c(BLEU, consensus).value)
    lines = out.splitlines()
    assert lines[0] == "Kendall tau-c x100 vs human consensus (mean of h1, h2, h3, h4)"
    assert lines[1].split() == ["metric", "tau_c", "p", "n"]
    assert lines[2].split()[:2] == ["bleu", f"{tau_bleu:.2f}"]
    assert "humans, single rater         ICC(3,1) = 0.715  [0.34, 0.95]  11.03  5, 15  0.00013  6" in lines
    assert "humans, average of 4 raters  ICC(3,k) = 0.909  [0.68, 0.99]  11.03  5, 15  0.00013  6" in lines
    alpha = x100(krippendorff_alpha(SHROUT_FLEISS))
    assert f"humans          {alpha:.2f}  6" in lines
    assert any(line.startswith("humans + judge  ") for line in lines)
    assert not any(line.startswith("humans + bleu") or line.startswith("bleu vs") for line in lines)


def test_cli_json_and_markdown(ratings_csv, capsys):
    assert main(["agreement", str(ratings_csv), *ARGS, "--json", "--level", "ordinal"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [row["metric"] for row in result["kendall_tau_c"]] == ["bleu", "judge"]
    single, average, judge = result["icc"]
    assert (single["kind"], round(single["value"], 2), round(average["value"], 2)) == ("ICC(3,1)", 0.71, 0.91)
    consensus = np.mean(SHROUT_FLEISS, axis=1)
    assert judge["value"] == pytest.approx(icc3(np.column_stack([JUDGE, consensus]))[0].value)
    assert result["krippendorff_alpha"]["level"] == "ordinal"
    assert result["krippendorff_alpha"]["rows"][0]["value"] == krippendorff_alpha(SHROUT_FLEISS, level="ordinal")
    assert main(["agreement", str(ratings_csv), *ARGS, "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| agreement | ICC | 95% CI | F | df | p | n |" in out
    assert "| humans, single rater | ICC(3,1) = 0.715 | [0.34, 0.95] | 11.03 | 5, 15 | 0.00013 | 6 |" in out


def test_cli_joins_a_jsonl_score_file_with_a_csv_rating_file(ratings_csv, tmp_path, capsys):
    scores = tmp_path / "scores.jsonl"
    # In reverse order: the join goes by id; items keep the first file's order, so sums add up identically.
    records = [{"id": i, "bleu": b, "judge": j} for i, b, j in zip(IDS, BLEU, JUDGE, strict=True)][::-1]
    scores.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    humans = _write_csv(
        tmp_path / "humans.csv",
        ["id", "h1", "h2", "h3", "h4"],
        [[i, *r] for i, r in zip(IDS, SHROUT_FLEISS, strict=True)],
    )
    assert main(["agreement", str(ratings_csv), *ARGS, "--json"]) == 0
    together = json.loads(capsys.readouterr().out)
    assert main(["agreement", str(humans), str(scores), *ARGS, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == together


def test_cli_missing_human_rating_refused_for_icc_then_dropped_on_request(tmp_path, capsys):
    rows = [[i, *r, j] for i, r, j in zip(IDS, SHROUT_FLEISS, JUDGE, strict=True)] + [["g", 5, "", 3, 4, 4]]
    path = _write_csv(tmp_path / "holes.csv", ["id", "h1", "h2", "h3", "h4", "judge"], rows)
    args = ["agreement", str(path), "--id", "id", "--humans", "h1,h2,h3,h4", "--judges", "judge"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err == (
        "arab-mm-tasks agreement: error: item 'g' has no rating in 'h2': ICC needs every rater on every item "
        "(1 items incomplete); pass --icc-missing drop to leave them out\n"
    )
    assert main([*args, "--icc-missing", "drop"]) == 0
    out = capsys.readouterr().out
    assert "humans, single rater         ICC(3,1) = 0.715  [0.34, 0.95]  11.03  5, 15  0.00013  6 (1 dropped)" in out
    # Alpha keeps item g (three ratings, still pairable): 7 items.
    alpha = x100(krippendorff_alpha([*SHROUT_FLEISS, [5, NAN, 3, 4]]))
    assert f"humans          {alpha:.2f}  7" in out.splitlines()


@pytest.mark.parametrize(
    ("cell", "extra", "message"),
    [
        ("abc", [], "line 3 (item 'b'), column 'judge': 'abc' is not a number"),
        ("", [], "line 3 (item 'b'), column 'judge': empty (a metric score is needed on every item)"),
        ("3", ["--metrics", "rouge"], "unknown column 'rouge' (columns: h1, id, judge)"),
        ("3", ["--id", "item"], "unknown id column 'item' (columns: id, h1, judge)"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys, cell, extra, message):
    path = _write_csv(tmp_path / "bad.csv", ["id", "h1", "judge"], [["a", 1, 2], ["b", 2, cell], ["c", 3, 1]])
    assert main(["agreement", str(path), "--id", "id", "--humans", "h1", "--judges", "judge", *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("arab-mm-tasks agreement: error: ")
    assert message in err


def test_cli_mismatched_ids_and_non_numeric_jsonl(tmp_path, capsys):
    scores = tmp_path / "scores.jsonl"
    scores.write_text('{"id": "a", "judge": 1}\n{"id": "b", "judge": 2}\n{"id": "x", "judge": 3}\n', encoding="utf-8")
    humans = _write_csv(tmp_path / "humans.csv", ["id", "h1"], [["a", 1], ["b", 2], ["c", 3]])
    args = ["--id", "id", "--humans", "h1", "--judges", "judge"]
    assert main(["agreement", str(scores), str(humans), *args]) == 2
    err = capsys.readouterr().err
    assert f"mismatched item ids: 1 only in {scores} (e.g. 'x'); 1 only in {humans} (e.g. 'c')" in err
    scores.write_text('{"id": "a", "judge": 1}\n{"id": "b", "judge": [2]}\n{"id": "c", "judge": 3}\n', encoding="utf-8")
    assert main(["agreement", str(scores), str(humans), *args]) == 2
    assert f"{scores} line 2 (item 'b'), column 'judge': [2] is not a number" in capsys.readouterr().err
    scores.write_text('{"id": "a", "judge": 1}\n{"id": "a", "judge": 2}\n', encoding="utf-8")
    assert main(["agreement", str(scores), str(humans), *args]) == 2
    assert f"{scores} line 2: item id 'a' repeats line 1" in capsys.readouterr().err


# --- the evaluate module -----------------------------------------------------------------------------


def test_evaluate_module_matches_the_plain_function():
    import evaluate

    path = Path(__file__).resolve().parents[2] / "metric_plugins" / "evaluate_modules" / "agreement.py"
    metric = evaluate.load(str(path))
    assert metric.description == agreement.__doc__
    humans = [row[:3] for row in SHROUT_FLEISS]
    got = metric.compute(predictions=JUDGE, references=humans, level="ordinal")
    assert got == judge_agreement(JUDGE, humans, level="ordinal")
    assert got["kendall_tau_c"] == x100(kendall_tau_c(JUDGE, np.mean(humans, axis=1)).value)
    one_each = metric.compute(predictions=JUDGE, references=[4.0, 2.0, 6.0, 3.0, 7.0, 4.0])
    assert set(one_each) == {
        "kendall_tau_c",
        "kendall_tau_c_pvalue",
        "icc3_1",
        "icc3_1_ci_low",
        "icc3_1_ci_high",
        "krippendorff_alpha",
    }
