"""Peak memory of the dataset builders as the release grows: it should not grow with the rows.

Sources are synthetic, in the authors' formats (cached under ``--work``, so a re-run skips them):

- ``images``: GIMMICK sivqa as one parquet file (``ich_image`` a ``{"bytes", "path"}`` struct with a
  30-60 KB random-noise JPEG per row, ``question_id`` ...), in row groups of ``--row-group`` rows:
  100 by default, what `datasets` < 5 wrote for image data on the Hub; ``--row-group 2222`` gives
  ~100 MB groups, as `datasets` 5 (``MAX_ROW_GROUP_SIZE``) writes them;
  with ``--forms saved jsonl``, the same rows as a ``save_to_disk`` folder and as a .jsonl naming
  image files;
- ``clips``: GIMMICK vvqa as a .jsonl whose ``video_fn`` name 10 s textured H.264 clips
  (`arab_mm_tasks.testing.synthetic.write_clip`) in a clips folder;
- ``arb``: ARB as the HF release ``MBZUAI/ARB`` (one parquet file, ``image`` a 150-220 KB noise JPEG
  per row, the text columns cycled from the bundled sample of the authors' CSV), in 100-row row groups;
- ``text``: ArabCulture in the authors' Hub layout (``<Country>/test-00000-of-00001.parquet``),
  rows made from the bundled sample with distinct ``sample_id`` s.

Each build runs in a child process of its own (peak RSS only grows), through the same
``build_from_args`` the ``arab-mm-tasks build`` command calls, and reports its peak RSS
(``VmHWM``), wall time and the Arrow memory still allocated at the end. ``--baseline DIR`` runs
the same builds a second time on another checkout's code (e.g. ``/work/main`` before streaming)
with ``PYTHONPATH=DIR``, side by side (both codes at one size before the next size):

    python benchmarks/builder_memory.py                            # 1k/5k/20k images, 20/100/500 clips, text, ARB
    python benchmarks/builder_memory.py --baseline /work/main      # before/after
    python benchmarks/builder_memory.py --images 1000 --clips 20 --text 1000   # a quick look
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------- sources


def _noise_jpeg(rng: Any, sides: tuple[int, int] = (150, 215)) -> bytes:
    """A random-noise JPEG (30-60 KB by default): noise does not compress, so its size follows its area."""
    import io

    from PIL import Image

    side = int(rng.integers(*sides))
    pixels = rng.integers(0, 256, (side, side, 3), dtype="uint8")
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def write_images(path: Path, rows: int, group: int) -> Path:
    """GIMMICK sivqa as a parquet file, written one row group at a time (the generator holds one)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(rows)
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    schema = pa.schema(
        [("question", pa.string()), ("answer", pa.string()), ("question_id", pa.int64()), ("ich_image", image),
         ("countries", pa.list_(pa.string())), ("regions", pa.list_(pa.string())), ("image_copyright", pa.string())],
        metadata={"huggingface": json.dumps({"info": {"features": {
            "question": {"dtype": "string", "_type": "Value"}, "answer": {"dtype": "string", "_type": "Value"},
            "question_id": {"dtype": "int64", "_type": "Value"}, "ich_image": {"_type": "Image"},
            "countries": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"},
            "regions": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"},
            "image_copyright": {"dtype": "string", "_type": "Value"}}}})},
    )  # fmt: skip
    tmp = path.with_suffix(".tmp")
    with pq.ParquetWriter(tmp, schema) as writer:
        for start in range(0, rows, group):
            ids = range(start, min(rows, start + group))
            writer.write_table(
                pa.table(
                    {
                        "question": [f"What festival is shown in image {i}?" for i in ids],
                        "answer": [f"Festival {i}" for i in ids],
                        "question_id": list(ids),
                        "ich_image": [{"bytes": _noise_jpeg(rng), "path": f"ich_{i}.jpg"} for i in ids],
                        "countries": [["Morocco"] for _ in ids],
                        "regions": [["Arab States"] for _ in ids],
                        "image_copyright": [f"photographer {i}, 2010" for i in ids],
                    },
                    schema=schema,
                )
            )
    tmp.rename(path)
    return path


def write_saved(folder: Path, parquet: Path) -> Path:
    """The same rows as a ``save_to_disk`` folder (Arrow files of 100-row record batches, as `datasets` writes)."""
    import datasets
    import pyarrow.parquet as pq

    from dataset_builders.core.reading import parquet_records

    features = datasets.Features.from_arrow_schema(pq.read_schema(parquet))
    cache = folder.with_name(folder.name + ".cache")
    generated = datasets.Dataset.from_generator(
        parquet_records, gen_kwargs={"file": parquet}, features=features, cache_dir=str(cache)
    )
    generated.save_to_disk(str(folder))
    shutil.rmtree(cache, ignore_errors=True)
    return folder


