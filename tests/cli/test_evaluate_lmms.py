"""`arab-mm-tasks evaluate --harness lmms-eval` (`arab_mm_tasks.cli.evaluate_lmms`), the installed command, on a tiny
random LLaVA through lmms-eval's ``llava_hf`` model class:

- a suite of GIMMICK CIVQA and the Pearl family (judged by a loopback judge) plus ArabCulture, which lmms-eval does
  not have (skipped with a note): every score equals the one recomputed from the samples files, written in
  lmms-eval's own layout; a rerun skips both finished entries without loading the model or asking the judge;
- an entry killed midway: its rerun takes the answers given before the kill from lmms-eval's response cache;
- what counts as finished (no model): only an lmms-eval results file of the same settings with whole samples files;
  a suite of only ArabCulture is refused in one line.

Skipped where lmms-eval is not installed (`pip install "arab-mm-tasks[lmms]"`); run in /work/lmms-venv.
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import KILLER, console_script, run_cli
from pearl_fixtures import assert_judged

from arab_mm_tasks.core.registry import all_families, all_specs

pytest.importorskip("lmms_eval.evaluator", reason="lmms-eval is not installed (the [lmms] extra)")


def _command(model: Path, out: Path, *extra: str) -> list[str]:
    return [console_script("arab-mm-tasks"), "evaluate", "--harness", "lmms-eval", "--device", "cpu",
            "--model", "llava_hf", "--model_args", f"pretrained={model},dtype=float32,device_map=cpu",
            "--output_path", str(out), "--gen_kwargs", "max_new_tokens=4", *extra]  # fmt: skip


def _runs(out: Path) -> dict[str, tuple[dict, dict[str, list[dict]]]]:
    """Each lmms-eval results file under `out` by the entry it ran: (its results, its samples by task)."""
    runs = {}
    for file in out.rglob("*_results.json"):
        data = json.loads(file.read_text("utf-8"))
        stamp = file.name.removesuffix("_results.json")
        samples = {}
        for task in data["configs"]:
            lines = (file.parent / f"{stamp}_samples_{task}.jsonl").read_text("utf-8").splitlines()
            samples[task] = [json.loads(line) for line in lines]
        (entry,) = set(data["results"]) - set(data["configs"]) or set(data["configs"])
        runs[entry] = (data["results"], samples)
    return runs


@pytest.mark.slow
def test_a_suite_scores_what_its_samples_say_and_a_rerun_loads_no_model(
    tmp_path, tiny_vlm_dir, gimmick_hub_dir, pearl_hub_dir, cli_env
):
    from pearl_fixtures import PearlJudgeServer

    out = tmp_path / "runs"
    env = {**cli_env, "OPENAI_API_KEY": "sk-test-PEARL", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    with PearlJudgeServer() as server:
        judge = f"model=judge,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}"
        args = _command(tiny_vlm_dir, out, "--tasks", "arabculture_mcq,gimmick_civqa_none,pearl", "--limit", "3",
                        "--dataset-path", f"gimmick={gimmick_hub_dir}", "--dataset-path", f"pearl={pearl_hub_dir}",
                        "--judge", judge)  # fmt: skip
        first = run_cli(args, env=env, cwd=tmp_path)
        log = first.stdout + first.stderr
        assert "arabculture_mcq: skipped: log-likelihood tasks are not registered in lmms-eval" in log
        runs = _runs(out)
        assert set(runs) == {"gimmick_civqa_none", "pearl"}

        # GIMMICK CIVQA: each metric's own score function on (answer, target), averaged overall and per region
        spec = all_specs()["gimmick_civqa_none"]
        results, samples = runs[spec.name][0][spec.name], runs[spec.name][1][spec.name]
        assert len(samples) == 3 and all(s["input"].count("<image>") == 1 for s in samples)
        for metric in spec.generative_metrics:
            scores = [(metric.score(s["filtered_resps"], s["target"]), s[metric.name]["regions"]) for s in samples]
            assert results[f"{metric.name},none"] == pytest.approx(sum(v for v, _ in scores) / len(scores))
            for region in spec.regions if metric.by_region else ():
                values = [v for v, regions in scores if region in regions]
                reported = results[f"{metric.name}_{region},none"]
                assert math.isnan(reported) if not values else reported == pytest.approx(sum(values) / len(values))

        # Pearl, the family: every member judged in the run, each score the judge's replies to the logged requests
        pearl_results, pearl_samples = runs["pearl"]
        assert set(pearl_samples) == set(all_families()["pearl"].tasks)
        assert [len(pearl_samples[task]) for task in ("pearl_closed", "pearl_open")] == [3, 3]
        judged = {"pearl_closed": ["acc"], "pearl_open": ["correctness", "overall", "cas"]}
        assert_judged(pearl_results, pearl_samples, judged)
        for file in out.rglob("*_results.json"):
            assert server.url not in file.read_text()  # the judge stays out of the tasks' metadata lmms-eval saves
        judged = len(server.requests)
        files = sorted(out.rglob("*_results.json"))

        again = run_cli(args, env=env, cwd=tmp_path)
        log = again.stdout + again.stderr
        assert "loading model" not in log  # nothing left to run: the model is never loaded
        assert "[1/2] gimmick_civqa_none: finished earlier, kept" in log
        assert "[2/2] pearl: finished earlier, kept" in log
        assert len(server.requests) == judged and sorted(out.rglob("*_results.json")) == files


@pytest.mark.slow
def test_an_entry_killed_midway_reuses_the_answers_given_before_the_kill(tmp_path, tiny_vlm_dir, gimmick_hub_dir,
                                                                         cli_env):  # fmt: skip
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(KILLER)
    out = tmp_path / "runs"
    args = _command(tiny_vlm_dir, out, "--tasks", "gimmick_civqa_none", "--dataset-path", f"gimmick={gimmick_hub_dir}",
                    "--cache-chunk", "1")  # fmt: skip
    killed = subprocess.run(args, env={**cli_env, "PYTHONPATH": str(site), "KILL_AT_GENERATE": "4"}, cwd=tmp_path,
                            capture_output=True, text=True, timeout=600)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert not list(out.rglob("*_results.json"))

    resumed = run_cli(args, env=cli_env, cwd=tmp_path)
    # lmms-eval's own count: the three answers given before the kill, the other three generated now
    assert "lmms-eval response cache: ResponseCache stats: 3 hits, 3 misses" in resumed.stdout
    (run,) = _runs(out).values()
    assert sorted(s["doc_id"] for s in run[1]["gimmick_civqa_none"]) == list(range(6))


# ------------------------------------------------------------------------------------ no model


def _write_run(folder: Path, stamp: str, entry: str, tasks: dict[str, int], config: dict) -> Path:
    """An lmms-eval results file and its samples files (`tasks`: task -> documents)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {"results": {name: {} for name in (entry, *tasks)}, "configs": {t: {} for t in tasks}, "config": config,
            "lmms_eval_version": "0.7.3",
            "n-samples": {t: {"original": n, "effective": n} for t, n in tasks.items()}}  # fmt: skip
    for task, n in tasks.items():
        lines = "".join(json.dumps({"doc_id": i}) + "\n" for i in range(n))
        (folder / f"{stamp}_samples_{task}.jsonl").write_text(lines)
    results = folder / f"{stamp}_results.json"
    results.write_text(json.dumps(data))
    return results


