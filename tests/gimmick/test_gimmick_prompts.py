"""GIMMICK prompts, targets and scores, in-process: the exact text of every variant, the same text
in both harnesses, bad records named, and per-region aggregation on known predictions."""

from __future__ import annotations

import math

import pytest

from arab_mm_tasks.core.registry import all_families, all_specs
from arab_mm_tasks.core.scoring import aggregation_kind, aggregator, score_sample
from arab_mm_tasks.core.spec import RecordError, without_image_placeholders
from arab_mm_tasks.data import gimmick_example_docs
from arab_mm_tasks.gimmick import tasks as gimmick
from arab_mm_tasks.harness import lighteval_tasks, lm_eval_hooks

GIMMICK = {name: spec for name, spec in all_specs().items() if spec.benchmark == "gimmick"}


@pytest.fixture(scope="module")
def docs() -> dict[str, dict]:
    return gimmick_example_docs()


def test_every_variant_of_the_paper_exists():
    # spec §5.1.1: CIVQA/CVVQA x {N,R,C,B}; COQA_R/C x {I,T,I+T}; CKQA_D x {I,T,I+T}; CKQA_N x {I}
    expected = {f"gimmick_{t}_{h}" for t in ("civqa", "cvvqa") for h in ("none", "region", "country", "both")}
    expected |= {f"gimmick_coqa_{o}_{m}" for o in ("c", "r") for m in ("image", "text", "image_text")}
    expected |= {f"gimmick_ckqa_d_{m}" for m in ("image", "text", "image_text")} | {"gimmick_ckqa_n"}
    assert expected <= set(GIMMICK)
    assert {"gimmick_civqa", "gimmick_cvvqa", "gimmick_coqa_c", "gimmick_coqa_r"} <= set(all_families())


HINTS_BOTH = (
    "Hint: The question is related to a cultural event or facet from the following region(s): 'Arab States'\n"
    "Hint: The question is related to a cultural event or facet from the following country or countries: 'Morocco'\n"
)


@pytest.mark.parametrize(
    ("hint", "hints"),
    [
        ("none", ""),
        ("region", HINTS_BOTH.splitlines(keepends=True)[0]),
        ("country", HINTS_BOTH.splitlines(keepends=True)[1]),
        ("both", HINTS_BOTH),
    ],
)
def test_civqa_prompt_is_figure_73_plus_the_answer_instruction(docs, hint, hints):
    request = GIMMICK[f"gimmick_civqa_{hint}"].render(docs["civqa"])
    figure_73 = f"What title is given to the woman wearing the sash in the image?\n{hints}\n"
    assert request.query == "<image>\n" + figure_73 + "Answer with a single word or phrase."
    assert request.target == "Cherry Queen"
    assert len(request.images) == 1 and request.images[0].mode == "RGB"


def test_hints_join_several_regions_and_countries_in_single_quotes(docs):
    doc = {**docs["civqa"], "countries": ["Congo", "Democratic Republic of the Congo"]}
    doc["regions"] = ["Sub-Saharan African States", "Arab States"]  # the data's strings, as they are
    assert gimmick.hints_text(doc, "both") == (
        "Hint: The question is related to a cultural event or facet from the following region(s): "
        "'Sub-Saharan African States, Arab States'\n"
        "Hint: The question is related to a cultural event or facet from the following country or countries: "
        "'Congo, Democratic Republic of the Congo'\n"
    )


def test_cvvqa_gets_one_placeholder_per_frame_at_1_fps(docs):
    request = GIMMICK["gimmick_cvvqa_none"].render(docs["cvvqa"])  # a 10 s clip
    assert len(request.images) == 10
    assert request.query == "<image>\n" * 10 + (
        "What event are the women in the video participating in?\n\nAnswer with a single word or phrase."
    )


COQA_C_OPTIONS = "A. Kuwait\nB. Jordan\nC. Egypt\nD. United Arab Emirates\n\nYour answer letter:"
TITLE = "Arts, skills and practices associated with engraving on metals (gold, silver and copper)"
CHOOSE = "Choose from the following options and output only the corresponding letter."


