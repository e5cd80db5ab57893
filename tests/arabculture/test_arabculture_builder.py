"""ArabCulture builder: release records -> validated Hub folder -> `load_dataset`, card, publish.

Offline and fast. The fixture is the bundled sample (`arab_mm_tasks/data/arabculture_sample.jsonl`:
22 real release rows + 16 hand-written ones); there is deliberately no second copy under tests/.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

import datasets
import pytest

from arab_mm_tasks.data import sample_records
from dataset_builders.arabculture import builder as arabculture
from dataset_builders.arabculture.builder import SAMPLE_PATH, ArabCultureRecordError, build, read_source
from dataset_builders.arabculture.topics import SUBTOPIC_TO_TOPIC, TABLE8, normalize, topic_of
from dataset_builders.core import hub, reading
from dataset_builders.core.release import ReleaseUnavailable

COUNTRIES = sorted(arabculture.REGION_OF_COUNTRY)
SAMPLE_COUNTS = {
    "Algeria": 4, "Egypt": 5, "Jordan": 2, "KSA": 5, "Lebanon": 3, "Libya": 2, "Morocco": 2,
    "Palestine": 2, "Sudan": 2, "Syria": 2, "Tunisia": 5, "UAE": 2, "Yemen": 2,
}  # fmt: skip
RAW = ("worker_id", "sample_id", "sub_topic", "first_statement", "options", "answer_key")
RAW += ("relevant_to_this_country", "relevant_to_other_countries", "should_discard", "country", "region")


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def load(folder: Path, config: str, cache: Path) -> datasets.Dataset:
    return datasets.load_dataset(str(folder), config, split="test", cache_dir=str(cache))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, reading.BuildReport]:
    out = tmp_path_factory.mktemp("arabculture") / "hub"
    return out, build(SAMPLE_PATH, out)


@pytest.fixture(scope="module")
def all_rows(built: tuple[Path, reading.BuildReport], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    rows = load(built[0], "all", tmp_path_factory.mktemp("cache"))
    return {row["id"]: row for row in rows}


# ---------------------------------------------------------------------------- the sample itself


def test_sample_covers_all_countries_with_varied_answers() -> None:
    records = sample_records()
    assert Counter(r["country"] for r in records) == SAMPLE_COUNTS
    assert set(Counter(r["answer_key"]["english_answer_key"] for r in records)) == {"A", "B", "C"}
    assert not (Path(__file__).parents[1] / "fixtures" / "arabculture").exists()  # one copy only


# ---------------------------------------------------------------------------- round trip


def test_round_trip_counts_and_configs(built: tuple[Path, reading.BuildReport], tmp_path: Path) -> None:
    out, report = built
    assert report.counts == {**SAMPLE_COUNTS, "all": 38}
    assert (report.rows_read, report.rows_written, report.rows_skipped) == (38, 38, 0)
    assert sorted(p.name for p in (out / "data").iterdir()) == sorted([*COUNTRIES, "all"])
    egypt = load(out, "Egypt", tmp_path)
    assert len(egypt) == 5
    assert egypt.features == arabculture.FEATURES
    assert egypt[0]["id"] == "Egypt-0000" and egypt[0]["answer_index"] == 1  # ب / B
    assert [r["country"] for r in load(out, "all", tmp_path)] == [c for c in COUNTRIES for _ in range(SAMPLE_COUNTS[c])]


def test_raw_fields_survive_byte_for_byte(all_rows: dict[str, dict]) -> None:
    seen: Counter[str] = Counter()
    for record in sample_records():
        country = record["country"]
        row = all_rows[f"{country}-{seen[country]:04d}"]
        seen[country] += 1
        assert {k: row[k] for k in RAW} == record
    assert all_rows["Tunisia-0004"]["options"]["text"][1] == "  تُقدم الأم الزلابية كمقبلات"
    assert all_rows["Egypt-0000"]["options"]["text"][1] == " يتم تناول الفول بالخبز"
    assert all_rows["Tunisia-0000"]["relevant_to_other_countries"] == " No"
    assert all_rows["Algeria-0002"]["relevant_to_this_country"] is None
    assert all_rows["Lebanon-0000"]["sample_id"] == "1.0 | Breakfast"


def test_derived_columns(all_rows: dict[str, dict]) -> None:
    assert len(all_rows) == 38  # ids unique, although KSA-1 and Tunisia-1 etc. share '1 | Breakfast'
    gold = {"Egypt-0000": 1, "Egypt-0002": 2, "Egypt-0004": 0, "KSA-0003": 0, "Tunisia-0000": 2}
    assert {i: all_rows[i]["answer_index"] for i in gold} == gold
    breakfast = [r for r in all_rows.values() if r["subtopic"] == "Breakfast"]
    assert len(breakfast) > 10 and {r["topic"] for r in breakfast} == {"Food"}
    assert all_rows["Lebanon-0000"]["subtopic"] == "Breakfast"
    assert all_rows["KSA-0003"]["subtopic"] == "Iftar (Ramadan)"
    assert all_rows["Syria-0001"]["topic"] == "Holiday Activities"  # release typo 'religous'
    assert all_rows["UAE-0001"]["topic"] == "Traditional Games"
    assert {r["topic"] for r in all_rows.values()} <= set(TABLE8)
    assert all_rows["Egypt-0000"]["country_specific"] is True  # 'No'
    assert all_rows["Egypt-0003"]["country_specific"] is False  # 'Yes'
    assert all_rows["Tunisia-0000"]["country_specific"] is True  # ' No'
    assert all_rows["KSA-0003"]["country_specific"] is None  # null
    assert all_rows["Yemen-0000"]["country_specific"] is None


def test_card(built: tuple[Path, reading.BuildReport]) -> None:
    out, report = built
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\nlicense: cc-by-nc-sa-4.0\n")
    for config in [*COUNTRIES, "all"]:
        assert (
            f"- config_name: {config}\n  data_files:\n  - split: test\n    path: data/{config}/test-*.parquet" in card
        )
    assert "| Egypt | Nile Valley | 5 | 265 |" in card and "| all | | 38 | 3482 |" in card
    assert "| Gulf | 9 | 817 |" in card
    assert "eprint        = {2502.12788}" in card and "Commonsense Reasoning in Arab Culture" in card
    assert 'load_dataset("arab-mm-tasks/arabculture", "Egypt"' in card and "--tasks arabculture_mcq" in card
    assert "bundled test sample" in card  # provenance note: built from the sample
    assert f"Country-specific (CS, `country_specific` true): {report.stats['country_specific']}" in card
    assert "`should_discard` = Yes: 0 of 38" in card


def test_should_discard_rows_are_kept_and_counted(tmp_path: Path) -> None:
    records = sample_records()
    records[10]["should_discard"] = " Yes"  # as in Tunisia's release rows
    report = build(write_jsonl(tmp_path / "r.jsonl", records), tmp_path / "out")
    assert report.counts["all"] == 38 and report.stats["should_discard_yes"] == 1
    assert "`should_discard` = Yes: 1 of 38" in (tmp_path / "out" / "README.md").read_text(encoding="utf-8")


def test_rebuild_replaces_data_cleanly(tmp_path: Path) -> None:
    out = tmp_path / "hub"
    build(SAMPLE_PATH, out)
    egypt_only = [r for r in sample_records() if r["country"] == "Egypt"]
    report = build(write_jsonl(tmp_path / "egypt.jsonl", egypt_only), out)
    assert sorted(p.name for p in (out / "data").iterdir()) == ["Egypt", "all"]
    assert "countries absent from the source: Algeria" in report.warnings[0]
    assert "config_name: KSA" not in (out / "README.md").read_text(encoding="utf-8")
    (out / "data" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not parquet"):
        build(SAMPLE_PATH, out)


def test_failed_build_leaves_previous_folder_untouched(tmp_path: Path) -> None:
    out = tmp_path / "hub"
    build(SAMPLE_PATH, out)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    bad = sample_records()
    bad[-1]["region"] = "Levant"
    with pytest.raises(ArabCultureRecordError):
        build(write_jsonl(tmp_path / "bad.jsonl", bad), out)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


# ---------------------------------------------------------------------------- malformed records


def _break(path: str, value: Any) -> Any:
    def mutate(record: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        target = record
        for key in parents:
            target = target[key]
        if value is KeyError:
            del target[leaf]
        else:
            target[leaf] = value

    return mutate


EGYPT_ROW_3 = "Egypt row 3 (sample_id '4 | Breakfast')"
MALFORMED = {
    "missing answer key": (_break("answer_key", KeyError), EGYPT_ROW_3, "'answer_key' is missing"),
    "null english key": (
        _break("answer_key.english_answer_key", None),
        EGYPT_ROW_3,
        "'answer_key.english_answer_key' is missing",
    ),
    "empty arabic key": (_break("answer_key.arabic_answer_key", ""), EGYPT_ROW_3, "'answer_key.arabic_answer_key'"),
    "answer not a key": (
        _break("answer_key.english_answer_key", "D"),
        EGYPT_ROW_3,
        "field 'answer_key.english_answer_key' is 'D', not one of ['A', 'B', 'C']",
    ),
    "only 2 options": (
        _break("options.text", ["نص أول", " نص ثان"]),
        EGYPT_ROW_3,
        "field 'options.text' has 2 items, expected exactly 3",
    ),
    "only 2 english keys": (_break("options.english_keys", ["A", "B"]), EGYPT_ROW_3, "'options.english_keys' has 2"),
    "unknown country": (
        _break("country", "Atlantis"),
        "Atlantis row 0 (sample_id '4 | Breakfast')",
        "field 'country' is 'Atlantis', not one of",
    ),
    "mismatched keys": (
        _break("answer_key.arabic_answer_key", "أ"),
        EGYPT_ROW_3,
        "field 'answer_key.arabic_answer_key' is 'أ' (option 1), but english_answer_key 'C' is option 3",
    ),
    "region of another country": (
        _break("region", "Gulf"),
        EGYPT_ROW_3,
        "field 'region' is 'Gulf', but Egypt is in 'Nile Valley'",
    ),
    "unknown region": (_break("region", "Sahara"), EGYPT_ROW_3, "field 'region' is 'Sahara', not one of"),
    "empty premise": (_break("first_statement", "  "), EGYPT_ROW_3, "field 'first_statement'"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_record_names_record_and_field(case: str, tmp_path: Path) -> None:
    mutate, record_id, message = MALFORMED[case]
    records = sample_records()
    mutate(records[3])  # Egypt row 3, sample_id '4 | Breakfast', answer ج / C
    with pytest.raises(ArabCultureRecordError) as err:
        build(write_jsonl(tmp_path / "r.jsonl", records), tmp_path / "out")
    assert record_id in str(err.value) and message in str(err.value)
    assert not (tmp_path / "out" / "data").exists()


def test_config_must_match_country() -> None:
    record = sample_records()[0]
    with pytest.raises(ArabCultureRecordError, match=r"KSA row 7 .*field 'country' is 'Egypt', but .*config 'KSA'"):
        arabculture.to_row(record, "KSA", 7)


@pytest.mark.parametrize("policy", ["skip", "warn"])
def test_tolerant_policies_skip_and_report(policy: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    records = sample_records()
    _break("options.text", ["a", "b"])(records[0])
    _break("country", "Atlantis")(records[-1])  # Yemen row 1
    with caplog.at_level(logging.WARNING, logger="dataset_builders.arabculture.builder"):
        report = build(write_jsonl(tmp_path / "r.jsonl", records), tmp_path / "out", on_bad_records=policy)
    assert (report.rows_read, report.rows_written, report.rows_skipped) == (38, 36, 2)
    assert report.counts["Egypt"] == 4 and report.counts["Yemen"] == 1 and "Atlantis" not in report.counts
    assert [s.record for s in report.skipped] == [
        f"{tmp_path / 'r.jsonl'}:38: Atlantis row 0 (sample_id '6 | Lunch')",
        f"{tmp_path / 'r.jsonl'}:1: Egypt row 0 (sample_id '1 | Breakfast')",
    ]
    assert "field 'options.text' has 2 items" in report.skipped[1].reason
    assert "2 bad records skipped" in report.warnings[-1]
    assert ("Egypt row 0" in caplog.text) == (policy == "warn")
    ids = {r["id"] for r in load(tmp_path / "out", "Egypt", tmp_path / "cache")}
    assert "Egypt-0000" not in ids and "Egypt-0001" in ids  # ids keep the source position
    assert "Records left out by the build: 2" in (tmp_path / "out" / "README.md").read_text(encoding="utf-8")


def test_bad_policy_and_bad_json(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="on_bad_records"):
        build(SAMPLE_PATH, tmp_path / "out", on_bad_records="ignore")  # type: ignore[arg-type]
    (tmp_path / "r.jsonl").write_text('{"country": "Egypt"}\n\n{oops\n', encoding="utf-8")
    with pytest.raises(reading.BadRecord, match=r"r.jsonl:3: is not valid JSON"):
        build(tmp_path / "r.jsonl", tmp_path / "out")


# ---------------------------------------------------------------------------- other sources


@pytest.mark.parametrize("with_card", [False, True])
def test_build_from_folder_in_authors_layout(with_card: bool, tmp_path: Path) -> None:
    source = tmp_path / "MBZUAI-ArabCulture"
    by_country = {c: [r for r in sample_records() if r["country"] == c] for c in ("Egypt", "KSA")}
    for country, records in by_country.items():
        (source / country).mkdir(parents=True)
        datasets.Dataset.from_list(records).to_parquet(source / country / "test-00000-of-00001.parquet")
    if with_card:  # the authors' card lists configs as <Country>/test-*
        configs = "".join(
            f"- config_name: {c}\n  data_files:\n  - split: test\n    path: {c}/test-*\n" for c in by_country
        )
        (source / "README.md").write_text(f"---\nlicense: cc-by-nc-sa-4.0\nconfigs:\n{configs}---\n")
    configs = read_source(source)
    assert list(configs) == ["Egypt", "KSA"] and configs.ignored == []
    assert list(configs["KSA"]) == by_country["KSA"]  # streamed rows equal the records, nulls included
    report = build(source, tmp_path / "out")
    assert report.counts == {"Egypt": 5, "KSA": 5, "all": 10}
    assert report.warnings[0].startswith("countries absent from the source: Algeria, Jordan")
    assert load(tmp_path / "out", "KSA", tmp_path / "cache")[3]["relevant_to_other_countries"] is None


def test_hub_source_is_read_from_the_hugging_face_cache_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Hub id is fetched with snapshot_download, so a release downloaded once builds again offline."""
    import huggingface_hub.constants
    from hub_fixtures import cache_arabculture_release

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    cache_arabculture_release(tmp_path / "hub", [r for r in sample_records() if r["country"] in ("Egypt", "KSA")])
    configs = read_source("MBZUAI/ArabCulture")
    assert configs.origin == "MBZUAI/ArabCulture" and list(configs) == ["Egypt", "KSA"]
    assert list(configs["KSA"]) == [r for r in sample_records() if r["country"] == "KSA"]
    with pytest.raises(ReleaseUnavailable, match="MBZUAI/ArabCulture@v2 is not in the Hugging Face cache"):
        read_source("MBZUAI/ArabCulture", revision="v2")
    with pytest.raises(FileNotFoundError):
        read_source("./missing/records.jsonl")


