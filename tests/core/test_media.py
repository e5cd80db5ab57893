"""The media layer: 1 fps frames a model actually sees, RGB images, and errors that name record and field.

Clips come from `arab_mm_tasks.testing.synthetic.write_clip`, whose frames show their own time as
big black/white blocks, so every test reads back *which* frame it got (`timestamp_of`), not
just how many. Both backends must follow the same rule and return the same pixels.
"""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from arab_mm_tasks.core import media
from arab_mm_tasks.core.media import MediaError, load_image, load_images, video_frames
from arab_mm_tasks.core.spec import RecordError
from arab_mm_tasks.testing.synthetic import image_bytes, make_image, timestamp_of, write_clip

SIZE = (160, 120)
RECORD = "gimmick cvvqa record q123"
HAS_DECORD = importlib.util.find_spec("decord") is not None
BACKENDS = ["pyav", pytest.param("decord", marks=pytest.mark.skipif(not HAS_DECORD, reason="decord not installed"))]


@pytest.fixture(scope="module")
def clips() -> dict[str, bytes]:
    return {
        "10s": write_clip(seconds=10, size=SIZE),  # x264's default keyframe interval (250)
        "10s_gop12": write_clip(seconds=10, size=SIZE, gop=12),
        "3.5s": write_clip(seconds=3.5, size=SIZE),
        "0.4s": write_clip(seconds=0.4, size=SIZE),
        "vfr": write_clip(seconds=3, size=SIZE, vfr=True),
    }


def shown(frames: media.VideoFrames) -> list[float]:
    """The times the returned frames show on screen: what the model gets, whatever the timestamps claim."""
    return [timestamp_of(image) for image in frames.images]


# ------------------------------------------------------------------------------------------ sampling rule


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("clip", ["10s", "10s_gop12"])
def test_ten_second_clip_gives_the_frames_at_whole_seconds(clips, clip, backend):
    frames = video_frames(clips[clip], record=RECORD, backend=backend)
    assert frames.timestamps == [float(t) for t in range(10)]
    assert shown(frames) == frames.timestamps  # not one frame early or late
    assert frames.duration == 10.0 and frames.backend == backend
    assert all(image.mode == "RGB" and image.size == SIZE for image in frames.images)


