"""Several `arab-mm-tasks judge` processes on one cache pay for each request once (issue 20, item 6).

This is a data-parallel run's shape (several ranks, one cache) and a re-run started next to a
running one: every process judges the same samples, and the server, which counts requests per
body, must see each request exactly once. Each process claims a request in the cache before
asking (`JudgeCache.claim`) and waits for the judgement of a request another process holds.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time

import pytest
from judge_fixtures import cli_faults, statuses, write_samples

from metric_plugins.judge import JudgeCache
from metric_plugins.judge.loopback import LoopbackServer

PROCESSES, ITEMS = 6, 1000


@pytest.mark.slow
def test_six_cli_processes_on_one_cache_pay_for_each_item_exactly_once(tmp_path):
    samples = write_samples(tmp_path, [f"answer {i}" for i in range(ITEMS)])
    cache = tmp_path / "judge.sqlite"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with LoopbackServer(latency=0.02) as server:
        judge = f"model=judge,base_url={server.url},concurrency=16,cache_path={cache}"
        procs = [
            subprocess.Popen(
                [cli_faults().command(), "judge", str(samples), "--judge", judge, "--out", str(tmp_path / f"out{n}")],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(PROCESSES)
        ]
        outputs = [proc.communicate(timeout=600) for proc in procs]
        time.sleep(0.2)  # requests already on the wire reach the server's counts
        counts = dict(server.counts)
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err[-3000:]
    assert len(counts) == ITEMS and set(counts.values()) == {1}, sorted(counts.values())[-5:]
    reports = [json.loads((tmp_path / f"out{n}" / "results_judged.json").read_text()) for n in range(PROCESSES)]
    assert sum(r["summary"]["calls"] for r in reports) == ITEMS
    for n, report in enumerate(reports):  # every process has every judgement: its own calls or the others'
        assert report["summary"]["calls"] + report["summary"]["cache_hits"] == ITEMS
        assert statuses(tmp_path / f"out{n}" / samples.name) == ["valid"] * ITEMS
    with sqlite3.connect(cache) as db:  # every judgement stored, and no lease outlives its run
        assert db.execute("SELECT COUNT(*) FROM judgements").fetchone() == (ITEMS,)
        assert db.execute("SELECT COUNT(*) FROM leases").fetchone() == (0,)


def test_a_lease_of_a_killed_process_is_void_at_once_and_a_live_one_is_respected(tmp_path):
    cache_file = tmp_path / "judge.sqlite"
    mine, other = JudgeCache(cache_file), JudgeCache(cache_file)
    assert mine.claim("k", 60) and not other.claim("k", 60) and other.held_elsewhere(["k"]) == {"k"}
    mine.release("k")
    assert other.claim("k", 60) and not mine.claim("k", 60)
    dead = subprocess.Popen(["true"])
    dead.wait()
    host, _, _ = other.owner.split(":")
    with mine._lock:  # a lease row as a process that has since died left it
        mine._db.execute("UPDATE leases SET owner = ? WHERE key = 'k'", (f"{host}:{dead.pid}:abc",))
    assert mine.held_elsewhere(["k"]) == set() and mine.claim("k", 60)
    assert not other.claim("k", 60)
    with mine._lock:  # an expired lease of a live process on another host
        mine._db.execute("UPDATE leases SET owner = 'elsewhere:1:abc', expires = 0 WHERE key = 'k'")
    assert other.claim("k", 60)