def test_only_a_whole_lmms_eval_run_of_the_same_settings_counts_as_finished(tmp_path):
    from arab_mm_tasks.cli.evaluate import entry
    from arab_mm_tasks.cli.evaluate_lmms import LmmsRunSettings, finished_results

    config = {"model": "llava_hf", "model_args": "pretrained=org/m,token=[REDACTED]", "limit": 3,
              "gen_kwargs": {"max_new_tokens": 4}}  # fmt: skip
    same = LmmsRunSettings("llava_hf", "pretrained=org/m,token=hf_secret", 3, "max_new_tokens=4")
    item = entry("pearl")
    results = _write_run(tmp_path / "m", "20260101_000000", "pearl", {"pearl_closed": 3, "pearl_open": 3}, config)
    assert finished_results(tmp_path, item, same) == results  # lmms-eval redacts the token it saves
    assert finished_results(tmp_path, entry("pearl_closed"), same) == results  # ran, inside the family
    assert finished_results(tmp_path, entry("pearl_lite_closed"), same) is None
    for other in (
        LmmsRunSettings("llava_hf", "pretrained=org/m,token=hf_secret", None, "max_new_tokens=4"),
        LmmsRunSettings("llava_hf", "pretrained=org/m,token=hf_secret", 3, "max_new_tokens=8"),
        LmmsRunSettings("qwen2_5_vl", "pretrained=org/m,token=hf_secret", 3, "max_new_tokens=4"),
        LmmsRunSettings("llava_hf", "pretrained=org/other,token=hf_secret", 3, "max_new_tokens=4"),
    ):
        assert finished_results(tmp_path, item, other) is None, other

    samples = results.parent / "20260101_000000_samples_pearl_open.jsonl"
    whole = samples.read_text()
    for cut in (whole[:-1], whole.splitlines(keepends=True)[0], ""):  # killed while lmms-eval appended its samples
        samples.write_text(cut)
        assert finished_results(tmp_path, item, same) is None, cut
    samples.write_text(whole)
    lm_eval_file = json.loads(results.read_text())
    del lm_eval_file["lmms_eval_version"]  # the same keys, written by lm-eval: not an lmms-eval run
    results.write_text(json.dumps(lm_eval_file))
    assert finished_results(tmp_path, item, same) is None


def test_a_suite_of_only_arabculture_is_refused_in_one_line(tmp_path, capsys):
    from arab_mm_tasks.cli import main

    code = main(["evaluate", "--harness", "lmms-eval", "--model", "llava_hf", "--model_args", "pretrained=org/m",
                 "--tasks", "arabculture_mcq,arabculture_completion", "--output_path", str(tmp_path)])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "arab-mm-tasks evaluate: error: --harness lmms-eval: arabculture_mcq, arabculture_completion: "
        "log-likelihood tasks are not registered in lmms-eval; run them with --harness lm-eval"
    )
    assert not any(tmp_path.iterdir())


def test_a_missing_folder_judge_or_model_type_stops_before_any_model_loads(tmp_path, capsys, monkeypatch):
    """The preflight lists what is missing, as for lm-eval; an unknown model type is one line naming it. (Judged
    tasks without a judge run, as for lm-eval: tests/harness/test_lmms_eval_unscored.py.)"""
    from arab_mm_tasks.cli import main

    nowhere = tmp_path / "nowhere"
    base = ["evaluate", "--harness", "lmms-eval", "--model_args", f"pretrained={tmp_path / 'no-model'}",
            "--tasks", "arabculture_mcq,gimmick_civqa_none", "--output_path", str(tmp_path / "out")]  # fmt: skip
    assert main([*base, "--model", "llava_hf", "--dataset-path", f"gimmick={nowhere}"]) == 1
    captured = capsys.readouterr()
    assert f"gimmick: dataset folder '{nowhere}' does not exist" in captured.err
    assert "no model was loaded" in captured.err and "loading model" not in captured.out

    assert main([*base, "--model", "llava_fh"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        "arab-mm-tasks evaluate: error: --model 'llava_fh': not an lmms-eval model type (did you mean "
    )
    assert "llava_hf" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()
