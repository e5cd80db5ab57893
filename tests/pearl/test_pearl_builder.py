"""The Pearl builder on records made from the authors' real Arabic text: every question type, Pearl-X
with 1 to 6 images, each bad record named with its field, sizes against the paper, the card, publishing."""

from __future__ import annotations

import io
import json

import pytest
from pearl_fixtures import pearl_records, pearl_x_records, write_pearl_x, write_release
from PIL import Image

from arab_mm_tasks.cli import main
from arab_mm_tasks.core.sources import DatasetSource, load_split
from arab_mm_tasks.pearl.prompts import OPEN_TYPES, question_type_key
from dataset_builders.core import hub
from dataset_builders.pearl import build
from dataset_builders.pearl import builder as pearl_builder
from dataset_builders.pearl.records import PearlRecordError


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("pearl")
    pearl = write_release(root / "pearl", pearl_records())
    pearl_x = write_pearl_x(root / "pearl_x.parquet", pearl_x_records())
    out = root / "hub"
    return build(out, pearl=pearl, pearl_x=pearl_x), out


def _rows(out, config):
    return list(load_split(DatasetSource.resolve("pearl", str(out)), config, "test"))


def test_every_question_type_lands_in_its_config_with_the_card_fields_as_released(built):
    report, out = built
    assert report.counts == {"pearl_closed": 6, "pearl_open": 11, "pearl_x_single": 2, "pearl_x_multi": 4}
    assert report.rows_read == report.rows_written == 23 and not report.skipped
    records = pearl_records()
    opened = _rows(out, "pearl_open")
    assert sorted(question_type_key(r["question_type"]) for r in opened) == sorted(OPEN_TYPES)  # all 11
    closed = _rows(out, "pearl_closed")
    assert {r["question_type"] for r in closed} == {"multiple_choice", "true_false"}
    by_id = {row["id"]: row for row in opened + closed}
    for index, record in enumerate(records):  # the release's running index is the id; text kept byte for byte
        row = by_id[str(index)]
        for name in ("question", "answer", "augmented_caption", "country", "category", "original_index", "qa_index"):
            assert row[name] == record[name], (index, name)
    assert isinstance(closed[0]["image"], Image.Image)


def test_pearl_x_keeps_one_to_six_images_in_order(built):
    _, out = built
    rows = _rows(out, "pearl_x_single") + _rows(out, "pearl_x_multi")
    records = pearl_x_records()
    assert sorted(r["n_images"] for r in rows) == [1, 1, 2, 3, 4, 6]
    for row in rows:
        record = records[int(row["id"])]
        expected = [record[f"image{i}"]["bytes"] for i in range(1, row["n_images"] + 1)]
        widths = [image.size[0] for image in row["images"]]
        assert widths == [Image.open(io.BytesIO(b)).size[0] for b in expected] == sorted(widths)  # image1 first
        assert row["country"] == record["country"]  # other release columns are kept


def test_card_has_the_licence_gate_counts_per_country_and_type(built):
    _, out = built
    card = (out / "README.md").read_text("utf-8")
    assert "license: cc-by-nc-nd-4.0" in card and "extra_gated_prompt" in card
    assert "@article{alwajih2025pearl" in card
    assert "| Egypt | 2 | 2 | 1 | 1 |" in card  # pearl_open, pearl_closed, pearl_x_single, pearl_x_multi
    assert "| multiple_choice | 0 | 4 | 1 | 3 |" in card
    assert "| pearl_closed | 6 | 4,832 |" in card


def test_sizes_are_checked_against_the_paper_for_a_local_copy_too_and_a_mismatch_is_a_warning(tmp_path):
    pearl = write_release(tmp_path / "src", pearl_records())
    report = build(tmp_path / "out", pearl=pearl)
    assert "pearl_closed: 6 rows, but the paper reports 4832" in report.warnings
    assert "pearl_open: 11 rows, but the paper reports 1469" in report.warnings
    assert report.counts == {"pearl_closed": 6, "pearl_open": 11}  # written all the same
    assert not build(tmp_path / "subset", pearl=pearl, expect_release_counts=False).warnings


def _bad(records, index, **changes):
    records = [dict(r) for r in records]
    records[index].update(changes)
    return records


