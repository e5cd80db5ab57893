"""`arab-mm-tasks report`: two fake model runs, one in lm-eval's layout and one in lighteval's, over all five
benchmarks; every number checked against the items it comes from, and the page opened in a real browser."""

from __future__ import annotations

import csv
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from report_fixtures import (
    ARABCULTURE,
    GIMMICK,
    JEEM,
    expected_by_country,
    make_run,
    write_lighteval,
    write_lm_eval,
)

from arab_mm_tasks.cli import main
from arab_mm_tasks.core.countries import ARAB_COUNTRIES, canonical_country
from arab_mm_tasks.report.groups import bootstrap_interval
from arab_mm_tasks.report.runs import RunError, read_runs
from arab_mm_tasks.report.tables import country_label

MIN_ITEMS = 5


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    a, b = make_run("org/model-a", "lm-eval", 1), make_run("org/model-b", "lighteval", 2)
    return a, b, write_lm_eval(a, root / "lm-eval"), write_lighteval(b, root / "lighteval")


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory):
    _, _, lm_eval_dir, lighteval_dir = runs
    out = tmp_path_factory.mktemp("report")
    assert main(["report", str(lm_eval_dir), str(lighteval_dir), "--out", str(out), "--min-items", str(MIN_ITEMS)]) == 0
    return out


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _cell_mean(cell: str) -> float:
    return float(cell.split(" ", 1)[0])


def test_both_harnesses_read_back_as_runs_with_our_task_names(runs):
    _, _, lm_eval_dir, lighteval_dir = runs
    a, b = read_runs([lm_eval_dir, lighteval_dir])
    assert (a.model, a.harness, b.model, b.harness) == ("org/model-a", "lm-eval", "org/model-b", "lighteval")
    # lm-eval's alias group and lighteval's "arabculture_mcq|0" both read as the spec's name
    assert "arabculture_mcq_en_none" in a.results and "arabculture_mcq_en_none" in b.results
    assert "all" not in b.results  # lighteval's run-wide mean is no task
    assert len(a.samples("arabculture_mcq_en_none")) == len(b.samples("arabculture_mcq_en_none")) == 18


def test_paper_tables_show_the_harness_results(runs, report):
    a, b, *_ = runs
    table3 = {row["model"]: row for row in _csv(report / "arabculture_table3.csv")}
    for run in (a, b):
        mcq = run.results["arabculture_mcq"]["acc"]
        assert float(table3[run.model]["MCQ None"]) == pytest.approx(100 * mcq)  # lm-eval's [0, 1] as %
        assert table3[run.model]["MCQ R"] == ""  # not run
    pearl = {row["model"]: row for row in _csv(report / "pearl_table2.csv")}
    assert float(pearl["org/model-b"]["ACC"]) == pytest.approx(b.results["pearl_closed"]["acc"])  # x100 already
    assert float(pearl["org/model-a"]["OVR"]) == pytest.approx(a.results["pearl_open"]["overall"])
    jeem = _csv(report / "jeem_table3_captioning.csv")
    assert {(row["model"], row["subset"]) for row in jeem} == {(m, s) for m in ("org/model-a", "org/model-b")
                                                               for s in ("JO", "AE")}  # fmt: skip
    arb = {row["model"]: row for row in _csv(report / "arb_table4.csv")}
    assert float(arb["org/model-a"]["BLEU"]) == pytest.approx(a.results["arb"]["bleu"])


def test_breakdowns_by_country_are_the_items_means_with_intervals(runs, report):
    a, b, *_ = runs
    rows = {row["country"]: row for row in _csv(report / "pearl_acc_by_country.csv")}
    for run in (a, b):
        for country, mean in expected_by_country(run, "pearl_closed", "acc").items():
            cell = rows[country_label(country)][run.model]  # "Egypt · مصر"
            assert _cell_mean(cell) == pytest.approx(mean, abs=0.05)
            low, high = (float(x) for x in cell.split("[", 1)[1].split("]", 1)[0].split(", "))
            assert low <= mean + 0.05 and mean - 0.05 <= high
    assert rows["Jordan · الأردن"]["org/model-a"].endswith("n=2 †")  # too few items: flagged
    by_country = {row["country"]: row for row in _csv(report / "arabculture_by_country.csv")}
    expected = expected_by_country(a, "arabculture_mcq", "acc", scale=100)
    assert _cell_mean(by_country["Saudi Arabia · السعودية"]["org/model-a"]) == pytest.approx(expected["KSA"], abs=0.05)
    for png in ("pearl_acc_by_country", "arabculture_by_country", "jeem_bertscore_by_variety", "arb_steps_by_domain"):
        assert (report / f"{png}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_scorecard_has_a_row_per_arab_country_and_ranks_only_countries_with_enough_items(runs, report):
    a, *_ = runs
    rows = _csv(report / "scorecard_org_model_a.csv")
    assert [row["country"] for row in rows] == list(ARAB_COUNTRIES)
    by = {row["country"]: row for row in rows}
    # each release's spelling lands on one country: KSA, Syrian Arab Republic, emirates
    arabculture = {canonical_country(s): _mean_of(a, f"arabculture_mcq_en_none_{k}", "acc") * 100
                   for k, s, _, _ in ARABCULTURE}  # fmt: skip
    assert _cell_mean(by["Saudi Arabia"]["ArabCulture"]) == pytest.approx(arabculture["Saudi Arabia"], abs=0.05)
    gimmick_syria = _mean_of(a, "gimmick_civqa_none", "relaxed_acc", countries=GIMMICK[1][0])
    assert _cell_mean(by["Syria"]["GIMMICK"]) == pytest.approx(gimmick_syria, abs=0.05)
    uae = _mean_of(a, f"jeem_caption_{JEEM[1][0]}", "bertscore")
    assert _cell_mean(by["United Arab Emirates"]["JEEM"]) == pytest.approx(uae, abs=0.05)
    # summary: the mean of the columns with enough items; Egypt's GIMMICK column (4 items) is left out
    egypt = [_cell_mean(by["Egypt"][c]) for c in ("ArabCulture", "Pearl")]
    assert by["Egypt"]["GIMMICK"].endswith("†")
    assert float(by["Egypt"]["summary"]) == pytest.approx(sum(egypt) / 2, abs=0.1)
    assert by["Yemen"]["rank"] == "not ranked" and by["Iraq"]["rank"] == "–"
    ranked = sorted((int(r["rank"]), float(r["summary"])) for r in rows if r["rank"].isdigit())
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)
    text = (report / "scorecard_org_model_a.md").read_text(encoding="utf-8")
    assert "GIMMICK: 3 items name no Arab country" in text  # Japan's items are counted, not silently dropped
    summary = {row["country"]: row for row in _csv(report / "scorecard_summary.csv")}
    assert float(summary["Egypt · مصر"]["org/model-a"]) == pytest.approx(float(by["Egypt"]["summary"]))


