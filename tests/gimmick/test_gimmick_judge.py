"""GIMMICK CKQA judged end to end: inside a real `lm_eval` run (scores per region, a re-run asks the
judge nothing), and generate-then-judge on lm-eval samples and lighteval details, against a
loopback OpenAI-compatible server."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from helpers import console_script, run_cli

from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.gimmick.vocabulary import REGION_CODES
from metric_plugins.judge.loopback import LoopbackServer
from metric_plugins.region_aggregation import macro_mean, region_mean

pytestmark = pytest.mark.slow

SECRET = "sk-test-SECRET123"
TASK = "gimmick_ckqa_d_text"


@pytest.fixture()
def judge_server():
    with LoopbackServer() as server:
        yield server


def _lm_eval(tmp_path, model_dir, hub_dir, env, out, judge: str | None, *extra: str):
    metadata = {"gimmick_path": str(hub_dir), **({"judge": judge} if judge else {})}
    run_cli(
        [console_script("lm_eval"), "--model", "hf", "--model_args", f"pretrained={model_dir}",
         "--tasks", TASK, "--metadata", json.dumps(metadata), "--gen_kwargs", "max_gen_toks=6",
         "--limit", "5", "--device", "cpu", "--output_path", str(out), "--log_samples", *extra],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    (results,) = out.rglob("results_*.json")
    (samples,) = out.rglob(f"samples_{TASK}_*.jsonl")
    return json.loads(results.read_text())["results"][TASK], [json.loads(x) for x in samples.read_text().splitlines()]


def _no_secret_in(*folders):
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path


def test_lm_eval_run_judges_per_region_and_a_rerun_makes_no_calls(
    tmp_path, tiny_gimmick_lm_dir, gimmick_hub_dir, cli_env, judge_server
):
    env = {**cli_env, "OPENAI_API_KEY": SECRET}
    judge = f"model=judge-model,base_url={judge_server.url},cache_path={tmp_path / 'judge.sqlite'},concurrency=4"
    scores, samples = _lm_eval(tmp_path, tiny_gimmick_lm_dir, gimmick_hub_dir, env, tmp_path / "run1", judge)

    assert judge_server.total == 5  # one judgement per sample, all in the aggregation
    values = [s["judge_score"] for s in samples]
    assert all(v["judge_status"] == "valid" and 0 <= v["score"] <= 100 for v in values)
    items = [(v["score"], v["regions"]) for v in values]
    assert scores["judge_score,none"] == pytest.approx(macro_mean(items, REGION_CODES))  # the paper's region mean
    for region in REGION_CODES:
        expected, reported = region_mean(items, region), scores[f"judge_score_{region},none"]
        assert (math.isnan(expected) and math.isnan(reported)) or reported == pytest.approx(expected)
    assert scores["judge_score_unscored,none"] == 0
    # what the judge saw: the CEF description as ground truth and the model's answer (paper L2452-L2470)
    spec = get_spec(TASK)
    assert all(v["judge"]["fields"]["GROUND_TRUTH"] == s["target"] for v, s in zip(values, samples, strict=True))
    assert spec.generative_metrics[0].judge_prompt == "gimmick_ckqa"
    assert all(r.headers.get("authorization") == f"Bearer {SECRET}" for r in judge_server.requests)

    again, _ = _lm_eval(tmp_path, tiny_gimmick_lm_dir, gimmick_hub_dir, env, tmp_path / "run2", judge)
    assert judge_server.total == 5  # every judgement came from the cache
    assert again["judge_score,none"] == scores["judge_score,none"]
    _no_secret_in(tmp_path / "run1", tmp_path / "run2")
    assert SECRET.encode() not in (tmp_path / "judge.sqlite").read_bytes()


def test_generate_then_judge_scores_lm_eval_samples_and_lighteval_details(
    tmp_path, tiny_gimmick_lm_dir, gimmick_hub_dir, cli_env, judge_server
):
    env = {**cli_env, "OPENAI_API_KEY": SECRET, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env["HF_DATASETS_CACHE"] = str(tmp_path / "datasets")
    scores, _ = _lm_eval(tmp_path, tiny_gimmick_lm_dir, gimmick_hub_dir, env, tmp_path / "lm_eval", judge=None)
    assert math.isnan(scores["judge_score,none"]) and scores["judge_score_unscored,none"] == 5  # no judge: no score
    model_args = f"model_name={tiny_gimmick_lm_dir},override_chat_template=False"
    model_args += ",generation_parameters={max_new_tokens:6}"
    run_cli(
        [console_script("arab-mm-lighteval"), "accelerate", model_args, f"{TASK}|0",
         "--dataset-path", f"gimmick={gimmick_hub_dir}", "--max-samples", "3",
         "--output-dir", str(tmp_path / "lighteval"), "--save-details"],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    _lm_eval(tmp_path, tiny_gimmick_lm_dir, gimmick_hub_dir, env, tmp_path / "predict_only", None, "--predict_only")
    assert judge_server.total == 0

    judge = f"model=judge-model,base_url={judge_server.url},cache_path={tmp_path / 'judge.sqlite'}"
    saved = [str(tmp_path / name) for name in ("lm_eval", "predict_only", "lighteval")]
    run_cli(
        [console_script("arab-mm-tasks"), "judge", *saved, "--judge", judge, "--out", str(tmp_path / "judged")],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert judge_server.total == 5 + 3  # the --predict_only run generated the same answers: served from the cache
    report = json.loads((tmp_path / "judged" / "results_judged.json").read_text())
    assert len(report["results"]) == 3
    for scores in report["results"].values():
        assert scores["judge_score_unscored"] == 0 and 0 <= scores["judge_score"] <= 100
    lm_eval_scores = [v["judge_score"] for k, v in report["results"].items() if "lm-eval" in k]
    assert lm_eval_scores[0] == pytest.approx(lm_eval_scores[1])
    for samples in (tmp_path / "judged").glob(f"samples_{TASK}_*.jsonl"):
        lines = samples.read_text().splitlines()
        assert all(json.loads(line)["judge_score"]["judge_status"] == "valid" for line in lines)
    (details,) = (tmp_path / "judged").glob(f"details_{TASK}|0_*.parquet")
    assert all(metric["judge_score"]["score"] is not None for metric in pd.read_parquet(details)["metric"])
    _no_secret_in(tmp_path / "judged", tmp_path / "lm_eval", tmp_path / "lighteval")


def test_lighteval_run_judges_with_the_judge_from_the_environment_and_the_command_line(
    tmp_path, tiny_gimmick_lm_dir, gimmick_hub_dir, cli_env, judge_server
):
    env = {**cli_env, "OPENAI_API_KEY": SECRET, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env["HF_DATASETS_CACHE"] = str(tmp_path / "datasets")
    env.update(ARAB_MM_JUDGE_MODEL="judge-model", ARAB_MM_JUDGE_BASE_URL=judge_server.url)
    model_args = f"model_name={tiny_gimmick_lm_dir},override_chat_template=False"
    model_args += ",generation_parameters={max_new_tokens:6}"
    run_cli(
        [console_script("arab-mm-lighteval"), "accelerate", model_args, f"{TASK}|0",
         "--judge", f"cache_path={tmp_path / 'judge.sqlite'},concurrency=2",  # on top of the environment's
         "--dataset-path", f"gimmick={gimmick_hub_dir}", "--max-samples", "3",
         "--output-dir", str(tmp_path / "out"), "--save-details"],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert judge_server.total == 3  # judged once each, in the corpus-level aggregation
    (results_file,) = (tmp_path / "out").rglob("results_*.json")
    scores = json.loads(results_file.read_text())["results"][f"{TASK}|0"]
    assert scores["judge_score_unscored"] == 0 and 0 <= scores["judge_score"] <= 100
    (details,) = (tmp_path / "out").rglob(f"details_{TASK}|0_*.parquet")
    values = [metric["judge_score"] for metric in pd.read_parquet(details)["metric"]]
    items = [(v["score"], list(v["regions"])) for v in values]
    assert scores["judge_score"] == pytest.approx(macro_mean(items, REGION_CODES))
    _no_secret_in(tmp_path / "out")
    assert SECRET.encode() not in (tmp_path / "judge.sqlite").read_bytes()  # the --judge cache path was used