@pytest.mark.parametrize(
    ("index", "changes", "field", "problem"),
    [
        (0, {"question_type": "Riddle"}, "question_type", "is 'Riddle', not a Pearl question type"),
        (11, {"answer_letter": "E"}, "answer_letter", "is 'E', not one of the choices' letters ['A', 'B', 'C', 'D']"),
        (11, {"choices": ["A. وحيد"]}, "choices", "has 1 choice(s)"),
        (15, {"answer": "ربما"}, "answer", "is 'ربما', not True/False"),
        (3, {"augmented_caption": ""}, "augmented_caption", "is '', expected a non-empty string"),
        (2, {"qa_index": "x"}, "qa_index", "is 'x', expected an integer"),
    ],
)
def test_a_bad_pearl_record_is_named_with_its_field(tmp_path, index, changes, field, problem):
    pearl = write_release(tmp_path, _bad(pearl_records(), index, **changes))
    with pytest.raises(PearlRecordError) as error:
        build(tmp_path / "out", pearl=pearl)
    assert f"pearl.jsonl:{index + 1}: pearl row {index}: field {field!r} {problem}" in str(error.value)
    assert not (tmp_path / "out" / "data").exists()  # nothing written


def test_a_missing_card_feature_is_named(tmp_path):
    records = pearl_records()
    del records[4]["annotation_id"]
    with pytest.raises(PearlRecordError, match=r"pearl row 4: field 'annotation_id' is missing \(the card's features"):
        build(tmp_path / "out", pearl=write_release(tmp_path, records))


@pytest.mark.parametrize(
    ("changes", "field", "problem"),
    [
        ({"image2": None}, "image2", "is empty but image3 is set: the images must be image1 .. image3 without gaps"),
        ({"image1": None, "image2": None, "image3": None}, "image1", "is missing: a Pearl-X item has 1 to 6 images"),
        ({"question_type": "Role Playing"}, "question_type", "is 'Role Playing'; Pearl-X is MCQ / True-False only"),
        ({"answer_letter": "Z"}, "answer_letter", "is 'Z', not one of the choices' letters"),
    ],
)
def test_a_bad_pearl_x_record_is_named_with_its_field(tmp_path, changes, field, problem):
    records = pearl_x_records()  # record 5 has three images
    records[5].update(changes)
    with pytest.raises(PearlRecordError) as error:
        build(tmp_path / "out", pearl_x=write_pearl_x(tmp_path / "x.parquet", records))
    assert f"pearl_x row 5: field {field!r} {problem}" in str(error.value)


def test_skip_mode_lists_each_bad_record_and_writes_the_rest(tmp_path):
    pearl = write_release(tmp_path, _bad(pearl_records(), 0, question_type="Riddle"))
    report = build(tmp_path / "out", pearl=pearl, on_bad_records="skip")
    assert report.rows_read == 17 and report.rows_written == 16
    assert [s.record for s in report.skipped] == [f"{pearl}:1: pearl row 0"]


def test_hub_ids_and_the_run_scripts_aliases_name_their_release():
    assert pearl_builder.release_of("UBC-NLP/PEARL-benchmark") == "pearl"
    assert pearl_builder.release_of("UBC-NLP/PEARL-LITE-benchmark@main") == "pearl_lite"
    assert pearl_builder.release_of("UBC-NLP/PEARL-X") == "pearl_x"
    with pytest.raises(ValueError, match="UBC-NLP/PEARL-LITE-benchmark is the pearl_lite release, given as pearl"):
        build("unused", pearl="UBC-NLP/PEARL-LITE-benchmark")


def test_publish_is_private_unless_public_is_asked_for_with_a_warning(built, monkeypatch):
    _, out = built
    calls = []
    monkeypatch.setattr(hub, "publish", lambda folder, repo, **kw: calls.append(kw))
    pearl_builder.publish(out, "me/pearl")
    assert calls[-1]["private"] is True and calls[-1]["gated"] == "auto"
    with pytest.warns(UserWarning, match="CC-BY-NC-ND-4.0"):
        pearl_builder.publish(out, "me/pearl", public=True)
    assert calls[-1]["private"] is False
    assert main(["publish", str(out), "--repo-id", "me/pearl"]) == 0
    assert calls[-1]["private"] is True