def _mean_of(run, task: str, metric: str, countries: list[str] | None = None) -> float:
    values = [
        float(v["score"] if isinstance(v := item.scores[metric], dict) else v)
        for item in run.items
        if item.task == task and (countries is None or item.doc.get("countries") == countries)
    ]
    return sum(values) / len(values)


def test_page_is_self_contained_and_holds_every_heatmap(report):
    page = (report / "index.html").read_text(encoding="utf-8")
    pngs = sorted(report.glob("*.png"))
    assert page.count('src="data:image/png;base64,') == len(pngs) > 5
    assert "http://" not in page and "https://" not in page  # nothing to fetch at view time
    assert "Arab-world scorecard" in page and "السعودية" in page


def _chromium() -> str:
    """Debian's chromium. `.ci/run` installs it, so under CI=true a missing browser fails instead of skipping."""
    path = shutil.which("chromium")
    if path is None:
        missing = "Debian's chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {missing}; .ci/run installs it before the tests", pytrace=False)
        pytest.skip(missing)
    return path


def test_page_in_headless_chromium_shows_the_scorecard_heatmap(report, tmp_path):
    shot = tmp_path / "page.png"
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--window-size=1280,1800",
    ]
    subprocess.run([*command, f"--screenshot={shot}", (report / "index.html").as_uri()], check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    dom = subprocess.run([*command, "--dump-dom", (report / "index.html").as_uri()], check=True, capture_output=True,
                         text=True, timeout=120).stdout  # fmt: skip
    assert 'id="scorecard"' in dom and "Arab-world scorecard: org/model-a" in dom
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert pixels.shape == (1800, 1280, 3)
    # the first screen holds the scorecard heatmaps, drawn from the inlined PNGs: viridis's dark purple
    # (68, 1, 84) and yellow (253, 231, 37) cells, colours nothing else on the page has
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    purple = ((r > 50) & (r < 90) & (g < 20) & (b > 60) & (b < 110)).sum()
    yellow = ((r > 230) & (g > 200) & (b < 60)).sum()
    assert purple > 500 and yellow > 500, (purple, yellow)


def test_a_folder_without_results_is_one_line_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty"), "--out", str(tmp_path / "out")]) == 2
    assert "no lm-eval or lighteval results_*.json" in capsys.readouterr().err
    broken = tmp_path / "broken" / "results_2026-01-01T00-00-00.json"
    broken.parent.mkdir()
    broken.write_text('{"results": {}}')  # neither harness's layout
    with pytest.raises(RunError, match="neither lm-eval's nor lighteval's"):
        read_runs([broken.parent])


def test_bootstrap_interval_matches_the_normal_approximation():
    values = [1.0] * 120 + [0.0] * 80  # mean 0.6, 200 items: 1.96 * sqrt(0.24 / 200) = 0.068
    low, high = bootstrap_interval(values)
    assert low == pytest.approx(0.6 - 0.068, abs=0.015) and high == pytest.approx(0.6 + 0.068, abs=0.015)
    assert bootstrap_interval([3.0, 3.0]) == (3.0, 3.0)
    assert all(math.isnan(x) for x in bootstrap_interval([]))
    assert bootstrap_interval(values) == bootstrap_interval(values)  # seeded: a report is reproducible


def test_docs_name_every_declared_table_and_headline_entry():
    from arab_mm_tasks.core.registry import all_benchmarks

    docs = (Path(__file__).resolve().parents[2] / "docs" / "report.md").read_text(encoding="utf-8")
    for benchmark in all_benchmarks().values():
        keys = [t.key for t in benchmark.report.tables] + [b.key for b in benchmark.report.breakdowns]
        for name in [*keys, *benchmark.headline]:
            assert f"`{name}`" in docs, (benchmark.name, name)
