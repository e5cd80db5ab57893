"""Helpers shared by lmms-eval's test files (tests/harness/, tests/cli/): the one-line skip where lmms-eval is not
installed, a ``--tasks DIR`` of task files, the plain `lmms-eval` command line on a tiny model, what its output
holds, and what a Pearl value judged by the loopback judge must score."""

from __future__ import annotations

from pathlib import Path

import pytest

from arab_mm_tasks.harness import lmms_eval_tasks


def require_lmms_eval():
    """Skips the calling test (or, called at import, its whole file) in one line where lmms-eval is not installed."""
    # `lmms_eval.api.task`, not `lmms_eval`: a wheel of ours installs its YAML under lmms_eval/tasks/ even
    # without lmms-eval, which makes a bare `lmms_eval` importable as an empty namespace package
    return pytest.importorskip("lmms_eval.api.task", reason="lmms-eval is not installed (the [lmms] extra)")


def task_files(folder: Path, *entries: dict) -> Path:
    """A ``--tasks DIR`` folder: one task file per entry (our task or family, with the run's data and options)."""
    import yaml

    folder.mkdir()
    for i, entry in enumerate(entries):
        (folder / f"{i}.yaml").write_text(yaml.safe_dump(entry), encoding="utf-8")
    return folder


def lmms_eval_cli(tmp_path: Path, model: Path, tasks: Path, env: dict[str, str], *extra: str) -> Path:
    from helpers import console_script, run_cli

    out = tmp_path / "out"
    run_cli(
        [console_script("lmms-eval"), "--model", "llava_hf",
         "--model_args", f"pretrained={model},dtype=float32,device_map=cpu", "--device", "cpu",
         "--tasks", str(tasks), "--include_path", lmms_eval_tasks.tasks_path(),
         "--gen_kwargs", "max_new_tokens=4", "--output_path", str(out), "--log_samples", *extra],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    return out


def results_and_samples(out: Path) -> tuple[dict, dict[str, list[dict]]]:
    import json

    (results_file,) = out.rglob("*_results.json")
    samples = {}
    for path in out.rglob("*_samples_*.jsonl"):
        task = path.stem.split("_samples_", 1)[1]
        samples[task] = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    return json.loads(results_file.read_text("utf-8"))["results"], samples
