"""JEEM through the real command lines, with a tiny VLM, tiny encoders and a scripted loopback judge:
lm-eval's ``hf-multimodal`` on the caption group and a VQA task, lighteval's vision model, and the
two-stage judge command on an lm-eval ``--predict_only`` run. Every score is recomputed from the
saved generations."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from helpers import console_script, run_cli
from jeem_fixtures import CAPTIONS, MSA_CAPTIONS, QUESTIONS, criterion_scores, jeem_script

from arab_mm_tasks.core.registry import get_spec
from arab_mm_tasks.jeem.prompts import caption_instruction, vqa_instruction
from arab_mm_tasks.jeem.vocabulary import VARIETIES
from metric_plugins import aldi, bertscore, bleu, cider, rouge

pytestmark = pytest.mark.slow
LIMIT = 2


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A tiny VLM whose tokenizer knows JEEM's Arabic, and tiny BERTs for BERTScore and ALDi."""
    from arab_mm_tasks.testing.tiny_model import build_tiny_bert, build_tiny_vlm

    corpus = [*CAPTIONS.values(), *MSA_CAPTIONS.values(), *QUESTIONS]
    corpus += [caption_instruction(v) for v in VARIETIES] + [vqa_instruction(v) for v in VARIETIES]
    root = tmp_path_factory.mktemp("models")
    return {
        "vlm": str(build_tiny_vlm(root / "vlm", corpus)),
        "bertscore": str(build_tiny_bert(root / "bert", corpus)),
        "aldi": str(build_tiny_bert(root / "aldi", corpus, regression=True)),
    }


@pytest.fixture
def judge(tmp_path):
    from dcscore_fixtures import ScriptedServer

    with ScriptedServer(jeem_script) as server:
        yield server, f"model=loopback-judge,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}"


