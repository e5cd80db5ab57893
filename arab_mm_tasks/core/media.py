"""Images and 1 fps video frames for the multimodal tasks, from whatever a dataset row holds.

Harnesses take pictures, not files: lm-eval's `doc_to_image` and lighteval's `Doc.images` want
lists of RGB PIL images, and GIMMICK CVVQA feeds its 10 s clips as one frame per second
(paper L184). Dataset values arrive as PIL images, raw bytes, paths or `datasets` dicts
(`{"bytes": ..., "path": ...}`, as `Image(decode=False)` and `Video(decode=False)` store them),
or, in a harness's documents, references to where the bytes are stored (`{"bytes": None, "path":
..., "stored_at": ...}`, `arab_mm_tasks.core.media_refs`), read when the media are decoded.

Everything is decoded here, eagerly, so a broken record fails with a `MediaError` naming the
record and field instead of deep inside a model. The frame rule is in `video_frames`.

A record reads only its own dataset's bytes (docs/security.md, "Task-time media and local builds"):
a value may hold its bytes, or be a reference that `media_refs` made into the Arrow files of a
dataset loaded in this process; a path (a string, a `Path`, or a dict with a path and no bytes) is
never opened, since a tampered build could name any local file and have it shown to the model.
That is the default of every function here, so every task of every benchmark, in both harnesses,
gets it. Code reading its own files (not a record's values) says so with ``local_files=True``.

With ``lazy=True`` (what task renderers ask for) the images returned hold no pixels: they are
`arab_mm_tasks.core.lazy_image.LazyImage`s that decode the record's bytes again when a model
uses them, to the same pixels, and drop them soon after. Harnesses build every request before
the first one runs, so eager pixels would all be held at once (`docs/benchmarks.md`). A lazy image
holds what it decodes from as it was given: a reference (a few hundred bytes), a path, or bytes.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import math
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from arab_mm_tasks.core.lazy_image import lazy_images
from arab_mm_tasks.core.media_refs import REF_FIELD, StoredBytes
from arab_mm_tasks.core.spec import RecordError

# Chosen by benchmarks/frames.py (docs/benchmarks.md; 10 s 1280x720 H.264 @25 fps with B-frames, 2 cores),
# CPU time as a ratio to decoding every frame, keyframe interval 12 / 30 / 250: PyAV 0.33 / 0.55 / 0.63,
# decord 0.59 / 0.87 / 1.04. decord's seeks also return neighbouring frames on open-GOP clips
# (tests/core/test_media.py), and decord has x86-64 wheels only.
DEFAULT_VIDEO_BACKEND = "pyav"
_EPS = 1e-4  # seconds; frame times are compared with this slack (decord reports float32 times)
_PROBE_WITHOUT_DECODING = {"skip_frame": "all"}  # `av.open` options where we decode later, if at all; see `_pyav`
_IMAGE_MAGIC = {b"\x89PNG": "PNG", b"\xff\xd8\xff": "JPEG", b"GIF8": "GIF", b"BM": "BMP", b"RIFF": "WEBP"}


class MediaError(RecordError):
    """An image or video in a record that cannot be decoded; the message names the record and the field."""

    def __init__(self, record: str, field: str, problem: str) -> None:
        super().__init__(f"{record}: field {field!r} {problem}")
        self.record, self.field, self.problem = record, field, problem


_Sampled = tuple[list[Image.Image], list[float], float]  # a backend's frames, their times, the clip's duration


class _Unusable(ValueError):
    """A backend's own finding about a clip (no video stream, no frames); `video_frames` adds record and field."""


@dataclass(frozen=True)
class VideoFrames:
    """Frames sampled from a clip: RGB images, their presentation times (s from the first frame), the clip length.

    `duration` (s): the last frame's time plus the mean frame interval; `backend`: the decoder used.
    """

    images: list[Image.Image]
    timestamps: list[float]
    duration: float
    backend: str


