"""Requests hold compressed media, not pixels: lazy images decode on use, to the very same pixels.

The model must see byte-identical inputs (compared here through `tobytes`, numpy and the tiny
VLM's own image processor), while a rendered request that waits holds no decoded frame, and the
pixels decoded on use stay within the cache's byte budget however many requests there are.
"""

from __future__ import annotations

import copy
import io
import pickle

import datasets
import numpy as np
import pytest
from lm_eval.models.utils import resize_image
from PIL import Image
from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

from arab_mm_tasks.core import lazy_image
from arab_mm_tasks.core.lazy_image import LazyImage
from arab_mm_tasks.core.media import MediaError, load_image, video_frames
from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.core.sources import without_media_decoding
from arab_mm_tasks.harness.lighteval_tasks import make_prompt_function
from arab_mm_tasks.testing.synthetic import image_bytes, make_image, write_clip


@pytest.fixture(scope="module")
def clip() -> bytes:
    return write_clip(seconds=4, fps=10, size=(320, 240), gop=7)


@pytest.fixture(autouse=True)
def empty_cache():
    lazy_image.PIXELS.clear()
    yield
    lazy_image.PIXELS.clear()


def _cvvqa_doc(clip: bytes, key: str = "v1") -> dict:
    return {
        "id": key,
        "question": "What is shown?",
        "answer": "Gagaku",
        "video": {"bytes": clip, "path": f"{key}.mp4"},
        "regions": ["Asian and Pacific States"],
        "countries": ["Japan"],
        "region_codes": ["AP"],
    }


