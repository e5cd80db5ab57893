"""The report's tables beyond Table 3s: the paper tables of issue 24.12, each recomputed here from the fake
samples of `report_fixtures`, and the one Markdown escaping rule every Markdown table of the package uses."""

from __future__ import annotations

import csv
import html
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from report_fixtures import ARABCULTURE, ARB_DOMAINS, add_arabic_variant, make_run, write_lighteval, write_lm_eval

from arab_mm_tasks.cli import main
from arab_mm_tasks.core.countries import ARABIC_NAME
from arab_mm_tasks.report.tables import file_key
from metric_plugins.breakdowns import BreakdownRow, format_table
from metric_plugins.markdown import markdown_text, one_line

_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list[str]:
    """A Markdown table line's cells, split on pipes that are not escaped."""
    return [cell.strip() for cell in _UNESCAPED_PIPE.split(line)[1:-1]]


def _unescape(cell: str) -> str:
    return html.unescape(re.sub(r"\\(.)", r"\1", cell))


def test_the_report_and_the_breakdown_command_share_one_markdown_rule():
    from arab_mm_tasks.report import escape

    assert escape.markdown_text is markdown_text and escape.one_line is one_line


@settings(max_examples=40, deadline=None)
@given(
    groups=st.lists(st.tuples(st.text(max_size=30), st.text(max_size=30)), min_size=1, max_size=5),
    key=st.sampled_from(["topic", "question_type", "a|b", "<b>x</b>"]),
)
def test_breakdown_table_cells_keep_run_file_text_literal_in_their_own_cell(groups, key):
    rows = [BreakdownRow(group, 3, 0.5, unscored=int(i == 0)) for i, group in enumerate(groups)]
    lines = format_table(rows, [key, "country"], "acc").splitlines()
    assert len(lines) == len(rows) + 2  # a line break in a value splits no row
    header = _cells(lines[0])
    assert [_unescape(h) for h in header] == [key, "country", "n", "acc (%)", "unscored"]
    for line, row in zip(lines[2:], rows, strict=True):
        assert "<" not in line and ">" not in line  # no HTML a Markdown viewer would render
        cells = _cells(line)
        assert len(cells) == len(header)  # a "|" in a value is escaped, not a new column
        assert [_unescape(c) for c in cells[:2]] == [one_line(v).strip() for v in row.group]
        assert cells[2:] == ["3", "50.0", str(row.unscored)]


def test_breakdown_table_escapes_markup_from_a_document_field():
    row = BreakdownRow(("<img src=x onerror=alert(1)> | *Food*",), 2, 1.0)
    assert format_table([row], ["topic"], "acc").splitlines()[2] == (
        r"| &lt;img src=x onerror=alert(1)&gt; \| \*Food\* | 2 | 100.0 |"
    )


# ----------------------------------------------------------------------------- the paper tables (issue 24.12)

MIN_ITEMS = 5
A, B = "org/model-a", "org/model-b"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Model A in lm-eval's layout with an Arabic-prompt variant (R+C) and all COQA_R inputs; model B in
    lighteval's, English only and text-only on COQA_R."""
    root = tmp_path_factory.mktemp("runs")
    a = add_arabic_variant(make_run(A, "lm-eval", 1), "region_country", 11)
    b = make_run(B, "lighteval", 2, gimmick_modalities=("text",))
    return a, b, write_lm_eval(a, root / "lm-eval"), write_lighteval(b, root / "lighteval")


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory):
    *_, lm_eval_dir, lighteval_dir = runs
    out = tmp_path_factory.mktemp("report")
    assert main(["report", str(lm_eval_dir), str(lighteval_dir), "--out", str(out), "--min-items", str(MIN_ITEMS)]) == 0
    return out


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _mean_cell(cell: str) -> float:
    return float(cell.split(" ", 1)[0])


def _cs(flag: bool | None) -> str:
    return "CS" if flag is True else "¬CS" if flag is False else "CS unknown"