def _raw(value: Any, *, record: str, field: str, local_files: bool = False) -> bytes | Path | StoredBytes:
    """The bytes, the stored byte range (`media_refs`) or, with `local_files`, the path a media value points at.

    In a dict, bytes win, then a ``stored_at`` range, then the path. Without `local_files` a path is
    refused: a record's media come from its dataset, never from the local filesystem.
    """
    if isinstance(value, dict):
        if value.get("bytes") is None and value.get(REF_FIELD) is not None:
            stored = StoredBytes.parse(value[REF_FIELD]) if isinstance(value[REF_FIELD], str) else None
            if stored is None:
                raise MediaError(
                    record, field, f"has {REF_FIELD}={value[REF_FIELD]!r:.200}, not a byte range of a file"
                )
            value = stored
        else:
            value = value.get("bytes") if value.get("bytes") is not None else value.get("path")
    if isinstance(value, StoredBytes):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        if not len(value):
            raise MediaError(record, field, "holds empty bytes")
        return bytes(value)
    if isinstance(value, str | Path):
        if not local_files:
            raise MediaError(
                record,
                field,
                f"names the file {str(value)!r:.200} instead of holding its bytes: a record's media are read "
                "only from its own dataset, so no local file is opened",
            )
        if not Path(value).is_file():
            raise MediaError(record, field, f"points at {str(value)!r:.200}, which is not a file")
        return Path(value)
    if value is None:
        raise MediaError(record, field, "is missing (None, or a dict with neither bytes nor path)")
    raise MediaError(record, field, f"is a {type(value).__name__}; expected bytes, a path or a {{bytes, path}} dict")


def _rgb(image: Image.Image) -> Image.Image:
    """RGB; transparent pixels become white, since they are often stored black and a model should not see that."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        flat = Image.new("RGB", rgba.size, (255, 255, 255))
        flat.paste(rgba, mask=rgba.getchannel("A"))
        return flat
    return image if image.mode == "RGB" else image.convert("RGB")


def png_bytes(image: Image.Image | bytes) -> bytes:
    """An image as lossless PNG bytes (encoded bytes are kept as they are)."""
    if isinstance(image, bytes | bytearray):
        return bytes(image)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def load_image(
    value: Any, *, record: str, field: str = "image", lazy: bool = False, local_files: bool = False
) -> Image.Image:
    """An RGB PIL image from a PIL image, bytes, a path, or a `{"bytes", "path"}` dict (or a reference, see `_raw`).

    Pixels are decoded here (PIL opens lazily), so truncated or corrupt data raises `MediaError` now.
    With `lazy`, an image given as bytes, a path or a stored range comes back as a `LazyImage` that
    keeps that (bytes by reference, not a copy) and decodes it again when used; a PIL image given is
    returned as without `lazy`, since its pixels are held by the caller anyway. A path is read only
    with `local_files` (the caller's own file, never a record's value: see the module docstring).
    """
    if lazy and not isinstance(value, Image.Image):
        raw = _raw(value, record=record, field=field, local_files=local_files)
        decode = functools.partial(_decoded_images, raw, record, field)
        return lazy_images(decode, decode())[0]
    try:
        if isinstance(value, Image.Image):
            value.load()
            return _rgb(value)
        raw = _read(
            _raw(value, record=record, field=field, local_files=local_files),
            record=record,
            field=field,
            whole_file=False,
        )
        with Image.open(io.BytesIO(raw) if isinstance(raw, bytes) else raw) as image:
            image.load()
            return _rgb(image)
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError) as err:
        if isinstance(err, MediaError):
            raise
        raise MediaError(record, field, f"is not a readable image ({type(err).__name__}: {err})") from err


def _read(raw: bytes | Path | StoredBytes, *, record: str, field: str, whole_file: bool = True) -> bytes | Path:
    """The bytes of a stored range (and, with `whole_file`, of a file); bytes and paths are returned as they are."""
    try:
        if isinstance(raw, StoredBytes):
            return raw.read()
        return raw.read_bytes() if whole_file and isinstance(raw, Path) else raw
    except OSError as err:
        raise MediaError(record, field, f"cannot be read ({err})") from err


def _decoded_images(raw: bytes | Path | StoredBytes, record: str, field: str) -> list[Image.Image]:
    """`load_image` of what `_raw` gave (a path only where it allowed one), as a one-image list: a `LazyImage`'s
    decode."""
    return [load_image(raw, record=record, field=field, local_files=isinstance(raw, Path))]


def load_images(
    values: Any, *, record: str, field: str = "images", lazy: bool = False, local_files: bool = False
) -> list[Image.Image]:
    """`load_image` for each item; an empty list is an error, since a multi-image prompt needs an image."""
    if not isinstance(values, list | tuple):
        raise MediaError(record, field, f"is a {type(values).__name__}, expected a list of images")
    if not values:
        raise MediaError(record, field, "is an empty list; a multi-image prompt needs at least one image")
    return [
        load_image(value, record=record, field=f"{field}[{i}]", lazy=lazy, local_files=local_files)
        for i, value in enumerate(values)
    ]


def _select(times: Sequence[float], fps: float, max_frames: int | None) -> tuple[list[int], float]:
    """Indices (into sorted frame `times`) of the frames to keep, and the clip's duration; see `video_frames`."""
    starts = np.asarray(times)
    targets = np.arange(math.floor(times[-1] * fps + _EPS) + 1) / fps  # t_k <= the last frame's time
    chosen = np.unique(np.searchsorted(starts, targets - _EPS))  # the first frame at or after each t_k
    if max_frames is not None and len(chosen) > max_frames:
        chosen = chosen[np.unique(np.round(np.linspace(0, len(chosen) - 1, max_frames)).astype(int))]
    duration = round(times[-1] + times[-1] / (len(times) - 1), 6) if len(times) > 1 else 0.0
    return [int(i) for i in chosen], duration


