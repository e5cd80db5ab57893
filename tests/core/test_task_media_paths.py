"""A harness-loaded record reads only its own dataset's bytes, never a file of the machine it runs on.

A tampered build writes, in place of an image or a clip, the path of a planted local file (a real
PNG / mp4, so reading it would *succeed*), a forged reference into it, or a plain string column.
Loaded as the harnesses load it (lm-eval's `custom_dataset` hook, arab-mm-lighteval's patched
loader, `without_media_decoding(load_split(...))`) and rendered by the real task spec, every such
record is a `MediaError` naming the record and field, and the planted file is never opened.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from arab_mm_tasks.core import media_refs
from arab_mm_tasks.core.media import MediaError, load_image, load_images, video_frames
from arab_mm_tasks.core.media_refs import REF_FIELD, StoredBytes
from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.core.sources import DatasetSource, DataSourceError, load_split, without_media_decoding
from arab_mm_tasks.testing.synthetic import write_clip

IMAGE_TASK, VIDEO_TASK = "gimmick_civqa_none", "gimmick_cvvqa_none"
COLUMN = {"civqa": "image", "cvvqa": "video"}
_STRING = {"dtype": "string", "_type": "Value"}
_FORGED_FEATURE = {"bytes": {"dtype": "binary", "_type": "Value"}, "path": _STRING, REF_FIELD: _STRING}


@pytest.fixture(scope="module")
def gimmick_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gimmick_fixtures import build_gimmick_hub_dir

    return build_gimmick_hub_dir(tmp_path_factory.mktemp("gimmick"))


@pytest.fixture
def planted(tmp_path: Path) -> dict[str, Path]:
    """Real media outside any build: what a tampered record would have the model see."""
    outside = tmp_path / "outside"
    outside.mkdir()
    Image.new("RGB", (16, 16), (200, 30, 30)).save(outside / "secret.png")
    write_clip(outside / "secret.mp4", seconds=2, fps=5, size=(64, 48))
    return {"civqa": outside / "secret.png", "cvvqa": outside / "secret.mp4"}


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every path the process opens while the test runs (builtins.open, io.open, os.open)."""
    seen: list[str] = []

    def spy(real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, str | os.PathLike):
                seen.append(os.fspath(file))
            return real(file, *args, **kwargs)

        return wrapper

    for module, name in ((builtins, "open"), (io, "open"), (os, "open")):
        monkeypatch.setattr(module, name, spy(getattr(module, name)))
    yield seen


def _tamper(build: Path, tmp_path: Path, config: str, values: list[Any], feature: Any = None) -> Path:
    """A copy of `build` whose `config` has `values` in its media column (and `feature` declared for it)."""
    folder = Path(shutil.copytree(build, tmp_path / "tampered"))
    (shard,) = (folder / "data" / config).glob("*.parquet")
    table = pq.read_table(shard)
    column = COLUMN[config]
    metadata = dict(table.schema.metadata or {})
    if feature is not None:
        info = json.loads(metadata[b"huggingface"])
        info["info"]["features"][column] = feature
        metadata[b"huggingface"] = json.dumps(info).encode()
    array = pa.array(values[: table.num_rows] + values[-1:] * (table.num_rows - len(values)))
    table = table.set_column(table.schema.get_field_index(column), column, array)
    pq.write_table(table.replace_schema_metadata(metadata), shard)
    return folder


def _tampered_cases(secret: Path) -> dict[str, tuple[list[Any], Any]]:
    """Ways a build can name a local file in place of its media: (column values, declared feature)."""
    return {
        "absolute path, no bytes": ([{"bytes": None, "path": str(secret)}], None),
        "relative path, no bytes": ([{"bytes": None, "path": os.path.relpath(secret, Path.cwd())}], None),
        "a forged reference": (
            [{"bytes": None, "path": "x", REF_FIELD: str(StoredBytes(str(secret), 0, secret.stat().st_size))}],
            _FORGED_FEATURE,
        ),
        "a string column": ([str(secret)], _STRING),
    }


def _lm_eval_docs(folder: Path, config: str) -> list[dict]:
    from arab_mm_tasks.harness import lm_eval_hooks

    loaded = lm_eval_hooks.load_dataset(benchmark="gimmick", config=config, split="test", gimmick_path=str(folder))
    return list(loaded["test"])


def _lighteval_docs(folder: Path, config: str) -> list[dict]:
    from lighteval.tasks import lighteval_task

    from arab_mm_tasks.harness.lighteval_cli import UNDECODED_MEDIA, patch_local_dataset_cache

    UNDECODED_MEDIA.add(str(folder))  # what arab-mm-lighteval does for its tasks' dataset paths
    patch_local_dataset_cache()
    return list(lighteval_task.load_dataset(str(folder), config, split="test"))


def _python_docs(folder: Path, config: str) -> list[dict]:
    return list(without_media_decoding(load_split(DatasetSource.resolve("gimmick", str(folder)), config, "test")))


LOADERS = {"lm-eval hook": _lm_eval_docs, "lighteval loader": _lighteval_docs, "python": _python_docs}


