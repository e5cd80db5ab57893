"""Judge throughput against a slow endpoint: concurrency 1 vs 32, then a re-run from the cache.

A judge waits on the network, so N requests at latency L with C in flight should take about
N x L / C. This runs the loopback OpenAI-compatible server (`metric_plugins.judge.loopback`)
in its own process with a fixed latency, judges N GIMMICK CKQA items through the real
openai client and the real SQLite cache at each concurrency, and compares the measured wall
time with that ideal. The re-run judges the same items again from the cache and must send
no request at all (the server's own request count is the witness).

Getting the backend ready (importing openai, building its client: seconds on a loaded machine)
is timed on its own row, before the timed runs, as `Judge.score_all` reports it apart
(`setup_seconds`). Every row carries the machine's 1-minute load average (`os.getloadavg()`)
before and after it: on a shared machine the ratio moves with the load, so a figure without
its load says little.

    python benchmarks/judge_throughput.py                    # 1000 items, 100 ms, concurrency 1 and 32
    python benchmarks/judge_throughput.py --items 200 --concurrency 8 64

Prints a table and one JSON line. Target: measured / ideal <= 1.3 at every concurrency; re-run calls = 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import metric_plugins


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    """The loopback server as a separate process (its CPU time does not compete with the judge's threads)."""
    repo = str(Path(metric_plugins.__file__).resolve().parents[1])
    process = subprocess.Popen(
        [sys.executable, "-m", "metric_plugins.judge.loopback", "--port", "0", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=repo,
    )
    url = process.stdout.readline().strip()
    if not url.startswith("http"):
        process.kill()
        raise RuntimeError(f"loopback server did not start (printed {url!r})")
    return process, url


def server_total(url: str) -> int:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats") as response:
        return json.load(response)["total"]


def load() -> float:
    """The 1-minute load average: runnable processes competing for this machine's cores."""
    return round(os.getloadavg()[0], 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.1, help="server seconds per request")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 32])
    args = parser.parse_args()

    from metric_plugins.judge import GIMMICK_CKQA, Judge, JudgeCache, OpenAIChatBackend, Sampling, ckqa_item

    items = [
        ckqa_item("ckqa_n", title=f"Cultural event {i}", description="", answer=f"Answer {i}", item_id=str(i))
        for i in range(args.items)
    ]
    process, url = start_server(args.latency)
    rows = []
    try:
        backend = OpenAIChatBackend("loopback", base_url=url, api_key_env="LOOPBACK_KEY", timeout=30)
        before_load, start = load(), time.perf_counter()
        backend.prepare()  # imports openai and builds the client: reported, not part of any timed run
        rows.append({"run": "setup (import openai)", "calls": 0, "ideal_s": 0.0,
                     "measured_s": round(time.perf_counter() - start, 3), "ratio": None,
                     "load": [before_load, load()]})  # fmt: skip
        warm_up = GIMMICK_CKQA.render(ckqa_item("ckqa_n", title="warm-up", description="", answer="warm-up"))
        backend.complete(warm_up, Sampling())  # opens a connection outside the timings
        with tempfile.TemporaryDirectory() as tmp:
            for concurrency in args.concurrency:
                cache = JudgeCache(Path(tmp) / f"judge-c{concurrency}.sqlite")
                judge = Judge(backend, GIMMICK_CKQA, cache=cache, concurrency=concurrency, progress=False)
                before, before_load = server_total(url), load()
                start = time.perf_counter()
                run = judge.score_all(items)
                measured = time.perf_counter() - start
                assert run.summary.calls == args.items == server_total(url) - before, run.summary
                assert run.summary.invalid == run.summary.failed == 0, run.summary
                ideal = args.items * args.latency / concurrency
                rows.append({"run": f"concurrency {concurrency}", "calls": run.summary.calls,
                             "ideal_s": round(ideal, 2), "measured_s": round(measured, 2),
                             "ratio": round(measured / ideal, 3), "load": [before_load, load()]})  # fmt: skip
            before, before_load = server_total(url), load()
            start = time.perf_counter()
            rerun = judge.score_all(items)
            measured = time.perf_counter() - start
            server_calls = server_total(url) - before
            assert rerun.summary.calls == 0 and server_calls == 0, (rerun.summary, server_calls)
            assert rerun.summary.cache_hits == args.items
            rows.append({"run": "re-run from cache", "calls": server_calls, "ideal_s": 0.0,
                         "measured_s": round(measured, 3), "ratio": None, "load": [before_load, load()]})  # fmt: skip
    finally:
        process.kill()
        process.wait()

    print(f"{args.items} judgements, server latency {args.latency * 1000:.0f} ms, {os.cpu_count()} CPUs")
    print(f"{'run':<22} {'calls':>6} {'ideal s':>8} {'measured s':>11} {'ratio':>6}  load before/after")
    for row in rows:
        ratio = f"{row['ratio']:.3f}" if row["ratio"] is not None else "-"
        loads = "/".join(f"{x:.2f}" for x in row["load"])
        print(f"{row['run']:<22} {row['calls']:>6} {row['ideal_s']:>8} {row['measured_s']:>11} {ratio:>6}  {loads}")
    print(json.dumps({"items": args.items, "latency_s": args.latency, "cpus": os.cpu_count(), "runs": rows}))


if __name__ == "__main__":
    main()