def _decode_wanted(stream: Any, packets: list[Any], wanted: list[int], *, skip: bool) -> list[Image.Image | None]:
    """Decode `packets` in order, converting only the frames whose pts is in `wanted` (None where one never came).

    Without `skip`, every packet is decoded (the fallback). With `skip`, only what the wanted
    frames need reaches the decoder, and what it gets decodes exactly as in a full pass:

    - Keyframe intervals (GOPs) hold the dependencies. A GOP without a wanted frame is never sent,
      nor are the packets of one after its last wanted packet (decode order: a frame's references
      come before it). Before such a gap the decoder is drained and reset, so the next GOP decodes
      as after a seek, and frames held back for reordering or by frame threads come out at once.
      A GOP with leading pictures (shown before its keyframe, so they may reference the previous
      GOP: open GOPs) gets the previous GOP sent whole first.
    - Within what is sent, a packet that is not a wanted frame is decoded with FFmpeg's
      `skip_frame = "NONREF"`: a picture no other picture references (most B-frames) is then
      dropped unread, a reference picture is decoded. Wanted packets are decoded in full.
    """
    from av.video.reformatter import VideoReformatter

    slot = {pts: i for i, pts in enumerate(wanted)}
    gops = list(accumulate(int(p.is_keyframe) for p in packets))  # GOP number of each packet, decode order
    keyframe_pts: dict[int, int] = {}
    leading: set[int] = set()
    last_wanted: dict[int, int] = {}  # GOP -> decode-order index of its last wanted packet
    # The frame each packet belongs to: its own pts, or for a packet without one, the previous packet's
    # (a frame split over packets, e.g. the second field of an interlaced frame in MPEG-TS), so that
    # every part of a wanted frame is sent and decoded in full.
    owner: list[int | None] = []
    for index, (gop, packet) in enumerate(zip(gops, packets, strict=True)):
        if packet.pts is not None and packet.pts < keyframe_pts.setdefault(gop, packet.pts):
            leading.add(gop)
        if packet.pts is None and packet.size and owner:
            owner.append(owner[-1])
        else:
            owner.append(packet.pts)  # size 0 (the final, flushing packet): None
        if owner[-1] in slot:
            last_wanted[gop] = index
    whole = {gop - 1 for gop in last_wanted if gop in leading}
    images: list[Image.Image | None] = [None] * len(wanted)
    missing = len(wanted)
    context = stream.codec_context
    context.skip_frame = "DEFAULT"
    # One converter for all frames: `frame.to_image()` builds a new one (a new swscale context) per
    # frame and copies the pixels twice more. Same conversion (rgb24, default flags), same pixels.
    rgb = VideoReformatter()

    def take(frames: list[Any]) -> None:
        nonlocal missing
        for frame in frames:
            if frame.pts in slot and images[slot[frame.pts]] is None:
                image = Image.fromarray(rgb.reformat(frame, format="rgb24").to_ndarray())  # the only conversion
                turn = getattr(frame, "rotation", 0)
                # Upright as players (and decord) show it: `rotation` is the display matrix's, counter-clockwise.
                images[slot[frame.pts]] = image.rotate(turn, expand=True) if turn else image
                missing -= 1

    sending = False
    for index, (gop, packet) in enumerate(zip(gops, packets, strict=True)):
        if skip and gop not in whole and index > last_wanted.get(gop, -1):
            if sending:  # end of a run: drain and reset, as a seek would
                take(stream.decode(None))
                context.flush_buffers()
                sending = False
            if not missing:
                break
            continue
        if skip:
            mode = "DEFAULT" if owner[index] in slot else "NONREF"
            if context.skip_frame != mode:
                context.skip_frame = mode
        take(stream.decode(packet))
        sending = bool(packet.size)  # size 0: the demuxer's final packet, which drains the decoder
        if not missing:
            break
    if sending:
        take(stream.decode(None))
    context.skip_frame = "DEFAULT"
    return images


