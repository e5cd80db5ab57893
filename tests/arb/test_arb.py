"""ARB in-process: the builder on the authors' CSV, the exact prompt, extraction on GPT-4.1's answers,
the judges' parsing and per-attribute routing, and Table 4 through the task's own metric code."""

from __future__ import annotations

import csv
import io
import json
import lzma
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from shared_files import shared

from arab_mm_tasks.arb.answers import answer_match, split_response, strip_answer_prefix
from arab_mm_tasks.arb.domains import domain_of
from arab_mm_tasks.arb.prompt import EXAMPLE, FIGURE_4
from arab_mm_tasks.arb.released import compose_response
from arab_mm_tasks.arb.scorers import bleu, rouge1, rouge2, rougeL
from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.core.scoring import aggregation_kind, aggregator, score_sample
from dataset_builders.arb import build
from dataset_builders.arb.parsing import parse_choices, parse_steps
from metric_plugins.judge.prompts.arb import OVERALL, STEP_ATTRIBUTES, RubricScores

REAL = shared("real/arb")
SAMPLE = REAL / "gpt-4.1-final-responses.stratified_sample.csv"
HEAD = REAL / "gpt-4.1-final-responses.head30.csv"
EVAL_COLUMNS = REAL / "gpt-4.1-final-responses.eval-columns.csv.xz"
PAPER = shared("papers/arb.txt")


@pytest.fixture(scope="module")
def released() -> list[dict[str, str]]:
    if not EVAL_COLUMNS.exists():
        pytest.skip("ARB's released CSV is not in shared/real")
    return list(csv.DictReader(io.StringIO(lzma.decompress(EVAL_COLUMNS.read_bytes()).decode("utf-8"), newline="")))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    if not SAMPLE.exists():
        pytest.skip("ARB's released CSV is not in shared/real")
    out = tmp_path_factory.mktemp("arb")
    report = build(out, csv=SAMPLE)
    assert (report.rows_read, report.rows_written, report.rows_skipped) == (28, 28, 0)
    assert report.counts["all"] == 28 and report.counts["cdt"] == 9 and report.counts["cvp"] == 1
    assert report.stats["rows_without_step_markers"] == 1 and report.stats["rows_without_image"] == 28
    return out


def _rows(folder: Path, config: str | None = None) -> dict[str, dict]:
    """A built folder's rows by id, as stored: one domain's (`config`) or every domain's."""
    return {row["id"]: row for row in pq.read_table(folder / "data" / (config or "")).to_pylist()}


def _ids(folder: Path, config: str = "all") -> list[str]:
    """A config's ids in the order `datasets` loads them."""
    import datasets

    rows = datasets.load_dataset(str(folder), config, split="test", columns=["id"], cache_dir=str(folder / ".cache"))
    return list(rows["id"])


def test_builder_parses_every_quirk_and_keeps_model_outputs_out_of_the_gold_rows(built):
    rows = _rows(built)
    assert not any(name.startswith("gpt-4.1") for name in next(iter(rows.values())))
    assert rows["Chart_32.png"]["domain"] == "cdt" and rows["Chart_32.png"]["domain_raw"] == ""  # blank category
    assert rows["blink_val_IQ_Test_1"]["domain"] == "cvp" and rows["blink_val_IQ_Test_1"]["choices_in_question"]
    assert rows["Dynamath_1"]["domain_raw"] == " Math and Logic Reasoning" and rows["Dynamath_1"]["domain"] == "ml"
    assert rows["diag_10.png"]["choices"] == ["د .1", "هـ .2", "أ .3", "ب .4"]
    assert rows["diag_10.png"]["answer_resolved"] == "أ"  # Diagrams: the answer is the option's content
    assert rows["test_Pharmacy_230.png"]["answer_resolved"] == "ب. ٢"  # a letter indexes bare digit labels
    typo = rows["s_test_Pharmacy_246.png"]  # starts with the typo'd marker لخطوة 1
    assert typo["steps_raw"].startswith("لخطوة 1:") and typo["num_steps"] == len(typo["steps"]) == 3
    assert typo["steps"][0]["step"] == "تحديد مكونات كل بنية كيميائية"
    assert rows["agro_6.jpg"]["num_steps"] == 3 and rows["agro_6.jpg"]["steps_raw"].startswith("['")  # list literal
    assert rows["ALM_25"]["num_steps"] == 0 and rows["ALM_25"]["steps_raw"].startswith("1. ")
    assert rows["ALM_32"]["image_path"] == "ALM_32.png"  # image_path differs from image_id
    assert rows["Dynamath_95"]["answer_resolved"] == "18"
    assert set(_rows(built, "cdt")) == {i for i, r in rows.items() if r["domain"] == "cdt"}
    predictions = [json.loads(x) for x in (built / "predictions" / "gpt-4.1.jsonl").read_text().splitlines()]
    assert len(predictions) == 28 and predictions[0]["answer"] == "أ. سيطيب بها قلبك"
    assert split_response(predictions[0]["response"]) == (predictions[0]["steps"].strip(), "أ. سيطيب بها قلبك")