@pytest.mark.parametrize("backend", BACKENDS)
def test_partial_seconds_count_and_short_clips_give_their_first_frame(clips, backend):
    frames = video_frames(clips["3.5s"], record=RECORD, backend=backend)
    assert frames.timestamps == shown(frames) == [0.0, 1.0, 2.0, 3.0]
    frames = video_frames(clips["0.4s"], record=RECORD, backend=backend)
    assert frames.timestamps == shown(frames) == [0.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_frame_count_at_the_ten_second_boundary(backend):
    # NTSC rate: 300 frames, the last at 9.976 s, the clip 10.01 s long: 10 frames, as GIMMICK's own sampler
    # gives, not an 11th standing in for t = 10 s less than a second after the 10th.
    ntsc = video_frames(write_clip(seconds=10, fps=30000 / 1001, size=SIZE), record=RECORD, backend=backend)
    assert ntsc.timestamps == shown(ntsc) == [round(k * 30 * 1001 / 30000, 6) for k in range(10)]
    # One frame more than 10 s at 25 fps: a frame at 10.0 s exists, so it is the 11th.
    longer = video_frames(write_clip(seconds=10.04, size=SIZE), record=RECORD, backend=backend)
    assert longer.timestamps == shown(longer) == [float(t) for t in range(11)]


@pytest.mark.skipif(not HAS_DECORD, reason="decord not installed")
@pytest.mark.parametrize("fps", [25, 30, 30000 / 1001])
def test_ten_second_clips_get_the_frames_gimmicks_own_sampler_picks(fps):
    import decord

    raw = write_clip(seconds=10, fps=fps, size=SIZE)
    reader = decord.VideoReader(io.BytesIO(raw), ctx=decord.cpu(0))  # GIMMICK's extract_frames_from_video
    stride = len(reader) // int(reader.get_frame_timestamp(-1)[1] * 1.0)
    theirs = [timestamp_of(Image.fromarray(x)) for x in reader.get_batch(range(0, len(reader), stride)).asnumpy()]
    assert shown(video_frames(raw, record=RECORD)) == theirs


@pytest.mark.parametrize("backend", BACKENDS)
def test_variable_frame_rate_is_sampled_by_pts(clips, backend):
    # Frames sit at irregular times (0, 0.02, 0.08, 0.09, 0.16, ...): the first frame at or after 1 s is at
    # 1.04 s, where index arithmetic at the average rate would give 0.98 s. The last frame is at 2.97 s,
    # so there is no 3 s target.
    frames = video_frames(clips["vfr"], record=RECORD, backend=backend)
    assert frames.timestamps == shown(frames) == [0.0, 1.04, 2.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_frames_spreads_the_kept_frames_uniformly(clips, backend):
    frames = video_frames(clips["10s"], record=RECORD, backend=backend, max_frames=4)
    assert frames.timestamps == shown(frames) == [0.0, 3.0, 6.0, 9.0]
    assert video_frames(clips["10s"], record=RECORD, backend=backend, max_frames=1).timestamps == [0.0]
    assert len(video_frames(clips["10s"], record=RECORD, backend=backend, max_frames=50).images) == 10


@pytest.mark.parametrize("backend", BACKENDS)
def test_fps_other_than_one(clips, backend):
    frames = video_frames(clips["3.5s"], record=RECORD, backend=backend, fps=2)
    # Targets every 0.5 s; frames are 0.04 s apart and the last is at 3.48 s, so 3.5 s is no target.
    assert frames.timestamps == shown(frames) == [0.0, 0.52, 1.0, 1.52, 2.0, 2.52, 3.0]


def test_max_side_shrinks_keeping_the_aspect_ratio_and_never_enlarges(clips):
    small = video_frames(clips["3.5s"], record=RECORD, max_side=80)
    assert [image.size for image in small.images] == [(80, 60)] * 4 and shown(small) == small.timestamps
    native = video_frames(clips["3.5s"], record=RECORD, max_side=1000)
    assert [image.size for image in native.images] == [SIZE] * 4


def test_open_gop_clips_give_exact_frames():
    # x264's open GOPs start at non-IDR keyframes. Leading pictures reference the previous GOP, so the reader,
    # which skips GOPs without a wanted frame, must decode that one too; and the decoder must be reset before
    # each skip, or frames after the keyframe are built from stale references (at 320x240 the 3 s frame then
    # never came out). decord's seeking returns neighbouring frames on such clips.
    raw = write_clip(seconds=10, size=(320, 240), gop=12, options={"x264-params": "open-gop=1"})
    with av.open(io.BytesIO(raw)) as container:
        everything = {round(float(f.time), 6): np.asarray(f.to_image()) for f in container.decode(video=0)}
    frames = video_frames(raw, record=RECORD, backend="pyav")
    assert frames.timestamps == shown(frames) == [float(t) for t in range(10)]
    for image, t in zip(frames.images, frames.timestamps, strict=True):
        assert np.array_equal(np.asarray(image), everything[t])


def test_a_frame_lost_by_gop_skipping_is_recovered_by_decoding_everything(clips, monkeypatch):
    real = media._decode_wanted

    def lossy(stream, packets, wanted, *, skip):
        images = real(stream, packets, wanted, skip=skip)
        return [*images[:-1], None] if skip else images  # as if a keyframe were no clean entry point

    monkeypatch.setattr(media, "_decode_wanted", lossy)
    frames = video_frames(clips["10s_gop12"], record=RECORD, backend="pyav")
    assert frames.timestamps == shown(frames) == [float(t) for t in range(10)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_frames_are_upright_when_the_container_says_rotate(backend):
    raw = write_clip(seconds=2, size=SIZE, rotation=90)  # a phone clip: stored landscape, shown portrait
    frames = video_frames(raw, record=RECORD, backend=backend)
    assert [image.size for image in frames.images] == [(SIZE[1], SIZE[0])] * 2
    assert [timestamp_of(image.rotate(-90, expand=True)) for image in frames.images] == frames.timestamps == [0.0, 1.0]


@pytest.mark.skipif(not HAS_DECORD, reason="decord not installed")
@pytest.mark.parametrize("clip", ["10s", "10s_gop12", "vfr"])
def test_both_backends_return_the_same_frames(clips, clip):
    ours, theirs = (video_frames(clips[clip], record=RECORD, backend=b) for b in ("pyav", "decord"))
    assert ours.timestamps == theirs.timestamps and ours.duration == theirs.duration
    for a, b in zip(ours.images, theirs.images, strict=True):
        assert np.abs(np.asarray(a, dtype=int) - np.asarray(b, dtype=int)).max() <= 2


def test_default_backend_falls_back_to_pyav_without_decord(clips, monkeypatch):
    assert video_frames(clips["0.4s"], record=RECORD).backend == media.DEFAULT_VIDEO_BACKEND
    monkeypatch.setattr(media, "DEFAULT_VIDEO_BACKEND", "decord")
    monkeypatch.setitem(sys.modules, "decord", None)  # `import decord` now raises ImportError
    assert video_frames(clips["0.4s"], record=RECORD).backend == "pyav"


def test_bad_arguments_are_caller_errors_not_record_errors(clips):
    for kwargs in ({"fps": 0}, {"max_frames": 0}, {"max_side": 0}, {"backend": "opencv"}):
        with pytest.raises(ValueError) as caught:
            video_frames(clips["0.4s"], record=RECORD, **kwargs)
        assert not isinstance(caught.value, RecordError)


# ------------------------------------------------------------------------------------------ video inputs


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_accepted_video_value(clips, tmp_path, backend):
    raw = clips["3.5s"]
    path = tmp_path / "clip.mp4"
    path.write_bytes(raw)
    values = [
        raw,
        bytearray(raw),
        str(path),
        path,
        {"bytes": raw, "path": "not/here.mp4"},
        {"bytes": None, "path": str(path)},
    ]
    for value in values:
        assert video_frames(value, record=RECORD, backend=backend, local_files=True).timestamps == [0.0, 1.0, 2.0, 3.0]


def test_datasets_video_and_image_columns_round_trip(clips, tmp_path):
    import datasets

    features = datasets.Features({"video": datasets.Video(decode=False), "image": datasets.Image()})
    rows = {"video": [{"bytes": clips["0.4s"], "path": "clip.mp4"}], "image": [make_image("row", size=(32, 16))]}
    datasets.Dataset.from_dict(rows, features=features).to_parquet(tmp_path / "test.parquet")
    files, cache = str(tmp_path / "test.parquet"), str(tmp_path / "cache")
    row = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=cache)[0]
    assert video_frames(row["video"], record=RECORD).timestamps == [0.0]
    assert load_image(row["image"], record=RECORD).size == (32, 16)


def _audio_only_mp4() -> bytes:
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp4") as container:
        stream = container.add_stream("aac", rate=8000)
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), dtype=np.float32), format="fltp", layout="mono")
        frame.sample_rate, frame.pts = 8000, 0
        container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return buffer.getvalue()


