"""JEEM's builder on records made from the paper's real text: configs, rules, the Hub reader's column
mapping (and its error on a layout it cannot map), the evaluation sample, bad records, the card."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from jeem_fixtures import ANSWERS, CAPTIONS, COUNTRY, MSA_CAPTIONS, TEAM_QUESTIONS, jeem_records, write_jeem_jsonl

from dataset_builders.core.reading import SourceError
from dataset_builders.jeem import build, subset
from dataset_builders.jeem.builder import rows_of
from dataset_builders.jeem.schema import JeemRecordError

KEYS = {"Jordanian": "jordanian", "Emirati": "emirati", "Egyptian": "egyptian", "Moroccan": "moroccan"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    folder = tmp_path_factory.mktemp("jeem")
    report = build(folder / "out", write_jeem_jsonl(folder / "src"))
    return folder / "out", report


def _rows(folder: Path, config: str) -> list[dict]:
    return list(rows_of(folder, config))


def test_every_config_holds_the_real_captions_as_references(built):
    folder, report = built
    assert report.rows_read == report.rows_written == 8 and report.rows_skipped == 0
    assert report.counts["captioning_msa"] == 8
    for dialect, caption in CAPTIONS.items():
        rows = _rows(folder, f"captioning_{KEYS[dialect]}")
        assert [r["reference"] for r in rows] == [caption, caption]  # the shared image and the team's own
        assert {r["variety"] for r in rows} == {KEYS[dialect]} and {r["country"] for r in rows} == {COUNTRY[dialect]}
    msa = {r["id"]: r for r in _rows(folder, "captioning_msa")}
    assert msa["egypt-omani-halwa"]["reference"] == MSA_CAPTIONS["Egyptian"]
    assert msa["egypt-omani-halwa"]["variety"] == "msa" and msa["egypt-omani-halwa"]["dialect"] == "egyptian"


def test_shared_pool_rule_one_record_per_team_and_origin(built):
    folder, _ = built
    msa = {r["id"]: r for r in _rows(folder, "captioning_msa")}
    shared = [r for r in msa.values() if r["image_id"] == "omani-halwa"]
    assert len(shared) == 4 and all(r["is_shared_pool"] for r in shared)  # inferred: four teams annotated it
    assert {r["image_origin_country"] for r in shared} == {"emirates"}  # the release's "UAE", canonical
    own = msa["jordan-jordan-own"]
    assert not own["is_shared_pool"] and own["image_origin_country"] == "jordan"


def test_vqa_is_one_row_per_question_and_cannot_tell_answers_are_kept_and_flagged(built):
    folder, report = built
    rows = _rows(folder, "vqa_jordanian")
    assert [r["id"] for r in rows] == [
        "jordan-omani-halwa-q1", "jordan-omani-halwa-q2", "jordan-jordan-own-q1", "jordan-jordan-own-q2",
    ]  # fmt: skip
    assert [r["question"] for r in rows[:2]] == TEAM_QUESTIONS["Jordanian"]
    assert [r["reference"] for r in rows[:2]] == ANSWERS["Jordanian"]
    assert [r["answerable"] for r in rows] == [True, False, True, False]
    assert report.stats["cannot_tell_jordan"] == 2 and report.stats["questions_emirates"] == 6
    assert report.counts["vqa_emirati"] == 6 and report.counts["vqa_egyptian"] == 2


def test_the_built_folder_loads_with_datasets_and_images_decode(built):
    folder, _ = built
    data = datasets.load_dataset(str(folder), "vqa_moroccan", split="test")
    assert data.features["image"] == datasets.Image() and len(data) == 4
    assert data[0]["image"].size == (64, 64)


def test_card_has_licences_citation_and_counts_per_dialect(built):
    folder, _ = built
    card = (folder / "README.md").read_text("utf-8")
    assert "MIT" in card and "Wikimedia Commons" in card and "Flickr" in card
    assert "arXiv:2503.21910" in card and "Kadaoui" in card
    assert "| AE (emirati) | 2 | 150 | 1 | 6 | 0 | 2 of 50 |" in card
    assert "| JO (jordanian) | 2 | 606 | 1 | 4 | 2 | 2 of 100 |" in card
    assert "extra_gated_prompt" in card and "config_name: vqa_jordanian" in card


# --- the evaluation sample -----------------------------------------------------------------------


def test_default_evaluation_sample_is_stratified_deterministic_and_order_free():
    pairs = [(c, f"{c}-{i}") for c, n in (("jordan", 130), ("emirates", 70), ("egypt", 101), ("morocco", 40))
             for i in range(n)]  # fmt: skip
    chosen = subset.sample(pairs)
    assert subset.counts(chosen) == {"jordan": 100, "emirates": 50, "egypt": 100, "morocco": 40}
    assert subset.sample(list(reversed(pairs))) == chosen
    assert subset.sample(pairs, seed="other") != chosen


def test_an_id_list_replaces_the_sample_and_unknown_ids_fail(tmp_path):
    src = write_jeem_jsonl(tmp_path / "src")
    ids = tmp_path / "ids.txt"
    ids.write_text("# the authors' sample\negypt-omani-halwa\nmorocco-own\n", "utf-8")
    report = build(tmp_path / "out", src, eval_ids=ids)
    assert report.counts["captioning_egyptian_eval350"] == 1 and report.counts["captioning_moroccan_eval350"] == 1
    assert report.counts["captioning_msa_eval350"] == 2 and "captioning_jordanian_eval350" not in report.counts
    ids.write_text("egypt-nowhere\n", "utf-8")
    with pytest.raises(SourceError, match=r"1 ids are in no record: \['egypt-nowhere'\]"):
        build(tmp_path / "out2", src, eval_ids=ids)


def test_the_sample_is_drawn_from_valid_records_only(tmp_path, monkeypatch):
    """A bad record the hash ranks first (its image does not decode) must not take its team's place."""
    monkeypatch.setattr(subset, "QUOTAS", dict.fromkeys(subset.QUOTAS, 1))
    src = write_jeem_jsonl(tmp_path / "src")
    (src.parent / "images" / "broken.png").write_bytes(b"not a png")
    lines = src.read_text("utf-8").splitlines()
    egyptian = json.loads(lines[2])  # egypt's shared-image record, first in egypt's seeded order
    assert (egyptian["country"], egyptian["image_id"]) == ("Egyptian", "omani-halwa")
    assert subset.sample([("egypt", "omani-halwa"), ("egypt", "egypt-own")]) == {("egypt", "omani-halwa")}
    egyptian["image"] = "images/broken.png"
    lines[2] = json.dumps(egyptian, ensure_ascii=False)
    src.write_text("\n".join(lines) + "\n", "utf-8")

    report = build(tmp_path / "out", src, on_bad_records="skip")
    assert [s.record for s in report.skipped] == [f"{src}:3: jeem row 2 (image_id 'omani-halwa')"]
    (row,) = _rows(tmp_path / "out", "captioning_egyptian_eval350")
    assert row["id"] == "egypt-egypt-own"  # the next valid record in egypt's order, not a hole
    assert [r["in_eval_subset"] for r in _rows(tmp_path / "out", "captioning_egyptian")] == [True]
    assert report.stats["eval_subset_egypt"] == 1 and report.counts["captioning_msa_eval350"] == 4
    assert "| 1 of 1 |" in (tmp_path / "out" / "README.md").read_text("utf-8")

    ids = tmp_path / "ids.txt"  # an id list naming the skipped record: left out, and said so
    ids.write_text("egypt-omani-halwa\nmorocco-own\n", "utf-8")
    report = build(tmp_path / "out2", src, eval_ids=ids, on_bad_records="skip")
    assert report.counts["captioning_msa_eval350"] == 1 and "captioning_egyptian_eval350" not in report.counts
    assert "evaluation id list: 1 ids name records skipped as bad: egypt-omani-halwa" in report.warnings


