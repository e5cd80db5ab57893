"""The authors' inference logs judged again: each row matched to its own dataset record (ids, then question),
never by its position; Pearl-Lite logs scored as Pearl-Lite, Pearl-X logs as Pearl-X with its prompt layout;
a row that matches nothing, or too much, is an error naming its line."""

from __future__ import annotations

import json

import pytest
from pearl_fixtures import image_bytes, judge_requests, pearl_records, pearl_x_records

from arab_mm_tasks.cli.judge_saved import judge_saved, read_runs
from arab_mm_tasks.core.spec import RecordError
from metric_plugins.judge.config import JudgeConfig

MCQ_INSTRUCTION = (
    "For the given Multiple Choice Question, analyze the question and answer strictly from one of the options "
    "below. Strictly answer the choice only. No additional text."
)


def _write_log(path, rows):
    """Rows as `eval/generate_pearl.py` writes them: id, the generation, the model, every field but the images."""
    lines = [
        json.dumps({"id": log_id, "model_output": output, "model_path": "google/gemma-3-4b-it",
                    "model_name": "gemma-3-4b-it", **{k: v for k, v in record.items() if not k.startswith("image")
                                                      or k == "image_id"}}, ensure_ascii=False)
        for log_id, record, output in rows
    ]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def _config(pearl_judge, tmp_path):
    return JudgeConfig(model="judge", base_url=pearl_judge.url, cache_path=str(tmp_path / "judge.sqlite"))


def test_a_pearl_log_is_matched_by_its_ids_not_its_row_numbers(pearl_hub_dir, pearl_judge, tmp_path):
    # the log numbered its rows in another order (ids 100+): the record is found by image_id, annotation_id, qa_index
    records = pearl_records()
    outputs = {11: "<<acc=1>>", 13: "<<acc=0>>", 1: "<<rubric=4,3,5,2>> <<cas=1>>", 3: "<<rubric=2,2,2,2>> <<cas=0>>"}
    log = _write_log(tmp_path / "output_gemma-3-4b-it_20250515_190602.jsonl",
                     [(100 + i, records[i], out) for i, out in outputs.items()])  # fmt: skip
    with pytest.raises(FileNotFoundError, match="pass --dataset-path pearl=DIR"):
        judge_saved([log], _config(pearl_judge, tmp_path), tmp_path / "judged")
    report = judge_saved([log], _config(pearl_judge, tmp_path), tmp_path / "judged", {"pearl": str(pearl_hub_dir)})
    closed = report["results"][f"pearl_closed (log: {log.name})"]
    opened = report["results"][f"pearl_open (log: {log.name})"]
    assert closed["acc"] == 50.0 and closed["acc_unscored"] == 0
    assert opened["overall"] == pytest.approx((3.6 + 2.0) / 2) and opened["cas"] == 50.0
    # each open item's judges saw its own image (img_1, img_3), the closed-form judge none
    images = image_bytes(pearl_hub_dir, "pearl_open")
    judged = judge_requests(pearl_judge)
    assert sorted(len(imgs) for _, imgs in judged) == [0, 0, 1, 1, 1, 1]
    for text, imgs in judged:
        if imgs:
            want = "img_1" if "<<rubric=4,3,5,2>>" in text else "img_3"
            assert imgs == [images[want]]
    lines = (tmp_path / "judged" / f"{log.stem}.pearl_open.jsonl").read_text("utf-8").splitlines()
    docs = [json.loads(line)["doc"] for line in lines]
    assert [(d["image_id"], d["log_id"], d["log_line"]) for d in docs] == [("img_1", 101, 3), ("img_3", 103, 4)]