def test_coqa_prompts_follow_figures_76_77_and_the_d2_image_only_wording(docs):
    doc = docs["coqa_c"]
    image_only = GIMMICK["gimmick_coqa_c_image"].render(doc)
    assert image_only.query == (
        "<image>\n<image>\n\n"
        "In which of the following countries does the event shown in the images take place?\n"
        f"{CHOOSE}\n\n{COQA_C_OPTIONS}"
    )
    assert TITLE not in image_only.query  # image-only really is image-only (§5.2.4)
    text_only = GIMMICK["gimmick_coqa_c_text"].render(doc)
    assert text_only.query == (
        f"From which of the following countries does the cultural event or facet with the title ``{TITLE}`` "
        f"originate?\n{CHOOSE}\n\n{COQA_C_OPTIONS}"
    )
    assert text_only.images == []
    both = GIMMICK["gimmick_coqa_c_image_text"].render(doc)
    assert both.query == (
        "<image>\n<image>\n\n"
        f"From which of the following countries does the cultural event or facet with the title ``{TITLE}`` "
        f"shown in the images originate?\n{CHOOSE}\n\n{COQA_C_OPTIONS}"
    )
    assert image_only.target == text_only.target == both.target == "C"  # the paper's answer for this example


def test_coqa_r_asks_for_regions(docs):
    request = GIMMICK["gimmick_coqa_r_image"].render(docs["coqa_r"])
    assert "In which of the following regions does the event shown in the images take place?" in request.query
    assert "B. Arab States\n" in request.query and request.target == "B"


@pytest.mark.parametrize("name", sorted(GIMMICK))
def test_both_harnesses_get_the_same_prompt_and_images(docs, name):
    spec = GIMMICK[name]
    doc = docs[spec.all_config]
    request = spec.render(doc)
    lm_eval_text = lm_eval_hooks.__getattr__(f"doc_to_text_{name}")(doc)
    lm_eval_target = lm_eval_hooks.__getattr__(f"doc_to_target_{name}")(doc)
    lighteval_doc = lighteval_tasks.make_prompt_function(spec)(doc, name)
    assert lm_eval_text == request.query
    assert lighteval_doc.query == without_image_placeholders(lm_eval_text)
    assert "<image>" not in lighteval_doc.query
    assert lighteval_doc.get_golds() == [lm_eval_target] == [request.target]
    lighteval_images = lighteval_doc.images or []
    if spec.has_media:
        lm_eval_images = lm_eval_hooks.__getattr__(f"doc_to_image_{name}")(doc)
        assert len(lm_eval_images) == len(lighteval_images) == lm_eval_text.count("<image>") > 0
        assert [im.tobytes() for im in lm_eval_images] == [im.tobytes() for im in lighteval_images]
    else:
        assert lighteval_images == [] and "<image>" not in lm_eval_text


def test_lm_eval_decodes_a_video_once_for_its_text_and_its_frames(docs, monkeypatch):
    calls = []
    real = gimmick.video_frames
    monkeypatch.setattr(gimmick, "video_frames", lambda *a, **k: calls.append(1) or real(*a, **k))
    doc = {**docs["cvvqa"], "id": "decode-once"}
    lm_eval_hooks.__getattr__("doc_to_text_gimmick_cvvqa_both")(doc)
    lm_eval_hooks.__getattr__("doc_to_image_gimmick_cvvqa_both")(doc)
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("config", "field", "value", "message"),
    [
        ("civqa", "question", None, "field 'question'"),
        ("civqa", "image", b"not an image", "image"),
        ("cvvqa", "video", {"bytes": b"\x00" * 64, "path": None}, "video"),
        ("coqa_c", "answer", "E", "field 'answer'"),
        ("coqa_c", "options", ["a", "b"], "field 'options'"),
    ],
)
def test_bad_records_raise_an_error_naming_record_and_field(docs, config, field, value, message):
    spec = next(s for s in GIMMICK.values() if s.all_config == config and s.has_media)
    doc = {**docs[config], "id": "bad-record-7", field: value}
    with pytest.raises(RecordError, match=message) as error:
        spec.render(doc)
    assert "bad-record-7" in str(error.value)


# ------------------------------------------------------------------------------------- scores


def _values(spec, docs_and_predictions):
    samples = [score_sample(spec, doc, prediction) for doc, prediction in docs_and_predictions]
    return {name: aggregator(aggregation_kind(spec, name))([s[name] for s in samples]) for name in samples[0]}