# --- the Hub release ---------------------------------------------------------------------------


def _hub_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rename: dict[str, str], numbered: bool) -> None:
    """``toloka/JEEM`` in the Hub cache, as parquet with the given column names (images embedded)."""
    import huggingface_hub
    from hub_fixtures import cached_repo

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    snapshot = cached_repo(tmp_path / "hub", "toloka/JEEM")
    rows = []
    for record in jeem_records(tmp_path / "images"):
        record["image"] = {"bytes": (tmp_path / record["image"]).read_bytes(), "path": None}
        if numbered:  # three numbered pairs on every row, None where a team asked fewer
            questions, answers = record.pop("questions"), record.pop("answers")
            for k in range(3):
                record[f"question_{k + 1}"] = questions[k] if k < len(questions) else None
                record[f"answer_{k + 1}"] = answers[k] if k < len(answers) else None
        rows.append({rename.get(key, key): value for key, value in record.items()})
    (snapshot / "data").mkdir()
    datasets.Dataset.from_list(rows).to_parquet(snapshot / "data" / "test-00000-of-00001.parquet")


def test_the_hub_reader_maps_other_column_names_and_numbered_questions(tmp_path, monkeypatch, built):
    rename = {"image_id": "img_id", "country": "Dialect", "caption_dialect": "dialect_caption",
              "caption_msa": "msa_caption", "image_origin_country": "origin_country"}  # fmt: skip
    _hub_release(tmp_path, monkeypatch, rename, numbered=True)
    report = build(tmp_path / "out", "toloka/JEEM")
    assert report.counts == built[1].counts
    for config in ("captioning_moroccan", "vqa_emirati", "captioning_msa"):
        fresh = [{k: v for k, v in r.items() if k != "image"} for r in _rows(tmp_path / "out", config)]
        assert fresh == [{k: v for k, v in r.items() if k != "image"} for r in _rows(built[0], config)]
    card = (tmp_path / "out" / "README.md").read_text("utf-8")
    assert "`questions` <- `question_1 + question_2 + question_3`" in card and "`country` <- `Dialect`" in card


