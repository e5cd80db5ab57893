"""Peak memory of a real CVVQA (or CIVQA) run, lm-eval, lighteval or lmms-eval, as the number of clips grows.

lm-eval builds every request before generating; before lazy frames each request held its clip's
decoded frames (PIL RGB, 4 bytes a pixel: 37 MB for ten 720p frames), so memory grew with the
number of clips. This builds a GIMMICK folder of N 10 s 1280x720 clips (synthetic,
`arab_mm_tasks.testing.synthetic`, a few distinct clips repeated): by default textured and encoded
at 2 Mbit/s, ~2.7 MB each like the 10 s YouTube cuts of GIMMICK (1-5 MB); ``--near-empty`` gives
the flat ~51 KB clips of the first measurements. Then it runs
``python -m lm_eval --model hf-multimodal`` (or, with ``--harness lighteval``, our lighteval
command line with ``--vision-model``) with the tiny random-weight VLM on gimmick_cvvqa_none
in a child process per (code, N) under ``/usr/bin/time -v``, and prints peak RSS and its growth
per clip, and the child's anonymous and file-backed memory at exit (clean pages of mapped files, such as
the dataset's Arrow file, count in RSS but the kernel drops them under pressure; anonymous memory is what
the run holds). With ``--harness lmms-eval`` (run this script with the Python of an environment holding
the ``[lmms]`` extra) the child is ``python -m lmms_eval --model llava_hf`` on the same task, named
in a ``--tasks DIR`` task file whose ``metadata`` carries ``gimmick_path``. Runs go in order of size,
"before" and "after" side by side at each size, so a change of machine load falls on both.
"before" runs the code in BEFORE_ROOT (default /work/main, the main branch's checkout),
"after" this checkout: the child (``python -c``, running the module as ``-m`` would) has the
working directory first on sys.path, so each child imports the package from its own root.

    python benchmarks/cvvqa_memory.py --sizes 20 50 200
    python benchmarks/cvvqa_memory.py --sizes 20 50 200 --before-sizes 20 50   # skip a big "before" run
    python benchmarks/cvvqa_memory.py --harness lighteval --before-root /tmp/before-lazy
    python benchmarks/cvvqa_memory.py --near-empty --sizes 20 200
    python benchmarks/cvvqa_memory.py --task civqa --sizes 200 1000   # an image task: ~200 KB JPEGs
    /work/lmms-venv/bin/python benchmarks/cvvqa_memory.py --harness lmms-eval --sizes 20 200 --before-sizes
    python benchmarks/cvvqa_memory.py --sizes 20 200 --breakdown   # in-process: where the memory is (anon/file)

With ``--task civqa`` the folder's civqa config holds N rows of 1024x768 JPEGs of ~200 KB (a
smooth random picture with fine noise, as photos compress; a few distinct ones repeated), run as
gimmick_civqa_none.
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

FULL = {"cvvqa": 1809, "civqa": 2233}  # rows of GIMMICK's test splits (paper Table 1), for the extrapolation
DISTINCT_CLIPS = 4  # clips are written once each and repeated: encoding 200 720p clips would dominate
DISTINCT_IMAGES = 8


def build_folder(work: Path, clips: int, size: tuple[int, int], seconds: float, bitrate: str | None) -> Path:
    """A GIMMICK Hub folder whose cvvqa config holds `clips` rows, each with a 10 s clip of `size`.

    `bitrate` (e.g. "2000k"): textured frames encoded at that rate; None: near-empty frames.
    """
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
        for k in range(DISTINCT_CLIPS):  # GOPs differ; near-empty frames are what the tester's clips were
            options = {"b": bitrate} if bitrate else None
            write_clip(videos / f"c{k}.mp4", seconds=seconds, fps=25, size=size, gop=25 + k, detail=bool(bitrate),
                       options=options)  # fmt: skip
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


def photo_jpeg(seed: int, size: tuple[int, int] = (1024, 768)) -> bytes:
    """A ~200 KB JPEG: a smooth random picture (bicubic from 64x48) plus +-12 noise, quality 85."""
    import io

    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    smooth = Image.fromarray(rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)).resize(size, Image.Resampling.BICUBIC)
    pixels = np.asarray(smooth).astype(np.int16) + rng.integers(-12, 13, (size[1], size[0], 3))
    buffer = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


def build_image_folder(work: Path, rows: int) -> Path:
    """A GIMMICK Hub folder whose civqa config holds `rows` rows, each with a ~200 KB JPEG."""
    from gimmick_fixtures import sivqa_records, write_sivqa

    from dataset_builders.gimmick.builder import build

    out = work / f"gimmick-{rows}"
    if (out / "data" / "civqa").is_dir():
        return out
    photos = [photo_jpeg(k) for k in range(DISTINCT_IMAGES)]
    template = sivqa_records()[0]
    records = [
        {**template, "question_id": 9000 + i, "ich_image": {"bytes": photos[i % len(photos)], "path": f"ich_{i}.jpg"}}
        for i in range(rows)
    ]
    work.mkdir(parents=True, exist_ok=True)
    build(out, sivqa=write_sivqa(work / f"sivqa-{rows}.parquet", records))
    return out


# The child runs the harness's module as ``python -m`` would, and at exit prints its resident memory split as the
# kernel keeps it (/proc/self/status, kB): anonymous (objects, pixels) and file-backed (mapped files' pages).
AT_EXIT_SPLIT = """
import atexit, json, runpy, sys
def split():
    fields = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
    rss = {key: int(fields[key].split()[0]) for key in ("VmHWM", "RssAnon", "RssFile")}
    print("ARAB_MM_RSS_AT_EXIT " + json.dumps(rss), file=sys.stderr, flush=True)