def test_each_row_is_stored_once_and_config_all_reads_the_domains_in_release_order(built):
    assert not (built / "data" / "all").exists()
    stored = pq.read_table(built / "data", columns=["id", "domain"]).to_pylist()
    assert len(stored) == 28 and len({row["id"] for row in stored}) == 28  # no image written twice
    assert _ids(built) == [row["image_id"] for row in _csv_rows(SAMPLE)]  # the release's order (grouped by domain)
    assert _ids(built, "cdt") == ["Chart_44.png", "Chart_25.png", "Chart_32.png", "diag_10.png", "diag_1002.png",
                                  "diag_1247.png", "diag_1248.png", "table_1.png", "table_10.png"]  # fmt: skip
    card = (built / "README.md").read_text("utf-8")
    assert "@misc{ghaboura2025arbcomprehensivearabicmultimodal," in card and "eprint        = {2505.17021}" in card
    assert "Rows come from the authors' CSV release `gpt-4.1-final-responses.stratified_sample.csv`" in card
    assert "28 rows have no image" in card and "1,355 rows" not in card and "`predictions/<model>.jsonl`" in card


def test_a_folder_missing_a_domain_is_refused_for_all_and_that_domain(built, tmp_path):
    import shutil

    from arab_mm_tasks.core.sources import DataSourceError, check_config

    check_config(built, "all", "arb")  # `all` is declared by the card, read from the domains' folders
    partial = shutil.copytree(built, tmp_path / "partial")
    shutil.rmtree(partial / "data" / "ocr")
    check_config(partial, "cdt", "arb")
    for config in ("all", "ocr"):
        with pytest.raises(DataSourceError, match=r"partial lacks configs all, vr, ocr \(it holds agro, cdt,"):
            check_config(partial, config, "arb")


def test_bad_rows_are_named_by_row_and_field(tmp_path):
    text = SAMPLE.read_text(encoding="utf-8")
    header = text.partition("\n")[0]
    bad = tmp_path / "bad.csv"
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    rows[3]["choices"] = "['أ. unterminated"
    with bad.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=header.split(","))
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(ValueError, match=r"csv row 3 \(Chart_25.png\): field 'choices' is not a Python list"):
        build(tmp_path / "out", csv=bad)
    report = build(tmp_path / "out", csv=bad, on_bad_records="skip")
    assert report.rows_skipped == 1 and report.rows_written == 27


RELEASE_HEADER = ["image_id", "question", "answer", "choices", "steps", "category ", "probabilities", "image_path",
                  "gpt-4.1-steps", "gpt-4.1-answers"]  # fmt: skip
FIGURE_20 = {"vr": 23, "ocr": 46, "cdt": 330, "ml": 560, "soc_cult": 104, "cvp": 35, "med": 61, "sci_r": 83,
             "hist": 50, "rs": 30, "agro": 34}  # fmt: skip