def test_vqa_scores_are_micro_overall_and_count_a_sample_in_each_of_its_regions(docs):
    spec = GIMMICK["gimmick_civqa_none"]
    base = docs["civqa"]
    a_and_w = {**base, "region_codes": ["A", "W"]}
    w_only = {**base, "region_codes": ["W"]}
    scores = _values(
        spec,
        [
            (base, "Cherry Queen of Sefrou"),  # starts with the answer: correct
            (a_and_w, " cherry queen"),  # wrong case: wrong for the paper, right when normalised
            (w_only, ""),  # empty: wrong, except for the authors' symmetric rule
            (w_only, "Answer: Cherry Queen."),
        ],
    )
    assert scores["relaxed_acc"] == 25.0  # micro: 1 of 4
    assert scores["relaxed_acc_A"] == 50.0  # base and a_and_w
    assert scores["relaxed_acc_W"] == 0.0  # a_and_w and both w_only
    assert math.isnan(scores["relaxed_acc_SA"])  # no sample from that region
    assert scores["relaxed_acc_norm"] == 75.0
    assert scores["relaxed_acc_compat"] == 50.0  # the correct one and the empty one


def test_coqa_overall_is_the_mean_of_the_region_scores(docs):
    spec = GIMMICK["gimmick_coqa_c_text"]
    doc = docs["coqa_c"]  # gold letter C
    a_docs = [({**doc, "region_codes": ["A"]}, prediction) for prediction in ("C", "C. Egypt", "B")]
    w_docs = [({**doc, "region_codes": ["W"]}, "A")]
    scores = _values(spec, a_docs + w_docs)
    assert scores["relaxed_acc_A"] == pytest.approx(200 / 3)
    assert scores["relaxed_acc_W"] == 0.0
    assert scores["relaxed_acc"] == pytest.approx(100 / 3)  # (66.7 + 0) / 2, not the micro 50


def test_a_sample_without_regions_is_an_error_naming_it(docs):
    with pytest.raises(RecordError, match=r"paper-civqa-sefrou.*region_codes"):
        score_sample(GIMMICK["gimmick_civqa_none"], {**docs["civqa"], "region_codes": []}, "x")


def test_ckqa_prompts_follow_figures_138_139_and_keep_what_the_judge_needs(docs):
    doc = docs["ckqa"]
    naming = GIMMICK["gimmick_ckqa_n"].render(doc)
    assert naming.query == (
        "Name the cultural event or facet depicted by the following images. Answer briefly and concisely.\n\n"
        "<image>\n<image>\n\nYour answer:"
    )
    assert naming.target == "Cherry festival in Sefrou"  # CKQA_N: the title (L164)
    essay = GIMMICK["gimmick_ckqa_d_text"].render(doc)
    assert essay.query == (
        "Write a brief essay about the cultural event or facet with the title ``Cherry festival in Sefrou``.\n\n"
        "Your answer:"
    )
    assert essay.target == doc["description"] and essay.images == []  # CKQA_D: the description
    assert GIMMICK["gimmick_ckqa_d_image_text"].render(doc).query == (
        "Write a brief essay about the cultural event or facet depicted by the following images. "
        "It has the title ``Cherry festival in Sefrou``.\n\n<image>\n<image>\n\nYour answer:"
    )
    value = score_sample(GIMMICK["gimmick_ckqa_n"], doc, "  The cherry festival ")
    assert value["judge_score"] == {
        "score": None,  # scored by the judge at aggregation time
        "regions": ["A"],
        "judge": {
            "prompt": "gimmick_ckqa",
            "fields": {"GROUND_TRUTH": "Cherry festival in Sefrou", "GENERATED_ANSWER": "The cherry festival"},
        },
    }
    assert value["judge_score_W"] is value["judge_score"] is value["judge_score_unscored"]


def test_frame_limits_keep_frames_spread_over_the_clip_and_bound_their_size(docs):
    spec = GIMMICK["gimmick_cvvqa_none"]
    try:
        gimmick.configure_frames(max_frames=4, max_side=32)
        request = spec.render({**docs["cvvqa"], "id": "limited"})
    finally:
        gimmick.configure_frames()
    assert len(request.images) == 4 and request.query.count("<image>") == 4
    assert all(max(image.size) <= 32 for image in request.images)
    assert len(spec.render({**docs["cvvqa"], "id": "unlimited"}).images) == 10
