"""Cost of 1 fps frames (GIMMICK CVVQA) from 10 s 1280x720 H.264 clips, against the decode-only floor.

Every frame of a clip with long keyframe intervals has to be decoded to reach the ones at
whole seconds, so decoding every frame and converting none is the floor for any exact sampler.
All methods run on the same in-memory clips, interleaved round by round; every PyAV method
uses the same decoder threads (frame + slice), decord its own default. The table gives wall
time (median and best) and CPU time (median, all threads), each as a ratio to the floor's. Clips come from
`arab_mm_tasks.testing.synthetic.write_clip` (noise-textured, x264's default adaptive B-frames), with a
keyframe every 12 frames, every 30, and x264's default of 250 (one keyframe in a 10 s clip).
A summary table follows: per keyframe interval, `video_frames` and GIMMICK's sampler as ratios to
the floor (median CPU time, and best wall time), and the median of those ratios over the intervals.

    python benchmarks/frames.py                # 10 s 1280x720 @25 fps, 5 rounds (~2 min on 2 cores)
    python benchmarks/frames.py --quick        # 3 s 320x180, 1 round: a smoke test

Target: `video_frames` (the default backend) at most 0.6x of the floor, median over the intervals.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import platform
import statistics
import time
from collections.abc import Callable

import av
import numpy as np

from arab_mm_tasks.core.media import DEFAULT_VIDEO_BACKEND, video_frames
from arab_mm_tasks.testing.synthetic import write_clip

FPS = 1.0


def decode_only(raw: bytes) -> int:
    """The floor: PyAV decodes every frame (threads as in `video_frames`), converts none."""
    with av.open(io.BytesIO(raw)) as container:
        container.streams.video[0].thread_type = "AUTO"
        return sum(1 for _ in container.decode(video=0))


def decode_convert_all(raw: bytes) -> int:
    """Decode every frame and convert each to an RGB array, then keep 1 fps: the naive reader."""
    with av.open(io.BytesIO(raw)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        step, kept = round(stream.average_rate / FPS), []
        for i, frame in enumerate(container.decode(video=0)):
            pixels = frame.to_ndarray(format="rgb24")
            if i % step == 0:
                kept.append(pixels)
    return len(kept)


def gimmick_decord(raw: bytes) -> int:
    """GIMMICK's sampler as its code is described (ecosystem.md §1.1): decord, a stride of len // n."""
    import decord

    reader = decord.VideoReader(io.BytesIO(raw), ctx=decord.cpu(0))
    duration = reader.get_frame_timestamp(-1)[1]
    n = int(duration * FPS)
    return len(reader.get_batch(range(0, len(reader), len(reader) // n)).asnumpy())


def lmms_eval_pyav(raw: bytes, num_frm: int = 32) -> int:
    """lmms-eval's PyAV reader as described (ecosystem.md §2.2): linspace over the frame count, capped by fps."""
    with av.open(io.BytesIO(raw)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"  # as every PyAV method here, so that the table compares sampling, not threads
        total = stream.frames
        duration = float(stream.duration * stream.time_base)
        count = min(min(num_frm, total), int(duration * FPS))
        wanted = set(np.unique(np.linspace(0, total - 1, count).astype(int)).tolist())
        last, frames = max(wanted), []
        for i, frame in enumerate(container.decode(video=0)):
            if i in wanted:
                frames.append(frame.to_ndarray(format="rgb24"))
            if i >= last:
                break
    return len(frames)


def ours(backend: str | None) -> Callable[[bytes], int]:
    return lambda raw: len(video_frames(raw, record="benchmark", fps=FPS, backend=backend).images)


HAS_DECORD = importlib.util.find_spec("decord") is not None
GOPS = (12, 30, 250)  # keyframe intervals of the clips, in frames
OURS = f"ours: `video_frames` (default = {DEFAULT_VIDEO_BACKEND})"
AUTHORS = "GIMMICK's decord sampler (`get_batch`)"
METHODS: dict[str, Callable[[bytes], int]] = {
    "floor: PyAV decode every frame, convert none": decode_only,
    OURS: ours(None),
    "ours: `video_frames(backend='pyav')`": ours("pyav"),
    **({"ours: `video_frames(backend='decord')`": ours("decord")} if HAS_DECORD else {}),
    "PyAV decode and convert every frame": decode_convert_all,
    **({AUTHORS: gimmick_decord} if HAS_DECORD else {}),
    "lmms-eval's PyAV reader (linspace)": lmms_eval_pyav,
}
FLOOR = next(iter(METHODS))


def measure(raw: bytes, rounds: int) -> dict[str, tuple[int, list[float], list[float]]]:
    """Wall and CPU milliseconds per call for each method, interleaved within each round (after a warm-up).

    CPU time (all threads of this process) is what the work costs; it is also the steadier number
    on a shared machine, where other jobs stretch wall times.
    """
    counts = {name: method(raw) for name, method in METHODS.items()}  # warm-up, and the frame counts
    wall: dict[str, list[float]] = {name: [] for name in METHODS}
    cpu: dict[str, list[float]] = {name: [] for name in METHODS}
    for round_ in range(rounds):
        for name in list(METHODS) if round_ % 2 == 0 else list(reversed(METHODS)):
            start, start_cpu = time.perf_counter(), time.process_time()
            METHODS[name](raw)
            wall[name].append((time.perf_counter() - start) * 1000)
            cpu[name].append((time.process_time() - start_cpu) * 1000)
    return {name: (counts[name], wall[name], cpu[name]) for name in METHODS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3 s 320x180 clips, 1 round")
    parser.add_argument("--rounds", type=int, help="timed rounds (default 5, or 1 with --quick)")
    parser.add_argument("--fps", type=float, default=25, help="clip frame rate")
    args = parser.parse_args()
    seconds, size = (3, (320, 180)) if args.quick else (10, (1280, 720))
    rounds = args.rounds or (1 if args.quick else 5)

    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, PyAV {av.__version__}")
    print(f"clips: {seconds} s {size[0]}x{size[1]} H.264 @{args.fps:g} fps; {rounds} rounds; ratios to the floor\n")
    print("| keyframe interval | method | frames | wall ms, median | wall ms, best | CPU ms, median |", end="")
    print(" best wall / floor | CPU / floor |\n|---|---|---|---|---|---|---|---|")
    ratios: dict[str, dict[int, tuple[float, float]]] = {name: {} for name in METHODS}  # (CPU, best wall)
    for gop in GOPS:
        raw = write_clip(seconds=seconds, fps=args.fps, size=size, gop=gop)
        results = measure(raw, rounds)
        floor_best, floor_cpu = min(results[FLOOR][1]), statistics.median(results[FLOOR][2])
        for name, (count, wall, cpu) in results.items():
            best, cpu_median = min(wall), statistics.median(cpu)
            ratios[name][gop] = (cpu_median / floor_cpu, best / floor_best)
            print(
                f"| {gop} ({len(raw) / 1e6:.1f} MB) | {name} | {count} | {statistics.median(wall):.0f} | {best:.0f} "
                f"| {cpu_median:.0f} | {best / floor_best:.2f} | {cpu_median / floor_cpu:.2f} |"
            )
    print("\nSummary, as ratios to the floor (CPU median / best wall):\n")
    print("| method | " + " | ".join(f"GOP {gop}" for gop in GOPS) + " | median over GOPs |")
    print("|---|" + "---|" * (len(GOPS) + 1))
    for name in (FLOOR, OURS, AUTHORS):
        if name not in ratios:
            continue
        cells = [f"{cpu:.2f} / {wall:.2f}" for cpu, wall in (ratios[name][gop] for gop in GOPS)]
        cpu_median = statistics.median(cpu for cpu, _ in ratios[name].values())
        wall_median = statistics.median(wall for _, wall in ratios[name].values())
        print(f"| {name} | " + " | ".join(cells) + f" | **{cpu_median:.2f} / {wall_median:.2f}** |")


if __name__ == "__main__":
    main()
