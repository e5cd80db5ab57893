"""
Relaxed accuracy: a generated answer is correct when it *starts with* the ground truth.

GIMMICK scores its open-ended VQA tasks (CIVQA, CVVQA) and its letter-answer MCQs (COQA_R,
COQA_C) this way: "we consider a generated answer correct if it starts with the ground truth
answer" (paper L182), reported x100. Three variants, all returning 100.0 or 0.0:

- `relaxed_match`: the paper's sentence, character for character (no normalisation at all).
- `normalized_relaxed_match`: the same rule after `normalize_answer` on both sides (case,
  whitespace, surrounding quotes/markdown, a leading "Answer:", trailing punctuation). It
  forgives formatting, never content: "The answer is C" still fails against "C".
- `symmetric_relaxed_match`: the authors' released code (``compute_match_accuracy``), which also
  accepts a prediction that is a *prefix of* the ground truth. Kept as a named compatibility
  metric only: it scores an **empty answer as correct** and "Sa" as a match for "Saman dance".

`normalize_answer` is linear on any text (`metric_plugins.text_parsing`'s rule): whitespace is
collapsed first, and its one pattern is anchored with no two quantifiers over the same characters.

Examples:
    >>> relaxed_match("Saman dance, performed by boys", "Saman dance")
    100.0
    >>> relaxed_match("saman dance", "Saman dance")
    0.0
    >>> normalized_relaxed_match("**Answer:** \\"saman  Dance.\\"", "Saman dance")
    100.0
    >>> normalized_relaxed_match("The answer is C", "C")
    0.0
    >>> symmetric_relaxed_match("", "Saman dance")  # the compatibility metric's known flaw
    100.0
"""

from __future__ import annotations

import re

_ANSWER_PREFIX = re.compile(r"^(?:final\s+)?answer(?:\s+letter)?\s*[:：]\s*", re.IGNORECASE)
_WRAPPERS = "\"'`*_“”‘’«»"  # quotes and markdown emphasis around an answer
_TRAILING_PUNCTUATION = ".,;:!?。"


def relaxed_match(prediction: str, target: str) -> float:
    """100.0 when `prediction` starts with `target` (paper L182), else 0.0. No normalisation."""
    return 100.0 if prediction.startswith(target) else 0.0


def normalize_answer(text: str) -> str:
    """Lower-cased, whitespace-collapsed text without wrapping quotes/markdown or a leading "Answer:".

    >>> normalize_answer('  Answer:  "Tar." ')
    'tar'
    """
    text = " ".join(text.split())
    text = text.strip(_WRAPPERS + " ")
    text = _ANSWER_PREFIX.sub("", text)
    text = text.strip(_WRAPPERS + " ")
    text = text.rstrip(_TRAILING_PUNCTUATION + _WRAPPERS + " ")
    return text.casefold()


def normalized_relaxed_match(prediction: str, target: str) -> float:
    """`relaxed_match` after `normalize_answer` on both sides; an empty normalised target never matches."""
    target = normalize_answer(target)
    return 100.0 if target and normalize_answer(prediction).startswith(target) else 0.0


def symmetric_relaxed_match(prediction: str, target: str) -> float:
    """The authors' code: either string starts with the other (so an empty prediction counts as correct)."""
    return 100.0 if prediction.startswith(target) or target.startswith(prediction) else 0.0
