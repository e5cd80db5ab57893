"""ARB release fields as released -> typed values: choices lists and (step, action) pairs.

Never ``eval`` nor ``ast.literal_eval``: a ``choices`` or list-literal ``steps`` string is read by
`metric_plugins.text_parsing.python_literal` (one linear pass to JSON, depth-bounded, then
``json.loads``), so ``"[" + "-" * 5000 + "1]"`` is a named `FieldError`, never a RecursionError.
Every pattern here is linear (`metric_plugins.text_parsing`'s rule). Step markers are ``الخطوة n:``
and ``الإجراء n:``; the release's typos with a dropped alef, ``لخطوة n:`` and ``لإجراء n:`` (8
released rows), are markers too, as is ``الخطوة n -``;
a chain with none of these reads ``الخطوة n`` followed by a space as a marker (2 released rows).
A chain with no step marker (3 released rows are numbered prose) has no pairs; its raw text is
kept and the build counts it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from metric_plugins.text_parsing import LiteralError, python_literal

ACTION = ("الإجراء", "لإجراء")  # as written, and the release's typo
_MARK = r"(?<![^\s'\"\[(])(ا?لخطوة|ا?لإجراء)\s*(\d+)\s*"
_STEP = re.compile(_MARK + r"[:\-–]")
_LOOSE = re.compile(_MARK + r"(?=\s)")  # ``الخطوة 1 تحديد …``: only for a chain with no ``:``/``-`` marker


class FieldError(ValueError):
    """A field that cannot be parsed; the builder names the record."""


def parse_choices(text: str) -> list[str]:
    """``"['أ. …', 'ب. …']"`` -> the list; an empty field -> []."""
    stripped = text.strip()
    if not stripped:
        return []
    try:
        value = python_literal(stripped)
    except LiteralError as error:
        raise FieldError(f"is not a Python list literal ({error}): {stripped[:60]!r}") from None
    if not isinstance(value, list | tuple) or not all(isinstance(v, str | int | float) for v in value):
        raise FieldError(f"is not a list of strings: {stripped[:60]!r}")
    return [str(v) for v in value]


def steps_text(text: str) -> str:
    """The chain as lines: a list literal (34 released rows) joined by newlines, otherwise the text as released."""
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        try:
            value = python_literal(stripped)
        except LiteralError:
            return text
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return "\n".join(v.strip() for v in value)
    return text


class StepPair(NamedTuple):
    """One reasoning step and its action; a tuple, so ``pairs == [("…", "…")]`` reads as written."""

    step: str
    action: str


def parse_steps(text: str) -> list[StepPair]:
    """(step, action) pairs in the order written: a step marker opens a pair, the next action marker closes it.

    An action with no open step (or a step with no action) keeps an empty half, so nothing is lost.
    """
    text = steps_text(text)
    marks = list(_STEP.finditer(text)) or list(_LOOSE.finditer(text))
    pairs: list[dict[str, str]] = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.end() : end].strip()
        if mark.group(1) not in ACTION:
            pairs.append({"step": body, "action": ""})
        elif pairs and not pairs[-1]["action"]:
            pairs[-1]["action"] = body
        else:
            pairs.append({"step": "", "action": body})
    return [StepPair(**pair) for pair in pairs]