# ---------------------------------------------------------------------------- topics


def test_table8_map() -> None:
    assert len(SUBTOPIC_TO_TOPIC) == 48 and len(TABLE8) == 12  # Table 8 lists 48, not 54
    assert len({normalize(s) for s in SUBTOPIC_TO_TOPIC}) == 48
    assert topic_of("wedding (other logistics)") == "Wedding"
    assert topic_of("men cermony vs. women cermony") == "Wedding"
    assert topic_of("  things you do after coming back from work/uni (WOMEN) ") == "Daily Activities"
    assert topic_of("Suhoor", "السحور ( تصبيرة رمضان )") == "Food"  # Arabic fallback
    assert topic_of("Something new", "موضوع جديد") is None


def test_unmapped_topics_are_counted_not_fatal(tmp_path: Path) -> None:
    records = sample_records()
    records[0]["sample_id"], records[0]["sub_topic"] = "1 | Morning snacks", "شيء جديد"
    records[1]["sample_id"] = "2 | Brekfast"  # English unmapped, Arabic 'الافطار' maps
    report = build(write_jsonl(tmp_path / "r.jsonl", records), tmp_path / "out")
    assert report.stats["topic_unmapped"] == 1
    assert any("'Morning snacks / شيء جديد' have no Table 8 topic" in w for w in report.warnings)
    egypt = load(tmp_path / "out", "Egypt", tmp_path / "cache")
    assert egypt[0]["topic"] is None and egypt[1]["topic"] == "Food" and egypt[1]["subtopic"] == "Brekfast"


