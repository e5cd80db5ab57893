"""`arab-mm-tasks judge` on N saved GIMMICK CKQA samples against an endpoint that misbehaves on 20% of them.

Writes an lm-eval ``--predict_only`` samples file of N `gimmick_ckqa_n` samples; every fifth
answer carries a loopback fault marker (`metric_plugins.judge.loopback`), cycling through
transient faults that clear after one or two requests (500, 429, a truncated body, a body
that is not JSON, each malformed-200 shape, and the byte-level faults: JSON nested 100,000
deep, an SSE stream, a gzip header on a plain body, a redirect loop, an HTML page, 10**20
tokens, a body trickled at 1 byte/s, a server that never answers) and lasting
ones: a malformed 200 on every request (the sample fails), an unparsable reply or a 5 MB one
(invalid), and odd replies that are valid (content parts, null text parts, float token counts,
a lone surrogate, NUL characters, UTF-16). The
base URL carries a user:token and a ``?key=`` query, which must reach the server and nothing else.
Then it runs the installed command against the loopback server and checks what it reports:
the summary line, the failed and invalid counts, exit code 1 (some samples failed), samples
named by task and doc id, and the token nowhere in the output, the files or the cache.

    python benchmarks/judge_cli_faults.py --items 1000      # prints one JSON line with the figures
    python benchmarks/judge_cli_faults.py --items 1000 --clean --latency 0.1   # the CLI's throughput, no faults

With ``--clean`` no sample is faulty and the command must exit 0; the figures then compare the
judging time the command reports (its summary, without setup) with N x latency / concurrency.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from arab_mm_tasks.gimmick.vocabulary import REGION_CODES
from metric_plugins.judge.loopback import LoopbackServer

TASK = "gimmick_ckqa_n"
TOKEN = "tok-SECRET-4242"
# faults that clear: the sample ends valid after retries
TRANSIENT = ["500:1", "429:1", "truncated:1", "badjson:1", "message_null:1", "choice_empty:1", "choice_null:1",
             "choices_string:1", "usage_string:1", "content_int:1", "content_dicts:2"]  # fmt: skip
LASTING = {"content_int": "failed", "choice_null": "failed", "unparsable": "invalid", "content_parts": "valid"}
# the shapes of issue 20, after the first ones (so a sample's fault stays what it was): byte-level faults that
# clear, and lasting shapes whose outcome is fixed (odd replies that are valid, a 5 MB one that is not)
TRANSIENT_RAW = ["deep_json:1", "sse:1", "gzip_header:1", "redirect_loop:1", "html200:1", "usage_huge:1",
                 "trickle:1", "silent:1"]  # fmt: skip
LASTING_NEW = {"deep_json": "failed", "usage_huge": "failed", "surrogate": "valid", "nul": "valid",
               "usage_float": "valid", "parts_null_text": "valid", "utf16": "valid",
               "huge_body": "invalid"}  # fmt: skip
LASTING.update(LASTING_NEW)
KINDS = TRANSIENT + list(LASTING)[:4] + TRANSIENT_RAW + list(LASTING_NEW)


def fault_of(index: int, every: int = 5) -> str | None:
    """The fault marker of sample `index`: every `every`-th sample (default 20%; 0: none), cycling through `KINDS`."""
    return KINDS[(index // every) % len(KINDS)] if every and index % every == 0 else None


def expected(items: int, every: int = 5) -> dict[str, int]:
    """How many samples must end failed and invalid."""
    outcomes = [LASTING.get(fault_of(i, every) or "", "valid") for i in range(items)]
    return {"failed": outcomes.count("failed"), "invalid": outcomes.count("invalid")}


def write_samples(folder: Path, items: int, every: int = 5) -> Path:
    """An lm-eval --predict_only samples file: documents, targets and generations, no scores."""
    lines = []
    for i in range(items):
        fault = fault_of(i, every)
        marker = f" [[fault={fault}]][[retry_after=0]]" if fault else ""
        doc = {"id": f"cef-{i}", "title": f"Event {i}", "region_codes": [REGION_CODES[i % len(REGION_CODES)]]}
        record = {"doc_id": i, "doc": doc, "target": doc["title"], "filtered_resps": [f"answer {i}{marker}"]}
        lines.append(json.dumps(record))
    path = folder / f"samples_{TASK}_2026-11-23T10-00-00.000000.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def command() -> str:
    """The installed console script (next to this interpreter in a venv)."""
    script = Path(sys.executable).parent / "arab-mm-tasks"
    return str(script) if script.exists() else shutil.which("arab-mm-tasks") or "arab-mm-tasks"


def run(
    items: int, folder: Path, *, every: int = 5, latency: float = 0.0, concurrency: int = 32, timeout: float = 600
) -> dict[str, Any]:
    """Judge `items` samples (every `every`-th faulty) with the CLI; what it printed, wrote and returned,
    and what the server saw."""
    samples = write_samples(folder, items, every)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the installed package, as a user runs it
    with LoopbackServer(hang_seconds=30.0, trickle_seconds=1.0, latency=latency) as server:
        host = server.url.removeprefix("http://")
        judge = (f"model=judge,base_url=http://judge-user:{TOKEN}@{host}?key={TOKEN},concurrency={concurrency},"
                 f"max_retries=2,timeout=5,cache_path={folder / 'judge.sqlite'}")  # fmt: skip
        start = time.perf_counter()
        proc = subprocess.run(
            [command(), "judge", str(samples), "--judge", judge, "--out", str(folder / "judged")],
            env=env, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        wall = time.perf_counter() - start
        requests = list(server.requests)
    summary = re.search(r"^judge: (.*)$", proc.stdout, re.MULTILINE)
    written = [p for p in folder.rglob("*") if p.is_file()]
    return {
        "items": items,
        "returncode": proc.returncode,
        "wall_s": round(wall, 2),
        "summary": summary[1] if summary else None,
        "report": json.loads((folder / "judged" / "results_judged.json").read_text()) if proc.returncode < 2 else None,
        "expected": expected(items, every),
        "server_requests": len(requests),
        "token_sent": all(TOKEN in r.path and "Authorization" in r.headers for r in requests),
        "token_leaked": [str(p) for p in written if TOKEN.encode() in p.read_bytes()]
        + [name for name in ("stdout", "stderr") if TOKEN in getattr(proc, name)],
        "stdout": proc.stdout,
        "stderr": proc.stderr,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.0, help="server seconds per request")
    parser.add_argument("--clean", action="store_true", help="no faults: measure the command's throughput")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        load = os.getloadavg()
        every = 0 if args.clean else 5
        result = run(args.items, Path(tmp), every=every, latency=args.latency, concurrency=args.concurrency)
    summary = result["report"]["summary"] if result["report"] else {}
    if args.clean and summary:
        ideal = summary["calls"] * args.latency / args.concurrency
        result["judging_s"], result["setup_s"] = round(summary["wall_seconds"], 2), round(summary["setup_seconds"], 2)
        result["ideal_s"] = round(ideal, 2)
        result["ratio"] = round(summary["wall_seconds"] / ideal, 3) if ideal else None
    ok = (
        result["returncode"] == (0 if args.clean else 1)
        and summary.get("failed") == result["expected"]["failed"]
        and summary.get("invalid") == result["expected"]["invalid"]
        and result["token_sent"]
        and not result["token_leaked"]
    )
    print(result["stderr"][-3000:] if not ok else "", end="")
    figures = {k: v for k, v in result.items() if k not in ("stdout", "stderr", "report")}
    print(json.dumps({**figures, "load_before": [round(x, 2) for x in load],
                      "load_after": [round(x, 2) for x in os.getloadavg()], "ok": ok}))  # fmt: skip
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
