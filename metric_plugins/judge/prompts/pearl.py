"""Pearl judge prompts: multiple choice and True/False (binary), the open-ended rubric, and CAS.

Paper: "Pearl: A Multimodal Culturally-Aware Arabic Instruction Dataset", Alwajih et al.
Judge: InternVL3.5-38B (L139); decoding not specified, so the default `Sampling` (temperature 0).

- ``pearl_multiple_choice``, ``pearl_true_false``, ``pearl_open_ended``: Figure D.10 (L771-L817),
  verbatim from the paper's text, leading spaces and line breaks included; the doubled braces
  ``{{ }}`` of the rubric's JSON schema (Python ``str.format`` escaping) are printed as single
  braces. Kept as data files next to this module.
- ``pearl_cas``: the paper defines the Cultural Awareness Score (L148) but prints no prompt for it.
  This wording is ours, in the layout of the rubric prompt, built from the paper's definition and
  the authors' description of their scorer (docs/fidelity.md).

Closed-form prompts are text only (they have no image placeholder; the authors' scorer sends no
image). The rubric and CAS prompts see the image (first) and the augmented caption as the
"Image description". Replies: one digit 0/1 (`BinaryDigit`), or a JSON object with the four
rubric scores in [0, 5] (`JsonScores`; the prompt's 0-5 scale, see docs/fidelity.md).
"""

from __future__ import annotations

from metric_plugins.judge.parsing import BinaryDigit, JsonScores, ReplyFormat
from metric_plugins.judge.prompts.base import JudgePrompt, read_text

SOURCE = "Pearl paper (papers/pearl.txt) Figure D.10, L771-L817"
FIELDS = ("question", "ground_truth", "predicted_answer")
RUBRIC = ("correctness", "coherence", "detail", "fluency")
# Eq. (1), L145: Overall = 0.4 Correctness + 0.2 Coherence + 0.2 Detail + 0.2 Fluency
OVERALL_WEIGHTS = {"correctness": 0.4, "coherence": 0.2, "detail": 0.2, "fluency": 0.2}


def _prompt(name: str, reply: ReplyFormat, fields: tuple[str, ...], source: str) -> JudgePrompt:
    """A version-1 prompt whose user turn is ``<name>.txt`` (no system turn: the paper shows none)."""
    return JudgePrompt(
        id=name, version=1, system=None, user_template=read_text(f"{name}.txt"), reply_format=reply, fields=fields,
        source=source,
    )  # fmt: skip


PEARL_MULTIPLE_CHOICE = _prompt("pearl_multiple_choice", BinaryDigit(), FIELDS, f"{SOURCE} (multiple_choice)")
PEARL_TRUE_FALSE = _prompt("pearl_true_false", BinaryDigit(), FIELDS, f"{SOURCE} (true_false)")
PEARL_OPEN_ENDED = _prompt(
    "pearl_open_ended",
    JsonScores(RUBRIC, low=0, high=5, integer=False),
    ("image_description", *FIELDS),
    f"{SOURCE} (open-ended)",
)
PEARL_CAS = _prompt(
    "pearl_cas",
    BinaryDigit(),
    ("image_description", *FIELDS),
    "ours: CAS definition L148 (Burda-Lassen et al. 2025) and the authors' eval/score.py as described",
)

PEARL_PROMPTS = (PEARL_MULTIPLE_CHOICE, PEARL_TRUE_FALSE, PEARL_OPEN_ENDED, PEARL_CAS)
