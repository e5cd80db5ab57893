"""Throughput against a served model: lm-eval's `local-chat-completions` at concurrency 1 vs 16, 100 ms latency.

A served VLM (vLLM, SGLang, TGI) answers many requests at once; the evaluating process only waits on the
network, so N requests at latency L with C in flight should take about N x L / C. This starts the loopback model
server (`arab_mm_tasks.testing.model_server`) in its own process with a fixed latency and sends N GIMMICK-shaped
image requests (a few 1 fps frames each, as base64 PNG `image_url` parts, through our lm-eval wrapper) through
lm-eval's own API model (`LocalChatCompletion.generate_until`, its `num_concurrent` and retries) at each
concurrency. Rounds are interleaved (1, 16, 1, 16, ...) so a change in the machine's load hits both alike; each
row carries the 1-minute load average before and after.

    python benchmarks/served_model.py                     # 64 requests, 100 ms, concurrency 1 and 16, 3 rounds
    python benchmarks/served_model.py --items 128 --concurrency 1 32 --rounds 5

Prints a table and one JSON line: per concurrency the median wall time, items/s, and measured / ideal; the
headline figure is the throughput ratio (items/s at the highest concurrency / at 1).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import arab_mm_tasks


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    """The model server as a separate process, so its threads do not compete with the client's for the GIL."""
    repo = str(Path(arab_mm_tasks.__file__).resolve().parents[1])
    process = subprocess.Popen(
        [sys.executable, "-m", "arab_mm_tasks.testing.model_server", "--port", "0", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=repo,
    )
    url = process.stdout.readline().strip() if process.stdout else ""
    if not url.startswith("http"):
        process.kill()
        raise RuntimeError(f"model server did not start (printed {url!r})")
    return process, url


def requests_for(items: int, frames: int) -> list[Any]:
    """`items` lm-eval image requests, each a chat turn with `frames` small frames and a question."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr
    from PIL import Image

    made = []
    for i in range(items):
        images = [Image.new("RGB", (64, 48), ((i * 7 + f) % 256, f * 40 % 256, i % 256)) for f in range(frames)]
        query = "<image>\n" * frames + f"What event is shown in video {i}?\n\nAnswer with a single word or phrase."
        chat = JsonChatStr(json.dumps([{"role": "user", "content": query}]))
        arguments = (chat, {"until": [], "max_gen_toks": 512}, {"visual": images})
        made.append(Instance("generate_until", {}, arguments, i, ("served_model_bench", i, 1)))
    return made


def run_once(url: str, concurrency: int, requests: list[Any]) -> float:
    from lm_eval.models.openai_completions import LocalChatCompletion

    model = LocalChatCompletion(base_url=f"{url}/chat/completions", model="bench", num_concurrent=concurrency)
    started = time.perf_counter()
    answers = model.generate_until(requests, disable_tqdm=True)
    elapsed = time.perf_counter() - started
    if len(answers) != len(requests) or not all(isinstance(a, str) and a for a in answers):
        raise RuntimeError(f"concurrency {concurrency}: {len(answers)} answers for {len(requests)} requests")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=64)
    parser.add_argument("--frames", type=int, default=4, help="frames per request")
    parser.add_argument("--latency", type=float, default=0.1, help="server latency per request, seconds")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import logging

    from arab_mm_tasks.harness.lm_eval_multimodal import patch_loaded_multimodal_models

    logging.getLogger("lm_eval").setLevel(logging.WARNING)
    patch_loaded_multimodal_models()  # as when our tasks load: every frame goes, in order
    requests = requests_for(args.items, args.frames)
    process, url = start_server(args.latency)
    times: dict[int, list[float]] = {c: [] for c in args.concurrency}
    loads: dict[int, list[tuple[float, float]]] = {c: [] for c in args.concurrency}
    try:
        run_once(url, max(args.concurrency), requests[:4])  # warm-up: imports, first connections
        for _ in range(args.rounds):
            for concurrency in args.concurrency:
                before = os.getloadavg()[0]
                times[concurrency].append(run_once(url, concurrency, requests))
                loads[concurrency].append((round(before, 2), round(os.getloadavg()[0], 2)))
    finally:
        process.kill()
        process.wait()

    rows = {}
    print(f"{args.items} requests x {args.frames} frames, latency {args.latency * 1000:.0f} ms, {args.rounds} rounds")
    print(f"{'concurrency':>11} {'median s':>9} {'items/s':>8} {'ideal s':>8} {'measured/ideal':>15}  load")
    for concurrency in args.concurrency:
        median = statistics.median(times[concurrency])
        ideal = args.items * args.latency / concurrency
        rows[concurrency] = {
            "seconds": [round(t, 3) for t in times[concurrency]],
            "median_seconds": round(median, 3),
            "items_per_second": round(args.items / median, 2),
            "measured_over_ideal": round(median / ideal, 2),
            "load": loads[concurrency],
        }
        print(
            f"{concurrency:>11} {median:>9.2f} {args.items / median:>8.1f} {ideal:>8.2f} {median / ideal:>15.2f}  "
            f"{loads[concurrency]}"
        )
    low, high = min(args.concurrency), max(args.concurrency)
    ratio = rows[high]["items_per_second"] / rows[low]["items_per_second"]
    print(f"throughput ratio, concurrency {high} / {low}: {ratio:.1f} (ideal {high / low:.0f})")
    print(json.dumps({"items": args.items, "frames": args.frames, "latency": args.latency, "rows": rows,
                      "ratio": round(ratio, 2), "cpus": os.cpu_count()}))  # fmt: skip


if __name__ == "__main__":
    main()