def test_a_pearl_lite_log_is_judged_on_pearl_lite_records_with_their_own_images(pearl_hub_dir, pearl_judge, tmp_path):
    # Pearl-Lite is records[::2] of the fixture's Pearl: Lite id 1 is Pearl's record 2 (img_2), not Pearl's id 1
    lite = pearl_records()[::2]
    rows = [(1, lite[1], "<<rubric=5,5,5,5>> <<cas=1>>"), (6, lite[6], "<<acc=1>>"), (8, lite[8], "<<acc=0>>")]
    log = _write_log(tmp_path / "output_lite.jsonl", rows)
    report = judge_saved([log], _config(pearl_judge, tmp_path), tmp_path / "judged", {"pearl": str(pearl_hub_dir)})
    assert sorted(report["results"]) == [f"pearl_lite_closed (log: {log.name})", f"pearl_lite_open (log: {log.name})"]
    assert report["results"][f"pearl_lite_open (log: {log.name})"]["overall"] == pytest.approx(5.0)
    assert report["results"][f"pearl_lite_closed (log: {log.name})"]["acc"] == 50.0
    with_images = [imgs for _, imgs in judge_requests(pearl_judge) if imgs]
    assert with_images == [[image_bytes(pearl_hub_dir, "pearl_lite_open")["img_2"]]] * 2  # rubric and CAS


def test_a_pearl_x_log_goes_to_the_pearl_x_tasks_with_their_prompt_layout(pearl_hub_dir, pearl_judge, tmp_path):
    items = pearl_x_records()  # 1, 4 and 5 share question and choices: told apart by the running id
    rows = [(0, items[0], "<<acc=1>>"), (4, items[4], "D"), (2, items[2], "<<acc=0>>")]
    log = _write_log(tmp_path / "output_pearl_x.jsonl", rows)
    runs = {run.task: run for run in read_runs(log, {"pearl": str(pearl_hub_dir)})}
    assert sorted(runs) == ["pearl_x_multi", "pearl_x_single"]
    assert [r["doc"]["n_images"] for r in runs["pearl_x_multi"].records] == [6, 2]
    assert [r["doc"]["answer_letter"] for r in runs["pearl_x_multi"].records] == ["D", ""]
    report = judge_saved([log], _config(pearl_judge, tmp_path), tmp_path / "judged", {"pearl": str(pearl_hub_dir)})
    assert report["results"][f"pearl_x_single (log: {log.name})"]["acc"] == 100.0
    mcq = next(text for text, _ in judge_requests(pearl_judge) if "Candidate's chosen answer:\nD\n" in text)
    assert f"{items[4]['question']}\n{chr(10).join(items[4]['choices'])}\n\n{MCQ_INSTRUCTION}\n" in mcq


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"qa_index": 9}, r"log\.jsonl:2: log id 5 \(image_id 'img_5', annotation_id 55, qa_index 9\) matches no "),
        ({"question": "سؤال آخر"}, r"log\.jsonl:2: log id 5 .* is pearl_open record '5' of the dataset, whose question "
                                  r"differs .*not the same release"),
        ({"image_id": None, "annotation_id": None, "qa_index": None}, r"log\.jsonl:2: mixes Pearl-X rows"),
    ],
)  # fmt: skip
def test_a_row_that_matches_no_record_is_an_error_naming_its_line(pearl_hub_dir, tmp_path, change, message):
    records = pearl_records()
    row = {k: v for k, v in {**records[5], **change}.items() if v is not None}
    log = _write_log(tmp_path / "log.jsonl", [(1, records[1], "x"), (5, row, "y")])
    with pytest.raises(RecordError, match=message):
        read_runs(log, {"pearl": str(pearl_hub_dir)})


def test_identical_pearl_x_rows_that_the_id_does_not_tell_apart_are_an_error(pearl_hub_dir, tmp_path):
    log = _write_log(tmp_path / "log.jsonl", [(0, pearl_x_records()[0], "A"), (3, pearl_x_records()[1], "A")])
    with pytest.raises(RecordError, match=r"log\.jsonl:2: log id 3 matches several records .* cannot be told"):
        read_runs(log, {"pearl": str(pearl_hub_dir)})


def test_a_log_of_items_in_pearl_and_pearl_lite_whose_ids_fit_neither_is_an_error(pearl_hub_dir, tmp_path):
    records = pearl_records()
    log = _write_log(tmp_path / "log.jsonl", [(40, records[2], "x"), (41, records[4], "y")])
    with pytest.raises(RecordError, match=r"both pearl and pearl_lite .* build pearl_lite"):
        read_runs(log, {"pearl": str(pearl_hub_dir)})