def test_the_builder_on_all_1356_released_rows(released, tmp_path):
    """The eval-columns slice lacks `question`, `choices`, `probabilities` and `image_path`: they are filled
    with a stand-in question and left empty, so every other column goes through the builder as released."""
    rows = [{**{k: row.get(k, "") for k in RELEASE_HEADER}, "question": "؟"} for row in released]
    report = build(tmp_path / "full", csv=_write_csv(tmp_path / "release.csv", rows))
    assert (report.rows_read, report.rows_written, report.rows_skipped) == (1356, 1356, 0)
    assert report.counts == {"all": 1356, **FIGURE_20}
    assert report.stats["step_pairs"] == 5121 and report.stats["rows_without_step_markers"] == 3
    inferred = {k.rsplit("_", 1)[-1]: v for k, v in report.stats.items() if k.startswith("domain_inferred")}
    assert inferred == {"cdt": 1, "cvp": 35, "ml": 158, "vr": 23}  # the 217 blank categories
    assert not any("release has" in warning for warning in report.warnings)  # 1,356: the release's count
    assert _ids(tmp_path / "full", "vr") == [
        r["image_id"] for r in released if domain_of(r["category "], r["image_id"]) == "vr"
    ]
    assert len(_predictions(tmp_path / "full")) == 1356
    head = build(tmp_path / "head", csv=HEAD)
    assert (head.rows_read, head.rows_written, head.counts, head.stats["step_pairs"]) == (
        30,
        30,
        {"all": 30, "ocr": 30},
        110,
    )
    assert [p["id"] for p in _predictions(tmp_path / "head")] == [r["image_id"] for r in _csv_rows(HEAD)]


def test_steps_and_domains_of_all_1356_released_rows(released):
    pairs = [parse_steps(row["steps"]) for row in released]
    assert sum(map(len, pairs)) == 5121 and max(map(len, pairs)) == 16
    assert [row["row"] for row, p in zip(released, pairs, strict=True) if not p] == ["573", "617", "845"]
    domains = [domain_of(row["category "], row["image_id"]) for row in released]
    counts = {d: domains.count(d) for d in set(domains)}
    assert counts == FIGURE_20
    assert parse_choices("['أ','ب']\n") == ["أ", "ب"] and parse_choices("") == []


def _doc(domain: str, curriculum: str, question: str, choices: list[str]) -> dict:
    return {"id": "x", "image": {"bytes": b"", "path": None}, "question": question, "choices": choices,
            "answer": "أ", "steps_raw": "الخطوة 1: أ", "domain": domain, "curriculum": curriculum}  # fmt: skip


@pytest.mark.parametrize(
    ("domain", "curriculum", "domain_ar"),
    [("ml", "حسابي", "الاستدلال الرياضي والمنطقي"), ("med", "علمي/طبي", "تحليل الصور الطبية"),
     ("ocr", "نصي/جزئي", "التعرف الضوئي على النصوص وتحليل المستندات"), ("cvp", "عامي", "الإدراك البصري المعقد")],
)  # fmt: skip
def test_exact_model_prompt_per_curriculum(domain, curriculum, domain_ar):
    from arab_mm_tasks.arb.tasks import query

    paper = "\n".join(PAPER.read_text(encoding="utf-8").splitlines()[148:161])  # Figure 4, L149-161
    assert paper == FIGURE_4
    figure = paper.replace("{Domain}", domain_ar).replace("{example}", EXAMPLE)
    figure = figure.replace("منهج {Curriculum}", f"منهج {curriculum}")
    doc = _doc(domain, curriculum, "<image 1>، أي تسمية تحدد مجموعة البروبيل؟", ["١", "٢"])
    assert query(doc) == f"<image>\n{figure}\n\nالسؤال: ، أي تسمية تحدد مجموعة البروبيل؟\nالخيارات:\n١\n٢"
    inline = _doc(domain, curriculum, "ما هو؟ الخيارات: أ) ماريلاند. ب) فيرمونت.", [])
    assert query(inline).endswith("\n\nالسؤال: ما هو؟ الخيارات: أ) ماريلاند. ب) فيرمونت.")
    listed = _doc(domain, curriculum, "السؤال: أي؟ أ. قطة ب. كلب", ["أ. قطة", "ب. كلب"])
    assert query(listed).endswith("\n\nالسؤال: أي؟ أ. قطة ب. كلب")  # never listed twice


NUMERIC = ["أ. 12", "ب. 15", "ج. 20", "د. 25"]


