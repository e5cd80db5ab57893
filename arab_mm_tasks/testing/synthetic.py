"""Synthetic media for tests, demos and benchmarks: clips whose frames carry their own timestamp.

Real GIMMICK clips are gated YouTube cuts, so the media layer is checked on clips made here.
Each frame shows its presentation time in milliseconds as a 5x4 grid of black/white blocks
(20 bits, most significant first, row by row). Big blocks survive lossy H.264 intact, so
`timestamp_of` reads the exact time back from a decoded frame: a frame sampler that is off by
one frame is caught, which a "roughly the right colour" check would miss.

`detail=True` (the default) adds a scrolling noise texture on top of the blocks so the encoder
and decoder do realistic work; without it a clip of flat blocks decodes unrealistically fast.
"""

from __future__ import annotations

import io
import tempfile
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image, ImageDraw

GRID_COLS, GRID_ROWS = 5, 4
_BITS = GRID_COLS * GRID_ROWS
MAX_SECONDS = ((1 << _BITS) - 1) / 1000  # the largest time the block code can show (~1048 s)


def _code_mask(ms: int, size: tuple[int, int]) -> np.ndarray:
    """A (height, width) bool array: True where a block is white, for the time `ms`."""
    width, height = size
    bits = np.array([(ms >> (_BITS - 1 - i)) & 1 for i in range(_BITS)], dtype=bool).reshape(GRID_ROWS, GRID_COLS)
    rows = np.arange(height) * GRID_ROWS // height
    cols = np.arange(width) * GRID_COLS // width
    return bits[rows[:, None], cols[None, :]]


def timestamp_of(image: Image.Image) -> float:
    """The time (seconds) a `write_clip` frame shows, exact to the millisecond.

    Reads the mean of the central half of each block and thresholds it at mid-grey: blocks are
    drawn 87 levels away from it, and the texture (±40 a pixel) and compression noise average
    out over a block, so no bit flips. Works on downscaled frames too, while blocks keep a few pixels.
    """
    grey = np.asarray(image.convert("L"), dtype=np.float32)
    height, width = grey.shape
    ms = 0
    for i in range(_BITS):
        row, col = divmod(i, GRID_COLS)
        y0, y1 = row * height // GRID_ROWS, (row + 1) * height // GRID_ROWS
        x0, x1 = col * width // GRID_COLS, (col + 1) * width // GRID_COLS
        dy, dx = (y1 - y0) // 4, (x1 - x0) // 4
        block = grey[y0 + dy : y1 - dy, x0 + dx : x1 - dx]
        ms = (ms << 1) | int(block.mean() > 127.5)
    return ms / 1000


def _vfr_times(seconds: float, fps: float) -> list[float]:
    """Irregular frame times averaging `fps`: intervals cycle through 0.5, 1.5, 0.25 and 1.75 frame periods."""
    period, steps, times, t, i = 1 / fps, (0.5, 1.5, 0.25, 1.75), [], 0.0, 0
    while t < seconds - 1e-9:
        times.append(round(t, 3))
        t += steps[i % len(steps)] * period
        i += 1
    return times


