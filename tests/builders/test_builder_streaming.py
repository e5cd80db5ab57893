"""Builders stream: a release is read one row group at a time and written a row group at a time.

The property without a big run: Arrow memory while building a source of many row groups stays
near one row group, and a config cut into several shards loads back whole and in order.
`benchmarks/builder_memory.py` measures peak RSS at 1k-20k rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from gimmick_fixtures import SIVQA_FEATURES, write_coqa, write_sivqa

from arab_mm_tasks.data import SAMPLE_PATH
from arab_mm_tasks.testing.synthetic import image_bytes
from dataset_builders.arabculture.builder import build as build_arabculture
from dataset_builders.core import hub, reading
from dataset_builders.gimmick.builder import build as build_gimmick

GROUPS, GROUP_ROWS = 12, 4  # a 1.9 MB source of 12 row groups of ~160 KB (40 KB noise JPEGs)


def _noise_jpeg(seed: int) -> bytes:
    """A JPEG that does not compress (random noise): its bytes are what the build holds or not."""
    from PIL import Image

    pixels = np.random.default_rng(seed).integers(0, 256, (250, 250, 3), dtype=np.uint8)
    return image_bytes(Image.fromarray(pixels), format="JPEG")


def _sivqa_rows(n: int) -> list[dict]:
    return [
        {"question": f"What is shown in image {i}?", "answer": f"Festival {i}", "question_id": 5000 + i,
         "ich_image": {"bytes": _noise_jpeg(i), "path": f"ich_{i}.jpg"}, "countries": ["Morocco"],
         "regions": ["Arab States"], "image_copyright": f"photographer {i}"}
        for i in range(n)
    ]  # fmt: skip


@pytest.fixture(scope="module")
def sivqa_groups(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sivqa parquet of `GROUPS` row groups, as the authors' Hub file is laid out."""
    path = tmp_path_factory.mktemp("sivqa") / "test-00000-of-00001.parquet"
    table = datasets.Dataset.from_list(_sivqa_rows(GROUPS * GROUP_ROWS), features=SIVQA_FEATURES).data.table
    pq.write_table(table, path, row_group_size=GROUP_ROWS)
    assert pq.ParquetFile(path).num_row_groups == GROUPS
    return path


def _group_bytes(path: Path) -> int:
    return max(pq.ParquetFile(path).metadata.row_group(g).total_byte_size for g in range(GROUPS))


@pytest.fixture
def small_groups(sivqa_groups: Path, monkeypatch: pytest.MonkeyPatch) -> hub.ShardPolicy:
    """Row groups of `GROUP_ROWS` rows in the output too, and a new shard after every 3 groups."""
    policy = hub.ShardPolicy(rows_per_group=GROUP_ROWS, shard_bytes=int(2.5 * _group_bytes(sivqa_groups)))
    monkeypatch.setattr(hub, "DEFAULT_POLICY", policy)
    return policy


def test_a_parquet_source_is_held_one_row_group_at_a_time(sivqa_groups, small_groups, tmp_path, monkeypatch):
    """Arrow memory, sampled at every record the builder reads, stays near one row group of the source."""
    peaks: list[int] = []
    baseline = pa.total_allocated_bytes()
    real_progress = reading.progress

    def sampled(records, desc, total=None):
        for record in real_progress(records, desc, total):
            peaks.append(pa.total_allocated_bytes() - baseline)
            yield record

    monkeypatch.setattr(reading, "progress", sampled)
    report = build_gimmick(tmp_path / "out", sivqa=sivqa_groups)
    assert report.counts == {"civqa": GROUPS * GROUP_ROWS} and len(peaks) == GROUPS * GROUP_ROWS
    whole = sivqa_groups.stat().st_size
    group = _group_bytes(sivqa_groups)
    # Flat over the file: a row group read and one being written (plus fixed buffers), never the file.
    assert max(peaks) - min(peaks) < 2 * group, (peaks, group)
    assert max(peaks[-3 * GROUP_ROWS :]) < max(peaks[: 3 * GROUP_ROWS]) + group / 2, (peaks, group)
    assert max(peaks) < whole / 2, (peaks, whole)