@pytest.mark.parametrize(
    ("question", "choices", "listed"),
    [("في المخطط القيم 12 و 15 و 20 و 25، أي قيمة تمثل المبيعات؟", NUMERIC, False),  # texts only: not listed
     ("أي قيمة تمثل المبيعات؟ أ) 12 ب) 15 ج) 20 د) 25", NUMERIC, True),
     ("أي قيمة تمثل المبيعات؟ (أ) 12، (ب) 15، (ج) 20، (د) 25", NUMERIC, True),
     ("أي قيمة؟ أ) 12 ب) 15 ج) 20", NUMERIC, False),  # one option missing
     ("القيم 2.5 و 3.5، أي قيمة؟", ["2", "3"], False),  # a decimal point is no option marker
     ("أي بنية تعد هيدروكربون مشبع؟", ["أ", "ب", "ج", "د"], False),  # bare labels, options in the image
     ("أي بنية؟ (أ) الأولى (ب) الثانية", ["أ", "ب"], True),
     ("أي صورة تمثل فاجونيا إندكا؟ اختر الإجابة الصحيحة من الخيارات أدناه.", ["د .1", "هـ .2"], False),
     ("أي صورة؟ 1. د 2. هـ", ["د .1", "هـ .2"], True)],
)  # fmt: skip
def test_choices_count_as_in_the_question_only_with_their_labels(question, choices, listed):
    from arab_mm_tasks.arb.prompt import choices_in_question
    from arab_mm_tasks.arb.tasks import query

    assert choices_in_question(question, choices) is listed
    rendered = query(_doc("cdt", "حسابي", question, choices))
    shown = "\n".join(choices)
    assert rendered.endswith(f"السؤال: {question}" if listed else f"السؤال: {question}\nالخيارات:\n{shown}")


def test_extraction_recovers_every_released_gpt41_answer(released):
    marked = 0
    for row in released:
        steps, answer = split_response(compose_response(row["gpt-4.1-steps"], row["gpt-4.1-answers"]))
        assert answer == strip_answer_prefix(row["gpt-4.1-answers"]).strip("*").strip()
        if answer == row["gpt-4.1-answers"].strip().strip("*").strip():
            assert steps == row["gpt-4.1-steps"].strip()
        else:  # GPT-4.1's answer holds a marker itself ("الإجابة النهائية: ب. …"): the text after it
            marked += 1
    assert marked < 20
    assert split_response("…\n**الجواب النهائي:** ب") == ("…", "ب")
    assert split_response("الخطوة 1: x\nب") == ("الخطوة 1: x\nب", "ب")  # no marker: the last line


@pytest.mark.parametrize(
    ("prediction", "gold", "choices", "expected"),
    [("أ. سيطيب بها قلبك", "أ", ["أ. سيطيب بها قلبك", "ب. أحلام"], 1.0), ("الأفلام", "أ", ["أ. الأفلام", "ب. ب"], 1.0),
     ("د .1", "أ", ["د .1", "هـ .2", "أ .3"], 0.0), ("أ .3", "أ", ["د .1", "هـ .2", "أ .3"], 1.0),
     ("2.09", "2.0944", [], 1.0), ("2.5", "2.0944", [], 0.0), ("١٢", "12", [], 1.0),
     ("محيط السداسي هو 18.", "الإجابة النهائية: 18", [], 1.0), ("نيو هامبشاير", "ب", [], 0.0)],
)  # fmt: skip
def test_answer_match(prediction, gold, choices, expected):
    assert answer_match(prediction, gold, choices) == expected


def test_rubric_reply_overall_is_recomputed_and_attributes_route_to_their_metrics():
    reply = {a: 8 for a in STEP_ATTRIBUTES} | {"Hallucination": 6, "Overall Score": 1}
    scores = RubricScores().parse(json.dumps(reply)).scores
    assert scores[OVERALL] == pytest.approx(78.0) and scores["Hallucination"] == 6.0
    assert RubricScores().parse('{"Faithfulness-Step": 11}').reason is not None
    spec = get_spec("arb")
    doc = _doc("ml", "حسابي", "س؟", [])
    values = score_sample(spec, doc, "الخطوة 1: أ\nالجواب هو: أ")
    assert values["steps_hallucination"]["judge_score"] == "Hallucination"
    assert values["steps_hallucination"]["judge"] is values["reasoning_steps"]["judge"]  # one judgement for all 11
    assert values["answer_match"]["score"] == 100.0 and values["answer_match"]["regions"] == ["ml"]
    assert aggregator(aggregation_kind(spec, "answer_match_ml"))([values["answer_match_ml"]]) == 100.0


