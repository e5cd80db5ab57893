"""Judge prompts are versioned data: a changed template without a new version fails here.

`PINNED` holds the content hash of every registered prompt at its version. Editing a prompt's
text, fields or reply format changes its hash: bump `version` in the prompt module and add
the new (id, version) -> hash line below. Old lines stay: they document what each version was.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from metric_plugins.judge import PROMPTS, JudgeItem, JudgePrompt, XmlScore, ckqa_item, get_prompt
from metric_plugins.judge.prompts.gimmick import GIMMICK_CKQA

PINNED = {
    ("gimmick_ckqa", 1): "48189f6290a09f39c4f0f75b5cd36b4c5e159c7b659c411a55a6419eb17416ad",
    ("arb_final_answer", 1): "fd931c26b76efc27a7da0a5eb4e6c6cd4a8e46577612fbd7dae979a6cd73037d",
    ("arb_steps", 1): "963c5c83eb6261aef864a1cb83d9585ac4aba77250f8c413769ba73b0a428721",
    ("dcscore_extract", 1): "dd5229c3643a8ccbe6efb619a75dd9c90c089465f3c3e479b91c9388b83b6776",
    ("dcscore_match", 1): "bccc27da7237f7abee871a38410347d5931ac096e9561474027064caff75d98d",
    ("dcscore_verify", 1): "8c777ef0a2682a3af10b045b4abce6d2e22d6b8c18541e2cf647c423fd434d7b",
    ("dcscore_extract_ar", 1): "1792f8ff846eaa747a12bfecbb626fbe880eace8f6573253ff9d6c2d04b2b1cc",
    ("dcscore_match_ar", 1): "f6438007e64d1e68f5184ed885b89f329099f11f7f902924ccd3718ee7e0c3c4",
    ("dcscore_verify_ar", 1): "4112f16c30ff22d14ab3e67be9229e234c39b76d0807ab6a80b64f6af72567c6",
    ("pearl_multiple_choice", 1): "fbbf22b8bce97207a5ade2d9d99e1c503d62b148cb74979706f319566486b4d9",
    ("pearl_true_false", 1): "cf01e7041ac9d283b89b19063bca6633a02d8f23ee159390cf87dfe72f873919",
    ("pearl_open_ended", 1): "c73adc358855bc67c9472cb2c039015c1d60b16ed3f4fa9db4d5e1f38dc4c0ce",
    ("pearl_cas", 1): "2f72134b6973803d085857baf5d668738d71ca8b6447c270a758c98f84b5f197",
    ("pearl_cas", 2): "91b639854077116ce1bf2b60759117099dc5a68adb55f9ebe0cb3f3a6988e51f",
    ("jeem_caption", 1): "56b51997467b7cd8c2de2280c3d798ef8c058e9540c2d6975bf639a9c02dba03",
    ("jeem_caption_msa", 1): "2a8a17d6fc2fc4b5d01b2c874dbafe9daf7da1a019e5398612c015146a4e737c",
    ("jeem_caption_refonly", 1): "24376e1620193d71e774005e08fafd96fee68302252f1feb50000fe5b62cf989",
    ("jeem_caption_refonly_msa", 1): "a7d84778c7d2533d90ce35679dc2e527c3c56f47a37d4ac84650cb0d3ee54fef",
    ("jeem_vqa", 1): "563c75658b0c5fa1a168dccc060ce7b34250303f1ae8a33e797ef42b37e900c2",
}
GIMMICK_SPEC = Path("/work/shared/specs/gimmick.md")


@pytest.mark.parametrize("prompt_id", sorted(PROMPTS))
def test_every_registered_prompt_is_pinned_at_its_version(prompt_id):
    prompt = PROMPTS[prompt_id]
    key = (prompt.id, prompt.version)
    assert key in PINNED, f"{prompt.id} v{prompt.version} is not pinned: add {key!r}: {prompt.content_hash!r}"
    assert prompt.content_hash == PINNED[key], (
        f"judge prompt {prompt.id} changed without a version bump: bump its version and pin "
        f"({prompt.id!r}, {prompt.version + 1}): {prompt.content_hash!r}"
    )


def test_any_change_to_the_content_changes_the_hash_but_the_source_note_does_not():
    base = GIMMICK_CKQA.content_hash
    edits = [
        {"user_template": GIMMICK_CKQA.user_template + " "},
        {"system": GIMMICK_CKQA.system.replace("0 to 100", "0 to 10")},
        {"reply_format": XmlScore(high=10)},
        {"images_first": False},
    ]
    for edit in edits:
        assert dataclasses.replace(GIMMICK_CKQA, **edit).content_hash != base, edit
    assert dataclasses.replace(GIMMICK_CKQA, source="elsewhere").content_hash == base


def _spec_block(text: str, heading: str) -> str:
    start = text.index("````\n", text.index(heading)) + len("````\n")
    return text[start : text.index("\n````", start)]


@pytest.mark.skipif(not GIMMICK_SPEC.exists(), reason="the shared GIMMICK spec is not on this machine")
def test_gimmick_ckqa_texts_are_the_papers_verbatim():
    spec = GIMMICK_SPEC.read_text("utf-8")
    assert GIMMICK_CKQA.system == _spec_block(spec, "**Judge system prompt (verbatim")
    assert GIMMICK_CKQA.user_template == _spec_block(spec, "**Judge user prompt template (verbatim")


def test_gimmick_ckqa_shape():
    assert GIMMICK_CKQA.system.startswith("# Your Role\n\nYou are an impartial judge")
    assert GIMMICK_CKQA.system.endswith("<score>\n<!-- Put your score here -->\n</score>\n</evaluation>\n```")
    assert GIMMICK_CKQA.user_template.endswith("```\n{GENERATED_ANSWER}\n```\n\n# Evaluation")
    assert "↪" not in GIMMICK_CKQA.system + GIMMICK_CKQA.user_template
    assert get_prompt("gimmick_ckqa") is GIMMICK_CKQA


def test_ckqa_ground_truth_is_the_description_for_d_and_the_title_for_n():
    d = ckqa_item("ckqa_d", title="Al-Sadu", description="Traditional weaving by Bedouin women.", answer="x")
    n = ckqa_item("ckqa_n", title="Al-Sadu", description="Traditional weaving by Bedouin women.", answer="x")
    assert d.fields["GROUND_TRUTH"] == "Traditional weaving by Bedouin women."
    assert n.fields["GROUND_TRUTH"] == "Al-Sadu"
    system, user = GIMMICK_CKQA.render(n)
    assert system.role == "system" and system.text == GIMMICK_CKQA.system
    assert "```\nAl-Sadu\n```" in user.text and "```\nx\n```" in user.text and not user.images
    with pytest.raises(ValueError, match="ckqa_d"):
        ckqa_item("ckqa", title="t", description="d", answer="a")  # type: ignore[arg-type]


def test_filling_is_one_pass_and_leaves_other_braces_alone():
    prompt = JudgePrompt("t", 1, None, 'Q: {Q}\nA: {A}\nReply {"score": n}', XmlScore(), ("Q", "A"))
    (user,) = prompt.render(JudgeItem({"Q": "What is {A}?", "A": "سدو"}))
    assert user.text == 'Q: What is {A}?\nA: سدو\nReply {"score": n}'


def test_a_missing_or_non_string_field_names_the_item():
    with pytest.raises(KeyError, match="item 'doc-7' has no field 'GENERATED_ANSWER'"):
        GIMMICK_CKQA.render(JudgeItem({"GROUND_TRUTH": "x"}, id="doc-7"))
    with pytest.raises(TypeError, match="item 'doc-8' field 'GENERATED_ANSWER' must be a string"):
        GIMMICK_CKQA.render(JudgeItem({"GROUND_TRUTH": "x", "GENERATED_ANSWER": None}, id="doc-8"))


def test_a_prompt_must_use_its_fields_and_start_at_version_one():
    with pytest.raises(ValueError, match="appear in no template"):
        JudgePrompt("t", 1, None, "no placeholders", XmlScore(), ("Q",))
    with pytest.raises(ValueError, match="version"):
        JudgePrompt("t", 0, None, "{Q}", XmlScore(), ("Q",))
