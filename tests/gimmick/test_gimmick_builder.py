"""GIMMICK builder: the authors' three releases -> checked Hub folder -> `load_dataset`, card, publish.

Offline and small: the sources are `gimmick_fixtures` (the paper's example records, synthetic
images and 1-2 s clips made at test time), in the authors' column layout.
"""

from __future__ import annotations

import io
import json
import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

import av
import datasets
import PIL.Image
import pyarrow.parquet as pq
import pytest
import yaml
from datasets import Image, List, Video
from gimmick_fixtures import (
    AUTHORS_CACHE,
    build_gimmick_hub_dir,
    coqa_records,
    coqa_uuid,
    sivqa_records,
    vvqa_records,
    write_coqa,
    write_gimmick_sources,
    write_sivqa,
    write_vvqa,
)

from arab_mm_tasks.core.spec import RecordError
from arab_mm_tasks.gimmick.vocabulary import (
    COUNTRIES_BY_REGION,
    REGION_CODE_OF,
    REGION_CODES,
    REGION_NAME,
    SHORT_COUNTRY_NAME,
    region_codes,
    short_country_name,
)
from dataset_builders.core import reading
from dataset_builders.core.release import ReleaseUnavailable
from dataset_builders.gimmick import builder as gimmick
from dataset_builders.gimmick.builder import FEATURES, GimmickRecordError, SourceError, build
from dataset_builders.gimmick.coqa import choose_options, coqa_c_rows, option_rng

NOWRUZ = coqa_uuid("Nawrouz, Novruz, Nowrouz, Nowrouz, Nawrouz, Nauryz, Nooruz, Nowruz, Navruz, Nevruz, Nowruz, Navruz")
RUMBA = coqa_uuid("Congolese rumba")
TRANSHUMANCE = coqa_uuid("Transhumance, the seasonal droving of livestock")
KOREA = coqa_uuid("Traditional Korean wrestling (Ssirum/Ssireum)")
LLANO = coqa_uuid("Colombian-Venezuelan llano work songs")
COUNTS = {"civqa": 6, "cvvqa": 4, "coqa_c": 43, "coqa_r": 11, "ckqa": 11}
MEDIA = ("image", "images", "video")


def load(folder: Path, config: str, cache: Path) -> datasets.Dataset:
    return datasets.load_dataset(str(folder), config, split="test", cache_dir=str(cache))


def shard(folder: Path, config: str) -> Path:
    return folder / "data" / config / "test-00000-of-00001.parquet"


def plain_rows(folder: Path, config: str) -> list[dict[str, Any]]:
    """A built config's rows without media, straight from its parquet shard."""
    table = pq.read_table(shard(folder, config))
    return table.select([c for c in table.column_names if c not in MEDIA]).to_pylist()


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_gimmick_sources(tmp_path_factory.mktemp("gimmick-sources"))


@pytest.fixture(scope="module")
def built(sources: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, reading.BuildReport]:
    out = tmp_path_factory.mktemp("gimmick") / "hub"
    return out, build(out, **sources)


@pytest.fixture(scope="module")
def loaded(built: tuple[Path, reading.BuildReport], tmp_path_factory: pytest.TempPathFactory) -> dict:
    cache = tmp_path_factory.mktemp("cache")
    return {config: load(built[0], config, cache) for config in COUNTS}


# ---------------------------------------------------------------------------- vocabulary


def test_vocabulary_regions_and_countries() -> None:
    assert REGION_CODES == ("A", "AP", "E", "LAC", "SA", "W")
    assert {c: len(v) for c, v in COUNTRIES_BY_REGION.items()} == {
        "A": 18,
        "AP": 35,
        "E": 25,
        "LAC": 28,
        "SA": 40,
        "W": 23,
    }
    assert REGION_CODE_OF["Sub-Saharan African States"] == REGION_CODE_OF["Subsaharian African States"] == "SA"
    assert all(REGION_CODE_OF[name] == code for code, name in REGION_NAME.items())
    assert region_codes(["Western European and North American States", "Eastern European States"], record="r") == [
        "W",
        "E",
    ]
    assert region_codes(["Sub-Saharan African States", "Subsaharian African States"], record="r") == ["SA"]
    with pytest.raises(RecordError, match=r"q7: field 'regions' has 'Atlantic States'"):
        region_codes(["Arab States", "Atlantic States"], record="q7")
    table4 = {c for names in COUNTRIES_BY_REGION.values() for c in names}
    assert set(SHORT_COUNTRY_NAME.values()) <= table4  # every official form maps onto a Table 4 name
    expected = {
        "Viet Nam": "Vietnam", "Iran (Islamic Republic of)": "Iran", "Republic of Korea": "Korea",
        "Russian Federation": "Russia", "Venezuela (Bolivarian Republic of)": "Venezuela",
        "Bolivia (Plurinational State of)": "Bolivia", "Republic of Moldova": "Moldova",
        "Syrian Arab Republic": "Syria",
        "Micronesia (Federated States of)": "Micronesia", "Turkey": "Türkiye", "Türkiye": "Türkiye",
        "Lao People's Democratic Republic": "Lao People's Democratic Republic", "Czech Republic": "Czechia",
        "Democratic People's Republic of Korea": "Democratic People's Republic of Korea",  # not merged into Korea
        "United Kingdom of Great Britain and Northern Ireland": "United Kingdom of Great Britain and Northern Ireland",
        "Côte d’Ivoire": "Côte d'Ivoire", " Spain ": "Spain", "Atlantis": "Atlantis",
    }  # fmt: skip
    assert {name: short_country_name(name) for name in expected} == expected