def test_table_4_through_the_tasks_metric_code(released):
    responses = [compose_response(r["gpt-4.1-steps"], r["gpt-4.1-answers"]) for r in released]
    targets = [json.dumps({"steps": r["steps"]}, ensure_ascii=False) for r in released]

    def mean(scores: list[float]) -> float:
        return round(sum(scores) / len(scores), 2)

    got = {name: mean(f(responses, targets)) for name, f in
           (("bleu", bleu), ("rouge1", rouge1), ("rouge2", rouge2), ("rougeL", rougeL))}  # fmt: skip
    assert got == {"bleu": 6.35, "rouge1": 71.13, "rouge2": 48.83, "rougeL": 65.33}


def _csv_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def _png(name: str) -> bytes:
    """A real PNG per image name (the builder decodes every image), its colour from the name."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), tuple(name.encode()[:3].ljust(3, b"0"))).save(buffer, format="PNG")
    return buffer.getvalue()


def _hub_release(folder: Path, rows: list[dict[str, str]], domains: list[str], curricula: list[str]) -> Path:
    """Rows in the HF release's schema (``MBZUAI/ARB``: image, question, answer, choices, steps, domain, Curriculum)."""
    import pyarrow as pa

    table = pa.table(
        {
            "image": [{"bytes": _png(r["image_path"]), "path": r["image_path"]} for r in rows],
            "question": [r["question"] for r in rows],
            "answer": [r["answer"] for r in rows],
            "choices": [r["choices"] for r in rows],
            "steps": [r["steps"] for r in rows],
            "domain": domains,
            "Curriculum": curricula,
        }
    )
    (folder / "data").mkdir(parents=True)
    pq.write_table(table, folder / "data" / "train-00000-of-00001.parquet")
    return folder


def _write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _predictions(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "predictions" / "gpt-4.1.jsonl").read_text("utf-8").splitlines()]


def test_builder_reads_the_hub_release_and_takes_ids_from_the_csv(tmp_path):
    sample = _csv_rows(SAMPLE)[:3]
    domains = ["OCR", "Charts, Diagrams, and Tables", "Math and Logic Reasoning"]
    release = _hub_release(tmp_path / "release", sample, domains, ["نصي/جزئي", "Computational", "حسابي"])
    report = build(tmp_path / "out", hub_source=str(release), csv=SAMPLE)
    rows = _rows(tmp_path / "out")
    assert report.rows_written == 3 and set(rows) == {"ocr_b1.png", "ocr_b10.png", "Chart_44.png"}
    assert [rows[i]["curriculum"] for i in ("ocr_b1.png", "ocr_b10.png")] == ["نصي/جزئي", "حسابي"]
    assert rows["ocr_b1.png"]["curriculum_source"] == "release" and rows["ocr_b10.png"]["domain"] == "cdt"
    assert rows["ocr_b1.png"]["image"]["bytes"] == _png("ocr_b1.png")
    # the CSV's model outputs go to the predictions file, under the joined ids (README: "--csv ... writes")
    predictions = _predictions(tmp_path / "out")
    assert [p["id"] for p in predictions] == ["ocr_b1.png", "ocr_b10.png", "Chart_44.png"]
    assert predictions[0]["answer"] == sample[0]["gpt-4.1-answers"] and predictions[1]["domain"] == "cdt"
    assert report.stats["csv_rows_without_hub_row"] == 25 and report.stats["models_in_release"] == 1
    card = (tmp_path / "out" / "README.md").read_text("utf-8")
    assert "is published as `test`" in card and "for the 3 rows with exactly one CSV row" in card
    alone = build(tmp_path / "alone", hub_source=str(release))
    assert set(_rows(tmp_path / "alone")) == {"arb_0000", "arb_0001", "arb_0002"} and alone.rows_read == 3
    assert "`id` is `arb_<row>`" in (tmp_path / "alone" / "README.md").read_text("utf-8")
    assert not (tmp_path / "alone" / "predictions").exists()  # the Hub rows hold no model output