# ---------------------------------------------------------------------------- hub helpers and publish


def test_write_hub_folder_generic(tmp_path: Path) -> None:
    ds = datasets.Dataset.from_list([{"x": 1}, {"x": 2}])
    card = hub.render_card(
        configs=["a", "b"], body="# T", license="mit", pretty_name="T", language="ar", task_categories=["other"]
    )
    out = hub.write_hub_folder(tmp_path / "t", {"a": ds, "b": ds.select([1])}, card)
    assert len(load(out, "b", tmp_path / "cache")) == 1 and load(out, "a", tmp_path / "cache")["x"] == [1, 2]
    with pytest.raises(ValueError, match="folder name"):
        hub.write_hub_folder(tmp_path / "u", {"../x": ds}, card)
    assert not (tmp_path / "u" / "data").exists()


def test_publish_uploads_folder_without_leaking_token(
    built: tuple[Path, reading.BuildReport],
    hf_calls: list[tuple[str, dict[str, Any]]],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    token = "hf_TESTSECRETtoken1234567890"
    with caplog.at_level(logging.DEBUG):
        result = arabculture.publish(built[0], private=True, token=token)
    assert result.endswith("upload_folder")
    assert [name for name, _ in hf_calls] == ["create_repo", "upload_folder"]
    create, upload = hf_calls[0][1], hf_calls[1][1]
    assert create["args"] == ("arab-mm-tasks/arabculture",)
    assert create["repo_type"] == "dataset" and create["private"] is True and create["exist_ok"] is True
    assert upload["repo_id"] == "arab-mm-tasks/arabculture" and upload["repo_type"] == "dataset"
    assert Path(upload["folder_path"]) == built[0]
    assert upload["delete_patterns"] == ["data/**"]
    captured = capsys.readouterr()
    assert "arab-mm-tasks/arabculture" in caplog.text
    assert token not in caplog.text + captured.out + captured.err


def test_publish_checks_folder_before_any_call(tmp_path: Path, hf_calls: list[tuple[str, dict[str, Any]]]) -> None:
    (tmp_path / "data" / "x").mkdir(parents=True)
    (tmp_path / "data" / "x" / "test-00000-of-00001.parquet").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match=r"no README\.md"):
        hub.publish(tmp_path, "org/name", token="hf_x")
    (tmp_path / "README.md").write_text("---\n---\n")
    with pytest.raises(FileNotFoundError, match="not a folder"):
        hub.publish(tmp_path / "missing", "org/name")
    hub.publish(tmp_path, "org/name", revision="v1")
    assert [name for name, _ in hf_calls] == ["create_repo", "create_branch", "upload_folder"]
    assert hf_calls[2][1]["revision"] == "v1"


