"""The instructions JEEM's models get: one table, versioned.

The paper gives no model prompt (specs/jeem.md section 3.1). Its error analysis prompts each model
"in four dialects" and counts a "prompting bias" error (L240, L911), so the instruction names the
target variety. Each is one sentence of MSA Arabic, the same for every variety but for the variety's
name (`arab_mm_tasks.jeem.vocabulary.Variety.name_ar`), so subsets differ only in what they ask for:

- captioning: a detailed description for someone who cannot see the image, the collection's framing
  (L57, L74: "detailed enough for someone who cannot see the image", with region-specific details);
- VQA: the dialect question, then an answer of two or three sentences, the answerers' guideline
  ("Aim for 2-3 sentences", L558), in the question's dialect.

Bump `PROMPT_VERSION` (it is every JEEM task's version) whenever a text here changes.
"""

from __future__ import annotations

from arab_mm_tasks.jeem.vocabulary import Variety

PROMPT_VERSION = 1

CAPTION_INSTRUCTION = (
    "صف هذه الصورة وصفاً مفصلاً {variety}، كأنك تصفها لشخص لا يستطيع رؤيتها، "
    "واذكر أهم ما فيها من أشخاص وأشياء وأماكن وأي تفاصيل خاصة بالمنطقة."
)
VQA_INSTRUCTION = "أجب عن السؤال {variety} في جملتين أو ثلاث، بالاعتماد على ما يظهر في الصورة."


def caption_instruction(variety: Variety) -> str:
    """The captioning instruction for `variety` (MSA or a dialect)."""
    return CAPTION_INSTRUCTION.format(variety=variety.name_ar)


def vqa_instruction(variety: Variety) -> str:
    """The line after a VQA question: answer in `variety` (a dialect)."""
    return VQA_INSTRUCTION.format(variety=variety.name_ar)
