"""Batched and corpus metrics inside both harnesses: scored once per run, per region, and recomputable.

In-process tests pin the aggregation rules; the command-line tests run real `lm_eval` and
`arab-mm-lighteval` on the test-only `textcheck` benchmark (tests/plugins/textcheck), loaded the way
a user's own benchmark is, and recompute every reported score from the saved generations.
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
from pathlib import Path

import pytest

from arab_mm_tasks.core.scoring import aggregation_kind, aggregator, score_prediction
from arab_mm_tasks.core.spec import Generation, GenerativeMetric, Request, TaskSpec

PLUGINS = Path(__file__).parents[1] / "plugins"
sys.path.insert(0, str(PLUGINS))

from textcheck import counting  # noqa: E402


def _spec(*metrics: GenerativeMetric) -> TaskSpec:
    return TaskSpec(
        name="wiring",
        benchmark="textcheck",
        description="",
        render=lambda doc: Request(query=doc["q"], target=doc["r"]),
        subsets=(),
        groups={},
        output_type="generate_until",
        generation=Generation(),
        generative_metrics=metrics,
        target=lambda doc: doc["r"],
        region_key="regions",
        regions=("east", "west"),
    )


SAMPLES = [
    ("ab", "abcd", ["east"]),
    ("abc", "abc", ["west"]),
    ("", "ab", ["east", "west"]),
    ("abcdef", "abc", ["west"]),
]


def _values(spec: TaskSpec) -> list[dict]:
    return [score_prediction(spec, p, r, regions) for p, r, regions in SAMPLES]


def _aggregate(spec: TaskSpec, values: list[dict], name: str) -> float:
    return aggregator(aggregation_kind(spec, name))([v[name] for v in values])


def test_a_batched_metric_is_scored_once_per_run_and_its_nan_is_counted_unscored():
    spec = _spec(GenerativeMetric("ratio", batch="textcheck.counting:length_ratio"))
    assert spec.metric_names() == ["ratio", "ratio_east", "ratio_west", "ratio_unscored"]
    values = _values(spec)
    counting.CALLS.clear()
    assert _aggregate(spec, values, "ratio") == pytest.approx((50 + 100 + 200) / 3)
    assert _aggregate(spec, values, "ratio_east") == pytest.approx(50)
    assert _aggregate(spec, values, "ratio_west") == pytest.approx(150)
    assert _aggregate(spec, values, "ratio_unscored") == 1.0  # the empty answer
    assert counting.CALLS == [("length_ratio", 4)]  # one call for the whole run, every name served from it
    assert [v["ratio"]["score"] for v in values] == [50.0, 100.0, None, 200.0]


def test_a_corpus_metric_is_computed_over_all_samples_and_over_each_region():
    spec = _spec(GenerativeMetric("total", corpus="textcheck.counting:total_length_ratio", overall="macro"))
    assert spec.metric_names() == ["total", "total_east", "total_west"]  # no per-sample failures to count
    values = _values(spec)
    east, west = 100 * 2 / 6, 100 * 9 / 8
    assert _aggregate(spec, values, "total_east") == pytest.approx(east)
    assert _aggregate(spec, values, "total_west") == pytest.approx(west)
    assert _aggregate(spec, values, "total") == pytest.approx((east + west) / 2)  # macro: mean of the regions
    micro = _spec(GenerativeMetric("total", corpus="textcheck.counting:total_length_ratio"))
    assert _aggregate(micro, _values(micro), "total") == pytest.approx(100 * 11 / 12)
    assert all(v["total"]["score"] is None for v in values)  # a corpus score belongs to no sample


def test_saved_values_are_json_and_carry_what_rescoring_needs():
    spec = _spec(GenerativeMetric("ratio", batch="textcheck.counting:length_ratio"))
    value = _values(spec)[0]["ratio"]
    assert json.loads(json.dumps(value)) == {
        "score": None,
        "regions": ["east"],
        "batch": {"scorer": "textcheck.counting:length_ratio", "prediction": "ab", "reference": "abcd"},
    }


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"score": len, "batch": "m:f"},
        {"batch": "m:f", "corpus": "m:g"},
        {"batch": "not a path"},
        {"corpus": "module.only"},
    ],
)
def test_a_metric_needs_exactly_one_well_formed_way_of_scoring(kwargs):
    with pytest.raises(ValueError, match="metric x"):
        GenerativeMetric("x", **kwargs)


# --- the real command lines -------------------------------------------------------------------

QA = [
    ("ما عاصمة الأردن؟", "عاصمة الأردن هي عمّان.", ["east"]),
    ("ما عاصمة المغرب؟", "عاصمة المغرب هي الرباط.", ["west"]),
    ("ما الطبق الوطني في مصر؟", "الكشري طبق شعبي في مصر.", ["east", "west"]),
    ("بماذا يشتهر سوق دبي؟", "يشتهر سوق دبي بالذهب.", ["east"]),
    ("ما لون علم المغرب؟", "علم المغرب أحمر تتوسطه نجمة خضراء.", ["west"]),
    ("ماذا يشرب الناس في الصباح في عمّان؟", "يشرب الناس القهوة العربية.", ["east"]),
]


@pytest.fixture(scope="module")
def textcheck_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test benchmark's data in the Hub layout our builders write (one config, ``all``)."""
    import datasets
    from dcscore_fixtures import REFERENCE

    folder = tmp_path_factory.mktemp("textcheck")
    rows = [
        {"id": f"q{i}", "question": q, "reference": r, "regions": g, "caption": REFERENCE, "image": _png(i)}
        for i, (q, r, g) in enumerate(QA)
    ]
    (folder / "data" / "all").mkdir(parents=True)
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "question": datasets.Value("string"),
            "reference": datasets.Value("string"),
            "regions": datasets.Sequence(datasets.Value("string")),
            "caption": datasets.Value("string"),
            "image": datasets.Image(),
        }
    )
    datasets.Dataset.from_list(rows, features=features).to_parquet(
        folder / "data" / "all" / "test-00000-of-00001.parquet"
    )
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: all\n  data_files:\n  - split: test\n    path: data/all/test-*.parquet\n---\n"
    )
    return folder