@pytest.fixture
def env(cli_env: dict[str, str], models: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {
        **cli_env,
        "ARAB_MM_BERTSCORE_MODEL": models["bertscore"],
        "ARAB_MM_ALDI_MODEL": models["aldi"],
        "OPENAI_API_KEY": "unused",
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
        "HF_DATASETS_CACHE": str(tmp_path / "datasets"),
    }


def expected_scores(task: str, predictions: list[str], references: list[str], models: dict[str, str]) -> dict:
    """Every non-DCScore metric of a JEEM task, recomputed from the generations with the metric functions."""
    spec = get_spec(task)
    names = {m.name for m in spec.generative_metrics}
    out: dict[str, float] = {}
    if "bleu" in names:
        out["bleu"] = bleu.corpus_score(predictions, references)
        out["cider"] = cider.corpus_score(predictions, references)
        out["rougeL"] = _mean(rouge.sentence_scores(predictions, references))
        out["bertscore"] = _mean(bertscore.sentence_scores(predictions, references, model=models["bertscore"]))
    if "aldi" in names:
        out["aldi"] = _mean(aldi.sentence_scores(predictions, model=models["aldi"]))
    judged = [m for m in spec.generative_metrics if m.judge_prompt and not m.name.startswith("judge_ro")]
    for metric in judged:
        criterion = metric.judge_score.replace("_", " ").title()
        asked = "".join(f"\n{c.replace('_', ' ').title()}: X/5" for c in [m.judge_score for m in judged])
        out[metric.name] = _mean(
            [criterion_scores(f"\n\nGenerated Caption: {p}\n\nOutput Format{asked}")[criterion] for p in predictions]
        )
    return out


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _dcscore(predictions: list[str], references: list[str], settings: str) -> dict[str, float]:
    from metric_plugins.dcscore import score_captions

    report = score_captions(predictions, references, _pngs(len(predictions)), judge=settings)
    return {f"dcscore_{m}": _mean([getattr(c, m) for c in report.captions]) for m in ("precision", "recall", "f1")}


def _pngs(count: int) -> list[bytes]:
    from arab_mm_tasks.testing.synthetic import image_bytes, make_image

    return [image_bytes(make_image(i)) for i in range(count)]  # the scripted judge ignores the pixels


def test_lm_eval_prints_every_metric_per_dialect_recomputable_from_its_samples(
    tmp_path, jeem_hub_dir, models, env, judge, capsys
):
    server, settings = judge
    out = tmp_path / "out"
    proc = run_cli(
        [console_script("lm_eval"), "--model", "hf-multimodal", "--model_args", f"pretrained={models['vlm']}",
         "--tasks", "jeem_caption,jeem_vqa_egyptian", "--limit", str(LIMIT), "--gen_kwargs", "max_gen_toks=12",
         "--metadata", json.dumps({"jeem_path": str(jeem_hub_dir), "judge": settings}),
         "--device", "cpu", "--output_path", str(out), "--log_samples"],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    for line in ("jeem_caption_jordanian", "jeem_caption_msa", "jeem_vqa_egyptian", "bertscore", "judge_dauth", "aldi"):
        assert line in proc.stdout  # the per-dialect table lm-eval prints
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]
    for task in [f"jeem_caption_{v.key}" for v in VARIETIES] + ["jeem_vqa_egyptian"]:
        (samples_file,) = out.rglob(f"samples_{task}_*.jsonl")
        samples = sorted(
            (json.loads(line) for line in samples_file.read_text().splitlines()), key=lambda s: s["doc_id"]
        )
        assert len(samples) == LIMIT
        predictions = [s["filtered_resps"][0].strip() for s in samples]
        references = [s["doc"]["reference"] for s in samples]
        for name, value in expected_scores(task, predictions, references, models).items():
            assert results[task][f"{name},none"] == pytest.approx(value, rel=1e-6, abs=1e-6), (task, name)
        if task.startswith("jeem_caption"):
            for name, value in _dcscore(predictions, references, settings).items():
                assert results[task][f"{name},none"] == pytest.approx(value, rel=1e-6, abs=1e-6), (task, name)
        assert results[task]["judge_con_unscored,none"] == 0
    assert "aldi,none" not in results["jeem_caption_msa"] and "judge_dauth,none" not in results["jeem_caption_msa"]
    _check_agreement_on_the_run(out, tmp_path, capsys)
    images = [
        json.dumps(json.loads(r.body)).count('"type": "image_url"') for r in server.requests if b"Generated" in r.body
    ]
    assert images and all(count == 1 for count in images)  # Figures 9 and 11: the judge sees the image


def _check_agreement_on_the_run(out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`arab-mm-tasks agreement` on the run's own samples and a ratings file: tau-c recomputed with scipy."""
    from scipy import stats

    from arab_mm_tasks.cli import main

    dialects = [f"jeem_caption_{v.key}" for v in VARIETIES if v.is_dialect]
    scores, rows = [], ["id,con,rel"]
    for n, task in enumerate(dialects):
        (samples_file,) = out.rglob(f"samples_{task}_*.jsonl")
        for i, line in enumerate(samples_file.read_text().splitlines()):
            sample = json.loads(line)
            rows.append(f"{sample['doc']['id']},{1 + (n + i) % 5},{5 - (2 * n + i) % 4}")
            scores.append(sample["bertscore"]["score"])
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("\n".join(rows) + "\n", encoding="utf-8")
    target = [2 * c * r / (c + r) for c, r in (map(int, row.split(",")[1:]) for row in rows[1:])]
    args = ["agreement", str(ratings), str(out), "--id", "id", "--tasks", ",".join(dialects), "--json"]
    capsys.readouterr()
    assert main([*args, "--target", "cr=hmean(con,rel)", "--metrics", "bertscore@cr"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["kendall_tau_c"]
    assert (row["n"], row["x100"]) == (len(scores), round(100 * stats.kendalltau(scores, target, variant="c")[0], 2))


def test_lighteval_vision_model_reports_the_same_metrics(tmp_path, jeem_hub_dir, models, env, judge):
    """A caption task and the ``jeem_vqa`` group (lighteval has no groups: arab-mm-lighteval expands ours)."""
    _, settings = judge
    out = tmp_path / "out"
    run_cli(
        [console_script("arab-mm-lighteval"), "accelerate", f"model_name={models['vlm']},generation_size=12",
         "jeem_caption_moroccan|0,jeem_vqa|0", "--vision-model", "--judge", settings,
         "--dataset-path", f"jeem={jeem_hub_dir}", "--max-samples", str(LIMIT),
         "--output-dir", str(out), "--save-details"],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    (results_file,) = out.rglob("results_*.json")
    all_results = json.loads(results_file.read_text())["results"]
    vqa = [f"jeem_vqa_{d}" for d in ("jordanian", "emirati", "egyptian", "moroccan")]
    assert set(all_results) == {f"{task}|0" for task in ["jeem_caption_moroccan", *vqa]} | {"all"}
    for task in ["jeem_caption_moroccan", *vqa]:
        results = all_results[f"{task}|0"]
        (details,) = out.rglob(f"details_{task}|0_*.parquet")
        rows = pd.read_parquet(details)
        predictions = [response["text"][0].strip() for response in rows["model_response"]]
        references = [doc["specific"]["target"] for doc in rows["doc"]]
        expected = expected_scores(task, predictions, references, models)
        if task == "jeem_caption_moroccan":
            assert references == [CAPTIONS["Moroccan"]] * LIMIT
            expected |= _dcscore(predictions, references, settings)
            assert not math.isnan(results["bertscore"])
        else:
            assert set(expected) == {"judge_con", "judge_rel", "judge_flu", "judge_dauth"}  # Figure 11 only
        for name, value in expected.items():
            assert results[name] == pytest.approx(value, rel=1e-6, abs=1e-6), (task, name)


def test_the_judge_command_scores_a_predict_only_run(tmp_path, jeem_hub_dir, models, env, judge):
    server, settings = judge
    out = tmp_path / "out"
    run_cli(
        [console_script("lm_eval"), "--model", "hf-multimodal", "--model_args", f"pretrained={models['vlm']}",
         "--tasks", "jeem_vqa_jordanian", "--limit", str(LIMIT), "--gen_kwargs", "max_gen_toks=12",
         "--metadata", json.dumps({"jeem_path": str(jeem_hub_dir)}), "--predict_only",
         "--device", "cpu", "--output_path", str(out), "--log_samples"],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert not server.requests
    judged = tmp_path / "judged"
    run_cli([console_script("arab-mm-tasks"), "judge", str(out), "--judge", settings, "--out", str(judged)],
            env=env, cwd=tmp_path)  # fmt: skip
    report = json.loads((tmp_path / "judged" / "results_judged.json").read_text())
    (scores,) = report["results"].values()
    (samples_file,) = out.rglob("samples_jeem_vqa_jordanian_*.jsonl")
    samples = sorted((json.loads(line) for line in samples_file.read_text().splitlines()), key=lambda s: s["doc_id"])
    predictions = [s["filtered_resps"][0].strip() for s in samples]
    expected = expected_scores("jeem_vqa_jordanian", predictions, [s["doc"]["reference"] for s in samples], models)
    for name, value in expected.items():
        assert scores[name] == pytest.approx(value), name
    assert report["summary"]["calls"] == LIMIT  # four criteria, one judgement each
    bodies = [json.loads(r.body) for r in server.requests]
    assert all(
        json.dumps(body).count('"type": "image_url"') == 1 for body in bodies
    )  # the image, read back from the samples
