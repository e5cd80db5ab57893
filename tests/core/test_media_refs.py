"""What a pending request holds: references to its media, never their bytes or pixels.

lm-eval and lighteval keep every request of a run until it ends (lm-eval with its document), so the
datasets they read hold, for each image or clip, where its bytes are in the memory-mapped Arrow file
(`arab_mm_tasks.core.media_refs`), and the requests lazy images that read and decode them when the
model uses them, to the very same pixels. Checked here on every image and video task family, on the
datasets the real builders write, loaded as the harnesses load them.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from pathlib import Path

import datasets
import numpy as np
import pytest
from PIL import Image

from arab_mm_tasks.core import lazy_image, media_refs
from arab_mm_tasks.core.lazy_image import LazyImage
from arab_mm_tasks.core.media import MediaError, load_image, video_frames
from arab_mm_tasks.core.media_refs import REF_FIELD, StoredBytes
from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.core.sources import DatasetSource, load_split, without_media_decoding
from arab_mm_tasks.testing.synthetic import write_clip

# Every image task family: one image, several images, and JEEM / Pearl / ARB's own configs.
IMAGE_TASKS = [
    ("gimmick", "gimmick_civqa_none"),
    ("gimmick", "gimmick_coqa_c_image"),
    ("gimmick", "gimmick_ckqa_n"),
    ("pearl", "pearl_closed"),
    ("pearl", "pearl_open"),
    ("pearl", "pearl_x_multi"),
    ("jeem", "jeem_caption_msa"),
    ("jeem", "jeem_vqa_egyptian"),
    ("arb", "arb"),
]


@pytest.fixture(autouse=True)
def empty_cache():
    lazy_image.PIXELS.clear()
    yield
    lazy_image.PIXELS.clear()


def _held(value: object, seen: set[int] | None = None) -> int:
    """Bytes of media data reachable from `value` through its data (not through code): `bytes` objects, and the
    pixels of images holding their own (plain images, or lazy ones after an in-place edit). A reference (strings
    and numbers) counts 0."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, bytes | bytearray | memoryview):
        return len(value)
    if isinstance(value, LazyImage):
        own = value.width * value.height * 4 if value.decoded else 0
        return own + _held(value._decode, seen)
    if isinstance(value, Image.Image):
        return value.width * value.height * 4
    if isinstance(value, dict):
        return sum(_held(v, seen) for v in value.values())
    if isinstance(value, list | tuple | set):
        return sum(_held(v, seen) for v in value)
    if isinstance(value, functools.partial):
        return _held(value.args, seen) + _held(value.keywords, seen)
    if dataclasses.is_dataclass(value):
        return sum(_held(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    return 0


def _harness_docs(benchmark: str, hub_dir: Path, config: str) -> list[dict]:
    """Documents as lm-eval's `custom_dataset` hook and our lighteval loader give them."""
    return list(without_media_decoding(load_split(DatasetSource.resolve(benchmark, str(hub_dir)), config, "test")))


@pytest.mark.parametrize(("benchmark", "task"), IMAGE_TASKS)
def test_image_task_requests_hold_references_and_the_model_gets_the_same_pixels(hub_dirs, benchmark, task):
    spec = get_spec(task)
    source = DatasetSource.resolve(benchmark, str(hub_dirs[benchmark]))
    decoded = list(load_split(source, spec.all_config, "test"))[:3]  # images decoded by `datasets`, as users load them
    docs = _harness_docs(benchmark, hub_dirs[benchmark], spec.all_config)[:3]
    requests = [spec.render(doc) for doc in docs]
    lazy_image.PIXELS.clear()  # what requests hold once later ones have been rendered

    assert all(request.images for request in requests)
    for doc, plain_doc, request in zip(docs, decoded, requests, strict=True):
        assert all(isinstance(image, LazyImage) and not image.decoded for image in request.images)
        assert _held(doc) == 0 and _held(request) == 0, (doc.get("id"), _held(doc), _held(request))
        eager = spec.render(plain_doc).images
        assert [np.asarray(image).tobytes() for image in request.images] == [i.tobytes() for i in eager]
    assert lazy_image.PIXELS.held() <= lazy_image.PIXELS.budget


def _saved_clips(tmp_path: Path, clips: list[bytes]) -> datasets.Dataset:
    features = datasets.Features({"id": datasets.Value("string"), "video": datasets.Video()})
    rows = [{"id": f"v{i}", "video": {"bytes": clip, "path": f"clip{i}.mp4"}} for i, clip in enumerate(clips)]
    datasets.Dataset.from_list(rows, features=features).save_to_disk(tmp_path / "clips")
    return datasets.load_from_disk(str(tmp_path / "clips"))  # memory-mapped, as `load_dataset` gives it


def _cvvqa_doc(row: dict) -> dict:
    return {**row, "question": "What is shown?", "answer": "Gagaku", "regions": ["Asian and Pacific States"],
            "countries": ["Japan"], "region_codes": ["AP"]}  # fmt: skip


def test_a_waiting_clip_request_holds_a_reference_of_bytes_and_decodes_the_same_frames(tmp_path):
    clips = [write_clip(seconds=3, fps=10, size=(160, 120), gop=g) for g in (5, 7)]
    dataset = _saved_clips(tmp_path, clips)
    spec = get_spec("gimmick_cvvqa_none")
    referenced = list(without_media_decoding(dataset))
    in_memory = [dict(row) for row in dataset.cast_column("video", datasets.Video(decode=False))]

    for row, clip in zip(referenced, clips, strict=True):
        video = row["video"]
        assert video["bytes"] is None and video["path"] == f"clip{row['id'][1:]}.mp4"  # the stored name is kept
        assert StoredBytes.parse(video[REF_FIELD]).read() == clip
    held = [_held(spec.render(_cvvqa_doc(row))) for row in referenced]
    held_in_memory = [_held(spec.render(_cvvqa_doc(row))) for row in in_memory]
    assert held == [0, 0]
    assert min(held_in_memory) >= min(len(clip) for clip in clips)  # the same request with its bytes in the doc

    lazy_image.PIXELS.clear()
    for row, clip in zip(referenced, clips, strict=True):
        lazy = spec.render(_cvvqa_doc(row)).images
        lazy_image.PIXELS.clear()
        eager = video_frames(clip, record="r").images
        assert [image.tobytes() for image in lazy] == [image.tobytes() for image in eager]


def test_references_survive_the_cache_file_being_deleted_during_the_run(tmp_path):
    clip = write_clip(seconds=2, fps=10, size=(96, 64), gop=5)
    (row,) = without_media_decoding(_saved_clips(tmp_path, [clip]))
    request = get_spec("gimmick_cvvqa_none").render(_cvvqa_doc(row))
    for arrow in (tmp_path / "clips").glob("*.arrow"):
        os.remove(arrow)  # e.g. `datasets` cache cleaned by another process
    lazy_image.PIXELS.clear()
    assert request.images[0].tobytes() == video_frames(clip, record="r").images[0].tobytes()


def test_without_a_memory_map_to_read_from_columns_keep_their_bytes(tmp_path, monkeypatch):
    clip = write_clip(seconds=1, fps=10, size=(64, 48), gop=5)
    monkeypatch.setattr(media_refs, "_MAPS", str(tmp_path / "no-such-file"))  # not Linux
    (row,) = without_media_decoding(_saved_clips(tmp_path, [clip]))
    assert row["video"]["bytes"] == clip and REF_FIELD not in row["video"]

    in_memory = datasets.Dataset.from_list([{"video": {"bytes": clip, "path": "c.mp4"}}],
                                           features=datasets.Features({"video": datasets.Video()}))  # fmt: skip
    monkeypatch.undo()
    assert without_media_decoding(in_memory)[0]["video"]["bytes"] == clip  # nothing mapped to point at


def test_a_bad_reference_is_a_media_error_naming_the_record_and_field(tmp_path):
    stored = tmp_path / "stored.bin"
    stored.write_bytes(b"\x89PNG" + b"\0" * 60)
    short = {"bytes": None, "path": "x.png", REF_FIELD: str(StoredBytes(str(stored), 0, 1000))}
    with pytest.raises(MediaError, match=r"rec: field 'image' cannot be read .*is not an Arrow file of a dataset"):
        load_image(short, record="rec", lazy=True)
    with pytest.raises(MediaError, match=r"rec: field 'video' has stored_at='nowhere', not a byte range"):
        video_frames({"bytes": None, "path": None, REF_FIELD: "nowhere"}, record="rec")
    assert StoredBytes.parse(str(StoredBytes("/a#b/c.arrow", 5, 9))) == StoredBytes("/a#b/c.arrow", 5, 9)


def _noise_images(folder: Path, count: int, size: int) -> datasets.Dataset:
    """`count` image values of `size` random bytes, one per Arrow record batch, memory-mapped from `folder` as
    `load_dataset` maps its cache (the bytes are never decoded here)."""
    rng = np.random.default_rng(0)

    def rows():
        for i in range(count):
            yield {"image": {"bytes": rng.bytes(size), "path": f"{i}.png"}}

    features = datasets.Features({"image": datasets.Image()})
    return datasets.Dataset.from_generator(rows, features=features, cache_dir=str(folder), writer_batch_size=1)


def _stored(dataset: datasets.Dataset, row: int) -> bytes:
    """The bytes of `dataset`'s image `row` as stored, undecoded."""
    return dataset.data.table.column("image")[row]["bytes"].as_py()


def _read(referenced: datasets.Dataset, row: int) -> bytes:
    """The bytes a reference made by `by_reference` points at."""
    return StoredBytes.parse(referenced.data.table.column("image")[row][REF_FIELD].as_py()).read()


def _counting_comparisons(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """Every time `by_reference` compares mapped bytes with the file (which maps the pages it touches)."""
    compared: list[tuple] = []
    reads_back = media_refs._reads_back
    monkeypatch.setattr(media_refs, "_reads_back", lambda *args: compared.append(args) or reads_back(*args))
    monkeypatch.setattr(media_refs, "_TRUSTED", set())
    return compared


def test_making_references_touches_the_media_at_most_once_per_mapped_file(tmp_path, monkeypatch):
    """Comparing values' bytes with the file, at each end of every chunk, mapped the pages around them (megabytes
    a touch where the page cache holds large folios), so memory grew with the number of clips: the file is checked
    once per mapping, by device and inode, and by its bytes only where those cannot be used."""
    compared = _counting_comparisons(monkeypatch)
    dataset = _noise_images(tmp_path, count=40, size=64 * 1024)  # 40 record batches
    referenced, changed = media_refs.by_reference(dataset)
    assert changed == ["image"]
    mapped = {m for m in media_refs._file_mappings() if m.path.startswith(str(tmp_path))}
    assert len(compared) <= len(mapped) == 1
    assert [_read(referenced, row) for row in (0, 17, 39)] == [_stored(dataset, row) for row in (0, 17, 39)]


def test_where_device_and_inode_differ_the_file_is_compared_once_per_mapping(tmp_path, monkeypatch):
    """overlayfs (containers) shows the underlying file's device and inode in /proc/self/maps: a mapping is then
    trusted by its bytes, compared once, and one whose bytes are not the file's is not trusted."""
    compared = _counting_comparisons(monkeypatch)
    dataset = _noise_images(tmp_path, count=30, size=4096)
    overlaid = [dataclasses.replace(mapping, inode=-1) for mapping in media_refs._file_mappings()]
    monkeypatch.setattr(media_refs, "_file_mappings", lambda: overlaid)
    referenced, changed = media_refs.by_reference(dataset)
    assert changed == ["image"] and len(compared) == 1  # one mapping, 30 values
    assert _read(referenced, 29) == _stored(dataset, 29)

    monkeypatch.setattr(media_refs, "_TRUSTED", set())
    monkeypatch.setattr(media_refs, "_reads_back", lambda *args: False)  # the file at that path is another one now
    kept, changed = media_refs.by_reference(dataset)
    assert changed == [] and _stored(kept, 0) == _stored(dataset, 0)  # the column keeps its bytes