def test_publish_can_gate_the_repo_before_uploading(built: tuple[Path, reading.BuildReport], hf_calls: list) -> None:
    hub.publish(built[0], "org/ds", gated="manual")
    assert [name for name, _ in hf_calls] == ["create_repo", "update_repo_settings", "upload_folder"]
    assert hf_calls[1][1]["gated"] == "manual"


def test_report_summary(built: tuple[Path, reading.BuildReport]) -> None:
    report = built[1]
    text = report.summary()
    assert text.startswith("arabculture: read 38 rows") and "  all: 38" in text
    assert report.to_dict()["rows_skipped"] == 0


def test_odd_flags_and_sample_ids_only_null_the_derived_columns(tmp_path: Path) -> None:
    """They feed topic / country_specific alone: the row is kept, the derived value is null and counted."""
    records = sample_records()
    records[3]["relevant_to_other_countries"] = "Maybe"
    records[4]["sample_id"] = "5"
    report = build(write_jsonl(tmp_path / "odd.jsonl", records), tmp_path / "out")
    assert report.rows_written == len(records)
    egypt = load(tmp_path / "out", "Egypt", tmp_path / "cache")
    assert egypt[3]["relevant_to_other_countries"] == "Maybe" and egypt[3]["country_specific"] is None
    assert egypt[4]["sample_id"] == "5" and egypt[4]["subtopic"] is None
    assert egypt[4]["topic"] == "Food"  # from its Arabic sub_topic 'الافطار', as for a misspelt subtopic
    assert report.stats["relevant_to_other_countries_unreadable"] == 1
    assert report.stats.get("topic_unmapped", 0) == 0