def test_the_progress_bar_knows_the_total(tmp_path, monkeypatch):
    from dataset_builders.core import reading

    totals = []

    def progress(records, desc, total=None):
        totals.append((desc, total))
        return records

    monkeypatch.setattr(reading, "progress", progress)
    build(tmp_path / "csv", csv=SAMPLE)  # 28 records over more lines: multi-line quoted fields
    release = _hub_release(tmp_path / "release", _csv_rows(SAMPLE)[:3], ["OCR"] * 3, ["نصي/جزئي"] * 3)
    build(tmp_path / "hub", hub_source=str(release))
    assert totals == [("arb csv", 28), ("arb hub", 3)]


def test_hub_rows_join_the_csv_on_question_answer_and_steps_not_the_question(tmp_path):
    """The first 30 released rows ask "من هو مؤلف هذا الكتاب؟" of 6 covers: the question alone joins nothing."""
    head = _csv_rows(HEAD)
    chart = next(r for r in _csv_rows(SAMPLE) if r["image_id"] == "Chart_32.png")  # a blank category
    copy = {**head[0], "image_id": "copy_of_b1.png", "image_path": "copy_of_b1.png"}  # same text, other image
    released = _write_csv(tmp_path / "released.csv", [*head, chart, copy])
    edited = {**head[2], "question": head[2]["question"] + " (edited on the Hub)"}
    hub_rows = [*reversed(head[1:]), chart, head[0], edited]  # not the CSV's order: the join is not by position
    domains = ["OCR"] * 29 + [""] + ["OCR"] * 2
    release = _hub_release(tmp_path / "release", hub_rows, domains, ["نصي/جزئي"] * 32)
    report = build(tmp_path / "out", hub_source=str(release), csv=released)
    ids = _ids(tmp_path / "out")
    # ambiguous (two CSV rows hold ocr_b1's text) and edited rows keep the Hub-only id of their Hub row;
    # `all` reads domain by domain (OCR first seen), each in Hub order
    assert ids == [r["image_id"] for r in reversed(head[1:])] + ["arb_0030", "arb_0031", "Chart_32.png"]
    rows = _rows(tmp_path / "out")
    authors = [r["image_id"] for r in head if r["question"].strip() == "من هو مؤلف هذا الكتاب؟"]
    assert len(authors) == 6 and all(rows[i]["answer"] == next(r["answer"] for r in head if r["image_id"] == i)
                                     for i in authors)  # fmt: skip
    assert rows["ocr_b14.jpg"]["image"]["bytes"] == _png("ocr_b14.jpg")
    assert rows["Chart_32.png"]["domain"] == "cdt" and rows["Chart_32.png"]["domain_raw"] == ""  # from the joined id
    assert report.stats["ids_from_csv"] == 30 and report.stats["ids_not_joined_ambiguous"] == 1
    assert report.stats["ids_not_joined_no_csv_row"] == 1 and report.stats["csv_rows_without_hub_row"] == 2
    assert any("2 hub rows have no single CSV row" in w for w in report.warnings)
    predictions = _predictions(tmp_path / "out")  # CSV order, joined rows only
    assert [p["id"] for p in predictions] == [r["image_id"] for r in head[1:]] + ["Chart_32.png"]
    assert all(p["answer"] == r["gpt-4.1-answers"] for p, r in zip(predictions, [*head[1:], chart], strict=True))


def test_score_command_reproduces_table_4_from_the_released_csv(tmp_path, capsys):
    from arab_mm_tasks.cli import main

    assert (
        main(["score", "arb", str(EVAL_COLUMNS), "--metrics", "bleu,rougeL,answer_match", "--out", str(tmp_path)]) == 0
    )
    printed = capsys.readouterr().out
    assert "bleu: 6.35" in printed and "rougeL: 65.33" in printed and "bleu_cdt: 9.17" in printed
    report = json.loads((tmp_path / "results.json").read_text())
    assert report["samples"] == 1356 and round(report["results"]["rougeL"], 2) == 65.33
    assert len((tmp_path / "samples.jsonl").read_text().splitlines()) == 1356


