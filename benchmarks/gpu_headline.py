"""The headline suite on a GPU with a small real VLM, through lm-eval's ``vllm-vlm`` and ``hf-multimodal``.

Per (backend, headline entry) it records: items/s of the model (documents over the seconds spent in the
model's ``generate_until`` and ``loglikelihood``, so model loading is not counted; the entry runs with
``--predict_only``), the child's wall time, peak GPU memory (``torch.cuda.max_memory_allocated`` in the
process that ran the model; vLLM's engine is kept in that process with ``VLLM_ENABLE_V1_MULTIPROCESSING=0``,
and vLLM reserves ``gpu_memory_utilization`` of the card whatever it uses, so its number is what the engine
allocated, reserve included), peak RSS of that process, and the judge's time: the saved samples judged
afterwards with ``arab-mm-tasks judge`` (only with ``--judge``; the judge's own cache path is given there, and
a re-run of this script with the same cache measures cache hits, so give a fresh ``cache_path`` to time real
judging).

It runs only where a CUDA GPU is visible; anywhere else it prints one line and exits 1, writing nothing.
ArabCulture's headline tasks are log-likelihood ones over text only, which both backends score with the
VLM's language model (lm-eval sends text-only requests down its text path). ``vllm-vlm`` is skipped (and
said so) when vLLM is not importable; a child that fails is a row with its error line, never a number.

    python benchmarks/gpu_headline.py --model Qwen/Qwen2.5-VL-3B-Instruct --limit 100 \\
        --dataset-path gimmick=/data/gimmick --dataset-path pearl=/data/pearl --dataset-path jeem=/data/jeem \\
        --dataset-path arb=/data/arb --judge "model=Qwen/Qwen2.5-VL-7B-Instruct,base_url=http://127.0.0.1:8001/v1" \\
        --out gpu_headline.json

The JSON (``--out``) holds the machine (GPU name, driver-visible memory), the settings, and one row per
(backend, entry); the table it prints is what docs/benchmarks.md's section shows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("vllm-vlm", "hf-multimodal")
NO_GPU = (
    "gpu_headline: no CUDA GPU is visible to torch (torch.cuda.is_available() is False); "
    "nothing measured, nothing written"
)

# Runs lm-eval's command line in this child and, at its exit, records what only this process can see: the
# time spent inside the model's generate_until and loglikelihood (items/s without model loading), peak GPU
# memory and RSS.
CHILD = """\
import atexit, importlib, json, resource, runpy, sys, time
import torch
spent = [0.0]
def timed(cls, method):
    original = getattr(cls, method)
    def run(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - start
    setattr(cls, method, run)
for module, name in (("lm_eval.models.hf_vlms", "HFMultimodalLM"), ("lm_eval.models.vllm_vlms", "VLLM_VLM")):
    try:
        cls = getattr(importlib.import_module(module), name)
        timed(cls, "generate_until")
        timed(cls, "loglikelihood")  # ArabCulture's (the VLM's text path)
    except ImportError:
        pass
stats = sys.argv[1]
def record():
    with open(stats, "w") as handle:
        json.dump({"model_seconds": spent[0],
                   "gpu_peak_bytes": torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None,
                   "rss_peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}, handle)
atexit.register(record)
sys.argv = ["lm_eval", *sys.argv[2:]]
runpy.run_module("lm_eval", run_name="__main__", alter_sys=True)
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="Qwen/Qwen2.5-VL-3B-Instruct", help="a VLM both backends load")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--limit", type=int, default=100, help="documents per task (lm-eval --limit)")
    parser.add_argument("--dataset-path", action="append", default=[], metavar="BENCHMARK=DIR")
    parser.add_argument("--judge", help="judge settings (docs/judge.md); without it no judge time is measured")
    parser.add_argument("--model-args", default="", help="extra model arguments for both backends")
    # lm-eval's hf-multimodal refuses --batch_size auto; vllm-vlm batches by itself ("auto")
    parser.add_argument("--apply-chat-template", action=argparse.BooleanOptionalAction, default=True,
                        help="lm-eval --apply_chat_template (instruction-tuned VLMs need it)")  # fmt: skip
    parser.add_argument("--gen-kwargs", help="lm-eval --gen_kwargs overrides (default: each task's, the papers')")
    parser.add_argument("--hf-batch-size", type=int, default=8, help="hf-multimodal's --batch_size")
    parser.add_argument("--out", type=Path, default=Path("gpu_headline.json"))
    return parser.parse_args(argv)


def gpu() -> dict[str, Any] | None:
    """The visible GPU, or None where there is none (the script then measures nothing)."""
    import torch

    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(0)
    return {"name": props.name, "memory_bytes": props.total_memory, "count": torch.cuda.device_count()}


def vllm_importable() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


def headline_entries() -> list[Any]:
    from arab_mm_tasks.cli.evaluate import suite_entries

    return suite_entries("headline", None)


def metadata(dataset_paths: list[str]) -> str:
    """lm-eval --metadata for the local datasets (``<benchmark>_path``), as `arab-mm-tasks evaluate` passes them."""
    paths = dict(item.split("=", 1) for item in dataset_paths)
    return json.dumps({f"{name}_path": path for name, path in paths.items()})


def model_args(model: str, extra: str) -> str:
    # max_images: Pearl-X items hold up to 6 images (both backends default to 1 image a prompt)
    return f"pretrained={model},max_images=8" + (f",{extra}" if extra else "")


def judged(entry: Any) -> bool:
    """Whether a metric of the entry's tasks is scored by the judge."""
    from arab_mm_tasks.core.registry import all_specs

    return any(metric.judge_prompt for task in entry.tasks for metric in all_specs()[task].generative_metrics)


def items_in(run: Path) -> int:
    """Documents the run evaluated: the lines of its samples files."""
    return sum(len(path.read_text(encoding="utf-8").splitlines()) for path in run.rglob("samples_*.jsonl"))


def run_entry(backend: str, entry: Any, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One entry on one backend: generation timed in a child process, then (with --judge) judged afterwards."""
    out, stats = work / backend / entry.name, work / f"{backend}-{entry.name}.json"
    command = [sys.executable, "-c", CHILD, str(stats), "--model", backend,
               "--model_args", model_args(args.model, args.model_args), "--tasks", entry.name,
               "--metadata", metadata(args.dataset_path), "--limit", str(args.limit),
               "--batch_size", "auto" if backend == "vllm-vlm" else str(args.hf_batch_size),
               "--predict_only", "--log_samples", "--output_path", str(out)]  # fmt: skip
    command += ["--apply_chat_template"] if args.apply_chat_template else []
    command += ["--gen_kwargs", args.gen_kwargs] if args.gen_kwargs else []
    env = {**os.environ, "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}  # vLLM's engine in the measured process
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    row: dict[str, Any] = {"backend": backend, "entry": entry.name, "benchmark": entry.benchmark}
    if proc.returncode != 0:
        return {**row, "status": f"failed (exit {proc.returncode}): {last_error(proc.stderr or proc.stdout)}"}
    measured = json.loads(stats.read_text())
    items = items_in(out)
    generating, peak = measured["model_seconds"], measured["gpu_peak_bytes"]
    row.update(status="ran", items=items, wall_seconds=round(seconds, 2), model_seconds=round(generating, 2),
               items_per_s=round(items / generating, 3) if generating else None,
               gpu_peak_gib=None if peak is None else round(peak / 2**30, 3),
               rss_peak_gib=round(measured["rss_peak_kib"] / 2**20, 3))  # fmt: skip
    row["judge_seconds"] = None
    if args.judge and judged(entry):
        row["judge_seconds"], status = judge(out, args, work / "judged" / backend / entry.name)
        if status:
            row["status"] = status
    return row


def judge(run: Path, args: argparse.Namespace, out: Path) -> tuple[float | None, str | None]:
    """Seconds `arab-mm-tasks judge` takes over the run's saved samples, or None and why it failed."""
    script = Path(sys.executable).parent / "arab-mm-tasks"  # the console script of this environment
    command = [str(script), "judge", str(run), "--judge", args.judge, "--out", str(out)]
    for item in args.dataset_path:
        command += ["--dataset-path", item]
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        return None, f"ran; judging failed (exit {proc.returncode}): {last_error(proc.stderr or proc.stdout)}"
    return round(seconds, 2), None


def last_error(output: str) -> str:
    """The line that says why a child failed: its last line naming an error (progress bars come after it)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line or "error:" in line]
    return (errors or lines or ["(no output)"])[-1]


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| backend | entry | items | items/s | peak GPU GiB | peak RSS GiB | judge s | status |",
             "|---|---|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    for r in rows:
        keys = ("items", "items_per_s", "gpu_peak_gib", "rss_peak_gib", "judge_seconds")
        cells = [r["backend"], r["entry"], *("" if r.get(key) is None else r[key] for key in keys), r["status"]]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    machine = gpu()
    if machine is None:
        print(NO_GPU, file=sys.stderr)
        return 1
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="gpu_headline-") as tmp:
        for backend in args.backends:
            for entry in headline_entries():
                row = {"backend": backend, "entry": entry.name, "benchmark": entry.benchmark}
                if backend == "vllm-vlm" and not vllm_importable():
                    rows.append({**row, "status": "not run: vllm is not importable here"})
                else:
                    rows.append(run_entry(backend, entry, args, Path(tmp)))
                print(table(rows[-1:]).splitlines()[-1], flush=True)
    report = {"gpu": machine, "model": args.model, "limit": args.limit, "judge": bool(args.judge), "rows": rows}
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
