"""A real `lmms-eval` run read back by `arab-mm-tasks report`, `sample-scores` and `judge`.

The reader's own tests (tests/report/test_harness_outputs.py) run on a committed copy of such an output; this one
makes a fresh one with the real command (the tiny random LLaVA, GIMMICK CIVQA scored and Pearl closed-form
judged in the run by the loopback judge), so a change in what lmms-eval writes shows here. It skips with one
line where lmms-eval is not installed (`pip install "arab-mm-tasks[lmms]"`).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from lmms_fixtures import lmms_eval_cli, require_lmms_eval, task_files

from arab_mm_tasks.cli import main

require_lmms_eval()  # the whole file skips, before its fixtures build a model, where lmms-eval is not installed


@pytest.mark.slow
def test_report_sample_scores_and_judge_read_a_real_lmms_eval_run(tmp_path, tiny_vlm_dir, gimmick_hub_dir,
                                                                  pearl_hub_dir, cli_env, capsys):  # fmt: skip
    require_lmms_eval()
    from pearl_fixtures import PearlJudgeServer

    from arab_mm_tasks.cli.judge_saved import judge_saved
    from arab_mm_tasks.report.runs import read_runs
    from metric_plugins.judge.config import JudgeConfig

    env = {**cli_env, "OPENAI_API_KEY": "sk-test-PEARL"}
    with PearlJudgeServer() as server:
        judge = f"model=judge,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}"
        tasks = task_files(
            tmp_path / "tasks",
            {"task": "gimmick_civqa_none", "metadata": {"gimmick_path": str(gimmick_hub_dir)}},
            {"task": "pearl_closed", "metadata": {"pearl_path": str(pearl_hub_dir), "judge": judge}},
        )
        out = lmms_eval_cli(tmp_path, tiny_vlm_dir, tasks, env, "--limit", "3")
        (results_file,) = out.rglob("*_results.json")
        results = json.loads(results_file.read_text("utf-8"))["results"]
        samples = {
            path.name.split("_samples_", 1)[1].removesuffix(".jsonl"): [json.loads(line) for line in path.open()]
            for path in out.rglob("*_samples_*.jsonl")
        }

        # report: one lmms-eval run, both tasks' results as lmms-eval aggregated them, their samples with documents
        (run,) = read_runs([out])
        assert run.harness == "lmms-eval" and set(run.results) == {"gimmick_civqa_none", "pearl_closed"}
        assert run.value("pearl_closed", "acc") == pytest.approx(results["pearl_closed"]["acc,none"])
        assert all("id" in sample["doc"] for sample in run.samples("pearl_closed")) and run.check_samples() == {}
        assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
        assert "(lmms-eval): 2 task results, 2 sample files" in capsys.readouterr().out

        # sample-scores: one row per record, each score the one the run logged for it
        scores = tmp_path / "scores.csv"
        assert main(["sample-scores", f"llava={out}", "--out", str(scores)]) == 0
        rows = {row["id"]: row for row in csv.DictReader(scores.open(encoding="utf-8"))}
        pearl_ids = [sample["doc"]["id"] for sample in run.samples("pearl_closed")]
        for record, sample in zip(pearl_ids, samples["pearl_closed"], strict=True):
            assert float(rows[str(record)]["acc"]) == sample["acc"]["score"]
        assert len(rows) == 6

        # judge: the run's judged samples judged again from the same cache give the run's own score, no new call
        calls = len(server.requests)
        config = JudgeConfig(model="judge", base_url=server.url, cache_path=str(tmp_path / "judge.sqlite"))
        report = judge_saved([out], config, tmp_path / "judged")
        assert [Path(file).name.split("_samples_")[1] for file in report["skipped"]] == ["gimmick_civqa_none.jsonl"]
        (key,) = [name for name in report["results"] if name.startswith("pearl_closed (lmms-eval: ")]
        assert report["results"][key]["acc"] == pytest.approx(results["pearl_closed"]["acc,none"])
        assert len(server.requests) == calls