def test_judge_command_judges_a_released_csv(tmp_path, monkeypatch):
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from arb_fixtures import marked_rows

    from arab_mm_tasks.cli import main
    from arab_mm_tasks.core import judging
    from metric_plugins.judge.loopback import LoopbackServer

    header, rows = marked_rows()
    released = tmp_path / "released.csv"
    with released.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    monkeypatch.setattr(judging, "_run_args", {})
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    with LoopbackServer() as server:
        settings = f"model=loopback-judge,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}"
        assert main(["judge", str(released), "--judge", settings, "--out", str(tmp_path / "judged")]) == 0
        assert server.total == 6
    results = json.loads((tmp_path / "judged" / "released" / "results.json").read_text())["results"]
    assert results["final_answer"] == pytest.approx(200 / 3) and results["final_answer_cdt"] == 0.0
    assert results["reasoning_steps"] == pytest.approx((80 + 50 + 87) / 3)
    assert results["steps_hallucination_ml"] == 6.0 and "bleu" not in results


def test_score_and_judge_read_a_builds_predictions_file(tmp_path, monkeypatch, capsys):
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from arb_fixtures import build_arb_hub_dir

    from arab_mm_tasks.cli import main
    from arab_mm_tasks.core import judging
    from metric_plugins.judge.loopback import LoopbackServer

    built = build(tmp_path / "sample", csv=SAMPLE)
    assert built.rows_written == 28
    predictions = tmp_path / "sample" / "predictions" / "gpt-4.1.jsonl"
    metrics = "bleu,rougeL,answer_match"
    assert main(["score", "arb", str(SAMPLE), "--metrics", metrics, "--out", str(tmp_path / "from_csv")]) == 0
    assert main(["score", "arb", str(predictions), "--metrics", metrics, "--out", str(tmp_path / "from_jsonl")]) == 0
    from_csv, from_jsonl = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("from_csv", "from_jsonl"))
    assert from_jsonl["samples"] == 28 and from_jsonl["results"] == from_csv["results"]
    assert from_jsonl["results"]["bleu_cdt"] is not None and "rougeL: " in capsys.readouterr().out

    hub = build_arb_hub_dir(tmp_path / "marked")  # three released rows with scripted judge replies
    monkeypatch.setattr(judging, "_run_args", {})
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    with LoopbackServer() as server:
        settings = f"model=loopback-judge,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}"
        judged = hub / "predictions" / "gpt-4.1.jsonl"
        assert main(["judge", str(judged), "--judge", settings, "--out", str(tmp_path / "judged")]) == 0
        assert server.total == 6
    results = json.loads((tmp_path / "judged" / "gpt-4.1" / "results.json").read_text())["results"]
    assert results["final_answer"] == pytest.approx(200 / 3) and results["final_answer_cdt"] == 0.0
    assert results["reasoning_steps"] == pytest.approx((80 + 50 + 87) / 3) and "bleu" not in results


def test_a_predictions_line_without_a_gold_row_is_named(tmp_path):
    from arab_mm_tasks.arb.released import read_predictions
    from arab_mm_tasks.core.spec import RecordError, SourceError

    build(tmp_path / "out", csv=SAMPLE)
    predictions = tmp_path / "out" / "predictions" / "gpt-4.1.jsonl"
    lines = predictions.read_text("utf-8").splitlines()
    assert len(read_predictions(predictions)) == 28
    with pytest.raises(SourceError, match=r"holds the predictions of 'gpt-4\.1', not 'gpt-4o'"):
        read_predictions(predictions, "gpt-4o")
    predictions.write_text("\n".join([*lines[:2], lines[2].replace('"Chart_44.png"', '"nope.png"')]) + "\n", "utf-8")
    with pytest.raises(RecordError, match=r"gpt-4\.1\.jsonl:3: field 'id' is 'nope\.png', not a row of "):
        read_predictions(predictions)
    stray = tmp_path / "gpt-4.1.jsonl"
    stray.write_text(lines[0] + "\n", "utf-8")
    with pytest.raises(SourceError, match="not a built ARB folder's predictions file"):
        read_predictions(stray)


