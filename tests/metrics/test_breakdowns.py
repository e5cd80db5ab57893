"""Breakdowns by document fields (the paper's per-topic, CS vs not-CS tables)."""

from __future__ import annotations

import doctest
import json

import pytest

import metric_plugins.breakdowns as breakdowns_module
from arab_mm_tasks.cli import main
from metric_plugins.breakdowns import breakdown, format_table, read_samples


def test_docstring_examples_run():
    result = doctest.testmod(breakdowns_module)
    assert result.attempted > 0 and result.failed == 0


def test_scores_on_a_known_input():
    samples = [
        {"doc": {"topic": "Food", "country_specific": True}, "acc": 1.0},
        {"doc": {"topic": "Food", "country_specific": True}, "acc": 0.0},
        {"doc": {"topic": "Food", "country_specific": False}, "acc": 1.0},
        {"doc": {"topic": "Art", "country_specific": None}, "acc": 0.0},
    ]
    rows = breakdown(samples, ["topic", "country_specific"])
    assert [(r.group, r.n, r.score) for r in rows] == [
        (("Food", True), 2, 0.5), (("Food", False), 1, 1.0), (("Art", None), 1, 0.0),
    ]  # fmt: skip
    assert format_table(rows, ["topic", "country_specific"], "acc").splitlines()[2] == "| Food | True | 2 | 50.0 |"


def test_missing_field_names_the_sample():
    with pytest.raises(KeyError, match=r"sample 7 \(Egypt-0001\) has no field\(s\) \['topic'\]"):
        breakdown([{"doc_id": 7, "doc": {"id": "Egypt-0001"}, "acc": 1.0}], ["topic"])


def test_cli_reads_lm_eval_samples(tmp_path, capsys):
    lines = [
        {"doc_id": 0, "doc": {"id": "Egypt-0000", "topic": "Food"}, "acc": 1.0},
        {"doc_id": 1, "doc": {"id": "Egypt-0001", "topic": "Food"}, "acc": 0.0},
    ]
    path = tmp_path / "samples_arabculture_mcq_en_none_egypt_2026-11-21T00-00-00.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    assert [task for task, _ in read_samples([tmp_path])] == ["arabculture_mcq_en_none_egypt"] * 2
    assert main(["breakdown", str(tmp_path), "--by", "topic"]) == 0
    out = capsys.readouterr().out
    assert "arabculture_mcq_en_none (2 samples)" in out
    assert "| Food | 2 | 50.0 |" in out
    assert main(["breakdown", str(tmp_path / "nothing-here")]) == 2


def _lighteval_details(path, rows):
    """A lighteval --save-details file as our tasks fill it: breakdown fields in doc.specific, judged values dicts."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([{"doc": {"specific": doc}, "metric": metric} for doc, metric in rows]), path)


def test_pearl_lighteval_details_by_question_type_and_domain_skip_the_task_without_a_domain(tmp_path, capsys):
    closed = [
        ({"id": "0", "country": "Egypt", "question_type": "multiple_choice", "category": "Food"}, 100.0),
        ({"id": "1", "country": "Egypt", "question_type": "true_false", "category": "Food"}, 0.0),
        ({"id": "2", "country": "Oman", "question_type": "multiple_choice", "category": "Music"}, None),
    ]
    _lighteval_details(
        tmp_path / "details_pearl_closed|0_2026-11-21T00-00-00.parquet",
        [(doc, {"acc": {"score": score}, "acc_parsed": {"score": 100.0}}) for doc, score in closed],
    )
    pearl_x = [({"id": "0", "country": "Qatar", "question_type": "multiple_choice"}, {"acc": {"score": 100.0}})]
    _lighteval_details(tmp_path / "details_pearl_x_multi|0_2026-11-21T00-00-00.parquet", pearl_x)

    assert main(["breakdown", str(tmp_path), "--by", "category", "--metric", "acc"]) == 0
    out = capsys.readouterr().out
    assert "pearl_closed (3 samples)" in out
    assert "| Food | 2 | 50.00 |" in out and "| Music | 1 | nan | 1 |" in out  # a judgement not made: unscored
    assert "pearl_x_multi: its samples have no 'category', skipped" in out

    assert main(["breakdown", str(tmp_path), "--by", "question_type", "--metric", "acc"]) == 0
    out = capsys.readouterr().out
    # group values are Markdown-escaped (metric_plugins.markdown): "multiple\\_choice" renders as multiple_choice
    assert "| multiple\\_choice | 2 | 100.00 | 1 |" in out and "| true\\_false | 1 | 0.00 | 0 |" in out
    assert "pearl_x_multi (1 samples)" in out and "| multiple\\_choice | 1 | 100.00 |" in out