atexit.register(split)
runpy.run_module(sys.argv.pop(1), run_name="__main__", alter_sys=True)
"""


def harness_command(harness: str, task: str, model: Path, folder: Path, out: Path) -> list[str]:
    """The child's command line: the package is imported from its working directory (``-c``, as ``-m``)."""
    python = [sys.executable, "-c", AT_EXIT_SPLIT]
    if harness == "lmms-eval":
        return [
            *python, "lmms_eval", "--model", "llava_hf",
            "--model_args", f"pretrained={model},dtype=float32,device_map=cpu", "--device", "cpu",
            "--tasks", str(lmms_task_folder(task, folder, out)), "--include_path", lmms_tree(),
            "--gen_kwargs", "max_new_tokens=2", "--batch_size", "1", "--output_path", str(out),
        ]  # fmt: skip
    if harness == "lm-eval":
        return [
            *python, "lm_eval", "--model", "hf-multimodal",
            "--model_args", f"pretrained={model},max_images=20", "--tasks", task,
            "--metadata", json.dumps({"gimmick_path": str(folder)}), "--gen_kwargs", "max_gen_toks=2",
            "--device", "cpu", "--batch_size", "1", "--output_path", str(out),
        ]  # fmt: skip
    # a fresh response cache per run: lighteval would otherwise answer from an earlier run's responses
    return [
        *python, "arab_mm_tasks.harness.lighteval_cli", "accelerate",
        f"model_name={model},generation_size=2,device=cpu,batch_size=1,cache_dir={out / 'cache'}",
        f"{task}|0",
        "--vision-model", "--dataset-path", f"gimmick={folder}", "--output-dir", str(out),
    ]  # fmt: skip


def lmms_task_folder(task: str, folder: Path, out: Path) -> Path:
    """lmms-eval has no ``--metadata``: a ``--tasks DIR`` task file names our task and its data (docs/lmms_eval.md)."""
    tasks = out / "tasks"
    tasks.mkdir(parents=True)
    (tasks / f"{task}.yaml").write_text(json.dumps({"task": task, "metadata": {"gimmick_path": str(folder)}}))
    return tasks


def lmms_tree() -> str:
    from arab_mm_tasks.harness import lmms_eval_tasks

    return lmms_eval_tasks.tasks_path()


