"""Media the package did not make itself: truncated clips, random bytes, images that are not images.

The invariant, for every input and both video backends: either every frame the clip promises is
there and the 1 fps sample comes back whole, or a `MediaError` names the record and the field.
Nothing else escapes, and nothing comes back short.
"""

from __future__ import annotations

import importlib.util

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arab_mm_tasks.core.media import MediaError, load_image, video_frames
from arab_mm_tasks.testing.synthetic import image_bytes, index_first, make_image, timestamp_of, write_clip

BACKENDS = ["pyav", *(["decord"] if importlib.util.find_spec("decord") else [])]
SECONDS = 10  # GIMMICK's clip length: 10 frames at 1 fps


@pytest.fixture(scope="module")
def clips() -> dict[str, bytes]:
    end = write_clip(seconds=SECONDS, fps=25, size=(96, 64), detail=False)  # moov after mdat, as muxed
    return {"index at the end": end, "index first": index_first(end)}


def _check(data: bytes, backend: str) -> str:
    """'whole' when the sample is complete and right, 'refused' on a MediaError naming record and field."""
    try:
        frames = video_frames(data, record="clip-7", field="video_fn", backend=backend)
    except MediaError as err:
        assert (err.record, err.field) == ("clip-7", "video_fn") and str(err).startswith("clip-7: field 'video_fn' ")
        return "refused"
    assert frames.timestamps == [float(k) for k in range(SECONDS)]  # every second of the clip, not a prefix
    assert [round(timestamp_of(image)) for image in frames.images] == list(range(SECONDS))  # the right pictures
    return "whole"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layout", ["index at the end", "index first"])
def test_a_clip_cut_at_every_tenth_is_refused_never_sampled_short(clips, layout, backend):
    data = clips[layout]
    assert _check(data, backend) == "whole"
    outcomes = {tenth: _check(data[: len(data) * tenth // 10], backend) for tenth in range(1, 10)}
    assert set(outcomes.values()) == {"refused"}, outcomes


@pytest.mark.parametrize("backend", BACKENDS)
def test_truncation_tolerance_is_one_frame_of_the_index(clips, backend):
    """The index-first clip promises 250 frames: the last one's bytes may be short, more may not."""
    import io

    import av

    data = clips["index first"]
    with av.open(io.BytesIO(data)) as container:
        sizes = [p.size for p in container.demux(container.streams.video[0]) if p.size]
    assert len(sizes) == SECONDS * 25
    assert _check(data[: len(data) - sizes[-1] // 2], backend) == "whole"  # half the last frame: within slack
    assert _check(data[: len(data) - sizes[-1] - sizes[-2] - 1], backend) == "refused"  # two frames gone


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(min_value=0.0, max_value=0.999), backend=st.sampled_from(BACKENDS), first=st.booleans())
def test_any_truncation_is_whole_or_refused(clips, cut, backend, first):
    data = clips["index first" if first else "index at the end"]
    _check(data[: max(1, int(len(data) * cut))], backend)


@settings(max_examples=30, deadline=None)
@given(data=st.binary(min_size=1, max_size=4096), backend=st.sampled_from(BACKENDS))
def test_random_bytes_are_refused_as_video(data, backend):
    assert _check(data, backend) == "refused"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flip=st.integers(min_value=0, max_value=10_000), byte=st.integers(min_value=0, max_value=255))
def test_a_corrupted_byte_in_an_image_gives_an_image_or_a_media_error(flip, byte):
    raw = bytearray(image_bytes(make_image("corpus"), format="JPEG"))
    raw[flip % len(raw)] = byte
    try:
        assert load_image(bytes(raw), record="img-3", field="ich_image").mode == "RGB"
    except MediaError as err:
        assert (err.record, err.field) == ("img-3", "ich_image")


@pytest.mark.parametrize(
    "value",
    [
        b"",
        b"not an image at all",
        image_bytes(make_image("x"))[:40],
        b"\x89PNG\r\n\x1a\n" + b"\0" * 64,
        write_clip(seconds=1),
    ],
    ids=["empty", "text", "truncated png", "png header only", "an mp4"],
)
def test_images_that_are_not_images_are_media_errors(value):
    with pytest.raises(MediaError, match=r"^img-3: field 'ich_image' "):
        load_image(value, record="img-3", field="ich_image")


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_image_given_as_a_video_is_refused(backend):
    with pytest.raises(MediaError, match=r"^clip-7: field 'video_fn' holds a PNG image, not a video"):
        video_frames(image_bytes(make_image("x")), record="clip-7", field="video_fn", backend=backend)