def test_a_waiting_request_holds_no_frames_and_the_model_gets_the_same_pixels(clip):
    eager = video_frames(clip, record="r").images
    request = get_spec("gimmick_cvvqa_none").render(_cvvqa_doc(clip))
    lazy_image.PIXELS.clear()  # what a request holds once other requests have been rendered after it
    decodes = lazy_image.PIXELS.decodes  # counted over the process

    assert len(request.images) == len(eager) == 4
    assert all(isinstance(image, LazyImage) and not image.decoded for image in request.images)
    assert lazy_image.PIXELS.held() == 0
    assert [(i.mode, i.size) for i in request.images] == [(i.mode, i.size) for i in eager]

    processor = CLIPImageProcessorPil(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    got = processor(images=request.images, return_tensors="np")["pixel_values"]
    want = processor(images=eager, return_tensors="np")["pixel_values"]
    assert np.array_equal(got, want)
    for lazy, plain in zip(request.images, eager, strict=True):
        assert lazy.tobytes() == plain.tobytes()
        assert np.array_equal(np.asarray(lazy), np.asarray(plain))
        assert resize_image(lazy, max_dimension=100).tobytes() == resize_image(plain, max_dimension=100).tobytes()
        assert lazy.convert("RGB").tobytes() == plain.convert("RGB").tobytes()
        assert not lazy.decoded  # used, and still holding nothing of its own
    assert lazy_image.PIXELS.decodes == decodes + 1  # one decode of the clip served all its frames


def test_pixels_decoded_on_use_stay_within_the_cache_budget(clip, monkeypatch):
    spec = get_spec("gimmick_cvvqa_none")
    one_clip = 4 * 320 * 240 * 4
    monkeypatch.setattr(lazy_image.PIXELS, "budget", 2 * one_clip)
    requests = [spec.render(_cvvqa_doc(clip, f"v{i}")) for i in range(6)]
    assert lazy_image.PIXELS.held() <= 2 * one_clip
    for request in requests:
        np.asarray(request.images[-1])
        assert lazy_image.PIXELS.held() <= 2 * one_clip
    np.asarray(requests[0].images[0])  # dropped by then: decoded again, to the same pixels
    assert requests[0].images[0].tobytes() == video_frames(clip, record="r").images[0].tobytes()


def test_lazy_frames_follow_the_frame_settings_pickles_are_plain_and_deep_copies_lazy(clip):
    eager = video_frames(clip, record="r", max_frames=2, max_side=100).images
    lazy = video_frames(clip, record="r", max_frames=2, max_side=100, lazy=True).images
    lazy_image.PIXELS.clear()
    assert [i.size for i in lazy] == [i.size for i in eager] == [(100, 75)] * 2
    assert [i.tobytes() for i in lazy] == [i.tobytes() for i in eager]

    for copied in (pickle.loads(pickle.dumps(lazy[0])), lazy[0].copy()):
        assert type(copied) is Image.Image and copied.tobytes() == eager[0].tobytes()
    lazy_image.PIXELS.clear()
    deep = copy.deepcopy(lazy[0])  # lighteval deep-copies every Doc at the end of a run: no pixels then
    assert isinstance(deep, LazyImage) and not deep.decoded and lazy_image.PIXELS.held() == 0
    assert deep.tobytes() == eager[0].tobytes()
    edited = lazy[1]
    edited.paste((255, 0, 0), (0, 0, 4, 4))  # an in-place edit works on a private copy
    assert edited.decoded and edited.getpixel((0, 0)) == (255, 0, 0)
    edited_copy = copy.deepcopy(edited)
    assert type(edited_copy) is Image.Image and edited_copy.getpixel((0, 0)) == (255, 0, 0)
    other = video_frames(clip, record="r", max_frames=2, max_side=100, lazy=True).images
    assert other[1].tobytes() == eager[1].tobytes()


def test_images_from_bytes_are_lazy_and_identical_and_pil_input_stays_as_given():
    rgba = make_image("cef", (40, 30)).convert("RGBA")
    data = image_bytes(rgba)
    lazy = load_image({"bytes": data, "path": "x.png"}, record="r", lazy=True)
    plain = load_image(data, record="r")
    lazy_image.PIXELS.clear()
    assert isinstance(lazy, LazyImage) and not lazy.decoded
    assert (lazy.mode, lazy.size, lazy.tobytes()) == (plain.mode, plain.size, plain.tobytes())  # RGBA flattened
    given = Image.open(io.BytesIO(data))
    assert not isinstance(load_image(given, record="r", lazy=True), LazyImage)
    with pytest.raises(MediaError, match="r: field 'image'"):
        load_image(b"not an image", record="r", lazy=True)


def test_harness_datasets_keep_media_undecoded_and_lighteval_docs_get_lazy_images(clip):
    features = datasets.Features(
        {"id": datasets.Value("string"), "image": datasets.Image(), "images": datasets.List(datasets.Image())}
    )
    png = image_bytes(make_image("a", (8, 8)))
    rows = datasets.Dataset.from_list(
        [{"id": "a", "image": {"bytes": png, "path": None}, "images": [{"bytes": png, "path": None}]}],
        features=features,
    )
    row = without_media_decoding(rows)[0]
    assert row["image"]["bytes"] == png and row["images"][0]["bytes"] == png

    doc = make_prompt_function(get_spec("gimmick_cvvqa_none"))(_cvvqa_doc(clip), "gimmick_cvvqa_none")
    assert len(doc.images) == 4 and all(isinstance(image, LazyImage) for image in doc.images)


@pytest.mark.parametrize("save_details", [False, True])
def test_lighteval_end_of_run_decodes_images_only_for_saved_details(clip, tmp_path, save_details):
    """lighteval turns every sample's details into a Dataset at the end of a run (patch 8 of our CLI)."""
    from lighteval.logging.evaluation_tracker import EvaluationTracker
    from lighteval.models.abstract_model import ModelConfig
    from lighteval.models.model_output import ModelResponse

    from arab_mm_tasks.harness import lighteval_cli

    lighteval_cli.patch_details_hashing()  # as our command line runs lighteval
    lighteval_cli.patch_unused_details()
    tracker = EvaluationTracker(output_dir=str(tmp_path), save_details=save_details)
    tracker.general_config_logger.model_name = "tiny"
    tracker.general_config_logger.model_config = ModelConfig(model_name="tiny")
    prompt = make_prompt_function(get_spec("gimmick_cvvqa_none"))
    for key in ("v1", "v2", "v3"):
        doc = prompt(_cvvqa_doc(clip, key), "gimmick_cvvqa_none")
        tracker.details_logger.log("gimmick_cvvqa_none|0", doc, ModelResponse(text=["x"]), {"relaxed_acc": 0.0})
    lazy_image.PIXELS.clear()
    decodes = lazy_image.PIXELS.decodes
    tracker.save()
    assert list(tmp_path.rglob("results_*.json"))
    assert bool(list(tmp_path.rglob("details_*.parquet"))) is save_details
    assert (lazy_image.PIXELS.decodes > decodes) is save_details  # saved details hold the frames
    assert len(tracker.details_logger.details["gimmick_cvvqa_none|0"]) == 3  # left as lighteval keeps them
