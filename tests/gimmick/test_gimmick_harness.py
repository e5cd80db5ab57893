"""GIMMICK through the real command lines: lm-eval's `hf-multimodal` (one image, 10 video frames,
several CEF images), lm-eval's `hf` on a text-only variant, and lighteval's vision model, all on a
local folder the builder wrote from sources in the authors' formats, with tiny random-weight models."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from helpers import console_script, run_cli

from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.core.sources import DatasetSource, load_split
from arab_mm_tasks.gimmick.vocabulary import REGION_CODES
from metric_plugins.region_aggregation import macro_mean, micro_mean, region_mean
from metric_plugins.relaxed_accuracy import relaxed_match

pytestmark = pytest.mark.slow


def _docs(hub_dir: Path, config: str) -> list[dict]:
    return list(load_split(DatasetSource.resolve("gimmick", str(hub_dir)), config, "test"))


def _samples(out: Path, task: str) -> list[dict]:
    (path,) = out.rglob(f"samples_{task}_*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def _check_lm_eval_task(out: Path, results: dict, task: str, docs: list[dict]) -> list[dict]:
    """Prompts and images as the spec renders them; every score recomputed from the generations."""
    spec = get_spec(task)
    samples = _samples(out, task)
    items = []
    for sample in samples:
        doc = docs[sample["doc_id"]]
        request = spec.render(doc)
        arguments = sample["arguments"]["gen_args_0"]
        prompt, visual = arguments["arg_0"], arguments.get("arg_2", {}).get("visual", [])
        assert prompt == request.query
        assert len(visual) == len(request.images) == prompt.count("<image>")
        assert sample["target"] == request.target
        prediction = sample["filtered_resps"][0]
        items.append((relaxed_match(prediction.strip(), request.target), doc["region_codes"]))
    scores = results[task]
    overall = micro_mean(items) if spec.generative_metrics[0].overall == "micro" else macro_mean(items, REGION_CODES)
    assert scores["relaxed_acc,none"] == pytest.approx(overall)
    for region in REGION_CODES:  # the paper's per-region table: a sample counts in each of its regions
        expected, reported = region_mean(items, region), scores[f"relaxed_acc_{region},none"]
        assert (math.isnan(expected) and math.isnan(reported)) or reported == pytest.approx(expected)
    return samples


def test_lm_eval_hf_multimodal_runs_image_video_and_multi_image_tasks(tmp_path, tiny_vlm_dir, gimmick_hub_dir, cli_env):
    tasks = ["gimmick_civqa_both", "gimmick_cvvqa_none", "gimmick_coqa_c_image_text"]
    out = tmp_path / "out"
    run_cli(
        [console_script("lm_eval"), "--model", "hf-multimodal",
         "--model_args", f"pretrained={tiny_vlm_dir},max_images=20", "--tasks", ",".join(tasks),
         "--metadata", json.dumps({"gimmick_path": str(gimmick_hub_dir)}),
         "--gen_kwargs", "max_gen_toks=4", "--limit", "4", "--device", "cpu",
         "--output_path", str(out), "--log_samples"],
        env=cli_env, cwd=tmp_path,  # any directory: the installed YAML overlay finds the tasks
    )  # fmt: skip
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]

    _check_lm_eval_task(out, results, "gimmick_civqa_both", _docs(gimmick_hub_dir, "civqa"))
    _check_lm_eval_task(out, results, "gimmick_coqa_c_image_text", _docs(gimmick_hub_dir, "coqa_c"))
    video_docs = _docs(gimmick_hub_dir, "cvvqa")
    samples = _check_lm_eval_task(out, results, "gimmick_cvvqa_none", video_docs)
    frames = {
        video_docs[s["doc_id"]]["video_fn"]: len(s["arguments"]["gen_args_0"]["arg_2"]["visual"]) for s in samples
    }
    assert 10 in frames.values()  # the 10 s clip reaches the model as 10 frames, 1 per second


def test_lm_eval_hf_runs_a_text_only_variant(tmp_path, tiny_gimmick_lm_dir, gimmick_hub_dir, cli_env):
    out = tmp_path / "out"
    run_cli(
        [console_script("lm_eval"), "--model", "hf", "--model_args", f"pretrained={tiny_gimmick_lm_dir}",
         "--tasks", "gimmick_coqa_r_text", "--metadata", json.dumps({"gimmick_path": str(gimmick_hub_dir)}),
         "--gen_kwargs", "max_gen_toks=4", "--limit", "6", "--device", "cpu",
         "--output_path", str(out), "--log_samples"],
        env=cli_env, cwd=tmp_path,
    )  # fmt: skip
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]
    samples = _check_lm_eval_task(out, results, "gimmick_coqa_r_text", _docs(gimmick_hub_dir, "coqa_r"))
    assert all("arg_2" not in s["arguments"]["gen_args_0"] for s in samples)  # no images sent


def test_lighteval_vision_model_runs_a_vision_variant(tmp_path, tiny_vlm_dir, gimmick_hub_dir, cli_env):
    env = {**cli_env, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HF_DATASETS_CACHE": str(tmp_path / "datasets")}
    out = tmp_path / "out"
    run_cli(
        [console_script("arab-mm-lighteval"), "accelerate",
         f"model_name={tiny_vlm_dir},generation_size=4", "gimmick_coqa_r_image|0",
         "--vision-model", "--dataset-path", f"gimmick={gimmick_hub_dir}",
         "--max-samples", "3", "--output-dir", str(out), "--save-details"],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]["gimmick_coqa_r_image|0"]
    assert {"relaxed_acc", *(f"relaxed_acc_{r}" for r in REGION_CODES)} <= set(results)

    spec = get_spec("gimmick_coqa_r_image")
    docs = {doc["id"]: doc for doc in _docs(gimmick_hub_dir, "coqa_r")}
    (details,) = out.rglob("details_gimmick_coqa_r_image|0_*.parquet")
    rows = pd.read_parquet(details)
    assert len(rows) == 3
    items = []
    for doc, response in zip(rows["doc"], rows["model_response"], strict=True):
        source = docs[doc["specific"]["id"]]
        request = spec.render(source)
        assert "<image>" not in doc["query"] and doc["query"] in request.query  # same words, images placed by lighteval
        assert len(doc["images"]) == len(request.images) == request.query.count("<image>")
        items.append((relaxed_match(response["text"][0].strip(), request.target), source["region_codes"]))
    assert results["relaxed_acc"] == pytest.approx(macro_mean(items, REGION_CODES))
