"""Reply formats: what a judge prompt asks the judge to answer, and the parser that reads it.

A parser never guesses. A reply either yields every score the format names, each a number in
range, or it is invalid with a reason ("no <score> tag", "score 140 outside [0, 100]"); the
judge then re-asks and finally reports the item as invalid. No parser turns a failure into 0.

Every parser here follows `metric_plugins.text_parsing`'s rule: linear time on any reply (str
methods and patterns without overlapping unbounded quantifiers), a reply over ``MAX_REPLY_CHARS``
is invalid ("reply too long") before it is scanned, JSON is read with a depth bound.

Scores are ASCII digits or Arabic-Indic digits (``٠``-``٩``, and the Persian forms ``۰``-``۹``):
an Arabic-speaking judge may answer ``<score>٥٠</score>``, and it means 50. The digits are
translated explicitly (`ascii_digits`); any other script's digits (``５０``, ``५०``) are invalid,
not read by accident of ``\\d``. Inside JSON a number is a JSON number (ASCII digits only).

Examples:
    >>> XmlScore().parse("<evaluation>...<score>\\n 75 \\n</score></evaluation>").scores
    {'score': 75.0}
    >>> XmlScore().parse("<score>٥٠</score>").scores
    {'score': 50.0}
    >>> XmlScore().parse("I think it's good").reason
    'no <score> tag'
    >>> rubric = JsonScores(("correctness", "fluency"), low=1, high=5)
    >>> rubric.parse('```json\\n{"correctness": 4, "fluency": 5}\\n```').scores
    {'correctness': 4.0, 'fluency': 5.0}
    >>> BinaryDigit().parse(" 1. ").scores
    {'score': 1.0}
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from metric_plugins.text_parsing import LiteralError, json_value, reply_too_long

INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)  # after `ascii_digits`: only ASCII digits are a number
FENCE = re.compile(r"^```[\w-]*\s*\n?|\n?```\s*$")
# Arabic-Indic (U+0660-0669) and Extended Arabic-Indic (U+06F0-06F9) digits, read as the digits they are
ARABIC_DIGITS = str.maketrans("٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹", "01234567890123456789")


def ascii_digits(text: str) -> str:
    """`text` with Arabic-Indic digits as ASCII (``٥٠`` -> ``50``); other characters unchanged."""
    return text.translate(ARABIC_DIGITS)


def strip_comments(text: str) -> str:
    """`text` without ``<!-- ... -->`` comments, in one left-to-right pass (an unclosed ``<!--`` is kept)."""
    parts, position = [], 0
    while (start := text.find("<!--", position)) >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break
        parts.append(text[position:start])
        position = end + 3
    parts.append(text[position:])
    return "".join(parts)


@dataclass(frozen=True)
class Parsed:
    """Scores by name, or None and the reason the reply is invalid."""

    scores: dict[str, float] | None
    reason: str | None = None

    @property
    def valid(self) -> bool:
        return self.scores is not None


def invalid(reason: str) -> Parsed:
    return Parsed(None, reason)


class ReplyFormat(Protocol):
    """The expected reply: the score names it yields, a parser, and a description hashed into the prompt."""

    @property
    def score_names(self) -> tuple[str, ...]: ...

    def parse(self, text: str) -> Parsed: ...

    def spec(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class XmlScore:
    """An integer inside ``<tag>...</tag>``, anywhere in the reply (fences and surrounding XML are fine).

    Whitespace and HTML comments inside the tag are ignored, so an echoed empty template tag
    (``<score><!-- Put your score here --></score>``) does not count. Several non-empty tags must
    agree; a non-integer ("75.5", "high") or a value out of range is invalid.
    """

    tag: str = "score"
    low: int = 0
    high: int = 100

    @property
    def score_names(self) -> tuple[str, ...]:
        return (self.tag,)

    def parse(self, text: str) -> Parsed:
        if too_long := reply_too_long(text):
            return invalid(too_long)
        contents = [strip_comments(match).strip().strip("`*").strip() for match in self._tag_contents(text)]
        contents = [ascii_digits(content) for content in contents if content]
        if not contents:
            return invalid(f"no <{self.tag}> tag")
        if len(set(contents)) > 1:
            return invalid(f"conflicting <{self.tag}> values {[c[:40] for c in contents[:5]]}")
        if not INTEGER.fullmatch(contents[0]):
            return invalid(f"<{self.tag}> is not an integer: {contents[0][:40]!r}")
        value = int(contents[0])
        if not self.low <= value <= self.high:
            return invalid(f"{self.tag} {value} outside [{self.low}, {self.high}]")
        return Parsed({self.tag: float(value)})

    def _tag_contents(self, text: str) -> list[str]:
        """What each ``<tag>`` holds up to the next ``</tag>`` (case and spaces before ``>`` free), left to right.

        Each search starts where the last one ended, so the reply is scanned once; a ``<tag>`` with no
        closing tag after it ends the scan (no later one can close either).
        """
        name = re.escape(self.tag)
        opening = re.compile(rf"<{name}\s*>", re.IGNORECASE)
        closing = re.compile(rf"</{name}\s*>", re.IGNORECASE)
        contents, position = [], 0
        while (start := opening.search(text, position)) is not None:
            end = closing.search(text, start.end())
            if end is None:
                break
            contents.append(text[start.end() : end.start()])
            position = end.end()
        return contents

    def spec(self) -> dict[str, Any]:
        return {"format": "xml_score", **asdict(self)}


@dataclass(frozen=True)
class JsonScores:
    """A JSON object with a number for each name in range (``integer``: whole numbers only).

    Code fences and text around the object are tolerated (the first ``{`` to the last ``}`` is
    read); other keys are ignored. A missing key, a string or boolean value, or a value out of
    range makes the reply invalid.
    """

    names: tuple[str, ...]
    low: float = 0
    high: float = 100
    integer: bool = True

    @property
    def score_names(self) -> tuple[str, ...]:
        return self.names

    def parse(self, text: str) -> Parsed:
        if too_long := reply_too_long(text):
            return invalid(too_long)
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end < start:
            return invalid("no JSON object")
        try:
            data = json_value(text[start : end + 1])
        except LiteralError as error:
            return invalid(f"malformed JSON: {error}")
        if not isinstance(data, dict):
            return invalid("JSON is not an object")
        scores: dict[str, float] = {}
        for name in self.names:
            value = data.get(name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return invalid(f"{name!r} is missing or not a number: {value!r}"[:120])
            if self.integer and float(value) != int(value):
                return invalid(f"{name!r} is not an integer: {value!r}")
            if not self.low <= value <= self.high:
                return invalid(f"{name} {value} outside [{self.low}, {self.high}]")
            scores[name] = float(value)
        return Parsed(scores)

    def partial(self, text: str) -> dict[str, float]:
        """The named numbers a reply's JSON object does hold, in any range (an invalid reply's, for a
        compatibility policy that keeps them: `metric_plugins.judge.aggregate`); {} when no object parses.

        >>> JsonScores(("correctness", "fluency"), low=0, high=5).partial('{"correctness": 4, "fluency": "good"}')
        {'correctness': 4.0}
        """
        start, end = text.find("{"), text.rfind("}")
        try:
            data = json_value(text[start : end + 1]) if 0 <= start < end and not reply_too_long(text) else None
        except LiteralError:
            data = None
        if not isinstance(data, dict):
            return {}
        numbers = {name: data.get(name) for name in self.names}
        return {k: float(v) for k, v in numbers.items() if isinstance(v, int | float) and not isinstance(v, bool)}

    def spec(self) -> dict[str, Any]:
        return {"format": "json_scores", **asdict(self), "names": list(self.names)}


@dataclass(frozen=True)
class BinaryDigit:
    """A reply that is exactly ``0`` or ``1``, give or take whitespace, quotes, fences and a final period.

    Stricter than "keep the 0/1 characters" (Pearl's released scorer): "10", "0 or 1" and
    "1 (but unsure)" are invalid, not guessed.
    """

    name: str = "score"

    @property
    def score_names(self) -> tuple[str, ...]:
        return (self.name,)

    def parse(self, text: str) -> Parsed:
        if too_long := reply_too_long(text):
            return invalid(too_long)
        core = ascii_digits(FENCE.sub("", text.strip()).strip().strip("`'\"*").rstrip(".").strip())
        if core not in ("0", "1"):
            return invalid(f"not a single 0/1 digit: {text.strip()[:40]!r}")
        return Parsed({self.name: float(core)})

    def spec(self) -> dict[str, Any]:
        return {"format": "binary_digit", **asdict(self)}


@dataclass(frozen=True)
class CriterionLines:
    """One ``<Criterion>: X/<high>`` line per criterion, as JEEM's judge prompts ask (Figures 9-11).

    Strict: each criterion's line must be there, with an integer in range and the ``/<high>``
    denominator; a criterion given twice with different scores, "4.5/5" or "4" alone make the
    reply invalid. Markdown bold around the name or the score (``**Fluency:** 4/5``) and text on
    other lines are tolerated. Scores are named by the criterion in snake case
    (``Dialect Authenticity`` -> ``dialect_authenticity``).

    >>> lines = CriterionLines(("Consistency", "Dialect Authenticity"))
    >>> lines.parse("Consistency: 4/5\\n\\nDialect Authenticity: 2/5").scores
    {'consistency': 4.0, 'dialect_authenticity': 2.0}
    >>> lines.parse("Consistency: 4/5").reason
    "no 'Dialect Authenticity: X/5' line"
    """

    criteria: tuple[str, ...]
    low: int = 1
    high: int = 5

    @property
    def score_names(self) -> tuple[str, ...]:
        return tuple(criterion_key(name) for name in self.criteria)

    def parse(self, text: str) -> Parsed:
        if too_long := reply_too_long(text):
            return invalid(too_long)
        lines = _line_heads(text)
        scores: dict[str, float] = {}
        for name, key in zip(self.criteria, self.score_names, strict=True):
            found = _criterion_values(text, lines, name)
            if not found:
                return invalid(f"no '{name}: X/{self.high}' line")
            if len(found) > 1:
                return invalid(f"conflicting {name!r} lines {sorted(found, key=str)[:5]}")
            ((value, of),) = found
            if of != str(self.high):
                return invalid(f"{name!r} is {value[:40]!r} without '/{self.high}'")
            if not INTEGER.fullmatch(value):
                return invalid(f"{name!r} is not an integer: {value[:40]!r}")
            if not self.low <= int(value) <= self.high:
                return invalid(f"{name} {value} outside [{self.low}, {self.high}]")
            scores[key] = float(value)
        return Parsed(scores)

    def spec(self) -> dict[str, Any]:
        return {"format": "criterion_lines", **asdict(self), "criteria": list(self.criteria)}


# The pieces of a criterion line, each one character class matched at a known position (no backtracking):
# ``^[\s*#>-]*<name>[\s*]*:[\s*]*(?P<value>[^\s/*]+)[\s*]*(?:/[\s*]*(?P<of>\d+))?[\s*.]*$`` (multiline).
_LEAD = re.compile(r"[ \t\r\f\v*#>-]*")  # within a line: a blank line before a criterion changes nothing
_SPACE_STAR = re.compile(r"[\s*]*")
_SPACE_STAR_DOT = re.compile(r"[\s*.]*")
_VALUE = re.compile(r"[^\s/*]+")
_DIGITS = re.compile(r"[0-9٠-٩۰-۹]+")


def _line_heads(text: str) -> list[int]:
    """Where each line's text starts after its markdown lead (``**``, ``#``, ``>``, ``-``, spaces)."""
    heads, start = [], 0
    while True:
        heads.append(_LEAD.match(text, start).end())
        newline = text.find("\n", start)
        if newline < 0:
            return heads
        start = newline + 1


def _criterion_values(text: str, heads: list[int], name: str) -> set[tuple[str, str | None]]:
    """The (value, denominator) of every ``<name>: X/Y`` line, read as the multiline pattern above would.

    Each candidate is a line starting with the name (case-insensitive); the value and the
    denominator may sit on following lines, as ``\\s`` allows. A match ends where the pattern's
    would, so a later candidate it covered is skipped; every run scanned ends at the next non-space
    character, so the reply is read a bounded number of times in all.
    """
    found: set[tuple[str, str | None]] = set()
    folded, size, end_of_last = name.lower(), len(name), 0
    for head in heads:
        if head < end_of_last or text[head : head + size].lower() != folded:
            continue
        position = _SPACE_STAR.match(text, head + size).end()
        if text[position : position + 1] != ":":
            continue
        value = _VALUE.match(text, _SPACE_STAR.match(text, position + 1).end())
        if value is None:
            continue
        end = _line_end(text, value.end())
        after = _SPACE_STAR.match(text, value.end()).end()
        digits = (
            _DIGITS.match(text, _SPACE_STAR.match(text, after + 1).end()) if text[after : after + 1] == "/" else None
        )
        of_end = _line_end(text, digits.end()) if digits else None
        if of_end is not None:
            found.add((ascii_digits(value.group()), ascii_digits(digits.group())))
            end_of_last = of_end
        elif end is not None:
            found.add((ascii_digits(value.group()), None))
            end_of_last = end
    return found


def _line_end(text: str, position: int) -> int | None:
    """Where ``[\\s*.]*$`` (multiline) matching from `position` ends, or None when it cannot match there."""
    run = _SPACE_STAR_DOT.match(text, position)
    if run.end() == len(text):
        return run.end()
    newline = text.rfind("\n", position, run.end())
    return newline if newline >= 0 else None


def criterion_key(name: str) -> str:
    """A criterion's score name: ``Dialect Authenticity`` -> ``dialect_authenticity``."""
    return "_".join(name.lower().split())