@pytest.mark.parametrize(
    ("item", "changes", "answer", "letter"),
    [
        (5, {"answer_letter": None, "answer": "الجلابية المصرية"}, "الجلابية المصرية", "C"),  # the choice's text
        (2, {"answer": "B"}, "False", "B"),  # a letter over ["True", "False"]
        (3, {"answer": "a", "choices": ["A. صحيح", "B. خطأ"]}, "صحيح", "A"),
    ],
)
def test_an_answer_given_as_a_choice_text_or_a_true_false_letter_is_read(tmp_path, item, changes, answer, letter):
    records = pearl_x_records()
    records[item].update(changes)
    build(tmp_path / "out", pearl_x=write_pearl_x(tmp_path / "x.parquet", records))
    rows = _rows(tmp_path / "out", "pearl_x_single") + _rows(tmp_path / "out", "pearl_x_multi")
    (row,) = [r for r in rows if r["id"] == str(item)]
    assert (row["answer"], row["answer_letter"]) == (answer, letter)


def test_a_true_false_letter_that_names_no_true_false_choice_is_named(tmp_path):
    records = pearl_x_records()
    records[2].update(answer="C")
    with pytest.raises(PearlRecordError, match=r"pearl_x row 2: field 'answer' is 'C', not True/False .* choices"):
        build(tmp_path / "out", pearl_x=write_pearl_x(tmp_path / "x.parquet", records))


def test_build_pearl_lite_and_pearl_x_name_their_release(tmp_path, capsys, monkeypatch):
    lite = write_release(tmp_path / "lite", pearl_records()[::2], "lite.jsonl")
    assert main(["build", "pearl_lite", "--pearl-lite", str(lite), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "pearl_lite_closed: 3" in out and "pearl_lite_open: 6" in out and "pearl_closed" not in out
    assert "warning: pearl_lite_open: 6 rows, but the paper reports 302" in out  # a local copy is checked too
    calls = []
    monkeypatch.setattr("dataset_builders.pearl.build", lambda out, **sources: calls.append(sources) or "built")
    assert main(["build", "pearl_x", "--out", str(tmp_path / "x")]) == 0  # from the Hub
    assert calls[-1] == {"pearl_x": "UBC-NLP/PEARL-X", "on_bad_records": "error"}
    assert main(["build", "pearl", "--out", str(tmp_path / "all")]) == 0
    assert sorted(calls[-1]) == ["on_bad_records", "pearl", "pearl_lite", "pearl_x"]
    assert main(["build", "pearl_xl", "--out", str(tmp_path / "x")]) == 2
    assert "unknown benchmark 'pearl_xl'; `arab-mm-tasks build` takes: arabculture, gimmick, pearl, pearl_lite, " in (
        capsys.readouterr().err
    )


def test_the_command_line_builds_a_release(tmp_path, capsys):
    pearl_x = write_pearl_x(tmp_path / "x.parquet", pearl_x_records())
    assert main(["build", "pearl", "--pearl-x", str(pearl_x), "--out", str(tmp_path / "out")]) == 0
    assert "pearl_x_multi: 4" in capsys.readouterr().out
    meta = json.loads(json.dumps(_rows(tmp_path / "out", "pearl_x_multi")[0]["choices"]))
    assert meta[0] == "A. الثوب القطري"


def test_a_save_to_disk_copy_with_the_card_features_builds(tmp_path):
    """Pearl-Lite as `load_dataset("UBC-NLP/PEARL-LITE", split="test").save_to_disk(DIR)` leaves it."""
    import datasets

    from dataset_builders.pearl.records import PEARL_FEATURES

    src = write_release(tmp_path / "src", pearl_records())
    rows = [json.loads(line) for line in src.read_text("utf-8").splitlines()]
    for row in rows:
        row["image"] = str(src.parent / row["image"])
    features = datasets.Features({k: v for k, v in PEARL_FEATURES.items() if k != "id"})
    datasets.Dataset.from_list(rows, features=features).save_to_disk(str(tmp_path / "lite"))
    report = build(tmp_path / "out", pearl_lite=tmp_path / "lite")
    assert report.counts == {"pearl_lite_closed": 6, "pearl_lite_open": 11}
    assert _rows(tmp_path / "out", "pearl_lite_open")[0]["question"] == rows[0]["question"]
