"""Helpers shared by the tests that run `arab-mm-tasks judge` on saved samples (tests/judge/): a samples file in
lm-eval's --predict_only format, the command to run, and each judged sample's status."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TASK = "gimmick_ckqa_n"


def cli_faults():
    """benchmarks/judge_cli_faults.py, loaded as a module (its `command()` is the installed `arab-mm-tasks`)."""
    spec = importlib.util.spec_from_file_location("judge_cli_faults", REPO / "benchmarks" / "judge_cli_faults.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_samples(folder: Path, answers: list[str]) -> Path:
    """An lm-eval --predict_only samples file with one sample per answer (as `judge_cli_faults` writes them)."""
    lines = []
    for i, answer in enumerate(answers):
        doc = {"id": f"cef-{i}", "title": f"Event {i}", "region_codes": ["GCC"]}
        record = {"doc_id": i, "doc": doc, "target": doc["title"], "filtered_resps": [answer]}
        lines.append(json.dumps(record))  # ensure_ascii: a lone surrogate travels as its escape, as in real files
    path = folder / f"samples_{TASK}_2026-11-23T10-00-00.000000.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def statuses(judged: Path) -> list[str]:
    """Each written sample's judge status, in file order."""
    records = [json.loads(line) for line in judged.read_text("utf-8").splitlines() if line.strip()]
    found = []
    for record in records:
        values = [v for v in record.values() if isinstance(v, dict) and "judge_status" in v]
        found.append(values[0]["judge_status"])
    return found
