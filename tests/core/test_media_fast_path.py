"""The PyAV reader's shortcuts (skipped GOPs, skipped non-reference pictures) change no pixel.

`video_frames` decodes only what its kept frames need; every kept frame must be byte-identical to
the same frame from a plain decode of every packet, on clips with short and long keyframe
intervals (GOPs), with x264's adaptive B-frames (some of them references: b-pyramid) and without.
"""

from __future__ import annotations

import io
from typing import Any

import av
import numpy as np
import pytest
from av.video.frame import PictureType

from arab_mm_tasks.core import media
from arab_mm_tasks.core.media import video_frames
from arab_mm_tasks.testing.synthetic import timestamp_of, write_clip

SIZE = (160, 120)
RECORD = "gimmick cvvqa record q7"
CLIPS = [(gop, bframes) for gop in (12, 30, 250) for bframes in (None, 0)]


@pytest.fixture(scope="module")
def clips() -> dict[tuple[int, int | None], bytes]:
    return {(gop, bframes): write_clip(seconds=10, size=SIZE, gop=gop, bframes=bframes) for gop, bframes in CLIPS}


def decode_everything(raw: bytes) -> dict[float, tuple[np.ndarray, str]]:
    """Every frame of a plain decode (default options, every packet): time (s from the first) -> (RGB, type)."""
    with av.open(io.BytesIO(raw)) as container:
        frames = list(container.decode(video=0))
    first = min(frame.pts for frame in frames)
    return {
        round(float((frame.pts - first) * frame.time_base), 6): (
            frame.to_ndarray(format="rgb24"),
            PictureType(frame.pict_type).name,
        )
        for frame in frames
    }


class CountingStream:
    """A video stream that counts the frames its decoder puts out."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.frames = stream, 0

    @property
    def codec_context(self) -> Any:
        return self.stream.codec_context

    def decode(self, packet: Any = None) -> list[Any]:
        frames = self.stream.decode(packet)
        self.frames += len(frames)
        return frames


@pytest.fixture
def calls(monkeypatch) -> list[tuple[bool, int]]:
    """(skip, frames decoded) for each `_decode_wanted` call: which path made the frames, and how much it decoded."""
    real, seen = media._decode_wanted, []

    def counting(stream, packets, wanted, *, skip):
        counter = CountingStream(stream)
        images = real(counter, packets, wanted, skip=skip)
        seen.append((skip, counter.frames))
        return images

    monkeypatch.setattr(media, "_decode_wanted", counting)
    return seen


@pytest.mark.parametrize("fps", [1.0, 3.0])
@pytest.mark.parametrize(("gop", "bframes"), CLIPS)
def test_kept_frames_are_byte_identical_to_a_full_decode(clips, calls, gop, bframes, fps):
    raw = clips[gop, bframes]
    everything = decode_everything(raw)
    frames = video_frames(raw, record=RECORD, fps=fps, backend="pyav")
    assert calls == [(True, calls[0][1])]  # made by the fast path, not by the decode-everything fallback
    assert frames.timestamps == [timestamp_of(image) for image in frames.images]
    for image, t in zip(frames.images, frames.timestamps, strict=True):
        assert np.array_equal(np.asarray(image), everything[t][0]), f"frame at {t} s differs"
    kinds = {everything[t][1] for t in frames.timestamps}
    if bframes is None and fps == 3.0:  # targets every 1/3 s land on every picture type, B-frames included
        assert {"I", "P", "B"} <= kinds


def test_frames_nothing_needs_are_not_decoded(clips, calls):
    # One keyframe, then P- and B-frames: the 9 s frame needs every reference picture before it, but no
    # non-reference B-frame that is not itself kept, nor anything after it.
    raw = clips[250, None]
    everything = decode_everything(raw)
    before_last = sum(1 for t in everything if t <= 9.0)
    frames = video_frames(raw, record=RECORD, backend="pyav")
    assert frames.timestamps == [float(t) for t in range(10)]
    [(skip, decoded)] = calls
    assert skip and decoded < 0.8 * before_last


class FakePacket:
    def __init__(self, pts: int | None, *, key: bool = False, size: int = 100) -> None:
        self.pts, self.is_keyframe, self.size = pts, key, size


class RecordingStream:
    """A stream whose decoder notes each packet with its `skip_frame` mode; draining puts out a frame at pts 1."""

    def __init__(self) -> None:
        self.codec_context = self
        self.skip_frame, self.received = "DEFAULT", []

    def flush_buffers(self) -> None:
        self.received.append("flush")

    def decode(self, packet: FakePacket | None = None) -> list[av.VideoFrame]:
        self.received.append((packet.pts, self.skip_frame) if packet else "drain")
        if packet is not None:
            return []
        frame = av.VideoFrame(16, 16, "yuv420p")
        frame.pts = 1
        return [frame]


def test_a_wanted_frame_is_sent_whole_and_nothing_after_it():
    # Decode order: keyframe, P at 2, B at 1 (wanted) whose second part has no pts, P at 3, then the next GOP.
    packets = [FakePacket(0, key=True), FakePacket(2), FakePacket(1), FakePacket(None), FakePacket(3)]
    packets += [FakePacket(4, key=True), FakePacket(5), FakePacket(None, size=0)]
    stream = RecordingStream()
    [image] = media._decode_wanted(stream, packets, [1], skip=True)
    assert image is not None and image.size == (16, 16)
    # Reference-only decoding up to the wanted frame, both its parts in full, then drain: P at 3 and the
    # second GOP are never sent.
    assert stream.received == [(0, "NONREF"), (2, "NONREF"), (1, "DEFAULT"), (None, "DEFAULT"), "drain", "flush"]
    assert stream.skip_frame == "DEFAULT"