def test_the_reader_asks_for_one_row_group_at_a_time(sivqa_groups, tmp_path, monkeypatch):
    calls: list[tuple[int, ...] | None] = []
    real = pq.ParquetFile.iter_batches

    def counting(self, *args, **kwargs):
        calls.append(tuple(kwargs["row_groups"]) if kwargs.get("row_groups") is not None else None)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counting)
    assert len(list(reading.parquet_records(sivqa_groups))) == GROUPS * GROUP_ROWS
    assert calls == [(g,) for g in range(GROUPS)]


def _shards(folder: Path, config: str) -> list[str]:
    return sorted(p.name for p in (folder / "data" / config).iterdir())


def test_a_large_config_is_cut_into_hub_named_shards_that_load_back_in_order(sivqa_groups, small_groups, tmp_path):
    out = tmp_path / "out"
    build_gimmick(out, sivqa=sivqa_groups)
    n = GROUPS * GROUP_ROWS
    assert _shards(out, "civqa") == [f"test-0000{i}-of-00004.parquet" for i in range(4)]
    for name in _shards(out, "civqa"):  # the viewer reads a row group: small ones, as `datasets` writes
        meta = pq.read_metadata(out / "data" / "civqa" / name)
        assert meta.num_rows == 3 * GROUP_ROWS and {meta.row_group(g).num_rows for g in range(3)} == {GROUP_ROWS}
    card = yaml.safe_load((out / "README.md").read_text(encoding="utf-8").split("---")[1])
    (civqa,) = [c for c in card["configs"] if c["config_name"] == "civqa"]
    assert civqa["data_files"] == [{"split": "test", "path": "data/civqa/test-*.parquet"}]
    loaded = datasets.load_dataset(str(out), "civqa", split="test")  # checks the card's num_examples too
    assert loaded["id"] == [str(5000 + i) for i in range(n)]
    assert [row["image"].size for row in loaded.select([0, n - 1])] == [(250, 250)] * 2


def test_arabculture_all_config_across_shards_matches_a_single_shard_build(tmp_path, monkeypatch):
    one = tmp_path / "one"
    build_arabculture(SAMPLE_PATH, one)
    monkeypatch.setattr(hub, "DEFAULT_POLICY", hub.ShardPolicy(rows_per_group=7, shard_bytes=1))
    many = tmp_path / "many"
    build_arabculture(SAMPLE_PATH, many)
    assert len(_shards(many, "all")) > 2 and _shards(one, "all") == ["test-00000-of-00001.parquet"]
    want = datasets.load_dataset(str(one), "all", split="test")
    got = datasets.load_dataset(str(many), "all", split="test")
    assert got.to_list() == want.to_list()


def test_save_to_disk_and_jsonl_sources_stream_the_same_records(tmp_path):
    """The streamed forms give the rows `datasets` gives, in order (save_to_disk read without a memory map)."""
    from dataset_builders.gimmick.source import read_source

    saved = read_source("coqa", write_coqa(tmp_path / "coqa"))
    want = datasets.load_from_disk(str(tmp_path / "coqa")).with_format("arrow")[:].to_pylist()
    assert saved.num_rows == len(want) and list(saved) == want
    rows = _sivqa_rows(3)
    path = tmp_path / "sivqa.jsonl"
    lines = [json.dumps({**r, "ich_image": r["ich_image"]["path"]}) for r in rows]
    path.write_text("\n".join([lines[0], "{broken", "", *lines[1:]]) + "\n", encoding="utf-8")
    source = read_source("sivqa", path)
    assert [r["question_id"] for r in source] == [5000, 5001, 5002] and source.num_rows == 3
    assert [source.where(i) for i in range(3)] == [f"{path}:1", f"{path}:4", f"{path}:5"]
    assert [e.record_id for e in source.bad_lines] == [f"{path}:2"]


def test_write_sivqa_fixture_still_builds_one_shard(tmp_path):
    """A small config keeps the single-shard name the Hub gives it (``test-00000-of-00001``)."""
    build_gimmick(tmp_path / "out", sivqa=write_sivqa(tmp_path / "s.parquet"))
    assert _shards(tmp_path / "out", "civqa") == ["test-00000-of-00001.parquet"]