def _expected_cs_table(run, task: str, rows_of) -> dict[tuple[str, str], float]:
    """(row, "model · split") -> mean accuracy (%) of the items of `task`'s per-country leaves, from the items."""
    canonical = {spelling: name for _, spelling, name, _ in ARABCULTURE}
    groups: dict[tuple[str, str], list[float]] = {}
    for item in run.items:
        if item.task.startswith(f"{task}_"):
            for row in rows_of(item.doc, canonical):
                column = f"{run.model} · {_cs(item.doc['country_specific'])}"
                groups.setdefault((row, column), []).append(100 * item.scores["acc"])
    return {key: sum(values) / len(values) for key, values in groups.items()}


def _locations(doc, canonical) -> list[str]:
    country = canonical[doc["country"]]
    return [doc["region"], f"{doc['region']} › {country} · {ARABIC_NAME[country]}"]


def _topics(doc, canonical) -> list[str]:
    return [doc["topic"]]


def _assert_table(rows: list[dict[str, str]], first: str, expected: dict[tuple[str, str], float]) -> None:
    """Every expected cell's mean, every other model column blank, rows sorted (regions before their countries)."""
    assert [row[first] for row in rows] == sorted({row for row, _ in expected})
    columns = {column for _, column in expected}
    for row in rows:
        for column in columns:
            cell = row[column]
            if (row[first], column) in expected:
                assert _mean_cell(cell) == pytest.approx(expected[row[first], column], abs=0.05), (row[first], column)
            else:
                assert cell == "–"


def test_table4_is_regions_then_their_countries_with_each_model_split_cs(runs, report):
    a, b, *_ = runs
    rows = _csv(report / "arabculture_table4.csv")
    expected = {**_expected_cs_table(a, "arabculture_mcq_en_none", _locations),
                **_expected_cs_table(b, "arabculture_mcq_en_none", _locations)}  # fmt: skip
    assert list(rows[0]) == ["region › country", *(f"{m} · {s}" for m in (A, B) for s in ("CS", "CS unknown", "¬CS"))]
    assert [row["region › country"] for row in rows] == [
        "Gulf", "Gulf › Saudi Arabia · السعودية", "Gulf › Yemen · اليمن", "Nile Valley", "Nile Valley › Egypt · مصر"
    ]  # fmt: skip
    _assert_table(rows, "region › country", expected)
    # a region row pools its countries: Gulf CS = KSA's and Yemen's CS items together
    gulf = [100 * i.scores["acc"] for i in a.items if i.task.startswith("arabculture_mcq_en_none_")
            and i.doc["region"] == "Gulf" and i.doc["country_specific"] is True]  # fmt: skip
    gulf_row = next(row for row in rows if row["region › country"] == "Gulf")
    assert _mean_cell(gulf_row[f"{A} · CS"]) == pytest.approx(sum(gulf) / len(gulf), abs=0.05)
    assert gulf_row[f"{A} · CS"].endswith(f"n={len(gulf)}")  # every item counted, the null flags apart


def test_table5_is_topics_split_cs(runs, report):
    a, b, *_ = runs
    expected = {**_expected_cs_table(a, "arabculture_mcq_en_none", _topics),
                **_expected_cs_table(b, "arabculture_mcq_en_none", _topics)}  # fmt: skip
    _assert_table(_csv(report / "arabculture_table5.csv"), "topic", expected)


def test_tables_6_and_7_read_the_arabic_variant_of_the_model_that_ran_it(runs, report):
    a, *_ = runs
    task = "arabculture_mcq_ar_region_country"
    table6 = _csv(report / "arabculture_table6.csv")
    assert all(not column.startswith(B) for column in table6[0])  # model B ran no Arabic prompt
    _assert_table(table6, "region › country", _expected_cs_table(a, task, _locations))
    _assert_table(_csv(report / "arabculture_table7.csv"), "topic", _expected_cs_table(a, task, _topics))
    assert "Table 6 (arabculture.txt L407-426)" in (report / "arabculture_table6.md").read_text(encoding="utf-8")