def _render_first(task: str, docs: list[dict]) -> None:
    spec = get_spec(task)
    spec.render(docs[0] if task == IMAGE_TASK else {**docs[0], "question": "q", "answer": "a"})


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize(("config", "task"), [("civqa", IMAGE_TASK), ("cvvqa", VIDEO_TASK)])
def test_the_untampered_build_renders(gimmick_build, config, task, loader):
    """The control: the same loaders and renderer give images from the build's own bytes."""
    spec = get_spec(task)
    request = spec.render({**LOADERS[loader](gimmick_build, config)[0], "question": "q", "answer": "a"})
    assert request.images and all(image.size[0] > 0 for image in request.images)


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize(("config", "task"), [("civqa", IMAGE_TASK), ("cvvqa", VIDEO_TASK)])
def test_a_tampered_build_never_reads_a_local_file(gimmick_build, tmp_path, planted, opened, config, task, loader):
    secret = planted[config]
    for case, (values, feature) in _tampered_cases(secret).items():
        folder = _tamper(gimmick_build, tmp_path / case.replace(" ", "-"), config, values, feature)
        opened.clear()
        try:
            docs = LOADERS[loader](folder, config)
        except DataSourceError as err:  # the preflight (lm-eval hook) may already find the rows without bytes
            assert "\n  - " in str(err) and f"have no {COLUMN[config]!r}" in str(err), (case, str(err))
        else:
            with pytest.raises(MediaError) as caught:
                _render_first(task, docs)
            err = caught.value
            assert err.record == f"GIMMICK record {docs[0]['id']!r}" and err.field == COLUMN[config], (case, err)
            assert "\n" not in str(err)
            assert ("no local file is opened" in str(err)) or ("not an Arrow file of a dataset" in str(err)), str(err)
        assert not [path for path in opened if Path(path).name.startswith("secret")], (case, opened)


def test_a_reference_outside_the_media_of_a_loaded_dataset_is_refused(gimmick_build, opened):
    """A reference into one of this process's Arrow files, but not at media bytes (e.g. its header)."""
    (doc,) = _python_docs(gimmick_build, "civqa")[:1]
    ref = StoredBytes.parse(doc["image"][REF_FIELD])
    assert ref is not None and load_image(doc["image"], record="r").size[0] > 0
    for start, stop in ((0, 8), (ref.start - 1, ref.stop), (ref.start, 10**12)):
        forged = {"bytes": None, "path": None, REF_FIELD: str(StoredBytes(ref.path, start, stop))}
        with pytest.raises(MediaError, match=r"^r: field 'image' cannot be read \(bytes .* lie outside the media"):
            load_image(forged, record="r", lazy=True)


path_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)
path_values = st.one_of(
    path_text.map(lambda p: {"bytes": None, "path": p}),
    path_text,
    path_text.map(Path),
    st.builds(
        lambda p, a, b: {"bytes": None, "path": None, REF_FIELD: f"/{p}#bytes={a}-{a + b}"},
        path_text,
        st.integers(0, 10**6),
        st.integers(0, 10**6),
    ),
)


@settings(max_examples=50, deadline=None)
@given(value=path_values, how=st.sampled_from(["image", "images", "video"]), lazy=st.booleans())
def test_no_value_a_record_can_hold_opens_a_file(value, how, lazy):
    """Generated paths, path-like strings and forged references, in every media reader, eager or lazy:
    each one is a `MediaError` naming the record and field, and nothing is opened."""
    seen: list[str] = []
    real_open, real_os_open = builtins.open, os.open
    builtins.open = lambda file, *a, **k: seen.append(os.fspath(file)) or real_open(file, *a, **k)  # type: ignore
    os.open = lambda file, *a, **k: seen.append(os.fspath(file)) or real_os_open(file, *a, **k)  # type: ignore
    try:
        with pytest.raises(MediaError) as caught:
            if how == "image":
                load_image(value, record="rec", lazy=lazy)
            elif how == "images":
                load_images([value], record="rec", lazy=lazy)
            else:
                video_frames(value, record="rec", lazy=lazy)
    finally:
        builtins.open, os.open = real_open, real_os_open
    assert caught.value.record == "rec" and caught.value.field in ("image", "images[0]", "video")
    assert seen == [], seen


def test_code_reading_its_own_files_says_so(planted):
    """`local_files=True` is how a caller (not a record) reads a path: the one way a path is opened."""
    assert load_image(planted["civqa"], record="r", local_files=True).size == (16, 16)
    assert len(video_frames(str(planted["cvvqa"]), record="r", local_files=True, lazy=True).images) == 2
    with pytest.raises(MediaError, match="no local file is opened"):
        load_image(planted["civqa"], record="r")


def test_references_are_registered_per_loaded_file_only(gimmick_build):
    """What the guard allows is exactly the media spans of the Arrow files `by_reference` made references into."""
    docs = _python_docs(gimmick_build, "cvvqa")
    ref = StoredBytes.parse(docs[0]["video"][REF_FIELD])
    assert ref is not None and ref.path in media_refs._SPANS
    assert any(low <= ref.start and ref.stop <= high for low, high in media_refs._SPANS[ref.path])
    assert all(Path(path).suffix == ".arrow" for path in media_refs._SPANS)
