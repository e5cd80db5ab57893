"""JEEM judge prompts: captions (Figure 9, image + reference; Figure 10, reference only) and VQA (Figure 11).

Paper: "JEEM: Vision-Language Understanding in Four Arabic Dialects" (papers/jeem.txt). Judge:
``gpt-4-turbo-2024-04-09`` for the captions (L152, L180), GPT-4o for the reference-only run (L823);
decoding not specified, so the default `Sampling` (temperature 0) applies. Four criteria, each
1-5, answered as ``Criterion: X/5`` lines (`CriterionLines`: strict, an unparseable reply is
invalid, never a score).

The three texts are the paper's figures verbatim (L752-776, L780-798, L802-818), kept as data files
next to this module: ``jeem_caption.txt``, ``jeem_caption_refonly.txt``, ``jeem_vqa.txt``. The
``**...**`` bold is the paper's. Where a figure prints "[same as above]" (L798, L818) the text holds
Figure 9's four output lines; Figure 11 prints its output header without the blank line after it,
and keeps it so. ``{country}``, ``{reference}``, ``{generated}`` and ``{question}`` are the
figures' own placeholders, filled by the fields of the same names.

For MSA the paper includes "only the first three criteria (Consistency, Relevance, and Fluency)
... while Dialect Authenticity was omitted" (L677) but prints no MSA text: the ``_msa`` prompts are
the dialect texts with the criteria sentence changed to three criteria, the Dialect Authenticity
paragraph and its output line removed (`without_dialect_authenticity`), and no ``{country}`` field.
"""

from __future__ import annotations

from metric_plugins.judge.parsing import CriterionLines
from metric_plugins.judge.prompts.base import JudgePrompt, read_text

CRITERIA = ("Consistency", "Relevance", "Fluency", "Dialect Authenticity")
MSA_CRITERIA = CRITERIA[:3]
SOURCE = "JEEM paper (papers/jeem.txt)"

CAPTION_TEXT = read_text("jeem_caption.txt")
CAPTION_REFONLY_TEXT = read_text("jeem_caption_refonly.txt")
VQA_TEXT = read_text("jeem_vqa.txt")


def _replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise ValueError(f"JEEM prompt: expected {old[:60]!r} once, found it {text.count(old)} times")
    return text.replace(old, new)


def without_dialect_authenticity(text: str) -> str:
    """The MSA version of a caption prompt: three criteria, no Dialect Authenticity paragraph or line (L677)."""
    text = _replace_once(
        text,
        "four criteria: **Consistency, Relevance, Fluency, and Dialect Authenticity.**",
        "three criteria: **Consistency, Relevance, and Fluency.**",
    )
    start = text.index("\n\nDialect Authenticity: ")  # the criterion's paragraph
    text = text[:start] + text[text.index("\n\n", start + 2) :]
    return _replace_once(text, "\n\nDialect Authenticity: X/5", "")


def _prompt(prompt_id: str, text: str, fields: tuple[str, ...], criteria: tuple[str, ...], source: str) -> JudgePrompt:
    return JudgePrompt(
        id=prompt_id,
        version=1,
        system=None,  # the figures are one user message
        user_template=text,
        reply_format=CriterionLines(criteria, low=1, high=5),
        fields=fields,
        images_first=True,
        source=f"{SOURCE} {source}",
    )


JEEM_CAPTION = _prompt(
    "jeem_caption", CAPTION_TEXT, ("country", "reference", "generated"), CRITERIA, "Figure 9, L752-776"
)
JEEM_CAPTION_MSA = _prompt(
    "jeem_caption_msa",
    without_dialect_authenticity(CAPTION_TEXT),
    ("reference", "generated"),
    MSA_CRITERIA,
    "Figure 9 without Dialect Authenticity (L677)",
)
JEEM_CAPTION_REFONLY = _prompt(
    "jeem_caption_refonly",
    CAPTION_REFONLY_TEXT,
    ("country", "reference", "generated"),
    CRITERIA,
    "Figure 10, L780-798 (Appendix G, L823)",
)
JEEM_CAPTION_REFONLY_MSA = _prompt(
    "jeem_caption_refonly_msa",
    without_dialect_authenticity(CAPTION_REFONLY_TEXT),
    ("reference", "generated"),
    MSA_CRITERIA,
    "Figure 10 without Dialect Authenticity (L677)",
)
JEEM_VQA = _prompt(
    "jeem_vqa", VQA_TEXT, ("country", "question", "reference", "generated"), CRITERIA, "Figure 11, L802-818 (L210)"
)

JEEM_PROMPTS = (JEEM_CAPTION, JEEM_CAPTION_MSA, JEEM_CAPTION_REFONLY, JEEM_CAPTION_REFONLY_MSA, JEEM_VQA)
