"""`report` and `submit` on hostile or broken run files, through the real commands (`arab-mm-tasks report`,
`arab-mm-tasks submit --dry-run`) on fake runs: injected markup never reaches a written file raw, a broken
file is one line naming it while the other runs are reported, credentials are redacted by what they are
while every number survives, a suite is one submission under the model's public name, the bootstrap
interval ignores item order, judged cells show their unscored counts, and the README's example run fills
the scorecard."""

from __future__ import annotations

import csv
import json
import random
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from report_fixtures import STAMP, FakeRun, Item, make_run, write_lighteval, write_lm_eval

from arab_mm_tasks.cli import main
from arab_mm_tasks.report.escape import csv_cell, markdown_text
from arab_mm_tasks.report.groups import group_scores

PAYLOADS = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "a|b", "line\nbreak", "=cmd|' /C calc'!A0",
            "+1+1", "-2+3", "@SUM(A1)", "\tx", "[x](javascript:alert(1))", "`code`", "**bold**", "$x^2$"]  # fmt: skip
TEXT = st.one_of(
    st.sampled_from(PAYLOADS),
    st.lists(st.sampled_from([*PAYLOADS, "مصر", "x", " ", "\r", "<", ">", "&", "|", "\\"]), min_size=1, max_size=5).map(
        "".join
    ),
)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMERIC = re.compile(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?( .*)?")


def _small_run(model: str, text: str = "Food", seed: int = 0, n: int = 6) -> FakeRun:
    """ArabCulture and Pearl items whose free-text fields (topic, question type, domain) are `text`."""
    rng = random.Random(seed)
    run = FakeRun(model, "lm-eval")
    for i in range(n):
        doc = {"id": f"e-{i}", "country": "Egypt", "region": "Nile Valley", "topic": text, "country_specific": True}
        run.items.append(Item("arabculture_mcq_en_none_egypt", doc, {"acc": float(rng.random() < 0.5)}))
        pearl = {"id": f"p-{i}", "country": text if i % 2 else "Jordan", "question_type": text, "category": text}
        run.items.append(Item("pearl_closed", pearl, {"acc": {"score": 100.0 * (i % 2), "regions": []}}))
    run.results = {
        "arabculture_mcq_en_none_egypt": {"acc": 0.5},
        "arabculture_mcq": {"acc": 0.5},
        "pearl_closed": {"acc": 50.0},
    }
    return run


def _report(paths: list[Path], out: Path, capsys) -> tuple[int, str, str]:
    code = main(["report", *map(str, paths), "--out", str(out), "--min-items", "2"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on")]


PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "code", "nav", "a", "section",
             "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "img"}  # fmt: skip


def _assert_inert(out: Path) -> None:
    for md in out.glob("*.md"):
        text = md.read_text(encoding="utf-8")
        assert not re.search(r"<[A-Za-z/!?]", text), md.name  # no tag, comment or autolink reaches Markdown
        for block in re.findall(r"(?m)(?:^\|.*\n?)+", text):  # each table: every row has the header's cells
            counts = {len(re.findall(r"(?<!\\)\|", line)) for line in block.splitlines()}
            assert len(counts) == 1, (md.name, block)
    for table in out.glob("*.csv"):
        with table.open(encoding="utf-8", newline="") as handle:
            for row in csv.reader(handle):
                for cell in row:
                    assert not cell.startswith(FORMULA_START) or _NUMERIC.fullmatch(cell), (table.name, cell)
    parser = _Tags()
    parser.feed((out / "index.html").read_text(encoding="utf-8"))
    assert parser.tags <= PAGE_TAGS and not parser.handlers, (parser.tags - PAGE_TAGS, parser.handlers)


@settings(max_examples=5, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(model=TEXT, text=TEXT)
def test_run_file_text_reaches_no_written_file_as_markup(model, text, tmp_path_factory, capsys):
    root = tmp_path_factory.mktemp("inject")
    run = _small_run(f"org/{model}", text)
    write_lm_eval(run, root / "runs")
    code, _, err = _report([root / "runs"], root / "out", capsys)
    assert code == 0, err
    page = (root / "out" / "index.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "<img src=x" not in page.lower()
    _assert_inert(root / "out")


@settings(max_examples=50, deadline=None)
@given(text=st.text(max_size=40) | TEXT)
def test_escaping_functions_leave_no_markup_and_no_formula(text):
    escaped = markdown_text(text)
    assert "<" not in escaped and ">" not in escaped and "\n" not in escaped and "\r" not in escaped
    assert not re.search(r"(?<!\\)[|`*_\[\]]", escaped)
    cell = csv_cell(text)
    assert not cell.startswith(FORMULA_START) or _NUMERIC.fullmatch(cell)
    assert (
        csv_cell(-0.25) == -0.25
        and csv_cell("-0.25 [-1.0, 0.5] n=4 (1 unscored) †") == "-0.25 [-1.0, 0.5] n=4 (1 unscored) †"
    )


def test_a_cut_samples_file_and_a_corrupt_results_file_are_one_line_each(tmp_path, capsys):
    good, cut, corrupt = _small_run("org/good"), _small_run("org/cut", seed=1), _small_run("org/corrupt", seed=2)
    for run in (good, cut, corrupt):
        write_lm_eval(run, tmp_path / "runs")
    samples = tmp_path / "runs" / "org__cut" / f"samples_pearl_closed_{STAMP['lm-eval']}.jsonl"
    samples.write_bytes(samples.read_bytes()[:-40])  # killed while writing: the last line is cut
    results = tmp_path / "runs" / "org__corrupt" / f"results_{STAMP['lm-eval']}.json"
    results.write_bytes(results.read_bytes()[:100])

    code, out, err = _report([tmp_path / "runs"], tmp_path / "report", capsys)
    assert code == 1  # written, but not every file was read
    lines = err.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in err
    assert any(str(samples) in line and "line 6 is not JSON" in line and "cut" in line for line in lines), lines
    assert any(str(results) in line and "not a readable results file" in line for line in lines), lines
    assert "org/good" in out and "org/cut" in out  # the other runs are reported
    report_md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    for file in (samples, results):
        assert markdown_text(str(file)) in report_md and str(file) in page
    by_country = {
        row["country"]: row for row in csv.DictReader((tmp_path / "report" / "pearl_acc_by_country.csv").open())
    }
    assert "org/good" in by_country["Jordan · الأردن"] and "org/cut" not in by_country["Jordan · الأردن"]
    table3 = {row["model"] for row in csv.DictReader((tmp_path / "report" / "arabculture_table3.csv").open())}
    assert table3 == {"org/good", "org/cut"}  # the cut run's results are still read

    # submit: the model with a cut file is not staged (a partial submission would pass for a whole one)
    code = main(["submit", str(tmp_path / "runs"), "--org", "o", "--dry-run", str(tmp_path / "staged")])
    captured = capsys.readouterr()
    assert code == 1 and "Traceback" not in captured.err
    assert [p.name for p in (tmp_path / "staged" / "o").iterdir()] == ["details_org__good_private"]
    assert f"org/cut: not submitted, {samples}: line 6 is not JSON" in captured.err
    assert "org/corrupt: not submitted" not in captured.err and str(results) in captured.err


@pytest.mark.parametrize("command", ["report", "submit"])
def test_out_at_an_existing_file_is_one_line(command, tmp_path, capsys):
    write_lm_eval(_small_run("org/m"), tmp_path / "runs")
    (tmp_path / "taken").write_text("x")
    option = ["--out"] if command == "report" else ["--org", "o", "--dry-run"]
    assert main([command, str(tmp_path / "runs"), *option, str(tmp_path / "taken")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"arab-mm-tasks {command}: error: {option[-1]} {tmp_path / 'taken'}: exists and is not a folder"


def _numbers(value, path=()):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers(item, (*path, index))


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


ARB_TOKEN_SCORES = {f"steps_{kind}_token_{i}": round(0.1 * i, 3) for kind in ("repetition", "faithfulness")
                    for i in range(1, 14)}  # fmt: skip
HF = "hf_" + "AbC1" * 9
SECRETS = [HF, "sk-proj-0123456789abcdefXYZ", "s3cr3t-pass", "k3y-in-url", "ghp_" + "Z9" * 16]


def test_submit_redacts_credentials_by_value_and_keeps_every_number(tmp_path, capsys):
    a = make_run("org/model-a", "lm-eval", 1)
    a.results["arb"].update(ARB_TOKEN_SCORES)
    config = {
        "model_args": f"pretrained=org/model-a,token={HF},dtype=float16",
        "gen_kwargs": {"max_new_tokens": 512, "temperature": 0.0},
        "max_new_tokens": 256,
        "judge": {"api_key": SECRETS[1], "base_url": f"https://user:{SECRETS[2]}@judge.example/v1?key={SECRETS[3]}"},
        "note": f"github {SECRETS[4]}",
        "token_budget": 4096,
    }
    write_lm_eval(a, tmp_path / "lm-eval", config=config)
    b = make_run("org/model-b", "lighteval", 2)
    b.results["arb"].update(ARB_TOKEN_SCORES)
    write_lighteval(b, tmp_path / "lighteval")
    staged = tmp_path / "staged"
    assert main(["submit", str(tmp_path / "lm-eval"), str(tmp_path / "lighteval"), "--org", "o", "--dry-run",
                 str(staged)]) == 0  # fmt: skip
    capsys.readouterr()
    for file in staged.rglob("*"):
        if file.is_file():
            content = file.read_bytes()
            assert not any(secret.encode() in content for secret in SECRETS), file

    stamp = STAMP["lm-eval"]
    source = json.loads(next((tmp_path / "lm-eval").rglob("results_*.json")).read_text())
    staged_a = json.loads((staged / "o" / "details_org__model-a_private" / f"results_{stamp}.json").read_text())
    # every number of the run, in its staged place: the scores (re-keyed "<task>|0") and the configuration
    expected = {
        ("results", f"{task}|0", key.partition(",")[0]): value
        for task, metrics in source["results"].items()
        for key, value in metrics.items()
        if isinstance(value, (int, float)) and "_stderr" not in key
    }
    expected |= {("config_general", "model_config", *path): v for path, v in _numbers(source["config"])}
    assert dict(_numbers(staged_a)) == expected
    assert staged_a["results"]["arb|0"]["steps_repetition_token_7"] == pytest.approx(0.7)
    assert staged_a["config_general"]["model_config"]["gen_kwargs"]["max_new_tokens"] == 512

    source_b = json.loads(next((tmp_path / "lighteval").rglob("results_*.json")).read_text())
    staged_b = json.loads(
        (staged / "o" / "details_org__model-b_private" / f"results_{STAMP['lighteval']}.json").read_text()
    )
    assert dict(_numbers(staged_b)) == dict(_numbers(source_b))  # a lighteval file: every number as it was
    assert "<redacted>" in set(_strings(staged_b))  # its config's api_key


def test_a_suite_is_one_submission_named_by_the_model_not_its_folder(tmp_path, capsys):
    local = "/home/x/models/foo"
    first, second = _small_run(local), make_run(local, "lm-eval", 3)
    second.items = [item for item in second.items if item.task.startswith(("jeem", "arb"))]
    second.results = {t: m for t, m in second.results.items() if t.startswith(("jeem", "arb"))}
    stamps = ["2026-11-20T10-00-00.000001", "2026-11-20T12-30-00.000002"]
    write_lm_eval(first, tmp_path / "runs", stamps[0])
    write_lm_eval(second, tmp_path / "runs", stamps[1])
    staged = tmp_path / "staged"
    assert main(["submit", str(tmp_path / "runs"), "--org", "o", "--dry-run", str(staged)]) == 0
    assert "foo: " in capsys.readouterr().out
    (repo,) = (staged / "o").iterdir()
    assert repo.name == "details_foo_private"
    files = {str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file()}
    assert {f for f in files if f.startswith("results_")} == {
        f"results_{stamps[1]}.json",
        f"results_{stamps[1]}.parquet",
    }
    assert {f.split("/")[0] for f in files if "/" in f} == {stamps[1]}  # one run date: the latest entry's
    results = json.loads((repo / f"results_{stamps[1]}.json").read_text())
    assert {"pearl_closed|0", "arabculture_mcq|0", "arb|0", "jeem_caption_jordanian|0"} <= set(results["results"])
    card = (repo / "README.md").read_text()
    latest = json.loads(card.split("```json\n", 1)[1].split("\n```", 1)[0])["all"]
    assert set(latest) == set(results["results"])  # the card's latest results show every entry
    for file in repo.rglob("*"):
        if file.is_file():
            content = file.read_bytes()
            assert b"/home/x" not in content and b"__home__x" not in content, file


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_bootstrap_interval_is_the_same_in_any_item_order(seed):
    rng = random.Random(seed)
    samples = [("t", {"doc": {"id": f"r{i}", "country": "Egypt"}, "acc": float(rng.random() < 0.3)}) for i in range(23)]
    shuffled = samples[:]
    rng.shuffle(shuffled)
    of = lambda task, doc: [doc["country"]]  # noqa: E731
    assert group_scores(samples, "acc", of) == group_scores(shuffled, "acc", of)


def test_lm_eval_and_lighteval_orders_of_the_same_items_give_one_interval(tmp_path, capsys):
    run = _small_run("org/m", n=11)
    run.items = [item for item in run.items if item.task == "pearl_closed"]
    for item in run.items:
        item.scores = {"acc": {"score": 100.0 * (int(item.doc["id"][2:]) % 3 == 0), "regions": []}}
    write_lm_eval(run, tmp_path / "lm-eval")
    reordered = FakeRun(run.model, "lighteval", list(reversed(run.items)), run.results)
    write_lighteval(reordered, tmp_path / "lighteval")
    code, _, err = _report([tmp_path / "lm-eval", tmp_path / "lighteval"], tmp_path / "out", capsys)
    assert code == 0, err
    rows = list(csv.DictReader((tmp_path / "out" / "pearl_acc_by_country.csv").open(encoding="utf-8")))
    for row in rows:
        assert row["org/m (lm-eval)"] == row["org/m (lighteval)"], row
    assert any(" [" in row["org/m (lm-eval)"] and "[0.0, 100.0]" not in row["org/m (lm-eval)"] for row in rows)


def test_every_judged_cell_shows_its_unscored_count(tmp_path, capsys):
    run = make_run("org/m", "lm-eval", 1)
    run.results = {"arb": {"final_answer": 66.6667, "final_answer_unscored": 10.0, "reasoning_steps": 50.0,
                           "reasoning_steps_unscored": 0.0}}  # fmt: skip
    run.items = [item for item in run.items if item.task == "arb"]
    run.items[0].scores["final_answer"] = {"score": None, "regions": [], "judge": "x", "judge_status": "invalid"}
    write_lm_eval(run, tmp_path / "runs")
    results = next((tmp_path / "runs").rglob("results_*.json"))
    data = json.loads(results.read_text())
    data["n-samples"] = {"arb": {"original": 28, "effective": 28}}
    results.write_text(json.dumps(data))
    code, _, err = _report([tmp_path / "runs"], tmp_path / "out", capsys)
    assert code == 0, err
    table3 = (tmp_path / "out" / "arb_table3.md").read_text(encoding="utf-8")
    assert "| 66.67 (10/28 unscored) | 50.00 |" in table3
    (row,) = [r for r in csv.DictReader((tmp_path / "out" / "arb_table3.csv").open()) if r["model"] == "org/m"]
    assert row["Final Answer"] == "66.6667 (10/28 unscored)" and row["Reasoning Steps"] == "50.0"
    by_domain = {
        r["domain"]: r["org/m"] for r in csv.DictReader((tmp_path / "out" / "arb_final_answer_by_domain.csv").open())
    }
    domain = run.items[0].doc["domain"]
    assert by_domain[domain].endswith("(1 unscored)") and all(
        "unscored" not in v for d, v in by_domain.items() if d != domain
    )


def test_the_readme_example_run_fills_the_scorecard_from_its_variant(tmp_path, capsys):
    run = FakeRun("org/m", "lm-eval")
    rng = random.Random(5)
    for key, spelling in (("egypt", "Egypt"), ("jordan", "Jordan")):
        for i in range(4):
            doc = {"id": f"{key}-{i}", "country": spelling, "region": "x", "topic": "Food", "country_specific": True}
            run.items.append(Item(f"arabculture_mcq_ar_region_country_{key}", doc, {"acc": float(rng.random() < 0.5)}))
            run.items.append(Item(f"arabculture_completion_en_none_{key}", doc, {"acc": float(rng.random() < 0.5)}))
    run.results = {"arabculture_mcq_ar_region_country": {"acc": 0.5}, "arabculture_completion_en_none": {"acc": 0.4}}
    write_lm_eval(run, tmp_path / "runs")
    code, out, err = _report([tmp_path / "runs"], tmp_path / "report", capsys)
    assert code == 0, err
    card = (tmp_path / "report" / "scorecard_org_m.md").read_text(encoding="utf-8")
    assert "arabculture\\_mcq\\_ar\\_region\\_country, the variant it has" in card  # says which variant it read
    rows = {r["country"]: r for r in csv.DictReader((tmp_path / "report" / "scorecard_org_m.csv").open())}
    assert rows["Egypt"]["ArabCulture"].endswith("n=4") and rows["Jordan"]["ArabCulture"].endswith("n=4")
    report_md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "log\\_samples" not in report_md and "log_samples" not in report_md
    pngs = len(list((tmp_path / "report").glob("*.png")))
    assert f"and {pngs} heatmaps" in out and pngs >= 1
