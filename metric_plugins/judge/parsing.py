"""Reply formats: what a judge prompt asks the judge to answer, and the parser that reads it.

A parser never guesses. A reply either yields every score the format names, each a number in
range, or it is invalid with a reason ("no <score> tag", "score 140 outside [0, 100]"); the
judge then re-asks and finally reports the item as invalid. No parser turns a failure into 0.

Examples:
    >>> XmlScore().parse("<evaluation>...<score>\\n 75 \\n</score></evaluation>").scores
    {'score': 75.0}
    >>> XmlScore().parse("I think it's good").reason
    'no <score> tag'
    >>> rubric = JsonScores(("correctness", "fluency"), low=1, high=5)
    >>> rubric.parse('```json\\n{"correctness": 4, "fluency": 5}\\n```').scores
    {'correctness': 4.0, 'fluency': 5.0}
    >>> BinaryDigit().parse(" 1. ").scores
    {'score': 1.0}
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any, Protocol

INTEGER = re.compile(r"[+-]?\d+")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
FENCE = re.compile(r"^```[\w-]*\s*\n?|\n?```\s*$")


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
        pattern = re.compile(rf"<{re.escape(self.tag)}\s*>(.*?)</{re.escape(self.tag)}\s*>", re.DOTALL | re.IGNORECASE)
        contents = [COMMENT.sub("", match).strip().strip("`*").strip() for match in pattern.findall(text)]
        contents = [content for content in contents if content]
        if not contents:
            return invalid(f"no <{self.tag}> tag")
        if len(set(contents)) > 1:
            return invalid(f"conflicting <{self.tag}> values {contents}")
        if not INTEGER.fullmatch(contents[0]):
            return invalid(f"<{self.tag}> is not an integer: {contents[0][:40]!r}")
        value = int(contents[0])
        if not self.low <= value <= self.high:
            return invalid(f"{self.tag} {value} outside [{self.low}, {self.high}]")
        return Parsed({self.tag: float(value)})

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
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end < start:
            return invalid("no JSON object")
        try:
            data = json.loads(text[start : end + 1])
        except json.JSONDecodeError as error:
            return invalid(f"malformed JSON: {error.msg}")
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
            data = json.loads(text[start : end + 1]) if 0 <= start < end else None
        except json.JSONDecodeError:
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
        core = FENCE.sub("", text.strip()).strip().strip("`'\"*").rstrip(".").strip()
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
        scores: dict[str, float] = {}
        for name, key in zip(self.criteria, self.score_names, strict=True):
            line = re.compile(
                rf"^[\s*#>-]*{re.escape(name)}[\s*]*:[\s*]*(?P<value>[^\s/*]+)[\s*]*(?:/[\s*]*(?P<of>\d+))?[\s*.]*$",
                re.IGNORECASE | re.MULTILINE,
            )
            found = {(match["value"], match["of"]) for match in line.finditer(text)}
            if not found:
                return invalid(f"no '{name}: X/{self.high}' line")
            if len(found) > 1:
                return invalid(f"conflicting {name!r} lines {sorted(found, key=str)}")
            ((value, of),) = found
            if of != str(self.high):
                return invalid(f"{name!r} is {value!r} without '/{self.high}'")
            if not INTEGER.fullmatch(value):
                return invalid(f"{name!r} is not an integer: {value[:40]!r}")
            if not self.low <= int(value) <= self.high:
                return invalid(f"{name} {value} outside [{self.low}, {self.high}]")
            scores[key] = float(value)
        return Parsed(scores)

    def spec(self) -> dict[str, Any]:
        return {"format": "criterion_lines", **asdict(self), "criteria": list(self.criteria)}


def criterion_key(name: str) -> str:
    """A criterion's score name: ``Dialect Authenticity`` -> ``dialect_authenticity``."""
    return "_".join(name.lower().split())