# ---------------------------------------------------------------------------- .jsonl lines (builder input issue)


def test_an_error_names_the_file_line_as_well_as_the_record(tmp_path: Path) -> None:
    records = sample_records()
    line = [i for i, r in enumerate(records) if r["country"] == "KSA"][1] + 1  # KSA row 1
    records[line - 1]["region"] = "Levant"
    source = write_jsonl(tmp_path / "r.jsonl", records)
    with pytest.raises(ArabCultureRecordError) as err:
        build(source, tmp_path / "out")
    assert str(err.value).startswith(f"{source}:{line}: KSA row 1 (sample_id ")
    assert "field 'region' is 'Levant'" in str(err.value)


MALFORMED_LINES = {  # what a line holds -> the problem the build names
    "truncated": (b'{"country": "Egypt", "sample_id": "1 | Bre', "is not valid JSON"),
    "array": (b'[{"country": "Egypt"}]', "is not a JSON object (a JSON list)"),
    "latin-1": ('{"country": "Égypte"}'.encode("latin-1"), "is not UTF-8 text"),
    "csv": ("worker_id,sample_id,sub_topic\nEgypt-1,1 | Breakfast,الافطار".encode(), "is not valid JSON"),
    "lone surrogate": (b'{"country": "Egypt", "sub_topic": "\\ud800"}', "field 'sub_topic' holds an unpaired"),
}


