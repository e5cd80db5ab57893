"""Peak memory of a real CVVQA run, lm-eval or lighteval, as the number of clips grows.

lm-eval builds every request before generating; before lazy frames each request held its clip's
decoded frames (PIL RGB, 4 bytes a pixel: 37 MB for ten 720p frames), so memory grew with the
number of clips. This builds a GIMMICK folder of N near-empty 10 s 1280x720 clips (synthetic,
`arab_mm_tasks.testing.synthetic`, a few distinct clips repeated), then runs
``python -m lm_eval --model hf-multimodal`` (or, with ``--harness lighteval``, our lighteval
command line with ``--vision-model``) with the tiny random-weight VLM on gimmick_cvvqa_none
in a child process per (code, N) under ``/usr/bin/time -v``, and prints peak RSS and its growth
per clip. "before" runs the code in BEFORE_ROOT (default /work/main, the main branch's checkout),
"after" this checkout: ``python -m`` puts the working directory first on sys.path, so each
child imports the package from its own root.

    python benchmarks/cvvqa_memory.py --sizes 20 50 200
    python benchmarks/cvvqa_memory.py --sizes 20 50 200 --before-sizes 20 50   # skip a big "before" run
    python benchmarks/cvvqa_memory.py --harness lighteval --before-root /tmp/before-lazy
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # gimmick_fixtures lives with the tests

DISTINCT_CLIPS = 4  # clips are written once each and repeated: encoding 200 720p clips would dominate


def build_folder(work: Path, clips: int, size: tuple[int, int], seconds: float) -> Path:
    """A GIMMICK Hub folder whose cvvqa config holds `clips` rows, each with a 10 s clip of `size`."""
    from gimmick_fixtures import vvqa_records, write_vvqa

    from arab_mm_tasks.testing.synthetic import write_clip
    from dataset_builders.gimmick.builder import build

    out = work / f"gimmick-{clips}"
    if (out / "data" / "cvvqa").is_dir():
        return out
    videos = work / "clips"
    videos.mkdir(parents=True, exist_ok=True)
    made = sorted(videos.glob("*.mp4"))
    if len(made) < DISTINCT_CLIPS:
        for k in range(DISTINCT_CLIPS):  # near-empty frames (the tester's clips were), GOPs differ
            write_clip(videos / f"c{k}.mp4", seconds=seconds, fps=25, size=size, gop=25 + k, detail=False)
        made = sorted(videos.glob("*.mp4"))
    template = vvqa_records()[0]
    sources = work / f"sources-{clips}"
    sources.mkdir(exist_ok=True)
    clip_dir = sources / "clips"
    clip_dir.mkdir(exist_ok=True)
    records = []
    for i in range(clips):
        name = f"{9000 + i}.mp4"
        target = clip_dir / name
        if not target.exists():
            os.link(made[i % len(made)], target)
        records.append({**template, "question_id": 9000 + i, "video_fn": f"/elsewhere/{name}"})
    build(out, vvqa=write_vvqa(sources / "vvqa.jsonl", records), videos_dir=clip_dir)
    return out


def harness_command(harness: str, model: Path, folder: Path, out: Path) -> list[str]:
    """The child's command line: the package is imported from its working directory (``python -m``)."""
    if harness == "lm-eval":
        return [
            sys.executable, "-m", "lm_eval", "--model", "hf-multimodal",
            "--model_args", f"pretrained={model},max_images=20", "--tasks", "gimmick_cvvqa_none",
            "--metadata", json.dumps({"gimmick_path": str(folder)}), "--gen_kwargs", "max_gen_toks=2",
            "--device", "cpu", "--batch_size", "1", "--output_path", str(out),
        ]  # fmt: skip
    # a fresh response cache per run: lighteval would otherwise answer from an earlier run's responses
    return [
        sys.executable, "-m", "arab_mm_tasks.harness.lighteval_cli", "accelerate",
        f"model_name={model},generation_size=2,device=cpu,batch_size=1,cache_dir={out / 'cache'}",
        "gimmick_cvvqa_none|0",
        "--vision-model", "--dataset-path", f"gimmick={folder}", "--output-dir", str(out),
    ]  # fmt: skip


def samples_scored(harness: str, out: Path) -> int | None:
    """Samples the run scored (lm-eval says; lighteval's results do not, and no --max-samples is passed)."""
    if harness != "lm-eval":
        return None
    (results,) = out.rglob("results_*.json")
    return json.loads(results.read_text())["n-samples"]["gimmick_cvvqa_none"]["effective"]


def run_harness(harness: str, root: Path, model: Path, folder: Path, out: Path) -> dict[str, float]:
    """Peak RSS (MB), wall time and samples of one run whose package is imported from `root`."""
    command = ["/usr/bin/time", "-v", *harness_command(harness, model, folder, out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("PYTHONPATH", None)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{harness} failed in {root}:\n{done.stderr[-3000:]}")
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    samples = samples_scored(harness, out)
    shutil.rmtree(out)
    return {"peak_mb": peak_kb / 1024, "wall_s": wall, "samples": samples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--harness", choices=["lm-eval", "lighteval"], default="lm-eval")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50, 200])
    parser.add_argument("--before-sizes", type=int, nargs="*", help="sizes for the 'before' code (default --sizes)")
    parser.add_argument("--before-root", type=Path, default=Path("/work/main"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/arab-mm-cvvqa-memory"))
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    args = parser.parse_args()
    from arab_mm_tasks.testing.tiny_model import build_tiny_vlm

    args.work.mkdir(parents=True, exist_ok=True)
    model = args.work / "tiny-vlm"
    if not (model / "config.json").exists():
        build_tiny_vlm(model)
    before_sizes = args.sizes if args.before_sizes is None else args.before_sizes
    runs = [("before", args.before_root, n) for n in before_sizes] + [("after", ROOT, n) for n in args.sizes]
    which = "lm_eval hf-multimodal" if args.harness == "lm-eval" else "arab-mm-lighteval --vision-model"
    print(
        f"{which}, tiny VLM, gimmick_cvvqa_none, 10 s {args.width}x{args.height} near-empty clips, "
        f"max_gen_toks=2, batch 1; load before: {os.getloadavg()[0]:.2f}"
    )
    print("| code | clips | peak RSS (MB) | wall (s) | load (1 min) |")
    print("|---|---|---|---|---|")
    table: dict[str, dict[int, float]] = {}
    for label, root, n in runs:
        folder = build_folder(args.work, n, (args.width, args.height), 10.0)
        got = run_harness(args.harness, root, model, folder, args.work / f"out-{label}-{n}")
        assert got["samples"] in (n, None), got
        table.setdefault(label, {})[n] = got["peak_mb"]
        print(f"| {label} | {n} | {got['peak_mb']:.0f} | {got['wall_s']:.0f} | {os.getloadavg()[0]:.2f} |", flush=True)
    for label, peaks in table.items():
        sizes = sorted(peaks)
        if len(sizes) > 1:
            growth = (peaks[sizes[-1]] - peaks[sizes[0]]) / (sizes[-1] - sizes[0])
            print(f"{label}: {growth:.2f} MB per clip ({sizes[0]} -> {sizes[-1]} clips)")


if __name__ == "__main__":
    main()