def write_clip(
    path: str | Path | None = None,
    *,
    seconds: float,
    fps: float = 25,
    size: tuple[int, int] = (320, 240),
    gop: int | None = None,
    bframes: int | None = None,
    codec: str = "libx264",
    vfr: bool = False,
    detail: bool = True,
    rotation: int = 0,
    options: dict[str, str] | None = None,
) -> bytes:
    """Encode a silent mp4 of `seconds` whose frames show their own time (see `timestamp_of`).

    Args:
        path: also write the bytes there when given.
        fps: frame rate; with `vfr=True`, the average rate of irregular frame times.
        size: (width, height); even numbers, as yuv420p requires.
        gop: keyframe interval in frames; None keeps the encoder default (250 for x264).
        bframes: at most this many B-frames in a row; None keeps the encoder default (x264: up to 3,
            placed adaptively, the middle one of a run kept as a reference: "b-pyramid"); 0 for none.
        vfr: variable frame rate: a 1 ms time base and explicit, irregular pts.
        detail: add a scrolling noise texture, for realistic encode/decode costs.
        rotation: display rotation (degrees counter-clockwise) stored in the container, as phones do.
        options: more encoder options, e.g. ``{"x264-params": "open-gop=1"}``.
    Returns:
        the mp4 bytes.
    """
    if not 0 < seconds <= MAX_SECONDS:
        raise ValueError(f"seconds must be in (0, {MAX_SECONDS}], got {seconds}")
    width, height = size
    rate = Fraction(fps).limit_denominator(1001)
    if vfr:
        times, time_base = _vfr_times(seconds, fps), Fraction(1, 1000)
    else:
        n_frames = max(1, round(seconds * rate))
        times, time_base = [float(i / rate) for i in range(n_frames)], 1 / rate
    noise = np.random.default_rng(0).integers(-40, 41, size=(height, width + 4 * len(times)), dtype=np.int16)
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4") as container:
        settings = {**({"g": str(gop)} if gop else {}), **({"bf": str(bframes)} if bframes is not None else {})}
        stream = container.add_stream(codec, rate=rate, options={**settings, **(options or {})})
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.time_base = stream.codec_context.time_base = time_base
        if rotation:
            stream.set_display_rotation(rotation)
        for i, t in enumerate(times):
            pixels = np.where(_code_mask(round(t * 1000), size), 215, 40).astype(np.int16)
            if detail:
                pixels = pixels + noise[:, 4 * i : 4 * i + width]
            rgb = np.repeat(np.clip(pixels, 0, 255).astype(np.uint8)[:, :, None], 3, axis=2)
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts, frame.time_base = round(t / time_base), time_base
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    data = buffer.getvalue()
    if path is not None:
        Path(path).write_bytes(data)
    return data


def index_first(mp4: bytes) -> bytes:
    """The same clip remuxed with its index (``moov``) before the media data, as streaming sites serve it.

    Such a file still opens when cut short, which is what makes truncation hard to notice.
    """
    with tempfile.TemporaryDirectory() as folder:  # faststart rewrites the file, so it needs a real one
        out = Path(folder) / "clip.mp4"
        with (
            av.open(io.BytesIO(mp4)) as source,
            av.open(str(out), "w", format="mp4", options={"movflags": "faststart"}) as target,
        ):
            video = target.add_stream_from_template(source.streams.video[0])
            for packet in source.demux(source.streams.video[0]):
                if packet.dts is not None:  # the final empty packet only flushes a decoder
                    packet.stream = video
                    target.mux(packet)
        return out.read_bytes()


def make_image(text_or_seed: str | int, size: tuple[int, int] = (64, 64)) -> Image.Image:
    """A small deterministic RGB picture (background, ellipse, rectangle) seeded by `text_or_seed`."""
    seed = text_or_seed if isinstance(text_or_seed, int) else int.from_bytes(str(text_or_seed).encode("utf-8"), "big")
    rng = np.random.default_rng(seed)
    width, height = size
    image = Image.new("RGB", size, tuple(int(c) for c in rng.integers(0, 256, 3)))
    draw = ImageDraw.Draw(image)
    for shape in (draw.ellipse, draw.rectangle):
        x0, y0 = int(rng.integers(0, width // 2)), int(rng.integers(0, height // 2))
        x1, y1 = int(rng.integers(x0 + 1, width)), int(rng.integers(y0 + 1, height))
        shape((x0, y0, x1, y1), fill=tuple(int(c) for c in rng.integers(0, 256, 3)))
    return image


def image_bytes(image: Image.Image, format: str = "PNG") -> bytes:
    """`image` encoded as `format` (any format PIL writes), e.g. for a `datasets.Image` value."""
    buffer = io.BytesIO()
    image.save(buffer, format=format)
    return buffer.getvalue()
