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
# How the release labels its options: ``أ. نص`` (also ``(أ) نص``, ``A) text``), the RTL-reversed ``د .1``, or a
# bare label (``ب``, ``١``) when the options are in the image.
_LETTER = r"(?:هـ|[أابجدهوزحA-Ha-h])"
_LABELLED = re.compile(rf"\(?(?P<label>{_LETTER})\s*[.)]\s*(?P<text>.+)", re.DOTALL)
_REVERSED = re.compile(r"(?P<text>.+?)\s+\.(?P<label>\d+)", re.DOTALL)
_BARE = re.compile(rf"(?P<label>{_LETTER}|[0-9٠-٩]{{1,2}})")


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


def _spaced(text: str) -> str:
    return r"\s+".join(map(re.escape, text.split()))


def _listed(question: str, choice: str) -> bool:
    """Whether `question` lists `choice` with its label as an option marker: ``أ) 12`` / ``(أ) 12`` / ``أ. 12``
    for ``أ. 12``, ``(ب)`` / ``ب)`` / ``ب.`` for a bare ``ب``, ``د .1`` or ``1. د`` for the reversed ``د .1``."""
    text = " ".join(choice.split())
    if match := _REVERSED.fullmatch(text) or _LABELLED.fullmatch(text) or _BARE.fullmatch(text):
        label, body = re.escape(match["label"]), match.groupdict().get("text")
        marker = rf"(?:^|(?<=[\s(\[،,:؛]))\(?{label}\s*[.)](?![0-9٠-٩])"  # not a decimal point: 2.5
        pattern = marker + (rf"\s*{_spaced(body)}" if body else "")
        if _REVERSED.fullmatch(text):
            pattern += rf"|{_spaced(text)}"
        return re.search(pattern, question) is not None
    return False  # an option with no label: its text alone cannot show the question lists it


def choices_in_question(question: str, choices: Sequence[str]) -> bool:
    """Whether the question already lists the choices: with none, a ``الخيارات`` line; otherwise every choice
    with its label as an option marker (`_listed`), not merely its text.

    A chart question may quote the option values (``القيم 12 و 15 و 20 و 25``) while the gold answer
    is a letter: unless the question shows the labels, the model must see the labelled choices.
    """
    if not choices:
        return CHOICES_LABEL.rstrip(":") in question
    return all(_listed(question, choice) for choice in choices)


def question_block(question: str, choices: Sequence[str]) -> str:
    """``السؤال: …`` and, unless the question holds them, ``الخيارات:`` with one choice per line."""
    text = f"{QUESTION_LABEL} {clean_question(question)}"
    if choices and not choices_in_question(question, choices):
        text += f"\n{CHOICES_LABEL}\n" + "\n".join(choice.strip() for choice in choices)
    return text