# ---------------------------------------------------------------------------- round trip


def test_every_config_loads_with_typed_features(built: tuple[Path, reading.BuildReport], loaded: dict) -> None:
    out, report = built
    assert report.counts == COUNTS
    assert (report.rows_read, report.rows_written, report.rows_skipped) == (6 + 6 + 11, 6 + 4 + 11, 0)
    assert sorted(p.name for p in (out / "data").iterdir()) == sorted(COUNTS)
    extras = {"civqa": ["image_copyright"], "cvvqa": [], "coqa_c": ["url"], "coqa_r": ["url"], "ckqa": ["url"]}
    for config, ds in loaded.items():
        assert len(ds) == COUNTS[config]
        assert list(ds.features) == [*FEATURES[config], *extras[config]]
        assert all(ds.features[k] == v for k, v in FEATURES[config].items()), config
        assert len(set(ds["id"])) == len(ds)  # ids unique within the config
    assert loaded["civqa"].features["image"] == Image()
    assert loaded["cvvqa"].features["video"] == Video(decode=False)
    assert loaded["ckqa"].features["images"] == List(Image())
    assert "stacked_images" not in loaded["ckqa"].features
    assert any("stacked_images" in w for w in report.warnings)


def test_civqa_rows_images_and_raw_fields(loaded: dict) -> None:
    civqa = loaded["civqa"]
    assert civqa["id"] == ["1001", "1002", "1003", "1004", "1005", "1006"]  # question_id, as strings
    assert isinstance(civqa[0]["image"], PIL.Image.Image) and civqa[0]["image"].size == (48, 32)
    raw = civqa.cast_column("image", Image(decode=False))
    for row, record in zip(raw, sivqa_records(), strict=True):
        assert row["image"]["bytes"] == record["ich_image"]["bytes"]  # not re-encoded
        assert (row["question"], row["answer"]) == (record["question"], record["answer"])
        assert row["image_copyright"] == record["image_copyright"]  # other source columns kept raw
    fichee = civqa[4]
    assert fichee["answer"] == "Fichée-Chambalaalla" and fichee["regions"] == ["Sub-Saharan African States"]
    assert fichee["region_codes"] == ["SA"]


def test_cvvqa_video_bytes_are_the_source_clips(sources: dict[str, Path], loaded: dict) -> None:
    cvvqa = loaded["cvvqa"]
    assert cvvqa["id"] == ["2001", "2003", "2005", "2006"]
    for row in cvvqa:
        clip = sources["videos_dir"] / row["video_fn"]
        assert row["video"]["bytes"] == clip.read_bytes()
        assert row["video"]["path"] == row["video_fn"] == clip.name
    with av.open(io.BytesIO(cvvqa[0]["video"]["bytes"])) as container:
        assert sum(1 for _ in container.decode(video=0)) == 10  # 1 s at 10 fps
    transhumance = cvvqa[3]
    assert transhumance["region_codes"] == ["W", "E"] and transhumance["video_center_frame_sim"] == 0.57
    assert transhumance["regions"] == ["Western European and North American States", "Eastern European States"]
    assert cvvqa[2]["region_codes"] == ["SA"]  # 'Sub-Saharan African States'


