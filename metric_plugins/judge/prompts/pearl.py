"""Pearl judge prompts: multiple choice and True/False (binary), the open-ended rubric, and CAS.

Paper: "Pearl: A Multimodal Culturally-Aware Arabic Instruction Dataset", Alwajih et al.
Judge: InternVL3.5-38B (L139); decoding not specified, so the default `Sampling` (temperature 0).

- ``pearl_multiple_choice``, ``pearl_true_false``, ``pearl_open_ended``: Figure D.10 (L771-L817),
  verbatim from the paper's text, leading spaces and line breaks included; the doubled braces
  ``{{ }}`` of the rubric's JSON schema (Python ``str.format`` escaping) are printed as single
  braces. Kept as data files next to this module.
- ``pearl_cas`` (version 2): the paper defines the Cultural Awareness Score (L148) but prints no
  prompt for it, and sends readers to its repository for the evaluation prompts (L819). This is
  the authors' CAS prompt, verbatim as their scorer sends it: ``cas_prompt`` in
  ``prepare_score_prompt`` of ``eval/score.py`` at UBC-NLP/pearl@ae6e95d, the f-string after its
  ``.strip()`` (the source's 8-space indentation and trailing spaces included). It has no
  ``{question}``. Version 1 was a wording of ours (docs/fidelity.md).

Closed-form prompts are text only (they have no image placeholder; the authors' scorer sends no
image). The rubric and CAS prompts see the image (first) and the augmented caption as the
"Image description". Replies: one digit 0/1 (`BinaryDigit`), or a JSON object with the four
rubric scores in [0, 5] (`JsonScores`; the prompt's 0-5 scale, see docs/fidelity.md).

Each reply format also has ``authors(raw)``: what ``process_row`` in the authors' ``eval/score.py``
reads from the same reply, which the judge setting ``invalid_policy=authors`` scores instead of our
stricter parse (docs/fidelity.md, "Invalid judgements"). The formats' ``spec()`` is unchanged, so
the prompts' hashes and the judge cache keys are the same under every policy.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from metric_plugins.judge.parsing import BinaryDigit, JsonScores, ReplyFormat
from metric_plugins.judge.prompts.base import JudgePrompt, read_text

SOURCE = "Pearl paper (papers/pearl.txt) Figure D.10, L771-L817"
FIELDS = ("question", "ground_truth", "predicted_answer")
RUBRIC = ("correctness", "coherence", "detail", "fluency")
# Eq. (1), L145: Overall = 0.4 Correctness + 0.2 Coherence + 0.2 Detail + 0.2 Fluency
OVERALL_WEIGHTS = {"correctness": 0.4, "coherence": 0.2, "detail": 0.2, "fluency": 0.2}
FENCES = ("```json", "```")  # what score.py removes from a reply before reading it


def _unfenced(raw: str) -> str:
    for fence in FENCES:
        raw = raw.replace(fence, "")
    return raw.strip()


@dataclass(frozen=True)
class PearlBinary(BinaryDigit):
    """`BinaryDigit`, plus the authors' reading of a closed-form or CAS reply."""

    def authors(self, raw: str) -> dict[str, float | None]:
        """score.py: the reply's ``0``/``1`` characters, in order, read as one integer; none -> 0.

        >>> PearlBinary().authors("1 (maybe)"), PearlBinary().authors("10"), PearlBinary().authors("yes")
        ({'score': 1.0}, {'score': 10.0}, {'score': 0.0})
        """
        digits = "".join(c for c in _unfenced(raw) if c in "01")
        return {self.name: float(int(digits)) if digits else 0.0}


@dataclass(frozen=True)
class PearlRubric(JsonScores):
    """`JsonScores`, plus the authors' reading of a rubric reply."""

    def authors(self, raw: str) -> dict[str, float | None] | None:
        """score.py: ``json.loads`` of the whole reply (code fences removed, stripped).

        Not JSON (prose around the object included) -> -1 for every dimension. JSON that is not an
        object (a bare number, a list, a string) -> None: ``scores.get`` raises, and score.py writes
        the row to its error file, so the row has no rubric scores and no CAS. An object -> each
        dimension's value as given, -1 when missing (out of range kept); a non-number (null, NaN,
        text) -> None, a value pandas leaves out of the mean or cannot average.

        >>> rubric = PearlRubric(RUBRIC, low=0, high=5, integer=False)
        >>> rubric.authors('Scores: {"correctness": 4, "coherence": 4, "detail": 3, "fluency": 5}')
        {'correctness': -1.0, 'coherence': -1.0, 'detail': -1.0, 'fluency': -1.0}
        >>> rubric.authors("4") is None
        True
        >>> rubric.authors('```json {"correctness": 7, "detail": 3} ```')
        {'correctness': 7.0, 'coherence': -1.0, 'detail': 3.0, 'fluency': -1.0}
        """
        try:
            data = json.loads(_unfenced(raw))
        except (json.JSONDecodeError, RecursionError):
            return dict.fromkeys(self.names, -1.0)
        if not isinstance(data, dict):
            return None
        return {name: _number(data.get(name, -1)) for name in self.names}


def _number(value: object) -> float | None:
    """A JSON value as pandas averages it: numbers (booleans as 0/1), else None (left out)."""
    if isinstance(value, int | float) and not (isinstance(value, float) and math.isnan(value)):
        return float(value)
    return None


def _prompt(name: str, reply: ReplyFormat, fields: tuple[str, ...], source: str) -> JudgePrompt:
    """A version-1 prompt whose user turn is ``<name>.txt`` (no system turn: the paper shows none)."""
    return JudgePrompt(
        id=name, version=1, system=None, user_template=read_text(f"{name}.txt"), reply_format=reply, fields=fields,
        source=source,
    )  # fmt: skip


PEARL_MULTIPLE_CHOICE = _prompt("pearl_multiple_choice", PearlBinary(), FIELDS, f"{SOURCE} (multiple_choice)")
PEARL_TRUE_FALSE = _prompt("pearl_true_false", PearlBinary(), FIELDS, f"{SOURCE} (true_false)")
PEARL_OPEN_ENDED = _prompt(
    "pearl_open_ended",
    PearlRubric(RUBRIC, low=0, high=5, integer=False),
    ("image_description", *FIELDS),
    f"{SOURCE} (open-ended)",
)
PEARL_CAS = JudgePrompt(
    id="pearl_cas",
    version=2,
    system=None,
    user_template=read_text("pearl_cas.txt"),
    reply_format=PearlBinary(),
    fields=("image_description", "ground_truth", "predicted_answer"),
    source="UBC-NLP/pearl@ae6e95d eval/score.py, prepare_score_prompt: cas_prompt (verbatim, as sent after .strip())",
)

PEARL_PROMPTS = (PEARL_MULTIPLE_CHOICE, PEARL_TRUE_FALSE, PEARL_OPEN_ENDED, PEARL_CAS)
