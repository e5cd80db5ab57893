"""ARB's model prompt: Figure 4 (L147-161) verbatim, then the question and its choices.

The Figure 4 text (``figure4_prompt.txt``) is the paper's Arabic, character for character as the seed text prints it,
defects included (``المقارنة والمقارنة``, L159). Its placeholders are filled: ``{Domain}``
with the domain's Arabic name (`arab_mm_tasks.arb.domains`, ours), ``{Curriculum}`` with the
record's curriculum where it stands for it (instruction 3; see `instructions`), and
``{example}`` with `EXAMPLE`, a structural exemplar of the step/action format (the paper's
few-shot example is not published and ARB has no split to draw one from; docs/fidelity.md).
The image placeholder comes first; the question
follows the instructions, its own ``<image>`` / ``<image 1>`` tokens removed, then the choices
once (one per line as released, labels included), unless the question already lists them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import resources

FIGURE_4 = (resources.files("arab_mm_tasks.arb") / "figure4_prompt.txt").read_text(encoding="utf-8")

# The step/action structure of the reference chains (specs/arb.md 2), not an item of the benchmark.
EXAMPLE = "(الخطوة 1: … الإجراء 1: … الخطوة 2: … الإجراء 2: …)"

QUESTION_LABEL = "السؤال:"
CHOICES_LABEL = "الخيارات:"
_IMAGE_TOKEN = re.compile(r"\s*<image(?:\s*\d+)?>\s*")
_LEADING_LABEL = re.compile(r"^\s*(?:السؤال|سؤال)\s*:\s*")
_OPTION_LABEL = re.compile(r"^\s*(?:هـ|[أابجدهوزح])\s*[.)]\s*|\s+\.\d+\s*$")


def instructions(domain_arabic: str, curriculum: str, example: str = EXAMPLE) -> str:
    """Figure 4 filled in one pass (a value holding ``{Domain}`` stays as it is).

    ``{Curriculum}`` is the record's curriculum only in instruction 3 ("follow the {Curriculum}
    curriculum"); instruction 4 and the four category lines use it as the variable's name
    (``{Curriculum} = "حسابي"``), so there it stays as printed.
    """
    text = FIGURE_4.replace("منهج {Curriculum}", "منهج {CurriculumValue}", 1)
    values = {"Domain": domain_arabic, "CurriculumValue": curriculum, "example": example}
    return re.sub(r"\{(Domain|CurriculumValue|example)\}", lambda m: values[m.group(1)], text)


def clean_question(question: str) -> str:
    """The question without ``<image>`` / ``<image 1>`` tokens (the image is attached once) or a leading ``السؤال:``."""
    text = " ".join(part for part in _IMAGE_TOKEN.split(question.strip()) if part).strip()
    return _LEADING_LABEL.sub("", text)


def choices_in_question(question: str, choices: Sequence[str]) -> bool:
    """Whether the question already lists the choices (a ``الخيارات`` line, or every option's text in it)."""
    if not choices:
        return CHOICES_LABEL.rstrip(":") in question
    texts = [_OPTION_LABEL.sub("", choice).strip() for choice in choices]
    return all(text and text in question for text in texts) and any(len(text) > 1 for text in texts)


def question_block(question: str, choices: Sequence[str]) -> str:
    """``السؤال: …`` and, unless the question holds them, ``الخيارات:`` with one choice per line."""
    text = f"{QUESTION_LABEL} {clean_question(question)}"
    if choices and not choices_in_question(question, choices):
        text += f"\n{CHOICES_LABEL}\n" + "\n".join(choice.strip() for choice in choices)
    return text