def write_jsonl(folder: Path, parquet: Path) -> Path:
    """The same rows as a .jsonl whose ``ich_image`` is a path to an image file next to it."""
    from dataset_builders.core.reading import parquet_records

    (folder / "images").mkdir(parents=True, exist_ok=True)
    with (folder / "sivqa.jsonl").open("w", encoding="utf-8") as out:
        for row in parquet_records(parquet):
            image = f"images/{row['question_id']}.jpg"
            (folder / image).write_bytes(row["ich_image"]["bytes"])
            out.write(json.dumps({**row, "ich_image": image}, ensure_ascii=False) + "\n")
    return folder


def write_clips(folder: Path, clips: int) -> Path:
    """GIMMICK vvqa: a .jsonl naming `clips` distinct 10 s 480x272 textured clips (~1.1 MB each, as a
    release's 10 s cuts), so 500 clips are ~550 MB of media: more than one shard."""
    from arab_mm_tasks.testing.synthetic import write_clip

    videos = folder / "clips"
    videos.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(clips):
        clip = videos / f"{i}.mp4"
        if not clip.exists():
            write_clip(clip, seconds=10, fps=10, size=(480, 272), gop=10 + i % 7)
        lines.append(
            json.dumps(
                {
                    "question": f"What event is shown in video {i}?",
                    "answer": f"Event {i}",
                    "question_id": i,
                    "video_fn": f"/home/gimmick/clips/{i}.mp4",
                    "video_center_frame_sim": 0.9,
                    "countries": ["Morocco"],
                    "regions": ["Arab States"],
                }
            )
        )
    (folder / "vvqa.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def write_text(folder: Path, rows: int) -> Path:
    """ArabCulture in the Hub layout: the bundled sample's records repeated with distinct sample_ids."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from arab_mm_tasks.data import SAMPLE_PATH

    sample = [json.loads(line) for line in SAMPLE_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_country: dict[str, list[dict[str, Any]]] = {}
    for record in sample:
        by_country.setdefault(record["country"], []).append(record)
    countries = sorted(by_country)
    for k, country in enumerate(countries):
        n = rows // len(countries) + (k < rows % len(countries))
        records = []
        for i in range(n):
            record = dict(by_country[country][i % len(by_country[country])])
            topic = record["sample_id"].partition("|")[2].strip()
            record["sample_id"] = f"{i + 1} | {topic}" if topic else str(i + 1)
            records.append(record)
        (folder / country).mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(records), folder / country / "test-00000-of-00001.parquet")
    return folder


def write_arb(path: Path, rows: int) -> Path:
    """ARB's HF release as one parquet file (the card's columns), written 100 rows at a time."""
    import csv

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    sys.path.insert(0, str(ROOT / "tests"))
    from shared_files import shared  # the copy of the authors' CSV the tests read

    sample = shared("real/arb/gpt-4.1-final-responses.stratified_sample.csv")
    with sample.open(encoding="utf-8", newline="") as stream:
        released = [row for row in csv.DictReader(stream) if row["category "].strip()]  # the Hub's are all set
    rng = np.random.default_rng(rows)
    # ARB's images are large (657 MB over 1,355 rows, ~480 KB each): 150-220 KB here, from a pool of 32
    # (a 20k-row source stays ~4 GB), so that what a build holds per open domain config shows.
    pool = [_noise_jpeg(rng, (360, 420)) for _ in range(32)]
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    names = ("question", "answer", "choices", "steps", "domain", "Curriculum")
    schema = pa.schema([("image", image), *((name, pa.string()) for name in names)])
    tmp = path.with_suffix(".tmp")
    with pq.ParquetWriter(tmp, schema) as writer:
        for start in range(0, rows, 100):
            ids = range(start, min(rows, start + 100))
            picked = [released[i % len(released)] for i in ids]
            columns = {
                "image": [{"bytes": pool[(i * 7) % len(pool)], "path": f"arb_{i}.jpg"} for i in ids],
                "question": [f"{row['question']} ({i})" for i, row in zip(ids, picked, strict=True)],
                **{name: [row[name] for row in picked] for name in ("answer", "choices", "steps")},
                "domain": [row["category "] for row in picked],
                "Curriculum": [None for _ in ids],
            }
            writer.write_table(pa.table(columns, schema=schema))
    tmp.rename(path)
    return path


def source_for(kind: str, size: int, work: Path, row_group: int) -> Path:
    path = work / f"{kind}-{size}" if kind != "clips" else work / f"clips10s-{size}"
    if kind == "arb":
        file = work / f"arb-{size}.parquet"
        return file if file.exists() else write_arb(file, size)
    if kind.startswith("images"):
        file = work / f"images-{size}-rg{row_group}.parquet"
        if not file.exists():
            write_images(file, size, row_group)
        if kind == "images":
            return file
        path = work / f"{kind}-{size}-rg{row_group}"
        if not (path / ".done").exists():
            shutil.rmtree(path, ignore_errors=True)
            (write_saved if kind == "images-saved" else write_jsonl)(path, file)
            (path / ".done").touch()
        return path / "sivqa.jsonl" if kind == "images-jsonl" else path
    if not (path / ".done").exists():
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        (write_clips if kind == "clips" else write_text)(path, size)
        (path / ".done").touch()
    return path


# ---------------------------------------------------------------------------- one build, in a child


def peak_rss_mb() -> float:
    """This process's peak RSS. VmHWM, not ``ru_maxrss``: Linux carries ``ru_maxrss`` over a fork and an
    exec, so a child of a parent that was bigger (this script, after writing the sources) reports the parent's."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"^VmHWM:\s+(\d+) kB", status, re.M).group(1)) / 1024  # type: ignore[union-attr]