def _demux(container: Any) -> tuple[Any, list[Any], list[int], list[float]]:
    """The video stream, its packets (in decode order), their sorted pts and times (s from the first frame).

    Refuses a truncated clip. A clip cut short whose index is at the front ("faststart" mp4) still
    opens and demuxes: the index promises every frame, but only the packets whose bytes arrived come
    out, and sampling those would silently give a shorter clip. So what the container promises is
    checked against what is there: the frame count where the index has one (mp4's sample table is
    exact; one frame of slack for muxers that count a flushing sample), else the duration (two frame
    intervals of slack, for rounding and a start offset such as a B-frame delay).
    """
    if container.format.name.endswith("_pipe") or not container.streams.video:
        raise _Unusable(f"has no video stream (container format {container.format.name!r})")
    stream = container.streams.video[0]
    packets = list(container.demux(stream))  # ends with the empty packet that flushes the decoder
    pts = sorted(p.pts for p in packets if p.pts is not None and not p.is_discard)
    if not pts:
        raise _Unusable("has no video frames")
    times = [round(float((p - pts[0]) * stream.time_base), 6) for p in pts]
    present = sum(1 for p in packets if p.size)
    if stream.frames and present < stream.frames - 1:
        raise _Unusable(f"is truncated: its index promises {stream.frames} frames, {present} are in the data")
    promised = float(stream.duration * stream.time_base) if stream.duration else (container.duration or 0) / 1e6
    interval = times[-1] / (len(times) - 1) if len(times) > 1 else 0.0
    if not stream.frames and promised and times[-1] + interval < promised - max(2 * interval, 0.1):
        raise _Unusable(f"is truncated: it promises {promised:.3f} s, its frames cover {times[-1] + interval:.3f} s")
    return stream, packets, pts, times


def _pyav(source: io.BytesIO | str, fps: float, max_frames: int | None) -> _Sampled:
    """The frame index from one demux pass (packets stay in memory), then `_decode_wanted`."""
    import av

    # Probing (avformat_find_stream_info) decodes the first frame(s) to learn what the codec header
    # already says for mp4; told to skip every frame there it reads headers only. The decoder that
    # makes the frames is opened later with its own, default options.
    with av.open(source, options=_PROBE_WITHOUT_DECODING) as container:
        stream, packets, pts, times = _demux(container)
        stream.thread_type = "AUTO"  # frame + slice threads: faster here than slice (the default) or frame alone
        keep, duration = _select(times, fps, max_frames)
        images = _decode_wanted(stream, packets, [pts[i] for i in keep], skip=True)
        if None in images:  # a stream whose keyframes are no clean entry points: decode it all after all
            stream.codec_context.flush_buffers()
            images = _decode_wanted(stream, packets, [pts[i] for i in keep], skip=False)
    missing = [times[i] for i, image in zip(keep, images, strict=True) if image is None]
    if missing:
        raise _Unusable(f"has frames that do not decode (the first at {missing[0]:.3f} s)")
    return images, [times[i] for i in keep], duration  # type: ignore[return-value]


def _decord(source: io.BytesIO | str, fps: float, max_frames: int | None) -> _Sampled:
    """decord's frame index (`get_frame_timestamp`: per-frame pts) and one `get_batch` of the kept frames.

    decord trusts the container's index, so the clip is first demuxed with PyAV (no decoding) to
    refuse a truncated one as `_pyav` does. decord is given a file path: given an in-memory buffer
    it keeps memory it never frees (RSS grew by ~190 MB over 50 clips), on a path it stays flat.
    """
    import av
    import decord

    with av.open(source, options=_PROBE_WITHOUT_DECODING) as container:
        _demux(container)
    if isinstance(source, io.BytesIO):
        with tempfile.NamedTemporaryFile(suffix=".mp4") as file:
            file.write(source.getbuffer())
            file.flush()
            return _decord(file.name, fps, max_frames)
    reader = decord.VideoReader(source, ctx=decord.cpu(0))
    try:
        if not len(reader):
            raise _Unusable("has no video frames")
        starts = reader.get_frame_timestamp(range(len(reader)))[:, 0].astype(np.float64)  # float32 pts, sorted
        times = [round(float(t - starts[0]), 6) for t in starts]
        keep, duration = _select(times, fps, max_frames)
        batch = reader.get_batch(keep).asnumpy()
    finally:
        del reader
    return [Image.fromarray(pixels) for pixels in batch], [times[i] for i in keep], duration


_BACKENDS: dict[str, Callable[[io.BytesIO | str, float, int | None], _Sampled]] = {"pyav": _pyav, "decord": _decord}