def test_an_unmappable_hub_layout_names_every_field_it_cannot_map(tmp_path, monkeypatch):
    rename = {"caption_dialect": "text_local", "caption_msa": "text_standard", "questions": "qs", "answers": "as_"}
    _hub_release(tmp_path, monkeypatch, rename, numbered=False)
    with pytest.raises(SourceError) as error:
        build(tmp_path / "out", "toloka/JEEM")
    message = str(error.value)
    for field in ("caption_dialect", "caption_msa", "questions", "answers"):
        assert f"field {field!r}: no column named" in message
    assert "field 'image_id'" not in message and "text_local" in message and "--columns" in message
    assert "\n  columns not used: ['text_local', 'text_standard', 'qs', 'as_']\n" in message
    columns = "caption_dialect=text_local,caption_msa=text_standard,questions=qs,answers=as_"
    assert build(tmp_path / "out", "toloka/JEEM", columns=columns).counts["vqa_moroccan"] == 4
    with pytest.raises(SourceError, match="the source has no column 'nope'"):
        build(tmp_path / "out", "toloka/JEEM", columns=columns + ",topic=nope")


def _one_question_per_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: tuple[str, str]) -> None:
    """``toloka/JEEM`` in the Hub cache with one row per question: the record's fields repeated on each."""
    import huggingface_hub
    from hub_fixtures import cached_repo

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    snapshot = cached_repo(tmp_path / "hub", "toloka/JEEM")
    rows = []
    for record in jeem_records(tmp_path / "images"):
        questions, answers = record.pop("questions"), record.pop("answers")
        record["image"] = {"bytes": (tmp_path / record["image"]).read_bytes(), "path": None}
        record.pop("image_origin_country", None)
        rows += [{**record, names[0]: q, names[1]: a} for q, a in zip(questions, answers, strict=True)]
    (snapshot / "data").mkdir()
    datasets.Dataset.from_list(rows).to_parquet(snapshot / "data" / "test-00000-of-00001.parquet")


@pytest.mark.parametrize("names", [("question", "answer"), ("questions", "answers")])
def test_one_row_per_question_is_one_schema_error_not_one_per_record(tmp_path, monkeypatch, names):
    _one_question_per_row(tmp_path, monkeypatch, names)
    with pytest.raises(SourceError) as error:
        build(tmp_path / "out", "toloka/JEEM", on_bad_records="skip")
    message = str(error.value)
    question, answer = names
    assert message.startswith(
        f"JEEM source toloka/JEEM has one row per question: columns {question!r} and {answer!r} hold one question "
        "and one answer a row"
    )
    assert "group the rows by 'image_id' and 'country' first" in message
    unused = [] if names == ("questions", "answers") else [question, answer]
    assert message.endswith(f"columns not used: {unused}")
    assert not (tmp_path / "out").exists()  # nothing read or written record by record


# --- bad records ---------------------------------------------------------------------------------


def test_a_bad_record_names_record_and_field_and_a_tolerant_build_reports_it(tmp_path):
    src = write_jeem_jsonl(tmp_path / "src")
    lines = src.read_text("utf-8").splitlines()
    bad = json.loads(lines[2])
    bad["caption_msa"] = "  "
    lines[2] = json.dumps(bad, ensure_ascii=False)
    wrong = json.loads(lines[5])
    wrong["country"] = "Tunisia"
    lines[5] = json.dumps(wrong, ensure_ascii=False)
    src.write_text("\n".join(lines) + "\n", "utf-8")
    with pytest.raises(
        JeemRecordError, match=r"jeem\.jsonl:3: jeem row 2 \(image_id 'omani-halwa'\): field 'caption_msa'"
    ):
        build(tmp_path / "out", src)
    report = build(tmp_path / "out", src, on_bad_records="skip")
    assert report.rows_written == 6 and [s.reason for s in report.skipped] == [
        "field 'caption_msa' is '  ', expected a non-empty string",
        "field 'country' is 'Tunisia', not one of JEEM's countries (Jordan, UAE, Egypt, Morocco)",
    ]
    assert report.counts["captioning_msa"] == 6