BAD_VIDEOS = {
    "empty bytes": (lambda clips: b"", "empty bytes"),
    "garbage": (lambda clips: b"\x00\x00\x00\x18not an mp4" * 50, "not a decodable video"),
    "truncated mp4": (lambda clips: clips["3.5s"][: len(clips["3.5s"]) // 2], "not a decodable video"),
    "png as video": (lambda clips: image_bytes(make_image(1)), "PNG image, not a video"),
    "jpeg as video": (lambda clips: image_bytes(make_image(1), "JPEG"), "JPEG image, not a video"),
    "audio only": (lambda clips: _audio_only_mp4(), "video stream"),
    "missing path": (lambda clips: "/nonexistent/clip.mp4", "no local file is opened"),
    "none": (lambda clips: None, "missing"),
    "empty dict": (lambda clips: {"bytes": None, "path": None}, "missing"),
    "wrong type": (lambda clips: 3.5, "is a float"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", BAD_VIDEOS)
def test_bad_videos_raise_media_error_naming_record_and_field(clips, case, backend):
    make, problem = BAD_VIDEOS[case]
    with pytest.raises(MediaError) as caught:
        video_frames(make(clips), record=RECORD, field="clip", backend=backend)
    message = str(caught.value)
    assert message.startswith(f"{RECORD}: field 'clip' ") and problem in message, message
    assert isinstance(caught.value, RecordError) and caught.value.record == RECORD and caught.value.field == "clip"


# ------------------------------------------------------------------------------------------ images


def test_every_accepted_image_value_gives_the_same_rgb_pixels(tmp_path):
    picture = make_image("mosque", size=(48, 32))
    png = image_bytes(picture)
    (tmp_path / "a.png").write_bytes(png)
    values = [picture, png, str(tmp_path / "a.png"), tmp_path / "a.png", {"bytes": png, "path": None}]
    values += [{"bytes": None, "path": str(tmp_path / "a.png")}, Image.open(io.BytesIO(png)), picture.convert("RGBA")]
    for value in values:
        image = load_image(value, record=RECORD, local_files=True)
        assert image.mode == "RGB" and np.array_equal(np.asarray(image), np.asarray(picture))


def test_other_modes_become_rgb_and_transparency_becomes_white():
    rgba = Image.new("RGBA", (2, 1), (200, 10, 10, 255))
    rgba.putpixel((1, 0), (0, 0, 0, 0))  # fully transparent, stored black
    flat = load_image(rgba, record=RECORD)
    assert [flat.getpixel((0, 0)), flat.getpixel((1, 0))] == [(200, 10, 10), (255, 255, 255)]
    for mode in ("L", "P", "CMYK", "I;16", "1"):
        image = make_image(7).convert(mode)
        assert load_image(image_bytes(image, "TIFF"), record=RECORD).mode == "RGB", mode
    jpeg = load_image(image_bytes(make_image(7), "JPEG"), record=RECORD)
    assert jpeg.mode == "RGB" and jpeg.size == (64, 64)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (b"definitely not an image", "not a readable image"),
        (image_bytes(make_image(3))[:200], "not a readable image"),  # truncated PNG: fails on decode, not open
        (b"", "empty bytes"),
        (None, "missing"),
        ("/nonexistent/a.png", "no local file is opened"),
        (12, "is a int"),
    ],
)
def test_bad_images_raise_media_error_naming_record_and_field(value, problem):
    with pytest.raises(MediaError, match=rf"^{RECORD}: field 'image' .*{problem}"):
        load_image(value, record=RECORD)


def test_load_images_keeps_order_and_rejects_empty_or_bad_lists():
    pictures = [make_image(i, size=(8 + i, 8)) for i in range(3)]
    loaded = load_images([pictures[0], image_bytes(pictures[1]), {"bytes": image_bytes(pictures[2])}], record=RECORD)
    assert [image.size for image in loaded] == [(8, 8), (9, 8), (10, 8)]
    with pytest.raises(MediaError, match=rf"^{RECORD}: field 'images' is an empty list"):
        load_images([], record=RECORD)
    with pytest.raises(MediaError, match=rf"^{RECORD}: field 'images' is a PngImageFile, expected a list"):
        load_images(Image.open(io.BytesIO(image_bytes(pictures[0]))), record=RECORD)
    with pytest.raises(MediaError, match=rf"^{RECORD}: field 'photos\[1\]' is not a readable image"):
        load_images([pictures[0], b"broken"], record=RECORD, field="photos")


# ------------------------------------------------------------------------------------------ synthetic media


def test_synthetic_images_are_deterministic_and_distinct():
    assert np.array_equal(np.asarray(make_image("a")), np.asarray(make_image("a")))
    assert not np.array_equal(np.asarray(make_image("a")), np.asarray(make_image("b")))


def test_frames_benchmark_runs_in_quick_mode():
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, str(repo / "benchmarks" / "frames.py"), "--quick"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| 12 ") or line.startswith("| 250 ")]
    assert len(rows) == 2 * (7 if HAS_DECORD else 5) and all(row.count("|") == 9 for row in rows)