def samples_scored(harness: str, task: str, out: Path) -> int | None:
    """Samples the run scored (lm-eval and lmms-eval say; lighteval's results do not, and no --max-samples is
    passed)."""
    if harness == "lighteval":
        return None
    (results,) = [*out.rglob("results_*.json"), *out.rglob("*_results.json")]
    return json.loads(results.read_text())["n-samples"][task]["effective"]


def run_harness(harness: str, task: str, root: Path, model: Path, folder: Path, out: Path) -> dict[str, float]:
    """Peak RSS, and anonymous and file-backed memory at exit (MB), wall time and samples of one run whose package
    is imported from `root`."""
    command = ["/usr/bin/time", "-v", *harness_command(harness, task, model, folder, out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("PYTHONPATH", None)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{harness} failed in {root}:\n{done.stderr[-3000:]}")
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    at_exit = json.loads(re.search(r"ARAB_MM_RSS_AT_EXIT (\{.*\})", done.stderr).group(1))
    samples = samples_scored(harness, task, out)
    shutil.rmtree(out)
    return {"peak_mb": peak_kb / 1024, "anon_mb": at_exit["RssAnon"] / 1024, "file_mb": at_exit["RssFile"] / 1024,
            "wall_s": wall, "samples": samples}  # fmt: skip


def rss_kb() -> dict[str, int]:
    """This process's resident memory split as the kernel keeps it (/proc/self/status, kB): anonymous (the
    heap: objects, decoded pixels) and file-backed (pages of mapped files, such as the dataset's Arrow file,
    which the kernel can drop and read again)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return {key: int(fields[key].split()[0]) for key in ("VmRSS", "RssAnon", "RssFile", "VmHWM")}


def breakdown(harness: str, task: str, folder: Path, marks: list[int]) -> None:
    """In one process, what a run does with every document: list the task's documents, then for each one
    take its visuals (lmms-eval ``doc_to_visual``; lm-eval ``doc_to_image``) and decode every frame, as the
    model class does at generation, keeping nothing; print the resident memory split after ``marks`` documents.
    """
    import numpy as np

    metadata = {"gimmick_path": str(folder)}
    if harness == "lmms-eval":
        from lmms_eval.tasks import TaskManager

        manager = TaskManager("ERROR", include_path=lmms_tree(), include_defaults=False)
    else:
        from lm_eval.tasks import TaskManager

        from arab_mm_tasks.harness.lm_eval_yaml import TASKS_DIR

        manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
    start = rss_kb()  # the harness imported and its task index built; the task and its documents not yet loaded
    if harness == "lmms-eval":
        (loaded,) = manager.load_task_or_group([{"task": task, "metadata": metadata}]).values()
        visuals = loaded.doc_to_visual
    else:
        (loaded,) = manager.load([task])["tasks"].values()
        visuals = loaded.doc_to_image
    docs = list(loaded.test_docs())
    listed = rss_kb()
    print(f"{harness} {task}, {len(docs)} documents, in-process; MB over the start, after ...")
    print("| documents | RSS | anonymous | file-backed | peak RSS |")
    print("|---|---|---|---|---|")
    row = "| {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |"  # "listed": the task and its documents loaded
    delta = {key: (listed[key] - start[key]) / 1024 for key in start}
    print(row.format("listed", delta["VmRSS"], delta["RssAnon"], delta["RssFile"], delta["VmHWM"]), flush=True)
    for n, doc in enumerate(docs, start=1):
        for image in visuals(doc):
            np.asarray(image.convert("RGB"))  # decoded as the model's processor decodes it, then dropped
        if n in marks or n == len(docs):
            now = rss_kb()
            delta = {key: (now[key] - start[key]) / 1024 for key in start}
            print(row.format(n, delta["VmRSS"], delta["RssAnon"], delta["RssFile"], delta["VmHWM"]), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--harness", choices=["lm-eval", "lighteval", "lmms-eval"], default="lm-eval")
    parser.add_argument("--task", choices=["cvvqa", "civqa"], default="cvvqa", help="clips, or ~200 KB images")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50, 200])
    parser.add_argument("--before-sizes", type=int, nargs="*", help="sizes for the 'before' code (default --sizes)")
    parser.add_argument("--before-root", type=Path, default=Path("/work/main"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/arab-mm-cvvqa-memory"))
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--bitrate", default="2000k", help="of the textured clips (default 2000k: ~2.7 MB per 10 s)")
    parser.add_argument("--near-empty", action="store_true", help="flat frames (~51 KB clips) instead of textured")
    parser.add_argument("--breakdown", action="store_true", help="in-process: visuals decoded, RSS split")
    args = parser.parse_args()
    bitrate = None if args.near_empty else args.bitrate
    from arab_mm_tasks.testing.tiny_model import build_tiny_vlm

    model = args.work / "tiny-vlm"
    kind = f"{args.width}x{args.height}-{bitrate or 'near-empty'}" if args.task == "cvvqa" else "civqa-200kb-jpeg"
    args.work = args.work / kind  # one folder per kind of media
    args.work.mkdir(parents=True, exist_ok=True)
    if not (model / "config.json").exists():
        build_tiny_vlm(model)
    before_sizes = args.sizes if args.before_sizes is None else args.before_sizes
    runs = [("before", args.before_root, n) for n in before_sizes] + [("after", ROOT, n) for n in args.sizes]
    runs.sort(key=lambda run: run[2])  # by size, before and after side by side (stable: before first)
    which = {"lm-eval": "lm_eval hf-multimodal", "lighteval": "arab-mm-lighteval --vision-model",
             "lmms-eval": "lmms-eval llava_hf"}[args.harness]  # fmt: skip
    task = f"gimmick_{args.task}_none"
    if args.task == "cvvqa":
        folders = {n: build_folder(args.work, n, (args.width, args.height), 10.0, bitrate) for _, _, n in runs}
        sizes = [clip.stat().st_size for clip in sorted((args.work / "clips").glob("*.mp4"))]
        media = f"10 s {args.width}x{args.height} {f'textured {bitrate}bit/s' if bitrate else 'near-empty'} clips"
    else:
        folders = {n: build_image_folder(args.work, n) for _, _, n in runs}
        sizes = [len(photo_jpeg(k)) for k in range(DISTINCT_IMAGES)]
        media = "1024x768 JPEGs"
    if args.breakdown:
        largest = max(args.sizes)
        breakdown(args.harness, task, folders[largest], sorted({1, 20, *args.sizes}))
        return
    print(
        f"{which}, tiny VLM, {task}, {media} ({min(sizes) / 1e6:.2f}-{max(sizes) / 1e6:.2f} MB), "
        f"max_gen_toks=2, batch 1; load before: {os.getloadavg()[0]:.2f}"
    )
    print("| code | rows | peak RSS (MB) | at exit: anonymous (MB) | file-backed (MB) | wall (s) | load (1 min) |")
    print("|---|---|---|---|---|---|---|")
    measured: dict[str, dict[int, dict[str, float]]] = {}  # code -> rows -> run_harness's figures
    for label, root, n in runs:
        got = run_harness(args.harness, task, root, model, folders[n], args.work / f"out-{label}-{n}")
        assert got["samples"] in (n, None), got
        measured.setdefault(label, {})[n] = got
        print(f"| {label} | {n} | {got['peak_mb']:.0f} | {got['anon_mb']:.0f} | {got['file_mb']:.0f} "
              f"| {got['wall_s']:.0f} | {os.getloadavg()[0]:.2f} |", flush=True)  # fmt: skip
    for label, by_rows in measured.items():
        counts = sorted(by_rows)
        if len(counts) > 1:
            first, last = by_rows[counts[0]], by_rows[counts[-1]]
            growth, anon_growth = (
                (last[key] - first[key]) / (counts[-1] - counts[0]) for key in ("peak_mb", "anon_mb")
            )
            full = last["peak_mb"] + max(growth, 0.0) * (FULL[args.task] - counts[-1])  # flat (noise < 0): as is
            print(f"{label}: {growth:.2f} MB per row of peak RSS, {anon_growth:.2f} of anonymous memory at exit "
                  f"({counts[0]} -> {counts[-1]} rows); {FULL[args.task]:,} rows: ~{full / 1024:.1f} GB")  # fmt: skip


if __name__ == "__main__":
    main()