@pytest.mark.parametrize("case", list(MALFORMED_LINES))
def test_a_malformed_line_is_a_bad_record(case: str, tmp_path: Path) -> None:
    bad, problem = MALFORMED_LINES[case]
    good = [json.dumps(r, ensure_ascii=False).encode() for r in sample_records()]
    source = tmp_path / "r.jsonl"
    source.write_bytes(b"\n".join([good[0], bad, *good[1:]]) + b"\n")
    with pytest.raises(reading.BadRecord, match=f"^{re.escape(f'{source}:2: ')}.*{re.escape(problem)}"):
        build(source, tmp_path / "out")
    assert not (tmp_path / "out" / "data").exists()
    report = build(source, tmp_path / "out", on_bad_records="skip")  # skipped, listed, counted; the rest built
    extra = bad.count(b"\n")  # the CSV sample is two lines
    assert report.rows_read == 39 + extra and report.rows_written == 38
    assert report.rows_read == report.rows_written + report.rows_skipped
    assert report.skipped[0].record == f"{source}:2" and problem in str(report.skipped[0])


def test_bom_and_crlf_are_read_as_text(tmp_path: Path) -> None:
    lines = [json.dumps(r, ensure_ascii=False) for r in sample_records()]
    source = tmp_path / "r.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n\r\n")
    report = build(source, tmp_path / "out")
    assert (report.rows_read, report.rows_written, report.rows_skipped) == (38, 38, 0)


