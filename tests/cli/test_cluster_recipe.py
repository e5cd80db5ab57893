"""docs/scale-out.md's cluster recipe, run for real on the tiny models: one `arab-mm-tasks evaluate` job per
(model, tasks) writing its own run folder, two of them at once on one judge cache and one judge server, a
requeued job on a fresh folder that the shared cache answers, then one `arab-mm-tasks report` over all folders:
the model whose tasks were split over two jobs is one row, its numbers those of each job's results."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest
from helpers import console_script, run_cli
from pearl_fixtures import PearlJudgeServer

from arab_mm_tasks.report.runs import read_runs

pytestmark = pytest.mark.slow

LIMIT = 3


def _job(model_type: str, model: Path, tasks: str, out: Path, datasets: list[str], judge: str) -> list[str]:
    """One array task's command, as the recipe's `job.sh` builds it."""
    paths = [arg for dataset in datasets for arg in ("--dataset-path", dataset)]
    return [console_script("arab-mm-tasks"), "evaluate", "--model", model_type, "--model_args", f"pretrained={model}",
            "--tasks", tasks, "--output_path", str(out), *paths, "--judge", judge, "--limit", str(LIMIT),
            "--gen_kwargs", "max_gen_toks=4", "--device", "cpu"]  # fmt: skip


def _wait(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=900)
        assert proc.returncode == 0, f"{proc.args} exited {proc.returncode}\n{stdout[-3000:]}\n{stderr[-5000:]}"


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _results(folder: Path) -> dict[str, dict]:
    (file,) = folder.rglob("results_*.json")
    return json.loads(file.read_text())["results"]


def test_jobs_per_model_share_one_judge_cache_and_report_as_one_page(
    tmp_path, tiny_vlm_dir, tiny_lm_dir, pearl_hub_dir, arabculture_hub_dir, cli_env
):
    env = {**cli_env, "OPENAI_API_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    runs, cache = tmp_path / "runs", tmp_path / "shared" / "judge.sqlite"
    cache.parent.mkdir()
    pearl, arabculture = [f"pearl={pearl_hub_dir}"], [f"arabculture={arabculture_hub_dir}"]
    with PearlJudgeServer() as server:
        judge = f"model=judge,base_url={server.url},cache_path={cache}"
        jobs = [  # the array: the VLM's Pearl split over two jobs, and a second model
            _job("hf-multimodal", tiny_vlm_dir, "pearl_closed", runs / "vlm-closed", pearl, judge),
            _job("hf-multimodal", tiny_vlm_dir, "pearl_open", runs / "vlm-open", pearl, judge),
            _job("hf", tiny_lm_dir, "arabculture_mcq_en_none", runs / "lm", arabculture, judge),
        ]
        _wait([subprocess.Popen(job, env=env, cwd=tmp_path, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE) for job in jobs])  # fmt: skip
        judged = server.total
        assert judged == LIMIT + 2 * LIMIT  # closed: one judgement each; open: the rubric and CAS
        # a requeued job on a node with a fresh scratch folder: every judgement comes from the shared cache
        run_cli(_job("hf-multimodal", tiny_vlm_dir, "pearl_open", runs / "vlm-open-requeued", pearl, judge),
                env=env, cwd=tmp_path)  # fmt: skip
        assert server.total == judged
    assert _results(runs / "vlm-open-requeued") == _results(runs / "vlm-open")

    folders = [runs / "vlm-closed", runs / "vlm-open", runs / "lm"]
    run_cli([console_script("arab-mm-tasks"), "report", *map(str, folders), "--out", str(tmp_path / "report")],
            env=env, cwd=tmp_path)  # fmt: skip
    vlm, lm = sorted(read_runs(folders), key=lambda run: run.model != str(tiny_vlm_dir))
    assert (vlm.model, lm.model) == (str(tiny_vlm_dir), str(tiny_lm_dir))
    assert {"pearl_closed", "pearl_open"} <= set(vlm.results)  # one run of the model, from both jobs' folders
    closed, opened = _results(runs / "vlm-closed")["pearl_closed"], _results(runs / "vlm-open")["pearl_open"]
    assert vlm.results["pearl_closed"]["acc"] == pytest.approx(closed["acc,none"])
    assert vlm.results["pearl_open"]["overall"] == pytest.approx(opened["overall,none"])

    (row,) = [r for r in _csv(tmp_path / "report" / "pearl_table2.csv") if str(tiny_vlm_dir) in r["model"]]
    for column, result in (("ACC", closed["acc,none"]), ("OVR", opened["overall,none"]), ("CAS", opened["cas,none"])):
        assert float(row[column].split(" ")[0]) == pytest.approx(result, abs=0.005)  # a cell: "mean [interval]"
    table3 = _csv(tmp_path / "report" / "arabculture_table3.csv")
    assert [r for r in table3 if str(tiny_lm_dir) in r["model"]]
    assert (tmp_path / "report" / "index.html").exists()