def test_table9_shows_the_arabic_variant_results_when_run(runs, report):
    a, *_ = runs
    rows = {row["model"]: row for row in _csv(report / "arabculture_table9.csv")}
    assert list(rows) == [A]  # model B has no Arabic-prompt result: no row
    expected = 100 * a.results["arabculture_mcq_ar_region_country"]["acc"]
    assert float(rows[A]["MCQ R+C"]) == pytest.approx(expected)
    assert rows[A]["MCQ None"] == rows[A]["Compl R"] == ""  # not run


def test_without_an_arabic_prompt_run_tables_6_7_and_9_are_not_written(runs, tmp_path):
    *_, lighteval_dir = runs
    assert main(["report", str(lighteval_dir), "--out", str(tmp_path), "--min-items", str(MIN_ITEMS)]) == 0
    assert (tmp_path / "arabculture_table4.csv").exists()
    for key in ("arabculture_table6", "arabculture_table7", "arabculture_table9"):
        assert not (tmp_path / f"{key}.csv").exists(), key


def test_arb_attribute_heatmaps_per_model_are_the_domain_means(runs, report):
    from arab_mm_tasks.arb.domains import BY_KEY

    for run in runs[:2]:
        table = report / f"{file_key('arb_attributes_by_domain', run.model)}.csv"
        rows = {row["subset"]: row for row in _csv(table)}
        assert list(rows) == ["OCR", "MED"]  # the domains the run has, in the paper's order (VR, OCR, ..., MED)
        for domain, _ in ARB_DOMAINS:
            items = [i for i in run.items if i.task == "arb" and i.doc["domain"] == domain]
            for attribute, label in (("faithfulness_step", "Faithfulness-Step"), ("hallucination", "Hallucination"),
                                     ("missing_step", "Missing Step")):  # fmt: skip
                mean = sum(i.scores[f"steps_{attribute}"]["score"] for i in items) / len(items)
                assert float(rows[BY_KEY[domain].abbreviation][label]) == pytest.approx(mean)
            assert rows[BY_KEY[domain].abbreviation]["Commonsense"] == ""  # not in the run: blank, not 0
        assert table.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Figures 15-16 (arb.txt L529-532)" in (report / "report.md").read_text(encoding="utf-8")


def test_gimmick_avg_is_the_mean_of_i_t_it_or_a_text_only_models_t(runs, report):
    a, b, *_ = runs
    rows = {row["model"]: row for row in _csv(report / "gimmick_table15_coqa_r.csv")}

    def mean(run, task: str) -> float:
        values = [i.scores["relaxed_acc"]["score"] for i in run.items if i.task == task]
        return sum(values) / len(values)

    inputs = {label: mean(a, f"gimmick_coqa_r_{m}") for label, m in (("I", "image"), ("T", "text"),
                                                                       ("I+T", "image_text"))}  # fmt: skip
    for label, value in inputs.items():
        assert float(rows[A][f"Avg {label}"]) == pytest.approx(value)
    assert float(rows[A]["Avg."]) == pytest.approx(sum(inputs.values()) / 3)
    assert float(rows[B]["Avg T"]) == pytest.approx(mean(b, "gimmick_coqa_r_text"))
    assert float(rows[B]["Avg."]) == pytest.approx(mean(b, "gimmick_coqa_r_text"))  # the paper's LLM rows
    assert rows[B]["Avg I"] == rows[B]["Avg I+T"] == ""


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        ({"text": 40.0}, 40.0),  # text-only: its T
        ({"image": 10.0, "text": 40.0, "image_text": 70.0}, 40.0),  # all three: their mean
        ({"image": 10.0}, None),  # an image-only run is no paper row: no Avg.
        ({"image": 10.0, "text": 40.0}, None),  # two of three: no partial mean
    ],
)
def test_gimmick_avg_rule_on_partial_runs(members, expected):
    from arab_mm_tasks.report.runs import ModelRun
    from arab_mm_tasks.report.tables import family_value

    run = ModelRun("m", "lighteval", results={f"gimmick_coqa_c_{m}": {"relaxed_acc": v} for m, v in members.items()})
    value = family_value(run, "gimmick_coqa_c", "relaxed_acc", alone=("gimmick_coqa_c_text",))
    assert value == (None if expected is None else pytest.approx(expected))