@pytest.mark.parametrize("text", ["", "\n  \n\r\n"])
def test_an_empty_source_is_a_source_error(text: str, tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_text(text, encoding="utf-8")
    with pytest.raises(reading.SourceError, match="no records"):
        build(tmp_path / "r.jsonl", tmp_path / "out", on_bad_records="skip")


def test_a_csv_file_is_a_source_error(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("worker_id,sample_id\n", encoding="utf-8")
    with pytest.raises(reading.SourceError, match=r"r\.csv: expected a \.jsonl file"):
        build(tmp_path / "r.csv", tmp_path / "out")


def test_only_malformed_lines_in_skip_mode_is_a_source_error(tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_text("{oops\n[1]\n", encoding="utf-8")
    with pytest.raises(reading.SourceError, match=r"no valid ArabCulture records .*2 skipped.*r\.jsonl:1"):
        build(tmp_path / "r.jsonl", tmp_path / "out", on_bad_records="skip")


def test_exact_duplicates_are_kept_and_reported(tmp_path: Path) -> None:
    records = sample_records()
    source = write_jsonl(tmp_path / "r.jsonl", [*records, records[3], records[3]])  # lines 39, 40 repeat line 4
    report = build(source, tmp_path / "out")
    assert report.rows_written == 40 and report.counts["Egypt"] == 7  # kept: see docs/fidelity.md
    assert report.duplicates == [
        reading.DuplicateRecord(f"{source}:39: Egypt-0005", f"{source}:4: Egypt-0003"),
        reading.DuplicateRecord(f"{source}:40: Egypt-0006", f"{source}:4: Egypt-0003"),
    ]
    assert "2 records repeat an earlier record exactly; kept" in " ".join(report.warnings)
    assert f"duplicate {source}:40: Egypt-0006: repeats {source}:4: Egypt-0003" in report.summary()
    assert report.to_dict()["rows_duplicate"] == 2


def test_a_sample_id_without_subtopic_gets_the_same_arabic_fallback_as_a_typo(tmp_path: Path) -> None:
    records = [r for r in sample_records() if r["sub_topic"] == "الافطار"][:2]
    records[0]["sample_id"], records[1]["sample_id"] = "7", "3 | Brekfast"
    rows = [arabculture.to_row(r, r["country"], i) for i, r in enumerate(records)]
    assert [(row["subtopic"], row["topic"]) for row in rows] == [(None, "Food"), ("Brekfast", "Food")]


def test_a_build_shows_progress_on_a_terminal_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """First-use builds of a full release take minutes: a terminal gets a bar, a log file gets nothing."""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, shows in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        build(str(SAMPLE_PATH), tmp_path / f"out-{shows}")
        assert ("arabculture Egypt" in stream.getvalue() and " rows" in stream.getvalue()) is shows