def test_video_bytes_survive_when_the_basename_exists_in_cwd(
    sources: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`datasets` drops the bytes of a Video value whose path is an existing file; the builder must not."""
    monkeypatch.chdir(sources["videos_dir"])  # now '2001.mp4' etc. exist relative to cwd
    build(tmp_path / "out", vvqa=sources["vvqa"], videos_dir=sources["videos_dir"])
    rows = pq.read_table(shard(tmp_path / "out", "cvvqa"), columns=["video"]).to_pylist()
    assert [r["video"]["bytes"] for r in rows] == [
        (sources["videos_dir"] / f"{q}.mp4").read_bytes() for q in (2001, 2003, 2005, 2006)
    ]


def test_video_fn_without_videos_dir(sources: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(
        GimmickRecordError, match=rf"vvqa row 0 \(question_id 2001\): field 'video_fn' .*{AUTHORS_CACHE}"
    ):
        build(tmp_path / "a", vvqa=sources["vvqa"])  # the authors' machine's paths
    records = [{**r, "video_fn": f"clips/{r['question_id']}.mp4"} for r in vvqa_records()]
    source = write_vvqa(sources["vvqa"].parent / "relative.jsonl", records)  # relative to the jsonl's folder
    assert build(tmp_path / "b", vvqa=source).counts == {"cvvqa": 4}


# ---------------------------------------------------------------------------- the similarity filter


def test_similarity_threshold_paper_rule_by_default(built: tuple[Path, reading.BuildReport]) -> None:
    out, report = built
    assert report.stats["cvvqa_min_center_frame_similarity"] == 0.5
    assert report.stats["cvvqa_similarity_inclusive"] == 0
    assert report.stats["cvvqa_removed_by_similarity"] == 2  # 0.5 exactly and 0.42
    assert report.rows_skipped == 0  # a filter, not bad records
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Clips are kept when `video_center_frame_sim > 0.5`, the paper's rule (L140)" in card
    assert "**Rows removed by the threshold: 2.**" in card


def test_similarity_inclusive_keeps_exactly_half(sources: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = build(out, vvqa=sources["vvqa"], videos_dir=sources["videos_dir"], similarity_inclusive=True)
    assert report.counts == {"cvvqa": 5} and report.stats["cvvqa_removed_by_similarity"] == 1
    assert [r["id"] for r in plain_rows(out, "cvvqa")] == ["2001", "2002", "2003", "2005", "2006"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "`video_center_frame_sim >= 0.5`, the authors' code's rule" in card
    assert "**Rows removed by the threshold: 1.**" in card
    report = build(out, vvqa=sources["vvqa"], videos_dir=sources["videos_dir"], min_center_frame_similarity=0.7)
    assert report.counts == {"cvvqa": 2} and report.stats["cvvqa_removed_by_similarity"] == 4


# ---------------------------------------------------------------------------- COQA


def _negatives(row: dict[str, Any]) -> list[str]:
    return [o for o in row["options"] if o != row["target"]]


def _check_gold(row: dict[str, Any]) -> None:
    assert len(row["options"]) == 4 and len(set(row["options"])) == 4
    assert row["options"][row["answer_index"]] == row["target"]
    assert row["answer"] == "ABCD"[row["answer_index"]]
    assert row["id"] == f"{row['sample_uuid']}/{row['target']}"


def test_coqa_r_rows(built: tuple[Path, reading.BuildReport]) -> None:
    out, report = built
    rows = plain_rows(out, "coqa_r")
    assert report.stats["coqa_r_cefs_dropped_over_3_regions"] == 1
    assert NOWRUZ not in {r["sample_uuid"] for r in rows}  # 4 regions: dropped
    for row in rows:
        _check_gold(row)
        assert row["target"] in {REGION_NAME[c] for c in row["region_codes"]}
        assert all(REGION_CODE_OF[o] not in row["region_codes"] for o in _negatives(row))  # never a CEF region
        assert set(row["options"]) <= set(REGION_NAME.values())
    assert [r["target"] for r in rows if r["sample_uuid"] == TRANSHUMANCE] == [REGION_NAME["W"], REGION_NAME["E"]]
    rumba = next(r for r in rows if r["sample_uuid"] == RUMBA)
    assert rumba["target"] == "Subsaharian African States" and rumba["region_codes"] == ["SA"]
    assert {r["answer"] for r in rows} >= {"A", "B", "C"}  # the gold letter is not always in one place


def test_coqa_c_rows(built: tuple[Path, reading.BuildReport]) -> None:
    out, report = built
    rows = plain_rows(out, "coqa_c")
    for row in rows:
        _check_gold(row)
        own = {short_country_name(c) for c in row["countries"]}
        assert not own & set(_negatives(row))  # never another of the CEF's countries
        pool = {c for code in row["region_codes"] for c in COUNTRIES_BY_REGION[code]}
        assert set(_negatives(row)) <= pool  # from the CEF's regions: no top-up was needed here
    by_cef: dict[str, list[str]] = {}
    for row in rows:
        by_cef.setdefault(row["sample_uuid"], []).append(row["target"])
    assert by_cef[RUMBA] == ["Congo", "Democratic Republic of the Congo"]
    assert by_cef[LLANO] == ["Colombia", "Venezuela"]  # normalised from 'Venezuela (Bolivarian Republic of)'
    assert by_cef[KOREA] == ["Democratic People's Republic of Korea", "Korea"]
    assert "Iran" in by_cef[NOWRUZ] and len(by_cef[NOWRUZ]) == 12  # kept for COQA_C
    assert len(by_cef[TRANSHUMANCE]) == 10
    assert report.stats["coqa_c_rows_topped_up"] == report.stats["coqa_c_rows_unknown_country"] == 0
    assert report.stats["coqa_seed"] == 1312


def test_ckqa_rows(loaded: dict) -> None:
    ckqa = loaded["ckqa"]
    assert ckqa["id"] == ckqa["sample_uuid"] == [r["sample_uuid"] for r in coqa_records()]
    raw = ckqa.cast_column("images", List(Image(decode=False)))
    for row, record in zip(raw, coqa_records(), strict=True):
        assert [i["bytes"] for i in row["images"]] == [i["bytes"] for i in record["images"]]
        assert (row["title"], row["description"], row["url"]) == (record["title"], record["description"], record["url"])
    assert all(isinstance(image, PIL.Image.Image) for image in ckqa[0]["images"]) and len(ckqa[0]["images"]) == 3


def test_options_are_frozen_and_seeded(built: tuple[Path, reading.BuildReport], sources: dict, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build(again, coqa=sources["coqa"])
    for config in ("coqa_c", "coqa_r", "ckqa"):  # byte-for-byte the same shards
        assert shard(again, config).read_bytes() == shard(built[0], config).read_bytes()
    other = tmp_path / "seed"
    build(other, coqa=sources["coqa"], seed=7)
    for config in ("coqa_c", "coqa_r"):
        first, second = plain_rows(built[0], config), plain_rows(other, config)
        assert [r["id"] for r in first] == [r["id"] for r in second]
        assert any(a["options"] != b["options"] for a, b in zip(first, second, strict=True))


def test_a_rows_options_depend_only_on_its_own_cef(built: tuple[Path, reading.BuildReport], tmp_path: Path) -> None:
    """Skipping or dropping one CEF (tolerant mode, a partial copy) does not reshuffle any other row."""
    subset = write_coqa(tmp_path / "subset", coqa_records()[3:][::-1])
    build(tmp_path / "out", coqa=subset)
    for config in ("coqa_c", "coqa_r"):
        full = {r["id"]: r["options"] for r in plain_rows(built[0], config)}
        part = {r["id"]: r["options"] for r in plain_rows(tmp_path / "out", config)}
        assert part and all(full[i] == options for i, options in part.items())


def test_sampling_is_pinned() -> None:
    """The exact draw for a fixed seed and row id: changing the algorithm must be a deliberate choice."""
    pool = [c for c in COUNTRIES_BY_REGION["A"] if c != "Egypt"]
    assert choose_options("Egypt", pool, option_rng(1312, "coqa_c", "cef/Egypt")) == (
        ["Sudan", "Yemen", "Egypt", "Saudi Arabia"],
        2,
    )
    assert choose_options("Egypt", list(reversed(pool)), option_rng(1312, "coqa_c", "cef/Egypt"))[0][2] == "Egypt"


def test_country_top_up_and_unknown_countries() -> None:
    arab = list(COUNTRIES_BY_REGION["A"])
    cef = {"sample_uuid": "u", "countries": arab[:-2], "region_codes": ["A"]}  # 2 Arab countries left
    stats: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    rows = coqa_c_rows(cef, seed=1312, stats=stats, unknown=unknown)
    assert len(rows) == 16 and stats["coqa_c_rows_topped_up"] == 16
    assert all(not set(r["options"]) & set(arab[:-2]) - {r["target"]} for r in rows)
    assert any(set(r["options"]) - set(arab) for r in rows)  # negatives from outside the region
    cef = {"sample_uuid": "v", "countries": ["Atlantis", "Morocco", "Morocco"], "region_codes": ["A"]}
    rows = coqa_c_rows(cef, seed=1312, stats=stats, unknown=unknown)
    assert [r["target"] for r in rows] == ["Atlantis", "Morocco"] and unknown == {"Atlantis": 1}
    assert stats["coqa_c_duplicate_countries"] == 1
    assert all("Morocco" not in _negatives(r) and "Atlantis" not in _negatives(r) for r in rows)


def test_unknown_country_is_reported_not_fatal(tmp_path: Path) -> None:
    records = coqa_records()
    records[1]["countries"] = ["Kyrgyzstan", "Atlantis"]
    report = build(tmp_path / "out", coqa=write_coqa(tmp_path / "coqa", records))
    assert report.counts["coqa_c"] == 44 and report.stats["coqa_c_rows_unknown_country"] == 1
    assert any("no Table 4 country" in w and "'Atlantis' (1)" in w for w in report.warnings)


# ---------------------------------------------------------------------------- bad records


def _sivqa(mutate: Any) -> Any:
    def write(tmp: Path, videos_dir: Path) -> dict[str, Any]:
        records = sivqa_records()
        mutate(records)
        return {"sivqa": write_sivqa(tmp / "s.parquet", records)}

    return write


def _vvqa(mutate: Any) -> Any:
    def write(tmp: Path, videos_dir: Path) -> dict[str, Any]:
        records = vvqa_records()
        mutate(records)
        return {"vvqa": write_vvqa(tmp / "v.jsonl", records), "videos_dir": videos_dir}

    return write


def _coqa(mutate: Any) -> Any:
    def write(tmp: Path, videos_dir: Path) -> dict[str, Any]:
        records = coqa_records()
        mutate(records)
        return {"coqa": write_coqa(tmp / "c", records)}

    return write


def _set(index: int, field: str, value: Any) -> Any:
    return lambda records: records[index].__setitem__(field, value)


MALFORMED = {
    "missing question": (_sivqa(_set(2, "question", None)), "sivqa row 2 (question_id 1003)", "field 'question' is"),
    "empty answer": (_sivqa(_set(0, "answer", " ")), "sivqa row 0 (question_id 1001)", "field 'answer' is ' '"),
    "unreadable image": (
        _sivqa(_set(1, "ich_image", {"bytes": b"not an image", "path": "x.jpg"})),
        "sivqa row 1 (question_id 1002)",
        "field 'ich_image' is not a readable image",
    ),
    "repeated question_id": (
        _sivqa(_set(5, "question_id", 1001)),
        "sivqa row 5 (question_id 1001)",
        "field 'question_id' repeats id '1001'",
    ),
    "missing video file": (
        _vvqa(_set(2, "video_fn", f"{AUTHORS_CACHE}/9999.mp4")),
        "vvqa row 2 (question_id 2003)",
        "field 'video_fn' names the clip",
    ),
    "missing similarity": (
        _vvqa(lambda records: records[0].pop("video_center_frame_sim")),
        "vvqa row 0 (question_id 2001)",
        "field 'video_center_frame_sim' is None",
    ),
    "unknown region": (
        _coqa(_set(3, "regions", ["Atlantic States"])),
        f"coqa row 3 (sample_uuid {coqa_records()[3]['sample_uuid']!r})",
        "field 'regions' has 'Atlantic States', not a UNESCO ICH region",
    ),
    "unreadable CEF image": (
        _coqa(lambda records: records[0]["images"].__setitem__(1, {"bytes": b"\x89PNG broken", "path": "b.png"})),
        "coqa row 0",
        "field 'images[1]' is not a readable image",
    ),
    "no images": (_coqa(_set(2, "images", [])), "coqa row 2", "field 'images' is [], no images"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_bad_record_names_record_and_field(case: str, sources: dict[str, Path], tmp_path: Path) -> None:
    write, record_id, message = MALFORMED[case]
    with pytest.raises(GimmickRecordError) as err:
        build(tmp_path / "out", **write(tmp_path, sources["videos_dir"]))
    assert record_id in str(err.value) and message in str(err.value)
    assert not (tmp_path / "out" / "data").exists()  # nothing half-written


@pytest.mark.parametrize("policy", ["skip", "warn"])
def test_tolerant_mode_lists_each_skipped_record(
    policy: str, sources: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sivqa = sivqa_records()
    sivqa[2]["question"] = None
    sivqa[4]["regions"] = ["Sub-Saharan States"]
    vvqa = vvqa_records()
    vvqa[0]["video_fn"] = "/elsewhere/missing.mp4"
    vvqa[1]["video_fn"] = "/elsewhere/also-missing.mp4"  # below the threshold: filtered, not skipped
    kwargs = {
        "sivqa": write_sivqa(tmp_path / "s.parquet", sivqa),
        "vvqa": write_vvqa(tmp_path / "v.jsonl", vvqa),
        "videos_dir": sources["videos_dir"],
    }
    with caplog.at_level(logging.WARNING, logger="dataset_builders.gimmick.builder"):
        report = build(tmp_path / "out", on_bad_records=policy, **kwargs)
    assert report.counts == {"civqa": 4, "cvvqa": 3}
    assert [s.record for s in report.skipped] == [
        "sivqa row 2 (question_id 1003)",
        "sivqa row 4 (question_id 1005)",
        f"{tmp_path / 'v.jsonl'}:1: vvqa row 0 (question_id 2001)",  # row 1: below the threshold, filtered
    ]
    assert report.skipped[0].reason == "field 'question' is None, expected a non-empty string"
    assert report.skipped[2].reason.startswith("field 'video_fn' names the clip '/elsewhere/missing.mp4', which")
    assert "'Sub-Saharan States', not a UNESCO ICH region" in report.skipped[1].reason
    assert report.stats["cvvqa_removed_by_similarity"] == 2
    assert "3 bad records skipped" in report.warnings[-1]
    assert ("sivqa row 2" in caplog.text) == (policy == "warn")
    assert "Records left out by the build: 3." in (tmp_path / "out" / "README.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------- sources


def _jsonl_with_image_files(tmp: Path) -> Path:
    (tmp / "images").mkdir()
    lines = []
    for record in sivqa_records():
        name = f"images/{record['question_id']}.jpg"
        (tmp / name).write_bytes(record["ich_image"]["bytes"])
        lines.append(json.dumps({**record, "ich_image": name}, ensure_ascii=False))
    (tmp / "sivqa.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp / "sivqa.jsonl"


def _parquet_folder(tmp: Path) -> Path:
    (tmp / "repo" / "data").mkdir(parents=True)
    write_sivqa(tmp / "repo" / "data" / "test-00000-of-00001.parquet")
    return tmp / "repo"


def _saved(tmp: Path) -> Path:
    sivqa = datasets.Dataset.from_parquet(str(write_sivqa(tmp / "s.parquet")), cache_dir=str(tmp / "cache"))
    datasets.DatasetDict({"test": sivqa}).save_to_disk(str(tmp / "saved"))
    return tmp / "saved"


@pytest.mark.parametrize("form", [_jsonl_with_image_files, _parquet_folder, _saved])
def test_every_local_form_gives_the_same_rows(
    form: Any, built: tuple[Path, reading.BuildReport], tmp_path: Path
) -> None:
    build(tmp_path / "out", sivqa=form(tmp_path))
    keep = ["id", "question", "answer", "countries", "regions", "region_codes", "image_copyright"]
    got, want = pq.read_table(shard(tmp_path / "out", "civqa")), pq.read_table(shard(built[0], "civqa"))
    assert got.select(keep).to_pylist() == want.select(keep).to_pylist()
    assert [i["bytes"] for i in got["image"].to_pylist()] == [i["bytes"] for i in want["image"].to_pylist()]


class _FakeStream:
    def __init__(self, records: list[dict[str, Any]], features: datasets.Features) -> None:
        self.records, self.features, self.decoded = records, features, True

    def decode(self, enable: bool = True) -> _FakeStream:
        self.decoded = enable
        return self

    def __iter__(self) -> Any:
        assert not self.decoded  # media must come as raw bytes, not PIL images
        return iter(self.records)


def test_hub_source_is_read_from_the_hugging_face_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Hub ids go through snapshot_download: an authors' repo in the HF cache builds offline."""
    import huggingface_hub.constants
    from gimmick_fixtures import SIVQA_FEATURES
    from hub_fixtures import cached_repo

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    sivqa = cached_repo(tmp_path / "hub", "floschne/gimmick-sivqa") / "data"
    sivqa.mkdir()
    datasets.Dataset.from_list(sivqa_records(), features=SIVQA_FEATURES).to_parquet(
        sivqa / "test-00000-of-00001.parquet"
    )
    (cached_repo(tmp_path / "hub", "floschne/gimmick-coqa") / "gimmick-coqa.py").write_text("# a loading script\n")
    report = build(tmp_path / "out", sivqa="floschne/gimmick-sivqa")
    assert report.source == "sivqa=floschne/gimmick-sivqa" and report.counts == {"civqa": 6}
    assert "civqa: 6 rows, but the authors' release has 2233" in report.warnings  # a Hub build is checked
    with pytest.raises(SourceError, match=r"loading script.*save_to_disk"):
        build(tmp_path / "out2", coqa=gimmick.SOURCE_REPOS["coqa"])
    with pytest.raises(ReleaseUnavailable, match="floschne/gimmick-vvqa@abc is not in the Hugging Face cache"):
        build(tmp_path / "out3", vvqa="floschne/gimmick-vvqa@abc")
    with pytest.raises(FileNotFoundError, match="not a Hub dataset id"):
        build(tmp_path / "out4", coqa="./missing/folder")


def test_only_the_given_sources_are_built(sources: dict[str, Path], tmp_path: Path) -> None:
    report = build(tmp_path / "out", coqa=sources["coqa"], expect_release_counts=True)
    assert list(report.counts) == ["coqa_c", "coqa_r", "ckqa"]
    assert sorted(p.name for p in (tmp_path / "out" / "data").iterdir()) == ["ckqa", "coqa_c", "coqa_r"]
    assert "cvvqa_removed_by_similarity" not in report.stats
    assert gimmick.check_counts(report.counts) == [w for w in report.warnings if "authors' release has" in w]
    assert "ckqa: 11 rows, but the authors' release has 728" in report.warnings
    with pytest.raises(ValueError, match="no GIMMICK source given"):
        build(tmp_path / "none")
    with pytest.raises(ValueError, match="on_bad_records"):
        build(tmp_path / "x", coqa=sources["coqa"], on_bad_records="ignore")  # type: ignore[arg-type]


def test_fixture_hub_dir_for_harness_tests(tmp_path: Path) -> None:
    out = build_gimmick_hub_dir(tmp_path, similarity_inclusive=True)
    assert sorted(p.name for p in (out / "data").iterdir()) == sorted(COUNTS)
    assert pq.read_metadata(shard(out, "cvvqa")).num_rows == 5


# ---------------------------------------------------------------------------- card and publishing


def test_card(built: tuple[Path, reading.BuildReport]) -> None:
    out, report = built
    card = (out / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(card.split("---\n")[1])
    assert [c["config_name"] for c in meta["configs"]] == list(COUNTS)
    info = {c["config_name"]: c for c in meta["dataset_info"]}
    assert {c: info[c]["splits"][0]["num_examples"] for c in COUNTS} == COUNTS
    assert {"name": "video", "dtype": {"video": {"decode": False}}} in info["cvvqa"]["features"]
    assert meta["source_datasets"] == list(gimmick.SOURCE_REPOS.values()) and "gated" in meta["extra_gated_prompt"]
    for text in (
        "**The sources are gated.**",
        "Re-hosting needs the authors' permission.",
        "published as a **gated** repo",
        "Seed: **1312**",
        "**1** CEFs",
        "| coqa_c | 43 | 982 |",
        "`region_codes` (all configs)",
        "eprint        = {2502.13766}",
        "Built from sivqa: `gimmick-sivqa.parquet`; vvqa: `gimmick-vvqa.jsonl`; coqa: `gimmick-coqa`",
    ):
        assert text in card, text
    assert str(out.parent) not in card  # no local paths on a public card
    assert "cvvqa_removed_by_similarity: 2" in report.summary()


def test_publish_sets_the_gate_before_uploading(built: tuple[Path, reading.BuildReport], hf_calls: list) -> None:
    assert gimmick.publish(built[0], token="hf_x") == "https://huggingface.co/datasets/x/commit/upload_folder"
    assert [name for name, _ in hf_calls] == ["create_repo", "update_repo_settings", "upload_folder"]
    assert hf_calls[1][1]["args"] == ("arab-mm-tasks/gimmick",) and hf_calls[1][1]["gated"] == "auto"
    hf_calls.clear()
    with pytest.raises(ValueError, match="without a gate"):
        gimmick.publish(built[0], gated=None)
    assert hf_calls == []


# ---------------------------------------------------------------------------- .jsonl lines (builder input issue)


def test_a_malformed_jsonl_line_is_a_bad_record(sources: dict[str, Path], tmp_path: Path) -> None:
    lines = [json.dumps(r, ensure_ascii=False).encode() for r in vvqa_records()]
    source = tmp_path / "v.jsonl"
    source.write_bytes(b"\n".join([lines[0], b'{"question": "trunc', '{"q": "é"}'.encode("latin-1"), *lines[1:]]))
    with pytest.raises(GimmickRecordError, match=f"^{source}:2: is not valid JSON"):
        build(tmp_path / "out", vvqa=source, videos_dir=sources["videos_dir"])
    report = build(tmp_path / "out", vvqa=source, videos_dir=sources["videos_dir"], on_bad_records="skip")
    assert [(s.record, s.reason[:17]) for s in report.skipped] == [
        (f"{source}:2", "is not valid JSON"),
        (f"{source}:3", "is not UTF-8 text"),
    ]
    assert report.rows_read == 8 and report.counts == {"cvvqa": 4}  # 2 more filtered by similarity, not skipped


@pytest.mark.parametrize("text", ["", "\r\n \n"])
def test_an_empty_jsonl_source_is_a_source_error(text: str, tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text(text, encoding="utf-8")
    with pytest.raises(SourceError, match=r"s\.jsonl: no records"):
        build(tmp_path / "out", sivqa=tmp_path / "s.jsonl", on_bad_records="skip")


def test_a_kept_jsonl_column_with_mixed_types_is_a_source_error(sources: dict[str, Path], tmp_path: Path) -> None:
    records = vvqa_records()
    records[0]["notes"], records[1]["notes"] = "text", {"a": 1}
    with pytest.raises(SourceError, match="column 'notes' mixes value types"):
        build(tmp_path / "out", vvqa=write_vvqa(tmp_path / "v.jsonl", records), videos_dir=sources["videos_dir"])


@pytest.mark.parametrize(
    ("value", "field", "problem"),
    [
        ("x" * 5000 + ".jpg", "ich_image", "names the image file"),  # ENAMETOOLONG, not a traceback
        ({"bytes": "aGVsbG8=", "path": "a.jpg"}, "ich_image.bytes", "is a str, not bytes"),
        ({"bytes": None, "path": 7}, "ich_image.path", "is 7, not a file name"),
    ],
)
def test_jsonl_image_values_of_the_wrong_kind_are_bad_records(
    value: Any, field: str, problem: str, tmp_path: Path
) -> None:
    record = {**sivqa_records()[0], "ich_image": value}
    (tmp_path / "s.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(GimmickRecordError, match=f":1: sivqa row 0 .*field '{re.escape(field)}' {problem}"):
        build(tmp_path / "out", sivqa=tmp_path / "s.jsonl")


def test_release_media_paths_cannot_leave_the_release_folder(tmp_path: Path) -> None:
    """A tampered release must not make the builder embed (and publish) other files of the machine."""
    from arab_mm_tasks.testing.synthetic import image_bytes, make_image
    from dataset_builders.gimmick.source import image_value, video_value

    release, private = tmp_path / "release", tmp_path / "private.png"
    release.mkdir()
    private.write_bytes(image_bytes(make_image("private")))
    (release / "ok.png").write_bytes(image_bytes(make_image("ok")))
    (release / "link.png").symlink_to(private)
    assert image_value("ok.png", base_dir=release, record="r", field="ich_image")["path"] == "ok.png"
    refused = {
        "../private.png": "points outside the release's folder",
        "sub/../../private.png": "points outside the release's folder",
        "link.png": "points outside the release's folder",  # a link out of the folder is followed, then refused
        str(private): "is the absolute path",
        "~/private.png": "does not exist",  # '~' is a folder name inside the release, never the home folder
    }
    for path, problem in refused.items():
        with pytest.raises(GimmickRecordError, match=re.escape(problem)):
            image_value({"bytes": None, "path": path}, base_dir=release, record="r", field="ich_image")
    with pytest.raises(GimmickRecordError, match="points outside the release's folder"):
        video_value("../clip.mp4", videos_dir=None, base_dir=release, record="r")
    with pytest.raises(GimmickRecordError, match=r"names the clip '/nowhere/clip.mp4', which does not exist"):
        video_value("/nowhere/clip.mp4", videos_dir=None, base_dir=release, record="r")  # the vvqa loader's form


def test_a_truncated_clip_is_a_bad_record_not_a_shorter_video(tmp_path: Path) -> None:
    """An index-first mp4 cut short still opens; the builder must refuse it, naming the record."""
    from arab_mm_tasks.testing.synthetic import index_first, write_clip
    from dataset_builders.gimmick.source import video_value

    clip = index_first(write_clip(seconds=10, size=(96, 64), detail=False))
    (tmp_path / "whole.mp4").write_bytes(clip)
    (tmp_path / "cut.mp4").write_bytes(clip[: len(clip) * 8 // 10])
    assert video_value("whole.mp4", videos_dir=None, base_dir=tmp_path, record="vvqa row 3")["bytes"] == clip
    with pytest.raises(GimmickRecordError, match=r"^vvqa row 3: field 'video_fn' is truncated: its index promises 250"):
        video_value("cut.mp4", videos_dir=None, base_dir=tmp_path, record="vvqa row 3")