def _default_backend() -> str:
    if DEFAULT_VIDEO_BACKEND == "decord" and importlib.util.find_spec("decord") is None:
        return "pyav"  # decord ships x86-64 wheels only
    return DEFAULT_VIDEO_BACKEND


def video_frames(
    value: Any,
    *,
    record: str,
    field: str = "video",
    fps: float = 1.0,
    max_frames: int | None = None,
    max_side: int | None = None,
    backend: str | None = None,
    lazy: bool = False,
    local_files: bool = False,
) -> VideoFrames:
    """Frames of a clip at `fps` (GIMMICK: 1 per second), as RGB images with their presentation times.

    The rule, the same for every backend. Frame times are the pts of the container's packet index,
    relative to the first frame. Target times are t_k = k / fps for k = 0, 1, ... while t_k is at
    most the last frame's time; for each, the first frame with pts >= t_k is taken, and a frame
    taken twice (sparse variable-rate clips) is kept once. So a 10 s clip at 25 fps (last frame
    at 9.96 s) gives 10 frames at 0, 1, ..., 9 s, as does one at 29.97 fps (300 frames, last at
    9.976 s); a 3.5 s clip gives 4 and a clip under 1 s its first frame. With `max_frames`, that
    many are kept, spread uniformly (linspace over the picks, rounded). With `max_side`, frames
    are shrunk (never enlarged) so the longer side fits; by default they keep their native
    resolution. Frames are turned upright when the container asks for a display rotation.
    Timestamps are rounded to the microsecond; `duration` is the last frame's time plus the mean
    frame interval (packet durations are not used: FFmpeg builds disagree on them).

    Args:
        value: mp4 (or any FFmpeg-readable) bytes, a path, or a `{"bytes", "path"}` dict (or a
            reference to stored bytes, see `_raw`).
        backend: "pyav" or "decord"; None = `DEFAULT_VIDEO_BACKEND` (PyAV where decord is missing).
        lazy: return `LazyImage` frames, which keep the clip's bytes (by reference), its path or its
            stored range, and decode the clip again, with the same settings and backend, when one is used.
        local_files: read a path (the caller's own file); a record's value never is (module docstring).
    Raises:
        MediaError: no bytes or file, not a video, no video stream or frame, a clip truncated (fewer
            frames, or a shorter span, than its container promises), or undecodable data.
    """
    if fps <= 0 or (max_frames is not None and max_frames < 1) or (max_side is not None and max_side < 1):
        raise ValueError(f"need fps > 0, max_frames >= 1, max_side >= 1; got {fps}, {max_frames}, {max_side}")
    name = backend or _default_backend()
    if name not in _BACKENDS:
        raise ValueError(f"unknown video backend {name!r}; choose from {sorted(_BACKENDS)}")
    raw = _raw(value, record=record, field=field, local_files=local_files)
    data = _read(raw, record=record, field=field)
    kind = next((label for magic, label in _IMAGE_MAGIC.items() if data.startswith(magic)), None)
    if kind and not (kind == "WEBP" and data[8:12] != b"WEBP"):
        raise MediaError(record, field, f"holds a {kind} image, not a video")
    try:
        images, timestamps, duration = _BACKENDS[name](io.BytesIO(data), fps, max_frames)
    except _Unusable as err:
        raise MediaError(record, field, f"{err} ({name})") from err
    except ImportError:
        raise
    except Exception as err:  # FFmpeg and decord raise many types; none may escape as anything but MediaError
        raise MediaError(record, field, f"is not a decodable video ({name}: {type(err).__name__}: {err})") from err
    if max_side is not None:
        for image in images:
            image.thumbnail((max_side, max_side), Image.Resampling.BICUBIC)
    if lazy:
        again = dict(record=record, field=field, fps=fps, max_frames=max_frames, max_side=max_side, backend=name)
        again["local_files"] = isinstance(raw, Path)
        decode = functools.partial(_frames_again, raw, again, len(images))
        images = lazy_images(decode, images)
    return VideoFrames(images=images, timestamps=timestamps, duration=duration, backend=name)


def _frames_again(raw: bytes | Path | StoredBytes, settings: dict[str, Any], count: int) -> list[Image.Image]:
    """A lazy clip's frames, decoded again as the first time (the same count, or a `MediaError`)."""
    images = video_frames(raw, **settings).images
    if len(images) != count:  # only if the file at a path changed in between
        raise MediaError(settings["record"], settings["field"], f"gave {len(images)} frames, not {count} as before")
    return images
