"""ARB final answers: splitting a response into steps and answer, and the judge-free answer matcher.

Extraction (specs/arb.md 3.2, our decision A7): the text after the last answer marker; the
prompt asks for ``الجواب هو:`` (L161), reference chains use ``الجواب النهائي:`` (L236), and
English markers are accepted too. The steps are the text before the answer line's first marker:
markers on the line of the last one are one answer line (``الجواب هو: الجواب النهائي: ب``, or a
released answer that restates the marker, `arab_mm_tasks.arb.released.compose_response`), so
they never stay in the steps. Without a marker the last non-empty line is the answer and the
whole response counts as steps. Every pattern is linear (`metric_plugins.text_parsing`'s rule):
a marker's spaces and bold stars are one character class, ``[\\s*]*:``.

`answer_match` is NOT the paper's final-answer score (the paper's is a judge, 3.3): it is a
normalised matcher reported under its own name. It resolves an Arabic option letter to its
option (the three released choice styles), folds Arabic spelling and digits, compares numbers
with a 1% relative tolerance (``2.0944`` vs ``2.09``; units after the number are ignored), and
otherwise compares normalised text, containment of the gold text counting as a match.

    >>> split_response("الخطوة 1: نعد.\\nالإجراء 1: نجمع.\\nالجواب هو: **١٢ قدمًا**")
    ('الخطوة 1: نعد.\\nالإجراء 1: نجمع.', '١٢ قدمًا')
    >>> split_response("الخطوة 1: نعد.\\n\\nالجواب هو: الجواب النهائي: 12")
    ('الخطوة 1: نعد.', '12')
    >>> answer_match("12 قدمًا", "12", [])
    1.0
    >>> answer_match("ج) الصورة ج", "ج", [])
    1.0
    >>> answer_match("٢", "ب", ["١", "٢", "٣", "٤", "٥"])
    1.0
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

ANSWER_MARKERS = (
    "الجواب هو:",
    "الجواب النهائي:",
    "الإجابة النهائية:",
    "الإجابة هي:",
    "The correct answer is:",
    "Final Answer:",
    "Correct Answer:",
)
# spaces and bold stars before the colon are one class: ``\s*\**\s*:`` backtracks n^2 on a run of spaces
_MARKER = re.compile(
    "|".join(re.escape(marker).replace(r"\ ", r"\s*").replace(":", r"[\s*]*:") for marker in ANSWER_MARKERS),
    re.IGNORECASE,
)
ABJAD = ("أ", "ب", "ج", "د", "ه", "و", "ز", "ح")  # option order (هـ is folded to ه)


def split_response(response: str) -> tuple[str, str]:
    """(steps, final answer) of a model response; markdown emphasis around the answer is dropped."""
    matches = list(_MARKER.finditer(response))
    if matches:
        last = matches[-1]
        line_start = response.rfind("\n", 0, last.start()) + 1
        first = next(m for m in matches if m.start() >= line_start)  # the answer line's first marker
        steps, answer = response[: first.start()], response[last.end() :]
    else:
        lines = [line for line in response.splitlines() if line.strip()]
        steps, answer = response, lines[-1] if lines else ""
    return steps.strip().rstrip("*").strip(), answer.strip().strip("*").strip()


def extract_answer(response: str) -> str:
    return split_response(response)[1]


def response_steps(response: str) -> str:
    return split_response(response)[0]


# ---------------------------------------------------------------------------- normalisation

_DIACRITICS = re.compile(r"[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")  # and tatweel
_DIGITS = str.maketrans("٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹٫", "01234567890123456789.")
_LETTERS = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ة": "ه", "ى": "ي", "ؤ": "و", "ئ": "ي"})
_PUNCT = re.compile(r"[^\w.\s]|(?<!\d)\.|\.(?!\d)")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def normalize(text: str) -> str:
    """Arabic spelling folded, Arabic-Indic digits to ASCII, punctuation dropped, spaces collapsed, lower case."""
    text = _DIACRITICS.sub("", text.replace("هـ", "ه")).translate(_DIGITS).translate(_LETTERS)
    text = text.replace(",", "") if re.fullmatch(r"[\d,]+(\.\d+)?", text.strip()) else text
    return " ".join(_PUNCT.sub(" ", text).split()).lower()


def _letter(text: str) -> str | None:
    """The option letter `text` is (``أ``, ``هـ``), normalised to its `ABJAD` form, or None."""
    folded = normalize(text)
    letters = {normalize(letter): letter for letter in ABJAD}
    return letters.get(folded)


# ---------------------------------------------------------------------------- options

_LABELLED = re.compile(r"^\s*(هـ|[أابجدهوزح])\s*[.)\-]\s*(.+)$", re.DOTALL)  # "أ. text", "ج) text"


@dataclass(frozen=True)
class Option:
    letter: str  # its abjad letter by position
    text: str  # what it says, label removed


def _reversed_label(choice: str) -> str | None:
    """The text of an RTL-reversed choice ``text .N`` ('د .1', 'الملصق ب .1' for "1. د"), else None.

    str methods, not ``^\\s*(.*\\S)\\s+\\.(\\d+)\\s*$``: that pattern backtracks n^2 over spaces.
    """
    head, dot, number = choice.strip().rpartition(".")
    if dot and number.isdecimal() and head[-1:].isspace() and head.strip():
        return head.strip()
    return None


def parse_options(choices: Sequence[str]) -> list[Option]:
    """The released choice styles: ``أ. text``, RTL-reversed ``text .N``, or bare labels (``أ``, ``١``)."""
    options = []
    for position, choice in enumerate(choices):
        letter = ABJAD[position] if position < len(ABJAD) else str(position + 1)
        reversed_ = _reversed_label(choice)  # first: 'د .1' would also read as label د, text "1"
        labelled = None if reversed_ else _LABELLED.match(choice)
        text = reversed_ if reversed_ else labelled.group(2) if labelled else choice
        options.append(Option(letter, text.strip()))
    return options


def _option_index(answer: str, options: Sequence[Option]) -> int | None:
    """Which option `answer` names: its text (Diagrams answer with it), its letter, or its text after a label."""
    folded = normalize(answer)
    for i, option in enumerate(options):
        if normalize(option.text) == folded:
            return i
    letter = _letter(answer)
    if letter is not None:
        return next((i for i, option in enumerate(options) if option.letter == letter), None)
    labelled = _LABELLED.match(answer)
    if labelled:
        text = normalize(labelled.group(2))
        by_text = next((i for i, option in enumerate(options) if normalize(option.text) == text), None)
        if by_text is not None:
            return by_text
        return _option_index(labelled.group(1), options)
    return None


def strip_answer_prefix(answer: str) -> str:
    """A gold answer without a leading answer marker (``الإجابة النهائية: 18`` -> ``18``)."""
    return extract_answer(answer) if _MARKER.search(answer) else answer.strip()


def resolve_gold(answer: str, choices: Sequence[str]) -> str:
    """The gold answer with an option letter resolved to ``letter. option text`` (for the judge and for readers)."""
    answer = strip_answer_prefix(answer)
    options = parse_options(choices)
    index = _option_index(answer, options) if options else None
    if index is None:
        return answer
    option = options[index]
    return option.text if normalize(option.text) == normalize(answer) else f"{option.letter}. {option.text}"


def _number(text: str) -> float | None:
    match = _NUMBER.search(normalize(text))
    return float(match.group()) if match else None


def _is_numeric(text: str) -> bool:
    """A number, possibly followed by a unit word (``12 قدمًا``)."""
    return re.fullmatch(r"[-+]?\d+(\.\d+)?( \S+)?", normalize(text)) is not None


def answer_match(prediction: str, gold: str, choices: Sequence[str]) -> float:
    """1.0 when the extracted answer `prediction` matches `gold` (see the module docstring), else 0.0."""
    gold, prediction = strip_answer_prefix(gold), prediction.strip()
    if not prediction:
        return 0.0
    options = parse_options(choices)
    if options:
        gold_index, predicted_index = _option_index(gold, options), _option_index(prediction, options)
        if gold_index is not None and predicted_index is not None:
            return float(gold_index == predicted_index)
    gold_letter, predicted_label = _letter(gold), _LABELLED.match(prediction)
    if gold_letter is not None:  # options inside the question: "ج) الصورة ج" answers "ج"
        said = _letter(prediction) or (predicted_label and _letter(predicted_label.group(1)))
        return float(said == gold_letter)
    if _is_numeric(gold):
        expected, got = _number(gold), _number(prediction)
        return float(got is not None and expected is not None and math.isclose(got, expected, rel_tol=0.01))
    folded_gold, folded = normalize(gold), normalize(prediction)
    return float(bool(folded_gold) and (folded == folded_gold or folded_gold in folded))
