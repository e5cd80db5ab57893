"""Reading untrusted text (model outputs, judge replies, release fields) in linear time, without ``eval``.

The rule every parser of model or judge text in this package follows (judge reply formats in
`metric_plugins.judge.parsing` and DCScore's `metric_plugins.judge.prompts.dcscore`, Pearl's
``acc_parsed`` reader `arab_mm_tasks.pearl.answers`, ARB's answer splitter and matcher
`arab_mm_tasks.arb.answers`, ARB's release fields `arab_mm_tasks.arb.parsing`, GIMMICK's
`metric_plugins.relaxed_accuracy` and the Arabic normalisation `metric_plugins.arabic_text`):

1. **Linear time on any input.** A parser scans its text a bounded number of times. It uses
   ``str`` methods (``find``, ``split``, ``strip``, ``partition``) or regular expressions in which
   no two unbounded quantifiers can share a character: never ``\\s*\\**\\s*`` or ``.*?`` between
   two tags (``"<score>" * 60000`` then costs n^2), never an unanchored ``^\\s*(.*\\S)``; a
   repeated search never restarts from a position it has already scanned to the end.
   Python 3.10 has no possessive quantifiers, so the patterns are written to need none.
2. **A bounded text.** A judge reply longer than `MAX_REPLY_CHARS` is invalid with the reason
   "reply too long" (counted by the judge like any other invalid reply), never scanned. Model
   responses are scored whole (cutting them would change scores); their parsers are linear by (1).
3. **No ``eval`` / ``ast.literal_eval``.** A JSON value is read by `json_value`, a Python literal
   (``['أ. …', 'ب. …']``, ``[{'fact': …, 'id': None}]``) by `python_literal`: one sequential pass
   turns it into JSON text (quotes, ``None``/``True``/``False``, a trailing comma), counting the
   nesting depth, then ``json.loads`` reads it. Depth over `MAX_DEPTH` is a `LiteralError`, so
   ``json``'s recursion can never overflow (``"[" * 100000``), and so is every other failure
   (``"[" + "-" * 5000 + "1]"``, a 5,000-digit integer): callers catch one error type.

tests/metrics/test_parsers_linear.py holds one adversarial 100 KB property per parser.

    >>> python_literal("['أ. نعم', \\"ب. لا\\", None, True, 1.5,]")
    ['أ. نعم', 'ب. لا', None, True, 1.5]
    >>> json_value('{"score": 5}')
    {'score': 5}
    >>> try:
    ...     python_literal("[" * 100)
    ... except LiteralError as error:
    ...     print(error)
    nested deeper than 32 levels
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

MAX_REPLY_CHARS = 200_000  # a judge answers in a few thousand tokens; 200 KB is far above any real reply
MAX_DEPTH = 32  # the deepest value read here is a list of objects (DCScore): depth 2

# One token at the current position. String bodies are unambiguous (a character class that excludes
# the backslash, or a backslash pair), so a string is scanned once; an unterminated one fails the pass.
_TOKEN = re.compile(
    r"""(?P<space>\s+)
      | (?P<punct>[\[\]{}:,])
      | (?P<string>"(?:[^"\\\n]|\\[\s\S])*"|'(?:[^'\\\n]|\\[\s\S])*')
      | (?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?(?![\w.]))
      | (?P<word>-?[A-Za-z_][A-Za-z_0-9]*)""",
    re.VERBOSE,
)
_PYTHON_WORDS = {"None": "null", "True": "true", "False": "false"}
_JSON_WORDS = {w: w for w in ("null", "true", "false", "NaN", "Infinity", "-Infinity")}
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}\n]{1,100}\}|[0-7]{1,3}|[\s\S])")
_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                   "v": "\v", "\n": ""}  # fmt: skip


class LiteralError(ValueError):
    """Text that is not a (bounded) JSON value or Python literal; the message says why, the caller names the record."""


def reply_too_long(text: str) -> str | None:
    """The invalid-reply reason for a judge reply over `MAX_REPLY_CHARS`, else None."""
    if len(text) > MAX_REPLY_CHARS:
        return f"reply too long: {len(text):,} characters (limit {MAX_REPLY_CHARS:,})"
    return None


def json_value(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)`` with the nesting depth bounded; every failure is a `LiteralError`."""
    return _load(_to_json(text, python=False, max_depth=max_depth))


def python_literal(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """A Python literal made of lists, dicts with string keys, strings, JSON-form numbers, None, True and
    False, read without ``eval``: the subset of ``ast.literal_eval`` that data here uses. Anything else
    (tuples, sets, ``1_000``, ``+1``, string prefixes, names) is a `LiteralError`."""
    return _load(_to_json(text, python=True, max_depth=max_depth))


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:  # JSONDecodeError, and int() over 4,300 digits
        message = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        raise LiteralError(f"not a valid value: {message}"[:200]) from None


def _to_json(text: str, *, python: bool, max_depth: int) -> str:
    """One pass over `text`: JSON text with Python strings and words converted, or a `LiteralError`."""
    words = _PYTHON_WORDS if python else _JSON_WORDS
    out: list[str] = []
    depth, position, previous = 0, 0, ""
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise LiteralError(f"unexpected {text[position : position + 20]!r} at character {position}")
        position, kind, token = match.end(), match.lastgroup, match.group()
        if kind == "space":
            continue
        if kind == "punct" and token in "[{":
            depth += 1
            if depth > max_depth:
                raise LiteralError(f"nested deeper than {max_depth} levels")
        elif kind == "punct" and token in "]}":
            depth -= 1
            if python and previous == "," and len(out) > 1 and out[-2] not in ("[", "{", ",", ":"):
                out.pop()  # Python allows a trailing comma: [1, 2,]
        elif kind == "string":
            token = _python_string(token) if python else _json_string(token)
        elif kind == "word":
            if token not in words:
                raise LiteralError(f"unexpected name {token[:20]!r} at character {match.start()}")
            token = words[token]
        out.append(token)
        previous = token if kind == "punct" else kind
    return "".join(out)


def _json_string(token: str) -> str:
    if token.startswith("'"):
        raise LiteralError("a single-quoted string is not JSON")
    return token


def _python_string(token: str) -> str:
    """A Python string literal token (no prefix) as a JSON string."""
    return json.dumps(_ESCAPE.sub(_unescape, token[1:-1]), ensure_ascii=False)


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[code]
    if code[0] in "xuU" and len(code) > 1:
        return _char(int(code[1:], 16))
    if code[0] == "N" and len(code) > 1:
        try:
            return unicodedata.lookup(code[2:-1])
        except KeyError:
            raise LiteralError(f"unknown character name in \\{code[:40]}") from None
    if code[0] in "01234567":
        return _char(int(code, 8))
    if code in "xuUN":
        raise LiteralError(f"truncated \\{code} escape")
    return "\\" + code  # Python keeps an unknown escape as written


def _char(code: int) -> str:
    if code > 0x10FFFF:
        raise LiteralError(f"escape U+{code:X} is not a character")
    return chr(code)
