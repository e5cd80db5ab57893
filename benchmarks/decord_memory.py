"""Memory of the decord backend over many clips: in-memory buffers (before) vs a file path (now).

decord given an `io.BytesIO` keeps memory it never frees; on a file path it stays flat. Each mode
runs in its own process (peak RSS only grows), decoding the same N distinct 10 s clips at 1 fps:

    python benchmarks/decord_memory.py --clips 50
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_mode(mode: str, clips: int) -> dict[str, float]:
    import decord

    from arab_mm_tasks.core.media import video_frames
    from arab_mm_tasks.testing.synthetic import write_clip

    data = [write_clip(seconds=10, fps=25, size=(640, 360), gop=25 + i) for i in range(clips)]
    marks: dict[str, float] = {}
    for i, clip in enumerate(data, start=1):
        if mode == "buffer":  # what the backend did before: decord on an in-memory buffer
            reader = decord.VideoReader(io.BytesIO(clip), ctx=decord.cpu(0))
            reader.get_batch(list(range(0, len(reader), 25))).asnumpy()
            del reader
        else:
            video_frames(clip, record=f"clip-{i}", backend="decord")
        if i in (5, clips // 2, clips):
            marks[f"after {i}"] = round(_peak_mb(), 1)
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clips", type=int, default=50)
    parser.add_argument("--mode", choices=["buffer", "path"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(run_mode(args.mode, args.clips)))
        return
    print(
        f"decord, {args.clips} distinct 10 s 640x360 textured clips at 1 fps; "
        f"peak RSS (MB); load {os.getloadavg()[0]:.2f}"
    )
    for mode in ("buffer", "path"):
        out = subprocess.run([sys.executable, __file__, "--clips", str(args.clips), "--mode", mode],
                             capture_output=True, text=True, check=True)  # fmt: skip
        marks = json.loads(out.stdout.strip().splitlines()[-1])
        first, last = next(iter(marks.values())), list(marks.values())[-1]
        print(f"  {mode:6s} {marks}  growth {last - first:+.1f} MB")


if __name__ == "__main__":
    main()
