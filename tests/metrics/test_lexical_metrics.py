"""BLEU, ROUGE and CIDEr-D on Arabic: hand-checked values, the normalisation options, bad input."""

from __future__ import annotations

import doctest

import pytest

from metric_plugins import arabic_text, bleu, cider, rouge
from metric_plugins.arabic_text import Normalization


@pytest.mark.parametrize("module", [arabic_text, bleu, rouge, cider])
def test_module_cards_examples_hold(module):
    results = doctest.testmod(module)
    assert results.attempted > 0 and results.failed == 0  # a card that lost its examples fails too


def test_sentence_bleu_by_hand():
    # 3/5 words, 2/4 bigrams, 1/3 trigrams; no 4-gram, smoothed (sacrebleu "exp") to 1/(2*2); equal lengths
    (score,) = bleu.sentence_scores(["ذهب الولد إلى البيت مساء"], ["ذهب الولد إلى المدرسة صباحا"])
    assert score == pytest.approx(100 * (3 / 5 * 2 / 4 * 1 / 3 * 1 / 4) ** 0.25)


def test_corpus_bleu_sums_counts_over_the_corpus():
    # words 4+1 of 6, bigrams 3+0 of 4, trigrams 2 of 2, 4-grams 1 of 1; lengths 6 and 6: no brevity penalty
    score = bleu.corpus_score(["أ ب ج د", "ه و"], ["أ ب ج د", "ه ز"])
    assert score == pytest.approx(100 * (5 / 6 * 3 / 4 * 2 / 2 * 1 / 1) ** 0.25)
    per_sentence = bleu.sentence_scores(["أ ب ج د", "ه و"], ["أ ب ج د", "ه ز"])
    assert score != pytest.approx(sum(per_sentence) / 2)  # corpus BLEU is not the sentence mean


def test_corpus_bleu_brevity_penalty():
    # the hypothesis is the first 4 of 8 reference words: every n-gram matches, BLEU = exp(1 - 8/4)
    reference = "ذهب الولد إلى المدرسة في الصباح مع أخيه"
    assert bleu.corpus_score(["ذهب الولد إلى المدرسة"], [reference]) == pytest.approx(100 * 2.718281828 ** (1 - 2))
    # with fewer than 4 words there is no 4-gram to match: corpus BLEU-4 is 0, as in sacrebleu
    assert bleu.corpus_score(["ذهب الولد"], [reference]) == 0.0


def test_rouge_by_hand():
    prediction, reference = "القطة تجلس على السجادة", "جلست القطة على السجادة"
    assert rouge.compute([prediction], [reference]) == pytest.approx(
        {"rouge1": 75.0, "rouge2": 100 / 3, "rougeL": 75.0}  # 3 of 4 words; 1 of 3 bigrams; LCS of 3
    )
    short = "القطة على السجادة"
    assert rouge.sentence_scores([short], [reference], rouge_type="rouge1", measure="recall") == [75.0]
    assert rouge.sentence_scores([short], [reference], rouge_type="rouge1", measure="precision") == [100.0]
    f = 2 * 0.75 * 1.0 / 1.75
    assert rouge.sentence_scores([short], [reference], rouge_type="rouge1") == [pytest.approx(100 * f)]


def test_rouge_default_tokenizer_of_rouge_score_sees_no_arabic():
    prediction, reference = "القطة تجلس على السجادة", "كلب ينام تحت الطاولة"  # nothing in common
    assert rouge.sentence_scores([prediction], [reference], rouge_type="rouge1") == [0.0]
    assert rouge.sentence_scores([prediction], [reference], rouge_type="rouge1", mode="arb") == [0.0]
    # ... and two different Arabic texts with the same step numbers are a perfect match for it
    assert rouge.sentence_scores(["الخطوة 1 قطة"], ["الخطوة 1 كلب"], rouge_type="rouge1", mode="arb") == [100.0]


@pytest.mark.parametrize(
    ("option", "prediction", "reference"),
    [
        ("alef", "أحمد", "احمد"),
        ("ya", "مشى", "مشي"),
        ("ta_marbuta", "مدرسة", "مدرسه"),
        ("diacritics", "كَتَبَ", "كتب"),
        ("tatweel", "كتـــب", "كتب"),
    ],
)
def test_each_normalisation_is_a_named_option(option, prediction, reference):
    assert rouge.sentence_scores([prediction], [reference], rouge_type="rouge1") == [100.0]
    off = Normalization(**{option: False})
    assert rouge.sentence_scores([prediction], [reference], rouge_type="rouge1", normalization=off) == [0.0]
    assert bleu.sentence_scores([prediction], [reference], normalization=off)[0] < 100.0


def test_arabic_indic_digits_and_latin_case_are_folded():
    assert arabic_text.tokenize("الصفحة ١٢ من GPT") == ["الصفحه", "12", "من", "gpt"]