def child(kind: str, source: str, out: str) -> dict[str, Any]:
    """Build `source` into `out` as ``arab-mm-tasks build`` does; peak RSS and timings of this process."""
    import pyarrow as pa

    from arab_mm_tasks.cli import _build_parser
    from arab_mm_tasks.core.registry import get_benchmark

    name, options = {
        "images": ("gimmick", ["--sivqa", source]),
        "images-saved": ("gimmick", ["--sivqa", source]),
        "images-jsonl": ("gimmick", ["--sivqa", source]),
        "clips": ("gimmick", ["--vvqa", f"{source}/vvqa.jsonl", "--videos-dir", f"{source}/clips"]),
        "text": ("arabculture", ["--source", source]),
        "arb": ("arb", ["--hub", source]),
    }[kind]
    benchmark = get_benchmark(name)
    args = _build_parser(benchmark).parse_args([*options, "--out", out])
    start = time.perf_counter()
    report = benchmark.builder_module().build_from_args(args)
    return {
        "peak_rss_mb": peak_rss_mb(),
        "seconds": time.perf_counter() - start,
        "rows": report.rows_written,
        "arrow_mb_at_end": pa.total_allocated_bytes() / 2**20,
        "shards": sum(1 for _ in Path(out).rglob("*.parquet")),
    }


def run(kind: str, source: Path, code: Path, work: Path) -> dict[str, Any]:
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", kind, str(source), str(out)],
        capture_output=True, text=True, env=env, cwd=code,
    )  # fmt: skip
    shutil.rmtree(out, ignore_errors=True)
    if done.returncode:
        raise SystemExit(f"{kind} build of {source} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, nargs="*", default=[1000, 5000, 20000], help="civqa rows")
    parser.add_argument("--clips", type=int, nargs="*", default=[20, 100, 500], help="cvvqa clips")
    parser.add_argument(
        "--forms",
        nargs="*",
        default=["parquet"],
        choices=["parquet", "saved", "jsonl"],
        help="forms of the image source: parquet, save_to_disk folder, .jsonl naming image files",
    )
    parser.add_argument("--text", type=int, nargs="*", default=[1000, 5000, 20000], help="ArabCulture rows")
    parser.add_argument("--arb", type=int, nargs="*", default=[1000, 5000, 20000], help="ARB rows (HF release form)")
    parser.add_argument("--row-group", type=int, default=100, help="rows per row group of the image source")
    parser.add_argument("--baseline", type=Path, help="another checkout to run the same builds on (before)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/builder_memory"), help="sources are cached here")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    sys.path.insert(0, str(ROOT))  # the sources are written with this checkout's helpers
    args.work.mkdir(parents=True, exist_ok=True)
    codes = {"now": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    print(
        f"peak RSS of `arab-mm-tasks build`, one process per build; image source row groups of {args.row_group} "
        f"rows; load {os.getloadavg()[0]:.2f} at start"
    )
    print("| build | code | rows | peak RSS MB | s | Arrow MB at end | shards |")
    print("|---|---|---|---|---|---|---|")
    image_kinds = [{"parquet": "images", "saved": "images-saved", "jsonl": "images-jsonl"}[f] for f in args.forms]
    runs = [*((kind, args.images) for kind in image_kinds), ("clips", args.clips), ("text", args.text)]
    runs.append(("arb", args.arb))
    for kind, sizes in runs:
        peaks: dict[str, list[float]] = {code_name: [] for code_name in codes}
        for size in sizes:  # both codes side by side at each size, so a change of load falls on both
            source = source_for(kind, size, args.work, args.row_group)
            for code_name, code in codes.items():
                result = run(kind, source, code, args.work)
                peaks[code_name].append(result["peak_rss_mb"])
                print(
                    f"| {kind} | {code_name} | {result['rows']} | {result['peak_rss_mb']:.0f} | "
                    f"{result['seconds']:.1f} | {result['arrow_mb_at_end']:.1f} | {result['shards']} |",
                    flush=True,
                )
        for code_name, got in peaks.items():
            if len(got) > 1:
                print(f"| {kind} | {code_name} | ratio {sizes[-1]}/{sizes[0]} | {got[-1] / got[0]:.2f}x | | | |")
    print(f"load {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