def _png(seed: int) -> bytes:
    """A small image of its own colour per row, as PNG bytes."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (24, 16), (40 * seed % 256, 90, 200 - 20 * seed)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def plugin_env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "PYTHONPATH": str(PLUGINS), "ARAB_MM_TASKS_EXTRA_BENCHMARKS": "textcheck"}


def _expected(predictions: list[str], docs: list[dict]) -> dict[str, float]:
    """Every score of the textcheck task recomputed from the generations, with the scorers it names."""
    from textcheck import REGIONS, scorers

    references = [d["reference"] for d in docs]
    rouge = scorers.rouge_l(predictions, references)
    similarity = scorers.similarity(predictions, references)
    bertscore = scorers.bertscore_recall(predictions, references)
    expected = {
        "exact": sum(100.0 * (p == r) for p, r in zip(predictions, references, strict=True)) / len(docs),
        "rougeL": sum(rouge) / len(rouge),
        "bertscore": sum(bertscore) / len(bertscore),
        "bleu": scorers.bleu(predictions, references),
    }
    region_similarity = []
    for region in REGIONS:
        chosen = [i for i, d in enumerate(docs) if region in d["regions"]]
        expected[f"rougeL_{region}"] = sum(rouge[i] for i in chosen) / len(chosen)
        region_similarity.append(sum(similarity[i] for i in chosen) / len(chosen))
        expected[f"similarity_{region}"] = region_similarity[-1]
        expected[f"bleu_{region}"] = scorers.bleu([predictions[i] for i in chosen], [references[i] for i in chosen])
    expected["similarity"] = sum(region_similarity) / len(region_similarity)  # overall="macro"
    return expected


def _docs() -> list[dict]:
    return [{"id": f"q{i}", "question": q, "reference": r, "regions": g} for i, (q, r, g) in enumerate(QA)]


@pytest.mark.slow
def test_lm_eval_reports_batched_and_corpus_metrics_recomputable_from_its_samples(
    tmp_path, textcheck_dir, tiny_gimmick_lm_dir, plugin_env
):
    from helpers import console_script, run_cli

    include = tmp_path / "tasks"
    run_cli([console_script("arab-mm-tasks"), "generate", "--benchmark", "textcheck", "--out", str(include)],
            env=plugin_env, cwd=tmp_path)  # fmt: skip
    assert (include / "textcheck" / "textcheck_qa.yaml").is_file()
    out = tmp_path / "out"
    run_cli(
        [console_script("lm_eval"), "--model", "hf", "--model_args", f"pretrained={tiny_gimmick_lm_dir}",
         "--include_path", str(include), "--tasks", "textcheck_qa",
         "--metadata", json.dumps({"textcheck_path": str(textcheck_dir)}),
         "--device", "cpu", "--output_path", str(out), "--log_samples"],
        env=plugin_env, cwd=tmp_path,
    )  # fmt: skip
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]["textcheck_qa"]
    (samples_file,) = out.rglob("samples_textcheck_qa_*.jsonl")
    samples = sorted((json.loads(line) for line in samples_file.read_text().splitlines()), key=lambda s: s["doc_id"])
    predictions = [s["filtered_resps"][0].strip() for s in samples]
    for name, value in _expected(predictions, _docs()).items():
        assert results[f"{name},none"] == pytest.approx(value, rel=1e-6, abs=1e-6), name
    assert results["rougeL_unscored,none"] == 0.0
    # the saved samples carry the batched scores, so a sample's score can be read back
    from textcheck import scorers

    references = [d["reference"] for d in _docs()]
    assert [s["rougeL"]["score"] for s in samples] == pytest.approx(scorers.rouge_l(predictions, references))


@pytest.mark.slow
def test_lighteval_reports_the_same_metrics(tmp_path, textcheck_dir, tiny_gimmick_lm_dir, plugin_env):
    import pandas as pd
    from helpers import console_script, run_cli

    env = {**plugin_env, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HF_DATASETS_CACHE": str(tmp_path / "datasets")}
    out = tmp_path / "out"
    run_cli(
        [console_script("arab-mm-lighteval"), "accelerate",
         f"model_name={tiny_gimmick_lm_dir},override_chat_template=False", "textcheck_qa|0",
         "--dataset-path", f"textcheck={textcheck_dir}", "--output-dir", str(out), "--save-details"],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    (results_file,) = out.rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]["textcheck_qa|0"]
    (details,) = out.rglob("details_textcheck_qa|0_*.parquet")
    rows = pd.read_parquet(details)
    by_id = {d["id"]: d for d in _docs()}
    docs = [by_id[doc["specific"]["id"]] for doc in rows["doc"]]
    predictions = [response["text"][0].strip() for response in rows["model_response"]]
    for name, value in _expected(predictions, docs).items():
        assert results[name] == pytest.approx(value, rel=1e-6, abs=1e-6), name
    assert "bleu_stderr" not in results  # a corpus score is not bootstrapped 1,000 times
    assert not math.isnan(results["similarity"])
    assert os.environ.get("ARAB_MM_TASKS_EXTRA_BENCHMARKS") is None  # the plugin stays in the subprocesses


# --- DCScore: a batched metric that looks at the image ------------------------------------------


@pytest.fixture
def dcscore_judge(tmp_path):
    """The loopback judge answering DCScore's stages with dcscore_fixtures' hand-computed case."""
    from dcscore_fixtures import ScriptedServer, hand_script

    with ScriptedServer(hand_script) as server:
        yield server, f"model=loopback-judge,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}"


def _dcscore_expected() -> dict[str, float]:
    from dcscore_fixtures import EXPECTED

    return {f"dcscore_{m}": 100 * float(EXPECTED[m]) for m in ("precision", "recall", "f1")}


def test_dcscore_in_a_task_sees_each_samples_image_runs_once_and_releases_the_images(dcscore_judge, monkeypatch):
    from dcscore_fixtures import REFERENCE
    from textcheck import CAPTION_TASK

    from arab_mm_tasks.core import judging, scoring
    from arab_mm_tasks.core.media import load_image

    server, settings = dcscore_judge
    monkeypatch.setattr(judging, "_run_args", {})
    judging.configure(settings)
    monkeypatch.setenv("JUDGE_TEST_KEY", "unused")
    images = [load_image(_png(i), record=str(i)) for i in range(3)]
    values = [
        scoring.score_prediction(CAPTION_TASK, caption, REFERENCE, [], [image])
        for caption, image in zip(["a cat", "a white cat", "a dog"], images, strict=True)
    ]
    assert len(scoring._PENDING_IMAGES) >= 3
    kept = [values[i]["dcscore_f1"]["batch"]["images"] for i in range(3)]
    scores = {name: _aggregate(CAPTION_TASK, values, name) for name in _dcscore_expected()}
    assert scores == pytest.approx(_dcscore_expected())
    verify = server.bodies("verify")
    sent = {part["image_url"]["url"] for body in verify for part in body["messages"][-1]["content"]
            if isinstance(part, dict) and part.get("type") == "image_url"}  # fmt: skip
    assert len(sent) == 3  # each caption verified against its own image
    calls = server.total
    assert all(token not in scoring._PENDING_IMAGES for token in kept)  # released once all three are scored
    assert json.dumps(values[0]["dcscore_f1"])  # no image in what the harness saves
    assert calls == server.total  # precision, recall and F1 came from one pipeline run


@pytest.mark.slow
def test_lm_eval_and_lighteval_score_dcscore_with_the_runs_judge(
    tmp_path, textcheck_dir, tiny_vlm_dir, plugin_env, dcscore_judge
):
    from helpers import console_script, run_cli

    server, settings = dcscore_judge
    env = {**plugin_env, "JUDGE_TEST_KEY": "unused", "OPENAI_API_KEY": "unused"}
    include = tmp_path / "tasks"
    run_cli([console_script("arab-mm-tasks"), "generate", "--benchmark", "textcheck", "--out", str(include)],
            env=env, cwd=tmp_path)  # fmt: skip
    run_cli(
        [console_script("lm_eval"), "--model", "hf-multimodal", "--model_args", f"pretrained={tiny_vlm_dir}",
         "--include_path", str(include), "--tasks", "textcheck_caption", "--limit", "3",
         "--metadata", json.dumps({"textcheck_path": str(textcheck_dir), "judge": settings}),
         "--device", "cpu", "--output_path", str(tmp_path / "lm_eval")],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    (results_file,) = (tmp_path / "lm_eval").rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]["textcheck_caption"]
    for name, value in _dcscore_expected().items():
        assert results[f"{name},none"] == pytest.approx(value), name
        assert results[f"{name}_unscored,none"] == 0
    assert len(server.bodies("verify")) == 3 * 3  # 3 captions x 3 verification samples, each with its image
    assert all("image_url" in json.dumps(body) for body in server.bodies("verify"))

    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), HF_DATASETS_CACHE=str(tmp_path / "datasets"))
    run_cli(
        [console_script("arab-mm-lighteval"), "accelerate", f"model_name={tiny_vlm_dir},generation_size=4",
         "textcheck_caption|0", "--vision-model", "--judge", settings,
         "--dataset-path", f"textcheck={textcheck_dir}", "--max-samples", "3",
         "--output-dir", str(tmp_path / "lighteval")],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    (results_file,) = (tmp_path / "lighteval").rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]["textcheck_caption|0"]
    for name, value in _dcscore_expected().items():
        assert results[name] == pytest.approx(value), name