def test_every_judged_metric_is_micro_over_samples_and_macro_over_domains(tmp_path, monkeypatch):
    """Two OCR samples and one CDT sample, scripted judge replies: micro and macro differ, checked by hand."""
    from arab_mm_tasks.cli.score import score_released
    from arab_mm_tasks.core import judging
    from metric_plugins.judge.loopback import LoopbackServer

    sample = {row["image_id"]: row for row in _csv_rows(SAMPLE)}
    replies = {  # image id -> (answer judge reply, step judge reply)
        "ocr_b1.png": (1, {**dict.fromkeys(STEP_ATTRIBUTES, 8), "Hallucination": 4}),
        "ocr_b10.png": (0, {**dict.fromkeys(STEP_ATTRIBUTES, 6), "Hallucination": 10}),
        "Chart_25.png": (1, {**dict.fromkeys(STEP_ATTRIBUTES, 5), "Hallucination": 1}),
    }
    rows = [
        {**sample[i], "answer": f"{sample[i]['answer']} [[reply={a}]]", "steps": f"{sample[i]['steps']}\n"
         f"[[reply={json.dumps(s)}]]"}
        for i, (a, s) in replies.items()
    ]  # fmt: skip
    released = _write_csv(tmp_path / "released.csv", rows)
    monkeypatch.setattr(judging, "_run_args", {})
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    with LoopbackServer() as server:
        judge = f"model=loopback-judge,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}"
        judged = [m.name for m in get_spec("arb").generative_metrics if m.judge_prompt]
        results = score_released("arb", released, metrics=judged, judge=judge)["results"]
        assert server.total == 6  # one answer and one step judgement per sample, whatever the names
    # final answer: OCR 1, 0; CDT 1
    assert results["final_answer"] == pytest.approx(200 / 3) and results["final_answer_macro"] == pytest.approx(75.0)
    # reasoning steps, 10 x the mean of the 10: OCR 76, 64; CDT 46
    assert results["reasoning_steps"] == pytest.approx(62.0) and results["reasoning_steps_macro"] == pytest.approx(58.0)
    assert results["reasoning_steps_ocr"] == pytest.approx(70.0) and results["reasoning_steps_cdt"] == pytest.approx(
        46.0
    )
    # each attribute likewise: Hallucination OCR 4, 10; CDT 1; Faithfulness-Step OCR 8, 6; CDT 5
    assert results["steps_hallucination"] == pytest.approx(5.0) and results["steps_hallucination_macro"] == 4.0
    assert results["steps_faithfulness_step"] == pytest.approx(19 / 3)
    assert results["steps_faithfulness_step_macro"] == pytest.approx(6.0)
    for attribute in STEP_ATTRIBUTES:
        key = "steps_" + attribute.lower().replace("-", "_").replace(" ", "_")
        assert f"{key}_macro" in results and f"{key}_macro_unscored" in results and f"{key}_cdt" in results


def test_build_command_on_the_released_csv(tmp_path, capsys):
    from arab_mm_tasks.cli import main

    assert main(["build", "arb", "--csv", str(SAMPLE), "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "read 28 rows" in printed and "wrote 28, skipped 0" in printed and "rows_without_step_markers: 1" in printed
    assert (tmp_path / "predictions" / "gpt-4.1.jsonl").is_file() and (tmp_path / "README.md").is_file()


def test_a_model_named_with_a_slash_is_scored_by_its_name(tmp_path):
    """A header's `org/model` is written as `predictions/org%2Fmodel.jsonl` (core.paths.safe_file_name) and read
    back by the name the user knows."""
    import csv

    from arab_mm_tasks.arb.released import read_predictions

    rows = list(csv.reader(SAMPLE.read_text("utf-8").splitlines(keepends=True)))
    rows[0] = [c.replace("gpt-4.1", "openai/gpt-4.1") for c in rows[0]]
    renamed = tmp_path / "renamed.csv"
    with renamed.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    build(tmp_path / "out", csv=renamed)
    predictions = tmp_path / "out" / "predictions" / "openai%2Fgpt-4.1.jsonl"
    assert len(read_predictions(predictions, "openai/gpt-4.1")) == 28
    with pytest.raises(Exception, match=r"holds the predictions of 'openai/gpt-4\.1', not 'gpt-4\.1'"):
        read_predictions(predictions, "gpt-4.1")