# pycocoevalcap 1.2's CiderScorer (the COCO CIDEr-D: clipping, sigma 6) gave these raw scores for the
# same tokens (checked once; it is not a dependency: it ships Java).
COCO_HYPOTHESES = [
    "قطة سوداء تجلس على الكرسي الخشبي",
    "رجل يقود دراجة حمراء في الشارع",
    "امرأة تشتري الخبز من السوق",
    "أطفال يلعبون كرة القدم",
]
COCO_REFERENCES = [
    ["قطة سوداء على كرسي خشبي", "قطة تجلس على الكرسي"],
    ["رجل على دراجة في شارع مزدحم"],
    ["سيدة في السوق تشتري خبزا"],
    ["مجموعة أطفال يلعبون الكرة في الحديقة"],
]
COCO_RAW = [2.8218732907388095, 1.0977186995936858, 1.1120637709337873, 1.6637037446870222]


def test_cider_d_matches_the_coco_implementation():
    scores = cider.sentence_scores(COCO_HYPOTHESES, COCO_REFERENCES)
    assert scores == pytest.approx([100 * s for s in COCO_RAW], rel=1e-12)
    assert cider.corpus_score(COCO_HYPOTHESES, COCO_REFERENCES) == pytest.approx(100 * sum(COCO_RAW) / 4)


def test_cider_by_hand():
    cat = "قطة سوداء على الكرسي"
    # every n-gram of item 0 is in item 0's reference only: IDF log(2) each, equal vectors, cosine 1 for
    # n = 1..4 -> raw 10 x 1; item 1 shares nothing with its reference -> 0
    assert cider.sentence_scores([cat, "رجل"], [cat, "امرأة"]) == [1000.0, 0.0]
    assert cider.sentence_scores([cat], [cat]) == [0.0]  # one item: every IDF is log(1) - log(1) = 0
    # two words have no 3- or 4-grams: cosine 1 for n = 1, 2 and 0 for n = 3, 4 -> raw 10 x 2/4
    assert cider.sentence_scores(["قطة سوداء", "رجل"], ["قطة سوداء", "امرأة"]) == [500.0, 0.0]


def test_cider_document_frequencies_are_computed_once_per_corpus(monkeypatch):
    calls = []
    original = cider.CorpusStatistics.of.__func__

    def counting(cls, references):
        calls.append(len(references))
        return original(cls, references)

    monkeypatch.setattr(cider.CorpusStatistics, "of", classmethod(counting))
    cider.corpus_score(COCO_HYPOTHESES, COCO_REFERENCES)
    assert calls == [4]


@pytest.mark.parametrize("metric", [bleu.sentence_scores, bleu.corpus_score, rouge.sentence_scores, rouge.compute])
def test_bad_input_names_the_item(metric):
    with pytest.raises(ValueError, match="2 predictions for 1 references"):
        metric(["أ", "ب"], ["أ"])
    with pytest.raises(ValueError, match="item 1: prediction is NoneType, not a string"):
        metric(["أ", None], ["أ", "ب"])
    with pytest.raises(ValueError, match="item 0: reference is int"):
        metric(["أ"], [3])


def test_cider_bad_references_and_unknown_modes():
    with pytest.raises(ValueError, match="item 1: reference must be a string or a non-empty list"):
        cider.sentence_scores(["أ", "ب"], ["أ", []])
    # a misspelt mode is refused, never silently scored another way
    with pytest.raises(ValueError, match="unknown BLEU mode 'ARB'; use 'arabic' or 'arb'"):
        bleu.corpus_score(["أ"], ["أ"], mode="ARB")
    with pytest.raises(ValueError, match="unknown ROUGE mode 'ARB'; use 'arabic' or 'arb'"):
        rouge.compute(["أ"], ["أ"], mode="ARB")
    with pytest.raises(ValueError, match="unknown rouge_type"):
        rouge.sentence_scores(["أ"], ["أ"], rouge_type="rougeLsum")


def test_empty_corpora_are_nan_not_an_error():
    assert all(v != v for v in rouge.compute([], []).values())
    assert bleu.corpus_score([], []) != bleu.corpus_score([], [])
    assert cider.corpus_score([], []) != cider.corpus_score([], [])


def test_evaluate_modules_give_the_plain_functions_numbers():
    from pathlib import Path

    import evaluate

    modules = Path(__file__).resolve().parents[2] / "metric_plugins" / "evaluate_modules"
    predictions, references = COCO_HYPOTHESES, [refs[0] for refs in COCO_REFERENCES]

    arabic_bleu = evaluate.load(str(modules / "arabic_bleu.py"))
    assert arabic_bleu.description == bleu.__doc__
    got = arabic_bleu.compute(predictions=predictions, references=references, normalization={"alef": False})
    assert got["bleu"] == bleu.corpus_score(predictions, references, normalization=Normalization(alef=False))
    assert got["sentence_bleu"] == bleu.sentence_scores(
        predictions, references, normalization=Normalization(alef=False)
    )

    arabic_rouge = evaluate.load(str(modules / "arabic_rouge.py"))
    assert arabic_rouge.description == rouge.__doc__
    assert arabic_rouge.compute(predictions=predictions, references=references, mode="arb") == rouge.compute(
        predictions, references, mode="arb"
    )

    cider_d = evaluate.load(str(modules / "cider_d.py"))
    assert cider_d.description == cider.__doc__
    got = cider_d.compute(predictions=COCO_HYPOTHESES, references=COCO_REFERENCES)
    assert got["sentence_cider_d"] == pytest.approx([100 * s for s in COCO_RAW])
    assert cider_d.compute(predictions=predictions, references=references)["cider_d"] == pytest.approx(
        cider.corpus_score(predictions, references)
    )
