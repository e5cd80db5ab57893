"""Pearl through the real command lines with the tiny VLM, judged by a loopback server answering Pearl's
prompts: lm-eval `hf-multimodal` (judged in the run; Pearl-X's multi-image items get every image in
order), a `--predict_only` run judged afterwards by `arab-mm-tasks judge`, and lighteval's vision model.
Every score is recomputed from the saved generations and the judge's deterministic replies."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from helpers import console_script, run_cli
from lm_eval.utils import convert_pil_to_hash
from pearl_fixtures import PearlJudgeServer, assert_judged, build_pearl_hub_dir, judged_score

from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.core.sources import DatasetSource, load_split

pytestmark = pytest.mark.slow

SECRET = "sk-test-PEARL"


@pytest.fixture(scope="module")
def pearl_hub(tmp_path_factory):
    return build_pearl_hub_dir(tmp_path_factory.mktemp("pearl"))


@pytest.fixture()
def judge_server():
    with PearlJudgeServer() as server:
        yield server


def _docs(hub, config):
    return {doc["id"]: doc for doc in load_split(DatasetSource.resolve("pearl", str(hub)), config, "test")}


def _mean(values):
    return sum(values) / len(values)


def _lm_eval(tmp_path, model, hub, env, out, tasks, judge=None, *extra):
    metadata = {"pearl_path": str(hub), **({"judge": judge} if judge else {})}
    run_cli(
        [console_script("lm_eval"), "--model", "hf-multimodal", "--model_args", f"pretrained={model},max_images=8",
         "--tasks", tasks, "--metadata", json.dumps(metadata), "--gen_kwargs", "max_gen_toks=4", "--limit", "3",
         "--device", "cpu", "--output_path", str(out), "--log_samples", *extra],
        env=env, cwd=tmp_path,
    )  # fmt: skip


def _samples(out, task):
    (path,) = out.rglob(f"samples_{task}_*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_lm_eval_runs_pearl_and_pearl_x_judged_in_the_run(tmp_path, tiny_vlm_dir, pearl_hub, cli_env, judge_server):
    env = {**cli_env, "OPENAI_API_KEY": SECRET}
    judge = f"model=judge,base_url={judge_server.url},cache_path={tmp_path / 'judge.sqlite'}"
    out = tmp_path / "run"
    _lm_eval(tmp_path, tiny_vlm_dir, pearl_hub, env, out, "pearl,pearl_x_multi", judge)
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]

    for task, metrics in (("pearl_closed", ["acc"]), ("pearl_open", ["correctness", "coherence", "detail",
                                                                      "fluency", "overall", "cas"]),
                          ("pearl_x_multi", ["acc"])):  # fmt: skip
        spec, docs = get_spec(task), _docs(pearl_hub, task)
        samples = _samples(out, task)
        assert len(samples) == 3
        for sample in samples:
            request = spec.render(docs[sample["doc"]["id"]])
            assert sample["arguments"]["gen_args_0"]["arg_0"] == request.query
            assert sample["target"] == request.target
        # every judged score recomputed from the judge's replies to the saved generations
        assert_judged(results, {task: samples}, {task: metrics})
        if task != "pearl_open":
            parsed = [spec.generative_metrics[1].score(s["filtered_resps"][0].strip(), s["target"]) for s in samples]
            assert results[task]["acc_parsed,none"] == pytest.approx(_mean(parsed))
    open_values = [s["overall"] for s in _samples(out, "pearl_open")]
    weights = open_values[0]["judge_weights"]
    assert weights == {"correctness": 0.4, "coherence": 0.2, "detail": 0.2, "fluency": 0.2}  # Eq. (1)
    # every image of a multi-image item reaches the model, in order (lm-eval logs each one's PNG sha256)
    docs = _docs(pearl_hub, "pearl_x_multi")
    for sample in _samples(out, "pearl_x_multi"):
        doc = docs[sample["doc"]["id"]]
        sent = sample["arguments"]["gen_args_0"]["arg_2"]["visual"]
        assert sent == [convert_pil_to_hash(image) for image in doc["images"]]
        assert len(sent) == doc["n_images"] > 1 and len(set(sent)) == len(sent)
    # the open-ended judges saw the image; closed-form ones did not
    bodies = [json.loads(r.body)["messages"][0]["content"] for r in judge_server.requests]
    with_image = [b for b in bodies if not isinstance(b, str)]
    assert len(with_image) == 6 and all(b[0]["type"] == "image_url" for b in with_image)  # 3 rubric + 3 CAS
    # per country, from the saved samples
    shown = run_cli([console_script("arab-mm-tasks"), "breakdown", str(out), "--by", "country", "--metric", "overall"],
                    env=env, cwd=tmp_path).stdout  # fmt: skip
    assert "pearl_open (3 samples)" in shown and "| country | n | overall |" in shown


def test_predict_only_run_is_judged_afterwards_with_the_images_from_the_dataset(
    tmp_path, tiny_vlm_dir, pearl_hub, cli_env, judge_server
):
    env = {**cli_env, "OPENAI_API_KEY": SECRET}
    out = tmp_path / "predict"
    _lm_eval(tmp_path, tiny_vlm_dir, pearl_hub, env, out, "pearl_open", None, "--predict_only")
    assert judge_server.total == 0
    judge = f"model=judge,base_url={judge_server.url},cache_path={tmp_path / 'judge.sqlite'}"
    run_cli(
        [console_script("arab-mm-tasks"), "judge", str(out), "--judge", judge, "--out", str(tmp_path / "judged"),
         "--dataset-path", f"pearl={pearl_hub}"],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert judge_server.total == 6  # rubric + CAS for 3 items
    report = json.loads((tmp_path / "judged" / "results_judged.json").read_text())
    ((_, scores),) = report["results"].items()
    (judged,) = (tmp_path / "judged").glob("samples_pearl_open_*.jsonl")
    samples = [json.loads(line) for line in judged.read_text().splitlines()]
    for name in ("correctness", "overall", "cas"):
        assert scores[name] == pytest.approx(_mean([judged_score(s[name]) for s in samples]))
        assert scores[f"{name}_unscored"] == 0
    assert all(not isinstance(json.loads(r.body)["messages"][0]["content"], str) for r in judge_server.requests)


def test_lighteval_vision_model_runs_pearl_x_and_open_items_judged(
    tmp_path, tiny_vlm_dir, pearl_hub, cli_env, judge_server
):
    env = {**cli_env, "OPENAI_API_KEY": SECRET, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.update(HF_DATASETS_CACHE=str(tmp_path / "datasets"), ARAB_MM_JUDGE_MODEL="judge",
               ARAB_MM_JUDGE_BASE_URL=judge_server.url)  # fmt: skip
    out = tmp_path / "out"
    run_cli(
        [console_script("arab-mm-lighteval"), "accelerate", f"model_name={tiny_vlm_dir},generation_size=4",
         "pearl_x_multi|0,pearl_open|0", "--vision-model", "--dataset-path", f"pearl={pearl_hub}",
         "--judge", f"cache_path={tmp_path / 'judge.sqlite'}",
         "--max-samples", "2", "--output-dir", str(out), "--save-details"],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]
    for task, names in (("pearl_x_multi", ["acc", "acc_parsed"]), ("pearl_open", ["overall", "cas", "fluency"])):
        (details,) = out.rglob(f"details_{task}|0_*.parquet")
        rows = pd.read_parquet(details)
        assert len(rows) == 2
        docs = _docs(pearl_hub, task)
        for doc in rows["doc"]:
            source = docs[doc["specific"]["id"]]
            assert len(doc["images"]) == len(get_spec(task).render(source).images)
            assert doc["specific"]["country"] == source["country"]  # breakdown fields travel in the details
        for name in names:
            values = [metric[name] for metric in rows["metric"]]
            expected = [judged_score(v) if "judge" in v else v["score"] for v in values]
            assert results[f"{task}|0"][name] == pytest.approx(_mean(expected))
